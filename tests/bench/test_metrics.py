"""The metrics against values worked out by hand from the paper's definitions."""

from fractions import Fraction

import pytest

from crase.bench.metrics import (
    average_precision_at_k,
    hit_at_k,
    hits_at_k,
    map_at_k,
    mean_hit_at_k,
    recall_at_k,
)
from crase.errors import EvaluationError

# Query A: relevant a, b, c, d; returned with hits at ranks 1, 3 and 5.
RANK_A = ["a", "x", "b", "y", "c", "z", "d"]
REL_A = {"a", "b", "c", "d"}
# Query B: relevant r, s; one hit, at rank 3.
RANK_B = ["p", "q", "r"]
REL_B = {"r", "s"}


def close(value: float, exact: Fraction) -> bool:
    return value == pytest.approx(float(exact), abs=1e-12)


def test_hits_count_the_top_k_only() -> None:
    assert hits_at_k(RANK_A, REL_A, 1) == 1
    assert hits_at_k(RANK_A, REL_A, 4) == 2
    assert hits_at_k(RANK_A, REL_A, 5) == 3
    assert hits_at_k(RANK_A, REL_A, 50) == 4


def test_average_precision_divides_by_the_whole_relevant_set() -> None:
    # (1/|Rel|) * (P@1 + P@3 + P@5) = (1/4) * (1/1 + 2/3 + 3/5) = 17/30
    assert close(average_precision_at_k(RANK_A, REL_A, 5), Fraction(17, 30))
    # Only rank 1 counts at k = 2, still divided by 4 (not by min(k, |Rel|) = 2).
    assert close(average_precision_at_k(RANK_A, REL_A, 2), Fraction(1, 4))
    # (1/2) * (1/3)
    assert close(average_precision_at_k(RANK_B, REL_B, 5), Fraction(1, 6))


def test_perfect_ranking_is_capped_by_k_over_relevant_size() -> None:
    relevant = {f"r{i}" for i in range(24)}
    ranking = sorted(relevant)
    assert close(average_precision_at_k(ranking, relevant, 5), Fraction(5, 24))
    assert close(average_precision_at_k(ranking, relevant, 50), Fraction(1))


def test_recall_is_pooled_not_averaged() -> None:
    # (3 + 1) / (4 + 2) = 2/3; the per-query mean would be (3/4 + 1/2) / 2 = 5/8.
    assert close(recall_at_k([RANK_A, RANK_B], [REL_A, REL_B], 5), Fraction(2, 3))
    assert close(recall_at_k([RANK_A, RANK_B], [REL_A, REL_B], 1), Fraction(1, 6))
    assert close(recall_at_k([RANK_A, RANK_B], [REL_A, REL_B], 50), Fraction(5, 6))


def test_map_is_the_mean_of_the_per_query_ap() -> None:
    # (17/30 + 1/6) / 2 = 11/30
    assert close(map_at_k([RANK_A, RANK_B], [REL_A, REL_B], 5), Fraction(11, 30))


def test_hit_at_k() -> None:
    assert hit_at_k(RANK_B, REL_B, 3) == 1.0
    assert hit_at_k(RANK_B, REL_B, 2) == 0.0
    assert mean_hit_at_k([RANK_B, ["u", "v"]], [REL_B, {"w"}], 5) == 0.5
    # Single-target: Hit@k equals that query's recall at k.
    assert hit_at_k(["u", "w"], {"w"}, 5) == recall_at_k([["u", "w"]], [{"w"}], 5)


def test_a_repeated_id_counts_once() -> None:
    # Read as [a, b]: (1/2) * (1/1 + 2/2) = 1; counting the repeat would give 5/6.
    assert close(average_precision_at_k(["a", "a", "b"], {"a", "b"}, 3), Fraction(1))
    assert hits_at_k(["a", "a", "a"], {"a", "b"}, 3) == 1


def test_undefined_cases_are_refused() -> None:
    with pytest.raises(EvaluationError):
        average_precision_at_k(["a"], set(), 5)
    with pytest.raises(EvaluationError):
        recall_at_k([["a"]], [{"a"}, {"b"}], 5)
    with pytest.raises(EvaluationError):
        map_at_k([], [], 5)
    with pytest.raises(EvaluationError):
        hits_at_k(["a"], {"a"}, 0)
