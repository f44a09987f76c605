"""The evidence-graph view's verdict on one edge (api/run_views.py:judge_edge): Delta at the
run's theta and the reasons, from the same rules as the search's pruning. No database: the
rows are what `read_run_graph_edges` returns."""

from typing import Any

import numpy as np

from crase.api.run_views import judge_edge
from crase.scoring.delta import coverage_affinity, prune

MATRIX = np.array([[0.9, 0.1], [0.2, 0.3], [0.6, 0.7]])  # row maxima 0.9, 0.3, 0.7
KEPT = {"u", "v"}


def row(**fields: Any) -> dict[str, Any]:
    base = {"citing": "u", "cited": "v", "delta": 0.5, "theta": 0.5, "scorer": "nli",
            "scorer_version": "2", "matrix": None, "rows": 3, "cols": 2}
    return {**base, **fields}


def judge(edge: dict[str, Any], theta: float = 0.5, tau: float = 0.2,
          kept: set[str] = KEPT) -> dict[str, Any]:
    return judge_edge(edge, theta, tau, "nli", "2", kept)


def test_the_view_has_the_fields_and_reasons_of_a_retained_edge() -> None:
    assert judge(row()) == {"citing": "u", "cited": "v", "delta": 0.5, "retained": True,
                            "reason": "retained", "influential": None}


def test_at_another_theta_delta_comes_from_the_stored_matrix() -> None:
    flat = MATRIX.ravel().tolist()
    edge = judge(row(matrix=flat, delta=0.0), theta=0.65)
    assert edge["delta"] == round(coverage_affinity(MATRIX, 0.65), 6) == 0.666667
    assert edge["retained"] is True
    low = judge(row(matrix=flat), theta=0.95)
    assert low["delta"] == 0.0 and low["reason"] == "delta 0.000 <= tau 0.2"


def test_an_edge_without_a_score_or_with_another_scorers_has_no_delta() -> None:
    assert judge(row(scorer=None, scorer_version=None, delta=None)) == {
        "citing": "u", "cited": "v", "delta": None, "retained": False, "reason": "not scored",
        "influential": None}
    foreign = judge(row(scorer="nli", scorer_version="1"))
    assert foreign["delta"] is None and foreign["retained"] is False
    assert foreign["reason"] == "scored by nli@1, not the run's scorer"


def test_an_edge_above_tau_between_papers_the_run_cut_is_not_retained() -> None:
    assert judge(row(), kept={"u"})["retained"] is False


def test_the_view_gives_the_reason_the_pipeline_recorded() -> None:
    for delta, tau in [(0.2, 0.2), (0.1234, 0.125), (0.0, 0.0), (0.9, 0.3)]:
        recorded = prune(["u", "v"], [("u", "v")], {("u", "v"): delta}, ["u"], tau)
        shown = judge(row(delta=delta), tau=tau)
        assert shown["retained"] == (("u", "v") in recorded.edges)
        if not shown["retained"]:
            assert shown["reason"] == recorded.pruned_edges[("u", "v")]
