"""The landscape's rules on stored titles and abstracts in time linear in the text: with
Python's engine a run of `-A`, `-z` or `/s` made each pattern quadratic (2 to 4 s of CPU
for 20,000 characters, in one call that held every other thread)."""

import pytest

from crase.research.landscape import find_datasets, find_method_families, find_metrics
from tests.interpreter_pauses import measure_pauses

HOSTILE = {"dashed capitals": "-A" * 10_000, "dashed letters": "-z" * 10_000,
           "slashed letters": "/s" * 10_000}


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_hostile_abstract_is_read_at_once(text: str) -> None:
    def read() -> None:
        find_datasets(text)
        find_metrics(text)
        find_method_families(text)

    measured = measure_pauses(read)
    assert measured.result is None, measured.result
    assert measured.cpu_s < 0.5
    assert measured.longest_pause_s < 0.25


def test_overlapping_metric_phrases_are_all_found() -> None:
    # "the error rate" gives "error rate" as well as "the error" (then dropped as a
    # description); after a non-ASCII word too.
    assert find_metrics("We lower the error rate and the naïve loss.") == ["error rate",
                                                                         "naïve loss"]
