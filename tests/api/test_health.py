"""GET /health: database, GDS and model endpoints (a local server stands in for vLLM);
503 with a clear message when the database is down."""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.settings import DatabaseSettings, ModelEndpoint, ModelSettings, Settings
from tests.api.conftest import API_KEY, api_settings_for
from tests.conftest import free_port

pytestmark = pytest.mark.integration


class ModelsHandler(BaseHTTPRequestHandler):
    """Answers GET /v1/models like an OpenAI-compatible server; 401 without the token."""

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        if self.headers.get("Authorization") != "Bearer secret-token":
            self.send_response(401)
            self.end_headers()
            return
        body = json.dumps({"object": "list", "data": [{"id": "served-model"}]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def model_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), ModelsHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_health_reports_database_gds_and_unconfigured_models(client: TestClient) -> None:
    response = client.get("/health")  # with the key: versions too
    assert response.status_code == 200
    health = response.json()
    assert health["status"] == "ok"
    assert health["database"]["ok"] is True and health["database"]["version"].startswith("5.")
    assert health["gds"] == {"ok": True, "version": health["gds"]["version"]}
    assert health["models"]["planner"] == {"status": "not configured"}
    del client.headers["X-API-Key"]
    public = client.get("/health").json()  # without: the status of each component only
    assert public["status"] == "ok"
    assert public["database"] == {"ok": True} and public["gds"] == {"ok": True}
    assert public["models"]["planner"] == {"status": "not configured"}


def test_health_probes_each_configured_model_endpoint(settings: Settings, model_server: str,
                                                      graph: object) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    models = ModelSettings(
        planner=ModelEndpoint(base_url=model_server, model="served-model",
                              api_key="secret-token"),
        claims=ModelEndpoint(base_url=model_server, model="other-model",
                             api_key="secret-token"),
        entailment=ModelEndpoint(base_url=model_server, model="served-model"),
        assessor=ModelEndpoint(base_url=dead, model="served-model"),
    )
    configured = api_settings_for(settings).model_copy(update={"models": models})
    with TestClient(create_app(configured, graph=graph)) as client:  # type: ignore[arg-type]
        health = client.get("/health", headers={"X-API-Key": API_KEY}).json()
    assert health["status"] == "degraded"
    m = health["models"]
    assert m["planner"]["status"] == "ok" and m["planner"]["served"] == ["served-model"]
    assert m["claims"]["status"] == "error" and "other-model" in m["claims"]["detail"]
    assert m["entailment"]["status"] == "error" and "401" in m["entailment"]["detail"]
    assert m["assessor"]["status"] == "unreachable"
    assert m["reporter"] == {"status": "not configured"}
    assert "secret-token" not in json.dumps(health)


def test_database_down_is_503_everywhere(settings: Settings) -> None:
    down = DatabaseSettings(uri=f"bolt://127.0.0.1:{free_port()}", password="unused")
    offline = api_settings_for(settings).model_copy(update={"database": down})
    with TestClient(create_app(offline)) as client:
        health = client.get("/health", headers={"X-API-Key": API_KEY})
        assert health.status_code == 503
        assert health.json()["status"] == "unavailable"
        assert "not reachable" in health.json()["database"]["detail"]
        paper = client.get("/papers/x", headers={"X-API-Key": API_KEY})
        assert paper.status_code == 503
        assert paper.json()["error"] == "DatabaseUnavailable"
        assert "crase db start" in paper.json()["detail"]
