"""Two benchmark hooks of the search pipeline: seeds the caller fixes instead of the plan
(seed_override, the seed-corruption test) and the uniform walk (the unweighted-PPR
baseline)."""

import pytest

from crase.graph import Graph
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.settings import SearchSettings, Settings
from tests.search.test_pipeline import load_slice

pytestmark = pytest.mark.integration


def test_a_seed_override_replaces_plan_and_search(graph: Graph) -> None:
    rows = load_slice(graph, 200)
    backends = build_search_backends(Settings())
    chosen = [rows[5]["id"], rows[9]["id"], rows[5]["id"], rows[7]["id"]]
    request = SearchRequest(query=rows[0]["title"], params=SearchSettings(k=10),
                            seed_override=chosen, exclude=[rows[7]["id"]])
    result = run_search(graph, backends, request)

    assert result.plan == []
    assert [s.paper_id for s in result.seeds] == [rows[5]["id"], rows[9]["id"]]
    assert all(s.sub_query_index == -1 for s in result.seeds)
    assert rows[7]["id"] not in {r.id for r in result.results}
    # No plan call: only claims and entailment calls are planned.
    c = result.counts
    assert c["backend_calls_planned"] == (c["papers_claims_extracted"] + c["edges_scored_now"]
                                          + c["edges_failed"])


def test_uniform_walk_needs_no_claims_and_keeps_every_edge(graph: Graph) -> None:
    rows = load_slice(graph, 200)
    backends = build_search_backends(Settings())
    params = SearchSettings(k=10, weighting="uniform", tau=0.9)
    result = run_search(graph, backends, SearchRequest(query=rows[1]["title"], params=params))

    c = result.counts
    assert c["papers_claims_extracted"] == 0 and c["edges_scored_now"] == 0
    assert c["edges"] > 0 and c["retained_edges"] == c["edges"] and c["edges_pruned"] == 0
    assert result.results
    with graph.driver.session() as session:
        claims = session.run("MATCH (c:Claim) RETURN count(c) AS n").single()["n"]
    assert claims == 0
