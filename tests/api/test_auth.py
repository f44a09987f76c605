"""API keys: every route but /health (and the schema) needs one; which keys a server
accepts; the refusal to serve keyless on a public address."""

import re
import stat
from pathlib import Path

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.api.auth import is_loopback, key_is_accepted, resolve_api_keys
from crase.api.cli import main
from crase.errors import SettingsError
from crase.settings import ApiSettings, Settings
from tests.api.conftest import HEALTHY
from tests.recording_graph import RecordingGraph

PROTECTED = [
    ("POST", "/searches", {"query": "tachyon condensation"}),
    ("GET", "/runs/abc", None),
    ("GET", "/runs/abc/graph", None),
    ("POST", "/runs/abc/cancel", None),
    ("GET", "/runs/abc/export?format=csv", None),
    ("GET", "/papers?q=brane", None),
    ("GET", "/papers/some-id", None),
    ("POST", "/papers/batch", {"papers": [], "citations": []}),
    ("POST", "/analyst/cypher", {"query": "RETURN 1"}),
]


@pytest.fixture
def plain_settings(tmp_path: Path) -> Settings:
    """Settings with a var_dir of the test's own, no database."""
    return Settings(var_dir=tmp_path / "var")


@pytest.mark.parametrize(("method", "path", "body"), PROTECTED)
def test_protected_routes_refuse_a_missing_key(recording_client: TestClient, method: str,
                                               path: str, body: dict | None) -> None:
    client = recording_client
    response = client.request(method, path, json=body, headers={"X-API-Key": ""})
    del client.headers["X-API-Key"]
    missing = client.request(method, path, json=body)
    assert missing.status_code == 401
    assert missing.json()["error"] == "ApiKeyRejected"
    assert "missing X-API-Key" in missing.json()["detail"]
    assert response.status_code == 401


@pytest.mark.parametrize(("method", "path", "body"), PROTECTED)
def test_protected_routes_refuse_a_wrong_key(recording_client: TestClient,
                                             recording_graph: RecordingGraph, method: str,
                                             path: str, body: dict | None) -> None:
    response = recording_client.request(method, path, json=body, headers={"X-API-Key": "not-a-key"})
    assert response.status_code == 401
    assert "no accepted key" in response.json()["detail"]
    assert recording_graph.calls == []  # refused before the graph was asked anything


def test_every_route_of_the_schema_but_health_refuses_a_wrong_key(
        recording_client: TestClient, recording_graph: RecordingGraph) -> None:
    """Read from the schema, so a route added later is held to the key without a list."""
    client = recording_client
    recording_graph.answers.update(HEALTHY)
    paths = client.get("/schema/openapi.json").json()["paths"]
    let_through = []
    for path, operations in paths.items():
        concrete = re.sub(r"\{[^}]+\}", "abc", path)
        for method in operations:
            response = client.request(method.upper(), concrete, json={},
                                      headers={"X-API-Key": "not-a-key"})
            if path != "/health" and response.status_code != 401:
                let_through.append(f"{method.upper()} {path}: {response.status_code}")
    assert len(paths) > 10
    assert not let_through


def test_health_and_schema_need_no_key(recording_client: TestClient,
                                       recording_graph: RecordingGraph) -> None:
    client = recording_client
    recording_graph.answers.update(HEALTHY)
    del client.headers["X-API-Key"]
    assert client.get("/health").status_code == 200
    schema = client.get("/schema/openapi.json")
    assert schema.status_code == 200
    assert schema.json()["components"]["securitySchemes"]["apiKey"]["name"] == "X-API-Key"


@pytest.mark.integration
def test_a_valid_key_is_let_through(client: TestClient) -> None:
    response = client.post("/analyst/cypher", json={"query": "RETURN 1 AS one"})
    assert response.status_code == 200
    assert response.json()["rows"] == [{"one": 1}]


def test_app_refuses_to_start_without_keys(plain_settings: Settings) -> None:
    with pytest.raises(SettingsError, match="at least one key"):
        create_app(plain_settings)


def test_configured_keys_win(plain_settings: Settings) -> None:
    configured = plain_settings.model_copy(update={"api": ApiSettings(api_keys=["a", "b"])})
    assert resolve_api_keys(configured, "0.0.0.0") == (["a", "b"], None)


def test_loopback_without_keys_generates_one_private_key_and_reuses_it(
        plain_settings: Settings) -> None:
    settings = plain_settings
    keys, path = resolve_api_keys(settings, "127.0.0.1")
    assert path == settings.var_dir / "api-key" and path.exists()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(keys) == 1 and len(keys[0]) >= 40
    assert resolve_api_keys(settings, "localhost") == (keys, path)


def test_public_address_without_keys_is_refused(plain_settings: Settings) -> None:
    settings = plain_settings
    with pytest.raises(SettingsError, match="without API keys"):
        resolve_api_keys(settings, "0.0.0.0")
    assert not (settings.var_dir / "api-key").exists()


def test_serve_refuses_a_public_address_without_keys(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path))
    monkeypatch.setenv("CRASE_API__API_KEYS", "[]")  # wins over any local .env
    assert main(["serve", "--host", "0.0.0.0", "--port", "1"]) == 2


def test_loopback_detection() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    assert not is_loopback("example")


def test_key_comparison() -> None:
    assert key_is_accepted("b", ["a", "b"])
    assert not key_is_accepted("", ["a"]) and not key_is_accepted(None, ["a"])
    assert not key_is_accepted("a ", ["a"])
