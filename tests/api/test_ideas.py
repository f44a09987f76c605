"""Idea to prior work over HTTP: start (202), follow the run, read the five papers and the
audit; bad requests. Offline backends, providers off, on the fixture corpus."""

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.bench.loopback_http import JsonHandler, LoopbackJsonServer
from crase.graph import Graph
from crase.settings import IdeaSettings, Settings
from tests.api.conftest import API_KEY, wait_for_run
from tests.recording_graph import RecordingGraph

IDEA = ("Use level truncation of cubic open string field theory to show that the tachyon "
        "on an unstable D-brane condenses to the closed string vacuum.")


@pytest.mark.integration
def test_an_idea_run_ends_with_papers_and_an_audit(client: TestClient,
                                                   corpus: dict[str, Any]) -> None:
    response = client.post("/ideas", json={"idea": IDEA})
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert accepted["audit_url"] == f"/ideas/{accepted['run_id']}/audit"
    run = wait_for_run(client, accepted["run_id"], timeout_s=300)
    assert run["kind"] == "idea" and run["query"] == IDEA
    assert run["status"] == "done" and run["error"] is None, run
    # Progress follows the stages as the workflow names them, in its order.
    stages = run["progress"]["stages"]
    assert list(stages)[0] == "structure" and list(stages)[-1] == "record"
    assert set(stages) == set(run["timings"])
    assert all(stage["state"] == "done" for stage in stages.values())
    assert 0 < len(run["results"]) <= 5
    assert [r["rank"] for r in run["results"]] == list(range(1, len(run["results"]) + 1))
    assert all(r["evidence"]["reason"] and r["score"] is None for r in run["results"])
    assert run["results"][0]["id"].startswith(("tachyon", "orphan"))
    bibtex = client.get(f"/runs/{run['id']}/export", params={"format": "bibtex"})
    assert bibtex.status_code == 200 and "rank 1}" in bibtex.text

    audit = client.get(accepted["audit_url"])
    assert audit.status_code == 200
    assert audit.json()["run_id"] == run["id"]
    assert audit.json()["idea"] == IDEA

    graph = client.get(f"/runs/{run['id']}/graph")
    assert graph.status_code == 422 and "/audit" in graph.json()["detail"]


def test_unknown_idea_audit_is_404(recording_client: TestClient) -> None:
    response = recording_client.get("/ideas/nope/audit")
    assert response.status_code == 404 and response.json()["error"] == "RunNotFound"


@pytest.mark.parametrize(("body", "status", "field"), [
    ({"idea": "ab"}, 400, "idea"),
    ({"idea": IDEA, "mode": "poem"}, 400, "mode"),
    ({"idea": IDEA, "pdf_dir": "/etc"}, 400, "pdf_dir"),
    ({"idea": IDEA, "providers": True}, 400, "providers"),
    ({"idea": IDEA, "params": {"max_facets": 9}}, 400, "params.max_facets"),
    ({"idea": IDEA, "year_min": 2003, "year_max": 1999}, 422, "year_min"),
])
def test_bad_idea_requests_name_the_field(recording_client: TestClient,
                                          recording_graph: RecordingGraph, body: dict[str, Any],
                                          status: int, field: str) -> None:
    response = recording_client.post("/ideas", json=body)
    assert response.status_code == status, response.text
    assert field in response.json()["detail"]
    assert "create_run" not in recording_graph.names()


class RecordingServer(LoopbackJsonServer):
    """A loopback server that answers every GET and notes its path: whatever it sees is a
    fetch the service made."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        super().__init__()

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        seen = self.seen

        class Recorder(JsonHandler):
            def do_GET(self) -> None:  # noqa: N802  (the name http.server calls)
                seen.append(self.path)
                self.send_json(200, b"{}", {})

        return Recorder

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture
def loopback() -> Iterator[RecordingServer]:
    with RecordingServer().running() as server:
        yield server


@pytest.fixture
def provider_client(api_settings: Settings, graph: Graph,
                    loopback: RecordingServer) -> Iterator[TestClient]:
    """A server whose providers (all on the loopback server) the operator has switched off."""
    providers = api_settings.providers.model_copy(update={
        "semantic_scholar_url": loopback.root, "crossref_url": loopback.root,
        "arxiv_url": loopback.root})
    settings = api_settings.model_copy(update={"providers": providers})
    with TestClient(create_app(settings, graph=graph)) as test_client:
        test_client.headers["X-API-Key"] = API_KEY
        yield test_client


@pytest.mark.integration
def test_a_request_cannot_send_the_server_to_a_url_or_turn_providers_on(
        provider_client: TestClient, corpus: dict[str, Any],
        loopback: RecordingServer) -> None:
    response = provider_client.post("/ideas", json={"idea": IDEA, "params": {
        "use_providers": True,
        "arxiv_pdf_url": f"{loopback.root}/internal/admin?from-crase="}})
    if response.status_code == 202:
        wait_for_run(provider_client, response.json()["run_id"], timeout_s=300)
    assert loopback.seen == [], f"the server fetched {loopback.seen} on a request's word"
    assert response.status_code == 400, response.text
    assert "use_providers" in response.json()["detail"]


@pytest.mark.parametrize(("params", "named"), [
    ({"arxiv_pdf_url": "http://127.0.0.1:9/internal"}, "arxiv_pdf_url"),
    ({"use_providers": True}, "use_providers"),
    ({"use_providers": False}, "use_providers"),
    ({"pdf_max_bytes": 900_000_000}, "pdf_max_bytes"),
    ({"pdf_timeout_s": 600}, "pdf_timeout_s"),
    ({"provider_probe_timeout_s": 60}, "provider_probe_timeout_s"),
    ({"embedding_cache": False}, "embedding_cache"),
    ({"arxiv_url": "http://127.0.0.1:9/"}, "arxiv_url"),
    ({"selection_budget": 2000}, "selection_budget"),  # above this server's 120
    ({"hits_per_query": 41}, "hits_per_query"),  # above this server's 40
])
def test_operator_settings_and_budgets_past_the_servers_are_refused(
        recording_client: TestClient, recording_graph: RecordingGraph, params: dict[str, Any],
        named: str) -> None:
    response = recording_client.post("/ideas", json={"idea": IDEA, "params": params})
    assert response.status_code == 400, response.text
    assert named in response.json()["detail"]
    assert "create_run" not in recording_graph.names()


def test_a_request_may_lower_a_budget_and_move_a_gate() -> None:
    from crase.idea.request import IdeaParams, merge_idea_params

    server = IdeaSettings(use_providers=False, arxiv_pdf_url="https://pdfs.example/pdf")
    given = IdeaParams.model_validate({"selection_budget": 60, "strong_rank_cutoff": 5})
    merged = merge_idea_params(given, server)
    assert (merged.selection_budget, merged.strong_rank_cutoff) == (60, 5)
    assert merged.model_dump(exclude={"selection_budget", "strong_rank_cutoff"}) == \
        server.model_dump(exclude={"selection_budget", "strong_rank_cutoff"})
    assert merge_idea_params(None, server) == server


def test_the_request_schema_lists_budgets_and_gates_only(recording_client: TestClient) -> None:
    schemas = recording_client.get("/schema/openapi.json").json()["components"]["schemas"]
    params = next(schema for name, schema in schemas.items() if name.endswith("IdeaParams"))
    assert "selection_budget" in params["properties"]
    assert not {"arxiv_pdf_url", "use_providers", "pdf_max_bytes", "pdf_timeout_s",
                "provider_probe_timeout_s", "embedding_cache"} & set(params["properties"])
