"""The shortlist: up to 50 assessed works plus up to 10 boundary or uncertain ones."""

from collections import Counter

from crase.idea.candidates import AssessmentStatus, Decision
from crase.idea.shortlist import build_shortlist
from crase.settings import IdeaSettings
from tests.idea.builders import candidate, decided, graded


def pool(positives: int, uncertain: int) -> list:
    works = [candidate(f"g{n}", grade=1 + n % 3) for n in range(positives)]
    works += [candidate(f"z{n}", grade=0) for n in range(5)]
    statuses: list[AssessmentStatus] = ["no_abstract", "insufficient", "failed"]
    works += [candidate(f"u{n}", status=statuses[n % 3]) for n in range(uncertain)]
    works += [candidate(f"n{n}", selected=False) for n in range(3)]
    late = candidate("old", grade=3)
    late.eligibility = Decision(False, "excluded: year [1999] outside 2015-2025")
    conflict = candidate("clash", grade=3)
    conflict.identity_conflict = True
    return [*works, late, conflict]


def test_fifty_assessed_then_a_buffer_of_ten_uncertain_first() -> None:
    works = pool(positives=70, uncertain=12)
    shortlist = build_shortlist(works, IdeaSettings())
    assert len(shortlist) == 60
    head, buffer = shortlist[:50], shortlist[50:]
    assert all(w.is_assessed for w in head)
    grades = [graded(w) for w in head]
    assert grades == sorted(grades, reverse=True) and Counter(grades) == {3: 23, 2: 23, 1: 4}
    assert [w.work_id[0] for w in buffer] == ["u"] * 10
    left_out = [decided(w.shortlist) for w in works if not decided(w.shortlist).kept]
    reasons = Counter(decision.reason.split(":")[0] for decision in left_out)
    assert reasons == {"graded 0": 5, "not shortlisted": 3 + 1 + 1 + 2 + 20}
    assert sum("buffer of 10 is full" in decided(w.shortlist).reason for w in works) == 22
    assert [decided(w.shortlist).position for w in shortlist] == list(range(1, 61))


def test_boundary_works_fill_the_buffer_after_the_uncertain() -> None:
    shortlist = build_shortlist(pool(positives=55, uncertain=2), IdeaSettings())
    assert len(shortlist) == 57
    assert [decided(w.shortlist).reason.split(":")[1].strip().split(" ")[0]
            for w in shortlist[50:]] == ["uncertain"] * 2 + ["boundary"] * 5


def test_a_small_pool_is_shortlisted_whole_without_zeros() -> None:
    shortlist = build_shortlist(pool(positives=4, uncertain=3), IdeaSettings())
    assert len(shortlist) == 7
    assert not any(w.work_id.startswith("z") for w in shortlist)


def test_smaller_settings_are_exact() -> None:
    shortlist = build_shortlist(pool(positives=30, uncertain=6),
                                IdeaSettings(shortlist_assessed=10, shortlist_buffer=3))
    assert len(shortlist) == 13
    assert sum(w.is_assessed for w in shortlist) == 10
