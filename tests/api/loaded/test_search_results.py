"""A search over HTTP on the shared corpus: its results and evidence, its progress, its
evidence graph, and the run read again from the graph after a restart."""

from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.api.runs import SEARCH_STAGES
from crase.graph import Graph
from crase.settings import Settings
from tests.api.conftest import API_KEY
from tests.api.corpus import ORPHAN, QUERY

pytestmark = pytest.mark.integration


def test_a_search_runs_to_results_with_evidence(finished_run: dict[str, Any]) -> None:
    run = finished_run
    assert run["query"] == QUERY and run["kind"] == "search" and run["tracked"] is True
    assert run["params"]["params"]["k"] == 20 and run["params"]["params"]["tau"] == 0.2
    # Parameters not given keep the server's defaults.
    assert run["params"]["params"]["theta"] == Settings().search.theta
    assert run["backends"]["entailment"].startswith("offline")
    assert run["plan"] and run["seeds"]
    # Sub-query l of the plan has index l (0 would be the query's own search).
    assert {s["sub_query_index"] for s in run["seeds"]} <= set(range(1, len(run["plan"]) + 1))
    results = run["results"]
    assert 0 < len(results) <= 20
    assert [r["rank"] for r in results] == list(range(1, len(results) + 1))
    assert all(r["title"] and r["year"] for r in results)
    reached = [r for r in results if not r["evidence"]["seed"]]
    assert reached, "the walk must reach papers beyond the seeds"
    path = reached[0]["evidence"]["path"]
    assert path and all(edge["delta"] > 0.2 for edge in path)
    assert any(edge["citing_claim"] and edge["cited_claim"] for r in reached
               for edge in r["evidence"]["path"])


def test_progress_names_every_stage_the_pipeline_timed(finished_run: dict[str, Any]) -> None:
    # The registry infers the current stage from the pipeline's stage order; this is the
    # check that the order it assumes is the pipeline's.
    assert set(finished_run["timings"]) == set(SEARCH_STAGES)
    stages = finished_run["progress"]["stages"]
    assert list(stages) == list(SEARCH_STAGES)
    assert all(stage["state"] == "done" for stage in stages.values())
    assert stages["claims"]["done"] == stages["claims"]["total"] > 0


def test_evidence_graph_lists_papers_and_edges_with_delta(
        client: TestClient, finished_run: dict[str, Any]) -> None:
    response = client.get(f"/runs/{finished_run['id']}/graph")
    assert response.status_code == 200
    evidence = response.json()
    assert evidence["tau"] == 0.2 and evidence["scorer"].startswith("offline")
    assert evidence["counts"]["nodes"] == finished_run["counts"]["nodes"]
    assert evidence["counts"]["edges"] == finished_run["counts"]["edges"]
    assert evidence["counts"]["edges_retained"] == finished_run["counts"]["retained_edges"]
    ranked = {n["id"]: n["rank"] for n in evidence["nodes"] if n["rank"] is not None}
    results = {r["id"]: r["rank"] for r in finished_run["results"]}
    assert all(results[paper] == rank for paper, rank in ranked.items())
    # Every paper the walk ranked is in the graph; a full-text hit that filled an empty
    # place is there only if the run considered it (a seed cut for having no edge).
    walked = {r["id"] for r in finished_run["results"] if not r["evidence"]["text_match"]}
    assert walked <= set(ranked)
    for edge in evidence["edges"]:
        if edge["retained"]:
            assert edge["delta"] > 0.2 and edge["reason"] == "retained"
        else:
            assert "tau 0.2" in edge["reason"] or edge["reason"] == "not scored"
    cross = [e for e in evidence["edges"] if e["citing"].split("-")[0] != e["cited"].split("-")[0]]
    assert all(not e["retained"] for e in cross)
    # The corpus's stranded seed: found, considered, cut with its only edge.
    orphan = next(n for n in evidence["nodes"] if n["id"] == ORPHAN["id"])
    assert orphan["seed"] is True and orphan["kept"] is False
    # Cut from the graph; returned, if at all, only as a full-text match.
    assert orphan["rank"] is None or ORPHAN["id"] not in walked
    assert orphan["reason"] == "no edge left after pruning"
    edge = next(e for e in evidence["edges"] if e["citing"] == ORPHAN["id"])
    assert edge["retained"] is False and edge["reason"].endswith("<= tau 0.2")


def test_a_finished_run_is_read_from_the_graph_after_a_restart(
        api_settings: Settings, graph: Graph, finished_run: dict[str, Any]) -> None:
    with TestClient(create_app(api_settings, graph=graph)) as fresh:
        fresh.headers["X-API-Key"] = API_KEY
        again = fresh.get(f"/runs/{finished_run['id']}").json()
        assert again["tracked"] is False and again["status"] == "done"
        assert again["results"] == finished_run["results"]
        assert all(s["state"] == "done" for s in again["progress"]["stages"].values())
        assert fresh.get(f"/runs/{finished_run['id']}/graph").status_code == 200
        cancel = fresh.post(f"/runs/{finished_run['id']}/cancel")
        assert cancel.status_code == 409 and "already finished" in cancel.json()["detail"]
