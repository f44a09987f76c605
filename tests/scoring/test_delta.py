"""Coverage affinity, pruning and edge weights on hand-made matrices and graphs."""

import numpy as np
import pytest

from crase.scoring.delta import (
    EvidenceEdge,
    best_claim_pair,
    coverage_affinity,
    edge_weight,
    paper_age,
    prune_edges,
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


def test_best_claim_pair_is_the_largest_entry_first_on_ties() -> None:
    assert best_claim_pair(MATRIX) == (0, 1, 0.9)
    assert best_claim_pair(np.array([[0.2, 0.7], [0.7, 0.1]])) == (0, 1, 0.7)
    with pytest.raises(ValueError):
        best_claim_pair(np.zeros((0, 0)))


def test_prune_drops_edges_at_or_below_tau_and_nodes_left_alone() -> None:
    edges = [
        EvidenceEdge("a", "b", 0.75),
        EvidenceEdge("a", "c", 0.0),   # pruned at tau = 0
        EvidenceEdge("c", "d", 0.25),  # kept at tau = 0, pruned at tau = 0.25
        EvidenceEdge("e", "b", 0.25),
        EvidenceEdge("f", "g", 0.0),   # both ends lose their only edge
    ]
    at_zero = prune_edges(edges, tau=0.0, nodes=["a", "b", "h"])
    assert at_zero.kept == [edges[0], edges[2], edges[3]]
    assert at_zero.dropped == [edges[1], edges[4]]
    assert at_zero.nodes == {"a", "b", "c", "d", "e"}
    assert at_zero.dropped_nodes == {"f", "g", "h"}  # h never had an edge

    at_quarter = prune_edges(edges, tau=0.25)
    assert at_quarter.kept == [edges[0]]
    assert at_quarter.nodes == {"a", "b"}
    assert at_quarter.dropped_nodes == {"c", "d", "e", "f", "g"}


def test_age_counts_the_reference_year_itself() -> None:
    assert paper_age(2003, 2003) == 1  # same year: age 1, not 0
    assert paper_age(1999, 2003) == 5
    assert paper_age(2005, 2003) == 1  # later than the reference: clamped


@pytest.mark.parametrize(("delta", "cited", "reference", "beta", "expected"), [
    (0.8, 2003, 2003, 0.5, 0.8),             # age 1
    (0.8, 2000, 2003, 0.5, 0.8 / 2.0),       # age 4, 4^-0.5 = 1/2
    (0.5, 1995, 2003, 1.0, 0.5 / 9.0),       # age 9
    (0.6, 1980, 2003, 0.0, 0.6),             # beta 0: no recency term
    (0.0, 2001, 2003, 0.5, 0.0),
])
def test_edge_weight_is_delta_times_age_to_minus_beta(
        delta: float, cited: int, reference: int, beta: float, expected: float) -> None:
    assert edge_weight(delta, cited, reference, beta) == pytest.approx(expected, abs=1e-15)
