"""The Delta columns the order benchmark adds to gathered candidates (bench/delta_features.py),
on hand-made edges: each column is the rule its name says, and Delta is scoring/delta.py's."""

import numpy as np
import pytest

from crase.bench.delta_features import COLUMNS, EdgeEvidence, delta_columns, edge_row
from crase.bench.learned_order import Gathered
from crase.scoring.delta import coverage_affinity
from crase.search.order.features import FEATURES, Candidates
from crase.search.order.training import TrainingExample, TrainingQuery


def gathered(ids: list[str], seeds: set[str], given: tuple[str, ...] = ()) -> Gathered:
    values = np.zeros((len(ids), len(FEATURES)))
    values[:, FEATURES.index("is_seed")] = [1.0 if p in seeds else 0.0 for p in ids]
    query = TrainingQuery("q", "a query", 2003, frozenset({"b"}), given)
    return Gathered(TrainingExample(query, Candidates(ids, values), np.zeros(len(ids))))


EDGES = EdgeEvidence(citing=["a", "c", "b", "z"], cited=["b", "b", "a", "b"],
                     delta=[0.5, 1.0, 0.25, 0.75], match=[0.6, 0.9, 0.3, 0.8])


def column(values: np.ndarray, row: int, name: str) -> float:
    return float(values[row, COLUMNS.index(name)])


def test_the_columns_read_the_edges_with_the_seeds_and_the_list() -> None:
    values = delta_columns(gathered(["a", "b", "c"], seeds={"a"}), EDGES)
    # b: cited by the seed a (0.5) and by c (1.0); cites a (0.25). z is not in the list.
    assert column(values, 1, "delta_anchor_cites") == 0.5
    assert column(values, 1, "delta_cites_anchor") == 0.25
    assert column(values, 1, "delta_from_neighbours") == pytest.approx(0.75)
    assert column(values, 1, "delta_to_neighbours") == 0.25
    assert column(values, 1, "claim_match_anchors") == pytest.approx(0.6)
    assert column(values, 1, "claim_match_from_neighbours") == pytest.approx(0.75)
    # c cites b, no anchor: only its edge into the list counts.
    assert values[2].tolist() == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]


def test_given_papers_are_the_anchors_even_outside_the_list() -> None:
    values = delta_columns(gathered(["b", "c"], seeds=set(), given=("z",)), EDGES)
    assert column(values, 0, "delta_anchor_cites") == 0.75
    assert column(values, 0, "delta_from_neighbours") == pytest.approx((1.0 + 0.75) / 2)
    assert column(values, 0, "delta_cites_anchor") == 0.0


def test_an_edges_delta_is_the_scoring_rule() -> None:
    matrix = np.array([[0.5, 0.2], [0.1, 0.3], [0.45, 0.6]])
    delta, match = edge_row(matrix.ravel().tolist(), 3, 2, 0.4)
    assert delta == coverage_affinity(matrix, 0.4) == pytest.approx(2 / 3)
    assert match == pytest.approx((0.5 + 0.3 + 0.6) / 3)
    assert edge_row([], 0, 0, 0.4) == (0.0, 0.0)
