"""Searches over HTTP: start (202), follow the run, read its results, evidence graph and
exports, cancel, and read it again from the graph after a restart. Real Neo4j + GDS and the
offline backends on the fixture corpus."""

import csv
import io
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from litestar.testing import TestClient
from pydantic import BaseModel

from crase.api.app import create_app
from crase.api.routes.searches import SearchParams
from crase.api.runs import SEARCH_STAGES
from crase.graph import Graph
from crase.idea.request import IdeaParams
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.protocols import SearchBackends
from crase.settings import IdeaSettings, SearchSettings, Settings
from tests.api.conftest import API_KEY, api_settings_for, start_search, wait_for_run
from tests.api.corpus import ORPHAN, QUERY
from tests.recording_graph import RecordingGraph


@pytest.mark.integration
def test_corpus_loaded_through_the_batch_endpoint(corpus: dict[str, Any]) -> None:
    assert corpus["papers"] == {"received": 38, "accepted": 38, "rejected": 0, "written": 38}
    assert corpus["citations"]["accepted"] == corpus["citations"]["received"] == 67
    assert corpus["rejects"] == []


@pytest.mark.integration
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


@pytest.mark.integration
def test_progress_names_every_stage_the_pipeline_timed(finished_run: dict[str, Any]) -> None:
    # The registry infers the current stage from the pipeline's stage order; this is the
    # check that the order it assumes is the pipeline's.
    assert set(finished_run["timings"]) == set(SEARCH_STAGES)
    stages = finished_run["progress"]["stages"]
    assert list(stages) == list(SEARCH_STAGES)
    assert all(stage["state"] == "done" for stage in stages.values())
    assert stages["claims"]["done"] == stages["claims"]["total"] > 0


@pytest.mark.integration
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


@pytest.mark.integration
def test_exports_in_four_formats(client: TestClient, finished_run: dict[str, Any]) -> None:
    run_id, results = finished_run["id"], finished_run["results"]
    as_json = client.get(f"/runs/{run_id}/export")
    assert as_json.headers["content-type"].startswith("application/json")
    assert [r["id"] for r in as_json.json()["results"]] == [r["id"] for r in results]
    assert as_json.json()["run"]["query"] == QUERY

    as_csv = client.get(f"/runs/{run_id}/export", params={"format": "csv"})
    assert as_csv.headers["content-type"].startswith("text/csv")
    assert f"crase-run-{run_id}.csv" in as_csv.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert [row["id"] for row in rows] == [r["id"] for r in results]
    assert rows[0]["authors"] == "; ".join(results[0]["authors"])

    bibtex = client.get(f"/runs/{run_id}/export", params={"format": "bibtex"}).text
    assert bibtex.count("@misc{") == len(results)
    assert f"eprint = {{{results[0]['arxiv_id']}}}" in bibtex
    assert f"Crase run {run_id}, rank 1," in bibtex

    ris = client.get(f"/runs/{run_id}/export", params={"format": "ris"}).text
    assert ris.count("TY  - ") == ris.count("ER  - ") == len(results)
    assert f"TI  - {results[0]['title']}\r\n" in ris

    bad = client.get(f"/runs/{run_id}/export", params={"format": "docx"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "format"


@pytest.mark.integration
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


@pytest.mark.integration
def test_warm_search_reuses_every_delta(client: TestClient,
                                        finished_run: dict[str, Any]) -> None:
    warm = wait_for_run(client, start_search(client))
    assert warm["status"] == "done"
    assert warm["counts"]["edges_scored_now"] == 0
    assert [r["id"] for r in warm["results"]] == [r["id"] for r in finished_run["results"]]


@pytest.mark.integration
def test_cancel_a_queued_run_and_a_finished_one(client: TestClient, graph: Graph,
                                                corpus: dict[str, Any]) -> None:
    first = start_search(client)
    second = start_search(client)  # one worker: this one waits behind the first
    response = client.post(f"/runs/{second}/cancel")
    assert response.status_code == 202 and response.json()["cancel_requested"] is True
    assert wait_for_run(client, second)["status"] == "cancelled"
    with graph.driver.session(database=graph.database) as session:
        status = session.run("MATCH (r:Run {id: $id}) RETURN r.status AS s", id=second
                             ).single()["s"]
    assert status == "cancelled"
    assert wait_for_run(client, first)["status"] == "done"
    again = client.post(f"/runs/{first}/cancel")
    assert again.status_code == 409 and again.json()["error"] == "RunNotCancellable"


@pytest.mark.integration
def test_cancel_a_running_run_stops_it_at_a_stage_boundary(
        client: TestClient, graph: Graph, corpus: dict[str, Any]) -> None:
    run_id = start_search(client)
    client.post(f"/runs/{run_id}/cancel")
    run = wait_for_run(client, run_id)
    assert run["status"] == "cancelled"
    assert run["results"] == []
    assert client.get(f"/runs/{run_id}/graph").status_code == 409
    export = client.get(f"/runs/{run_id}/export")
    assert export.status_code == 409 and "cancelled" in export.json()["detail"]


def test_unknown_runs_are_404(recording_client: TestClient,
                              recording_graph: RecordingGraph) -> None:
    for path in ("/runs/nope", "/runs/nope/graph", "/runs/nope/export"):
        response = recording_client.get(path)
        assert response.status_code == 404, path
        assert response.json() == {"status_code": 404, "error": "RunNotFound",
                                   "detail": "no run with id 'nope'"}
    assert recording_client.post("/runs/nope/cancel").status_code == 404
    # The graph was asked for the run each time, and held no row for it.
    assert recording_graph.sent("read_run") == [{"id": "nope"}] * 4


@pytest.mark.parametrize(("body", "field"), [
    ({"query": "ab"}, "query"),
    ({}, "query"),
    ({"query": "tachyon condensation", "params": {"k": 0}}, "params.k"),
    ({"query": "tachyon condensation", "params": {"hops": "3"}}, "params.hops"),
    ({"query": "tachyon condensation", "params": {"theta": 1.5}}, "params.theta"),
    ({"query": "tachyon condensation", "params": {"kk": 5}}, "params.kk"),
    ({"query": "tachyon condensation", "reference_year": 1066}, "reference_year"),
    ({"query": "tachyon condensation", "exclude": "x"}, "exclude"),
    ({"query": "tachyon condensation", "color": "blue"}, "color"),
])
def test_bad_search_requests_name_the_field(recording_client: TestClient,
                                            body: dict[str, Any], field: str) -> None:
    response = recording_client.post("/searches", json=body)
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["error"] == "ValidationFailed"
    assert field in [e["field"] for e in problem["errors"]]
    assert field in problem["detail"]


def test_malformed_json_and_oversized_bodies(recording_client: TestClient,
                                             offline_settings: Settings) -> None:
    client, api_settings = recording_client, offline_settings
    broken = client.post("/searches", content=b'{"query": ',
                         headers={"Content-Type": "application/json"})
    assert broken.status_code == 400
    huge = json.dumps({"query": "x" * (api_settings.api.max_body_bytes + 10)})
    too_big = client.post("/searches", content=huge.encode(),
                          headers={"Content-Type": "application/json"})
    assert too_big.status_code == 413


@pytest.mark.integration
def test_a_full_queue_answers_429_with_retry_after(settings: Settings, graph: Graph,
                                                   corpus: dict[str, Any]) -> None:
    """One worker held busy, one run waiting: the next is refused until there is room."""
    bounded = api_settings_for(settings, search_workers=1, max_queued_runs=1)
    release = threading.Event()

    def held_backends() -> SearchBackends:
        release.wait(120)
        return build_search_backends(bounded)

    with TestClient(create_app(bounded, graph=graph, build_backends=held_backends)) as held:
        held.headers["X-API-Key"] = API_KEY
        try:
            first = start_search(held)
            wait_until(lambda: held.get(f"/runs/{first}").json()["status"] == "running")
            second = start_search(held)
            refused = held.post("/searches", json={"query": QUERY})
            assert refused.status_code == 429, refused.text
            assert int(refused.headers["retry-after"]) >= 1
            assert refused.json()["error"] == "RunQueueFull"
            assert "max_queued_runs" in refused.json()["detail"]
        finally:
            release.set()
        wait_for_run(held, first)
        wait_for_run(held, second)
        wait_for_run(held, start_search(held))  # room again


def wait_until(check: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


@pytest.mark.parametrize("params", [
    {"semantic_scholar_url": "http://127.0.0.1:9/graph/v1"}, {"arxiv_url": "http://127.0.0.1:9"},
    {"enabled": True}, {"use_providers": True}, {"arxiv_pdf_url": "http://127.0.0.1:9/pdf"},
])
def test_a_search_request_names_no_provider_address_or_switch(
        recording_client: TestClient, params: dict[str, Any]) -> None:
    response = recording_client.post("/searches", json={"query": QUERY, "params": params})
    assert response.status_code == 400, response.text
    assert next(iter(params)) in response.json()["detail"]


def test_a_semantic_scholar_search_needs_the_servers_providers(
        recording_client: TestClient) -> None:
    response = recording_client.post("/searches", json={"query": QUERY,
                                              "params": {"source": "semantic-scholar"}})
    assert response.status_code == 422, response.text
    assert "providers are off" in response.json()["detail"]


@pytest.mark.parametrize(("request_model", "settings_model"), [
    (SearchParams, SearchSettings), (IdeaParams, IdeaSettings)])
def test_request_params_are_the_settings_own_fields(request_model: type[BaseModel],
                                                   settings_model: type[BaseModel]) -> None:
    for name, field in request_model.model_fields.items():
        own = settings_model.model_fields[name]
        assert (field.annotation, field.metadata, field.default, field.description) == (
            own.annotation, own.metadata, own.default, own.description), name


def test_every_search_setting_is_decided_for_requests() -> None:
    """A new search setting is either a run parameter a request may set, or the operator's
    (then it belongs in another settings model)."""
    assert set(SearchParams.model_fields) == set(SearchSettings.model_fields)
