"""Searches over HTTP that change the graph: the batch load of the fixture corpus, a warm
second search, cancelling, a full queue (real Neo4j + GDS, offline backends); and, on the
recording graph, the requests refused before any run. What a finished search reads back
(results, evidence graph, exports, a restart) is in tests/api/loaded/."""

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
from crase.graph import Graph
from crase.idea.request import IdeaParams
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.protocols import SearchBackends
from crase.settings import IdeaSettings, SearchSettings, Settings
from tests.api.conftest import API_KEY, api_settings_for, start_search, wait_for_run
from tests.api.corpus import QUERY, fixture_corpus
from tests.recording_graph import RecordingGraph


@pytest.mark.integration
def test_corpus_loaded_through_the_batch_endpoint(client: TestClient) -> None:
    papers, citations = fixture_corpus()
    response = client.post("/papers/batch", json={"papers": papers, "citations": citations})
    assert response.status_code == 200, response.text
    corpus = response.json()
    assert corpus["papers"] == {"received": 38, "accepted": 38, "rejected": 0, "written": 38}
    assert corpus["citations"]["accepted"] == corpus["citations"]["received"] == 67
    assert corpus["rejects"] == []


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
