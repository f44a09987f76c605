"""The whole search on a small real corpus through the offline backends, recorded in the
graph: the Run node, its seeds, every considered paper and the ranked results."""

import json

import pytest

from crase.graph import Graph
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.protocols import SearchBackends
from crase.settings import SearchSettings, Settings
from tests.sample_slice import load_sample_slice

pytestmark = pytest.mark.integration

# The Crase paper's pipeline, every stage on: a plan, claims, Delta and pruning (the shipped
# default walks uniform edges from the query's own seeds and skips claims and Delta).
PAPER = {"weighting": "coverage", "sub_queries": 5}


def load_slice(graph: Graph, papers: int = 400) -> list[dict]:
    return load_sample_slice(graph, papers)


@pytest.fixture(scope="module")
def backends() -> SearchBackends:
    return build_search_backends(Settings())


def test_search_runs_end_to_end_and_is_recorded(graph: Graph, backends: SearchBackends) -> None:
    rows = load_slice(graph)
    query = rows[0]["title"]
    request = SearchRequest(query=query, params=SearchSettings(k=20, **PAPER))
    result = run_search(graph, backends, request)

    assert 0 < len(result.results) <= 20
    assert [r.rank for r in result.results] == list(range(1, len(result.results) + 1))
    scores = [r.score for r in result.results]
    assert scores == sorted(scores, reverse=True)
    c = result.counts
    assert c["edges"] == c["edges_pruned"] + c["retained_edges"]
    assert c["nodes"] == c["nodes_dropped"] + c["retained_nodes"]
    assert c["edges_scored_now"] > 0 and c["edges_reused"] == 0
    assert result.backends["entailment"].startswith("offline")
    assert set(result.timings) >= {"plan", "seeds", "expand", "claims", "entailment", "rank"}
    non_seed = [r for r in result.results if not (r.evidence.seed or r.evidence.text_match)]
    assert all(r.evidence.reached_from for r in non_seed)
    assert any(e.citing_claim for r in non_seed for e in r.evidence.path)

    with graph.driver.session() as session:
        run = session.run("MATCH (r:Run {id: $id}) RETURN r", id=result.run_id).single()["r"]
        returned = session.run("MATCH (:Run {id: $id})-[x:RETURNED]->(p) RETURN count(x) AS n",
                               id=result.run_id).single()["n"]
        considered = session.run("MATCH (:Run {id: $id})-[x:CONSIDERED]->() RETURN count(x) AS n",
                                 id=result.run_id).single()["n"]
        seeded = session.run("MATCH (:Run {id: $id})-[x:SEEDED]->() RETURN count(x) AS n",
                             id=result.run_id).single()["n"]
    assert run["status"] == "done" and run["plan"] == result.plan
    assert json.loads(run["counts"])["edges"] == c["edges"]
    assert returned == len(result.results)
    assert considered == c["nodes"]
    assert seeded == len(result.seeds)

    # Warm: the same search reuses every stored Delta and calls no scorer.
    again = run_search(graph, backends, request)
    assert again.counts["edges_scored_now"] == 0
    assert again.counts["edges_reused"] == c["edges"] - c["edges_without_claims"]
    assert [r.id for r in again.results] == [r.id for r in result.results]

    # Another theta: Delta is recomputed from the stored matrices; no scorer call.
    strict = run_search(graph, backends,
                        SearchRequest(query=query,
                                      params=SearchSettings(k=20, theta=0.6, **PAPER)))
    assert strict.counts["edges_scored_now"] == 0
    assert strict.counts["edges_reused"] == again.counts["edges_reused"]
    assert strict.counts["retained_edges"] < c["retained_edges"]

    with graph.driver.session() as session:
        left = session.run("CALL gds.graph.list() YIELD graphName RETURN count(*) AS n").single()
    assert left["n"] == 0, "projections must be dropped"


def test_excluded_papers_never_appear(graph: Graph, backends: SearchBackends) -> None:
    rows = load_slice(graph)
    first = run_search(graph, backends, SearchRequest(query=rows[3]["title"]))
    banned = [r.id for r in first.results[:5]]
    second = run_search(graph, backends, SearchRequest(query=rows[3]["title"], exclude=banned))
    assert not set(banned) & {r.id for r in second.results}
    assert not set(banned) & {s.paper_id for s in second.seeds}


def test_salsa_and_other_radii_run(graph: Graph, backends: SearchBackends) -> None:
    rows = load_slice(graph, 200)
    for params in (SearchSettings(walk="salsa", k=10), SearchSettings(hops="1", k=10),
                   SearchSettings(hops="2", k=10), SearchSettings(orientation="references"),
                   SearchSettings(walk="salsa", k=10, **PAPER)):
        result = run_search(graph, backends, SearchRequest(query=rows[1]["title"], params=params))
        assert result.results, params


def test_a_thin_graph_leaves_places_that_text_hits_fill(graph: Graph,
                                                       backends: SearchBackends) -> None:
    rows = load_slice(graph, 200)
    query = rows[1]["title"]
    # The walk's order (under the learned one, a graph this thin is ordered by the text:
    # tests/search/order/test_training.py).
    thin = SearchSettings(hops="1", k=500, order="walk", **PAPER)
    walk = run_search(graph, backends,
                      SearchRequest(query=query, params=thin.model_copy(update={"fill": "none"})))
    filled = run_search(graph, backends, SearchRequest(query=query, params=thin))

    count = len(walk.results)
    assert 0 < count < 500 and walk.counts["results_from_text"] == 0
    assert [r.id for r in filled.results[:count]] == [r.id for r in walk.results]
    added = filled.results[count:]
    assert added and all(r.evidence.text_match and r.score == 0 for r in added)
    assert not any(r.evidence.text_match for r in filled.results[:count])
    assert len({r.id for r in filled.results}) == len(filled.results)
    assert filled.counts["results_from_text"] == len(added)
    with graph.driver.session() as session:
        stored = session.run("MATCH (:Run {id: $id})-[x:RETURNED]->() "
                             "RETURN x.rank AS rank, x.evidence AS evidence ORDER BY x.rank",
                             id=filled.run_id).data()
    assert len(stored) == len(filled.results)
    assert json.loads(stored[-1]["evidence"])["text_match"] is True


def test_the_shipped_search_needs_no_model_call(graph: Graph, backends: SearchBackends) -> None:
    rows = load_slice(graph)
    result = run_search(graph, backends, SearchRequest(query=rows[0]["title"],
                                                       params=SearchSettings(k=20)))
    assert result.plan == [] and result.results
    assert result.counts["backend_calls_planned"] == 0
    assert result.counts["edges_pruned"] == 0
    assert all(s.sub_query_index == 0 for s in result.seeds)
    assert len(result.seeds) == 10


def test_an_unexpected_error_closes_the_run_as_failed(graph: Graph,
                                                      backends: SearchBackends) -> None:
    rows = load_slice(graph, 50)

    class Broken:
        name = "broken"
        usage = backends.planner.usage

        def plan(self, query: str, count: int) -> list[str]:
            raise RuntimeError("not a CraseError")

    broken = SearchBackends(Broken(), backends.extractor, backends.scorer,  # type: ignore[arg-type]
                            backends.encoder)
    request = SearchRequest(query=rows[0]["title"], params=SearchSettings(sub_queries=1))
    with pytest.raises(RuntimeError):
        run_search(graph, broken, request, run_id="broken-search")
    with graph.driver.session() as session:
        run = session.run("MATCH (r:Run {id: 'broken-search'}) RETURN r.status AS status, "
                          "r.error AS error").single()
    assert run["status"] == "failed" and run["error"] == "RuntimeError: not a CraseError"
