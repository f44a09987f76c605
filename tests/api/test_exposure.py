"""What a client is shown: no internal addresses, model endpoints or raw driver text.

GET /health without an accepted key shows each component's status only; with one, also
versions, endpoints, served models and reasons. A 5xx carries a short reason and what to
do; the error's own message (Bolt address, query name, driver text) goes to the server
log. The analyst endpoint keeps Neo4j's one-line message, since the analyst wrote the
query, without Java class names or internal ids.
"""

import json
import logging
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest
from litestar.testing import TestClient

from crase.api.analyst import neo4j_reason
from crase.api.app import create_app
from crase.errors import DatabaseError, ModelError
from crase.graph import Graph
from crase.settings import DatabaseSettings, ModelEndpoint, ModelSettings, Settings
from tests.api.conftest import API_KEY, api_settings_for
from tests.api.test_health import ModelsHandler
from tests.conftest import free_port
from tests.recording_graph import RecordingGraph


@pytest.fixture
def model_server() -> Iterator[str]:
    """An OpenAI-compatible stand-in that serves `served-model` to `secret-token`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), ModelsHandler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture
def configured(settings: Settings, model_server: str, graph: Graph) -> Iterator[TestClient]:
    models = ModelSettings(
        planner=ModelEndpoint(base_url=model_server, model="served-model",
                              api_key="secret-token"),
        claims=ModelEndpoint(base_url=f"http://127.0.0.1:{free_port()}/v1",
                             model="internal-claims-model"),
    )
    app_settings = api_settings_for(settings).model_copy(update={"models": models})
    with TestClient(create_app(app_settings, graph=graph)) as client:
        yield client


@pytest.mark.integration
def test_health_without_a_key_shows_status_only(configured: TestClient,
                                                model_server: str) -> None:
    response = configured.get("/health")
    assert response.status_code == 200
    health = response.json()
    text = json.dumps(health)
    assert model_server not in text and "127.0.0.1" not in text
    assert "served-model" not in text and "internal-claims-model" not in text
    assert "5.26" not in text  # no versions either
    assert health["status"] == "degraded"
    assert health["database"] == {"ok": True} and health["gds"] == {"ok": True}
    assert health["models"]["planner"] == {"status": "ok"}
    assert health["models"]["claims"] == {"status": "down"}
    assert health["models"]["reporter"] == {"status": "not configured"}
    assert "X-API-Key" in health["detail"]


@pytest.mark.integration
def test_health_with_a_wrong_key_is_the_public_view(configured: TestClient,
                                                    model_server: str) -> None:
    health = configured.get("/health", headers={"X-API-Key": "not-a-key"}).json()
    assert model_server not in json.dumps(health)


@pytest.mark.integration
def test_health_with_the_key_shows_endpoints_and_reasons(configured: TestClient,
                                                         model_server: str) -> None:
    health = configured.get("/health", headers={"X-API-Key": API_KEY}).json()
    planner = health["models"]["planner"]
    assert planner["status"] == "ok" and planner["base_url"] == model_server
    assert planner["model"] == "served-model" and planner["served"] == ["served-model"]
    assert health["models"]["claims"]["status"] == "unreachable"
    assert health["database"]["version"].startswith("5.")
    assert "secret-token" not in json.dumps(health)


@pytest.fixture
def offline(settings: Settings) -> Iterator[tuple[TestClient, str]]:
    """A client of an app whose database is away, and the port it would be on."""
    port = free_port()
    down = DatabaseSettings(uri=f"bolt://127.0.0.1:{port}", password="unused")
    # A short retry budget: each request here would otherwise retry the absent database 5 s.
    app_settings = api_settings_for(settings, database_retry_s=0.5).model_copy(
        update={"database": down})
    with TestClient(create_app(app_settings)) as client:
        client.headers["X-API-Key"] = API_KEY
        yield client, str(port)


@pytest.mark.integration
def test_database_down_names_no_address(offline: tuple[TestClient, str],
                                        caplog: pytest.LogCaptureFixture) -> None:
    client, port = offline
    with caplog.at_level(logging.WARNING):
        for method, path, body in (("GET", "/papers/x", None), ("GET", "/papers?q=brane", None),
                                   ("POST", "/analyst/cypher", {"query": "RETURN 1"}),
                                   ("GET", "/runs/abc", None)):
            response = client.request(method, path, json=body)
            assert response.status_code == 503, (path, response.text)
            body_text = response.text
            assert port not in body_text and "bolt" not in body_text.lower(), body_text
            assert response.json()["error"] == "DatabaseUnavailable"
            assert "the database is not reachable" in response.json()["detail"]
            assert "crase db start" in response.json()["detail"]
    assert port in caplog.text  # the address is in the server log


@pytest.mark.integration
def test_database_down_health_names_no_address(offline: tuple[TestClient, str]) -> None:
    client, port = offline
    for key in ("", API_KEY):
        response = client.get("/health", headers={"X-API-Key": key})
        assert response.status_code == 503
        assert port not in response.text
        assert response.json()["database"]["ok"] is False
    detail = client.get("/health").json()["database"]["detail"]
    assert "crase db start" in detail


def test_a_database_failure_shows_a_reason_not_the_driver_text(
        recording_client: TestClient, recording_graph: RecordingGraph,
        caplog: pytest.LogCaptureFixture) -> None:
    recording_graph.answers["read_paper"] = DatabaseError(
        "query read_paper failed: Neo.ClientError.Schema.IndexNotFound: "
        "index 'paper_id_unique' on 4:0f3c2b1e-aaaa-bbbb-cccc-1234567890ab:7")
    with caplog.at_level(logging.ERROR):
        response = recording_client.get("/papers/some-id")
    assert response.status_code == 500
    body = response.json()
    assert body["error"] == "DatabaseError"
    for secret in ("read_paper", "Neo.", "paper_id_unique", "4:0f3c2b1e"):
        assert secret not in response.text
    assert "server log" in body["detail"]
    assert "paper_id_unique" in caplog.text


def test_a_model_failure_names_no_endpoint(recording_client: TestClient,
                                           recording_graph: RecordingGraph) -> None:
    recording_graph.answers["read_paper"] = ModelError(
        "served-model at http://10.0.0.7:8000/v1 for planner: unreachable")
    response = recording_client.get("/papers/some-id")
    assert response.status_code == 502
    assert "10.0.0.7" not in response.text and response.json()["error"] == "ModelError"


def test_analyst_errors_keep_the_first_line_without_ids_or_class_names() -> None:
    message = ("Failed to invoke procedure `db.index.fulltext.queryNodes`: Caused by: "
               "java.lang.IllegalArgumentException: Node 4:0f3c2b1e-aaaa-bbbb-cccc-1234567890ab:7"
               " in database 0f3c2b1e-aaaa-bbbb-cccc-1234567890ab is gone\n  at line two")
    reason = neo4j_reason("Neo.ClientError.Procedure.ProcedureCallFailed", message)
    assert reason == ("Neo.ClientError.Procedure.ProcedureCallFailed: Failed to invoke "
                      "procedure `db.index.fulltext.queryNodes`: Node <element id> in "
                      "database <id> is gone")


def test_analyst_positions_count_in_the_analyst_text() -> None:
    reason = neo4j_reason("Neo.ClientError.Statement.SyntaxError",
                          "Invalid input 'MATC' (line 1, column 9 (offset: 8))\n\"EXPLAIN...",
                          prefix=len("EXPLAIN "))
    assert reason.endswith("(line 1, column 1 (offset: 0))")
    reason = neo4j_reason("Neo.ClientError.Statement.SyntaxError",
                          "Invalid input 'x' (line 2, column 3 (offset: 20))", prefix=8)
    assert reason.endswith("(line 2, column 3 (offset: 12))")
