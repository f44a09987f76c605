"""`crase bench entailment` on a committed sample of 40 SciNLI dev pairs (10 per label,
tests/bench/fixtures/scinli_dev_sample.csv, copied byte for byte from the published file;
CC BY-SA 4.0, SciNLI: Sadat and Caragea, ACL 2022), with the deterministic numpy cosine
scorer at its stored threshold. Server-free."""

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from crase.api.cli import main
from crase.api.commands.bench import ENTAILMENT_SCORERS
from crase.bench.entailment_pairs import (
    SCORERS,
    ScorerUnderTest,
    balanced_sample,
    build_scorer,
    measure,
    stored_threshold,
)
from crase.errors import EvaluationError
from crase.research.entailment_data import read_labelled_pairs
from crase.scoring.claims import Claim
from crase.search.roles.cosine_entailment import TWO_CLASS_THRESHOLDS
from crase.search.roles.from_settings import build_search_backends
from crase.settings import Settings
from crase.usage import Usage

SAMPLE = Path(__file__).parent / "fixtures" / "scinli_dev_sample.csv"
# The numpy cosine scorer on the sample at its stored threshold (0.365); the nearest score
# lies 0.008 from it, so float rounding cannot move a pair across.
EXPECTED_F1, EXPECTED_ACCURACY = 0.7083, 0.65
KEYS = {"scorer", "pairs", "two_class", "four_class", "pairs_per_s", "load"}


def test_the_numpy_cosine_scorer_on_the_sample(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "figures" / "cosine.json"
    assert main(["bench", "entailment", "--pairs", str(SAMPLE), "--scorer",
                 "offline-minilm-cosine", "--json", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed == json.loads(out.read_text())
    assert set(printed) == KEYS
    assert printed["scorer"] == "offline-minilm-cosine"
    assert printed["pairs"] == 40
    assert printed["two_class"] == {
        "f1": EXPECTED_F1, "accuracy": EXPECTED_ACCURACY,
        "threshold": TWO_CLASS_THRESHOLDS["offline-minilm-cosine"]}
    assert printed["four_class"] == {"macro_f1": None}
    assert printed["pairs_per_s"] > 0
    assert len(printed["load"]) == 3


def test_limit_draws_evenly_over_the_labels_seeded_in_file_order() -> None:
    pairs = read_labelled_pairs(SAMPLE)
    sample = balanced_sample(pairs, 10, seed=0)
    assert Counter(label for _, _, label in sample) == {
        "entailment": 3, "reasoning": 3, "contrasting": 2, "neutral": 2}
    assert sample == balanced_sample(pairs, 10, seed=0)
    assert sample != balanced_sample(pairs, 10, seed=1)
    assert sample == sorted(sample, key=pairs.index)
    assert len(balanced_sample(pairs, 100, seed=0)) == 40  # a label holds no more than 10
    with pytest.raises(EvaluationError, match="at least 1"):
        balanced_sample(pairs, 0, seed=0)


class FailingScorer:
    """Scores every pair 1.0 except the second, whose matrix failed (None)."""

    name, version, usage = "failing", "1", Usage()

    def score(self, pairs: list[tuple[list[Claim], list[Claim]]]
              ) -> list[NDArray[np.float64] | None]:
        return [None if i == 1 else np.ones((1, 1)) for i in range(len(pairs))]


def test_a_pair_without_a_matrix_counts_as_not_grounded() -> None:
    pairs = [("A premise.", "A hypothesis.", "entailment")] * 2 + [("P.", "H.", "neutral")]
    figures = measure(ScorerUnderTest(FailingScorer(), 0.5), pairs)
    assert figures["two_class"] == {"f1": 0.5, "accuracy": 0.3333,
                                    "threshold": 0.5}


def test_the_scorer_names_are_one_list_and_an_unknown_one_is_refused() -> None:
    assert ENTAILMENT_SCORERS == SCORERS
    with pytest.raises(EvaluationError, match="no entailment scorer 'cosine'"):
        build_scorer("cosine", Settings())


def test_the_classifier_reports_four_classes_at_its_own_threshold(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "entailment", "--pairs", str(SAMPLE), "--scorer", "classifier",
                 "--limit", "8"]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    from crase.search.roles.classifier_entailment import ClassifierEntailmentScorer

    assert printed["pairs"] == 8
    assert printed["two_class"]["threshold"] == ClassifierEntailmentScorer().threshold
    assert 0.0 <= printed["four_class"]["macro_f1"] <= 1.0


def test_a_bad_row_stops_the_bench_with_its_file_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    bad = tmp_path / "bad.csv"
    bad.write_text("".join([*lines[:3], "9,dev_9,A premise.,A hypothesis.,entails\n",
                            *lines[3:]]), encoding="utf-8")
    assert main(["bench", "entailment", "--pairs", str(bad), "--scorer",
                 "offline-minilm-cosine"]) == 2
    error = capsys.readouterr().err
    assert "NliDataInvalid: " in error
    assert "bad.csv, line 4: unknown_label: 'entails'" in error


def test_shipped_is_the_scorer_the_search_builds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "entailment", "--pairs", str(SAMPLE), "--scorer", "shipped",
                 "--limit", "4"]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    searched = build_search_backends(Settings()).scorer
    assert printed["scorer"] == searched.name
    assert printed["two_class"]["threshold"] == stored_threshold(searched)
