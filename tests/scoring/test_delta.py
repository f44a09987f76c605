"""The rules of crase.scoring.delta (Delta, the prune rule and pruning, the age weight) on
hand-made matrices and graphs."""

import numpy as np
import pytest

from crase.scoring.delta import (
    best_claim_pair,
    coverage_affinity,
    edge_weight,
    judge_delta,
    keep_all_edges,
    paper_age,
    prune,
    stored_coverage_affinity,
)

# Rows: 4 citing claims; columns: 3 cited claims. Row maxima 0.9, 0.5, 0.6, 0.2.
MATRIX = np.array([
    [0.1, 0.9, 0.3],
    [0.5, 0.4, 0.0],
    [0.6, 0.6, 0.1],
    [0.2, 0.0, 0.1],
])


@pytest.mark.parametrize(("theta", "expected"), [
    (0.0, 1.0),    # every row max >= 0
    (0.2, 1.0),    # 0.2 reaches 0.2: the comparison is >=
    (0.5, 0.75),   # 0.9, 0.5, 0.6 reach it; 0.2 does not
    (0.55, 0.5),   # 0.9, 0.6
    (0.6, 0.5),
    (0.61, 0.25),  # 0.9 only
    (0.9, 0.25),
    (0.95, 0.0),
])
def test_coverage_affinity_counts_rows_whose_best_match_reaches_theta(
        theta: float, expected: float) -> None:
    assert coverage_affinity(MATRIX, theta) == expected


def test_coverage_affinity_is_per_citing_claim_not_per_pair() -> None:
    # One strong cited claim grounds every citing claim: Delta = 1 (row-wise max).
    one_column = np.array([[0.8, 0.0], [0.7, 0.1], [0.9, 0.0]])
    assert coverage_affinity(one_column, 0.7) == 1.0
    # Transposing changes the question: now only 1 of 2 cited rows is grounded.
    assert coverage_affinity(one_column.T, 0.7) == 0.5


def test_empty_matrices_ground_nothing() -> None:
    assert coverage_affinity(np.zeros((0, 3)), 0.5) == 0.0
    assert coverage_affinity(np.zeros((3, 0)), 0.5) == 0.0


def test_delta_from_a_stored_flat_matrix_reads_it_row_by_row() -> None:
    flat = MATRIX.ravel().tolist()
    for theta in (0.2, 0.5, 0.61, 0.95):
        assert stored_coverage_affinity(flat, 4, 3, theta) == coverage_affinity(MATRIX, theta)
    assert stored_coverage_affinity([], 0, 3, 0.5) == 0.0


def test_best_claim_pair_is_the_largest_entry_first_on_ties() -> None:
    assert best_claim_pair(MATRIX) == (0, 1, 0.9)
    assert best_claim_pair(np.array([[0.2, 0.7], [0.7, 0.1]])) == (0, 1, 0.7)
    with pytest.raises(ValueError):
        best_claim_pair(np.zeros((0, 0)))


@pytest.mark.parametrize(("delta", "tau", "verdict"), [
    (0.4, 0.2, (True, "retained")),
    (0.2, 0.2, (False, "delta 0.200 <= tau 0.2")),  # at tau: cut, the comparison is <=
    (0.0, 0.0, (False, "delta 0.000 <= tau 0")),
    (0.01, 0.0, (True, "retained")),                 # tau 0 keeps any positive Delta
    (0.1234, 0.125, (False, "delta 0.123 <= tau 0.125")),
    (None, 0.0, (False, "not scored")),
])
def test_judge_delta_keeps_only_delta_above_tau(
        delta: float | None, tau: float, verdict: tuple[bool, str]) -> None:
    assert judge_delta(delta, tau) == verdict


EDGES = [("a", "b"), ("b", "c"), ("c", "d"), ("e", "a"), ("f", "g")]


def test_prune_drops_weak_edges_then_isolated_nodes() -> None:
    delta = {("a", "b"): 0.4, ("b", "c"): 0.0, ("c", "d"): 0.6, ("e", "a"): 0.2}
    pruned = prune(list("abcdefg"), EDGES, delta, seeds=["a", "f"], tau=0.2)
    assert pruned.edges == {("a", "b"): 0.4, ("c", "d"): 0.6}
    assert pruned.pruned_edges == {("b", "c"): "delta 0.000 <= tau 0.2",
                                   ("e", "a"): "delta 0.200 <= tau 0.2",
                                   ("f", "g"): "not scored"}
    assert pruned.nodes == ["a", "b", "c", "d"]
    assert pruned.dropped_nodes == dict.fromkeys("efg", "no edge left after pruning")
    assert pruned.seeds == ["a"]


def test_tau_zero_keeps_any_positive_delta() -> None:
    delta = {e: 0.01 for e in EDGES}
    assert len(prune(list("abcdefg"), EDGES, delta, ["a"], 0.0).edges) == 5


def test_a_seed_without_citation_edges_survives_pruning() -> None:
    # s never had an edge: it stays. f had one and lost it: it goes.
    pruned = prune(["a", "b", "f", "g", "s"], [("a", "b"), ("f", "g")],
                   {("a", "b"): 0.5, ("f", "g"): 0.1}, seeds=["s", "f", "a"], tau=0.2)
    assert pruned.seeds == ["s", "a"]
    assert pruned.nodes == ["a", "b", "s"]
    assert set(pruned.dropped_nodes) == {"f", "g"}


def test_keep_all_edges_keeps_every_edge_with_weight_one() -> None:
    kept = keep_all_edges(list("abcdefgx"), EDGES, seeds=["a", "x"])
    assert kept.edges == dict.fromkeys(EDGES, 1.0)
    assert kept.pruned_edges == {}
    assert kept.dropped_nodes == {}  # x is a seed without edges; every other has one
    assert kept.seeds == ["a", "x"]


def test_age_counts_the_reference_year_itself() -> None:
    assert paper_age(2003, 2003) == 1  # same year: age 1, not 0
    assert paper_age(1999, 2003) == 5
    assert paper_age(2005, 2003) == 1  # later than the reference: clamped
    assert paper_age(None, 2003) == 1  # no year: no recency term


@pytest.mark.parametrize(("delta", "cited", "reference", "beta", "expected"), [
    (0.8, 2003, 2003, 0.5, 0.8),             # age 1
    (0.8, 2000, 2003, 0.5, 0.8 / 2.0),       # age 4, 4^-0.5 = 1/2
    (0.5, 1995, 2003, 1.0, 0.5 / 9.0),       # age 9
    (0.6, 1980, 2003, 0.0, 0.6),             # beta 0: no recency term
    (0.0, 2001, 2003, 0.5, 0.0),
    (0.7, None, 2003, 2.0, 0.7),             # no year: age 1
])
def test_edge_weight_is_delta_times_age_to_minus_beta(
        delta: float, cited: int | None, reference: int, beta: float, expected: float) -> None:
    assert edge_weight(delta, cited, reference, beta) == pytest.approx(expected, abs=1e-15)
