"""The influential weighting: the walk weighs a citation the publisher marks influential
(Semantic Scholar's `isinfluential`) by `influential_weight`, any other by 1, with no claims
and no pruning; the run's views word its edges by the mark."""

import pytest

from crase.api.run_views import (
    MARKED_EDGE,
    UNMARKED_EDGE,
    UNWEIGHTED_EDGE,
    weighed_edge,
    weighed_graph,
)
from crase.bench.systems import WalkConfig
from crase.graph import Graph
from crase.scoring.delta import influential_weights, keep_all_edges
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.settings import SearchSettings, Settings
from tests.search.test_pipeline import load_slice

EDGES = [("a", "b"), ("a", "c"), ("b", "c")]


def test_a_marked_citation_weighs_the_weight_and_any_other_one() -> None:
    marks = {("a", "b"): True, ("a", "c"): False}  # ("b", "c") carries no mark
    weights = influential_weights(EDGES, marks, 3.0)
    assert weights == {("a", "b"): 3.0, ("a", "c"): 1.0, ("b", "c"): 1.0}
    kept = keep_all_edges(["a", "b", "c", "d"], EDGES, ["a", "d"], weights)
    assert kept.edges == weights and kept.pruned_edges == {}
    assert kept.nodes == ["a", "b", "c", "d"]  # d, a seed on no edge, stays
    assert keep_all_edges(["a", "b", "c"], EDGES, ["a"]).edges == dict.fromkeys(EDGES, 1.0)


def test_each_view_words_an_edge_by_the_runs_weighting() -> None:
    edge = {"citing": "a", "cited": "b", "delta": 3.0, "influential": True,
            "citing_claim": "x", "cited_claim": "y", "support": 0.9}
    marked = weighed_edge(edge, "influential")
    assert marked["edge"] == MARKED_EDGE.format(weight=3.0) == "citation marked influential, " \
        "weighed 3"
    assert marked["delta"] is None and marked["weight"] == 3.0 and "citing_claim" not in marked
    plain = weighed_edge({**edge, "delta": 1.0, "influential": False}, "influential")
    assert plain["edge"] == UNMARKED_EDGE and plain["weight"] == 1.0
    assert weighed_edge(edge, "uniform")["edge"] == UNWEIGHTED_EDGE
    assert weighed_edge(edge, "coverage")["delta"] == 3.0
    view = {"weighting": "uniform", "scorer": "s", "edges": [
        {"citing": "a", "cited": "b", "delta": 0.5, "influential": True}]}
    # A run that did not weigh by the mark does not show it.
    assert weighed_graph(view)["edges"][0]["influential"] is None
    shown = weighed_graph({**view, "weighting": "influential"})
    assert shown["edges"][0] == {"citing": "a", "cited": "b", "delta": None, "influential": True}


@pytest.mark.integration
def test_the_walk_lifts_what_a_seed_cites_influentially(graph: Graph) -> None:
    rows = load_slice(graph, 400)
    with graph.driver.session() as session:
        seed, marked, others = session.run(
            "MATCH (s:Paper)-[:CITES]->(n:Paper) WITH s, collect(n.id) AS cited "
            "WHERE size(cited) >= 3 RETURN s.id AS seed, cited[0] AS marked, "
            "cited[1..] AS others ORDER BY s.id LIMIT 1").single()
    graph.write("set_citation_signals", rows=[
        {"citing": seed, "cited": marked, "isinfluential": True, "intents": ["methodology"]},
        *({"citing": seed, "cited": other, "isinfluential": False, "intents": None}
          for other in others)])
    backends = build_search_backends(Settings())

    def scores(weighting: str) -> dict[str, float]:
        # The walk's own scores: the learned order would reorder them.
        params = SearchSettings(k=50, weighting=weighting, fill="none", order="walk")
        result = run_search(graph, backends, SearchRequest(
            query=rows[0]["title"], params=params, seed_override=[seed]))
        assert result.counts["papers_claims_extracted"] == 0
        assert result.counts["edges_pruned"] == 0
        return {paper.id: paper.score for paper in result.results}

    uniform, influential = scores("uniform"), scores("influential")
    assert set(uniform) == set(influential)  # the same graph, no edge pruned
    assert influential[marked] > uniform[marked]
    assert all(influential[other] < uniform[other] for other in others if other in uniform)


def test_the_benchmark_keeps_influential_walks_of_each_weight_apart() -> None:
    walk = WalkConfig.from_settings(SearchSettings(weighting="influential"))
    assert "-influential3-" in walk.key()
    assert walk.but(influential_weight=5.0).key() != walk.key()
    assert walk.search_settings(SearchSettings(), 50).influential_weight == 3.0
