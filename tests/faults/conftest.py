"""The fault tests' own Neo4j (stopped and started by the tests, never the session's shared
server), an app on it with the API tests' key and loopback-only settings, and the helpers
the fault tests share (start a search, read a Run node)."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.graph import Graph
from crase.settings import DatabaseSettings, ModelEndpoint, ModelSettings, Settings
from tests.api.conftest import API_KEY, api_settings_for
from tests.api.corpus import QUERY, fixture_corpus
from tests.conftest import clean_graph
from tests.faults.servers import DisposableNeo4j, disposable_neo4j


@pytest.fixture(scope="package")
def fault_db() -> Iterator[DisposableNeo4j]:
    if not any((DatabaseSettings().jars_dir / "lib").glob("*.jar")):
        pytest.skip("the fault tests start a Neo4j of their own from the jars: `make jars`")
    with disposable_neo4j() as database:
        yield database


@pytest.fixture
def fault_graph(fault_db: DisposableNeo4j) -> Iterator[Graph]:
    """A clean graph on the fault tests' Neo4j, started again if a test left it stopped."""
    if not fault_db.running:
        fault_db.start()
    graph = fault_db.connect()
    clean_graph(graph)
    yield graph
    graph.close()


def fault_settings(database: DisposableNeo4j, tmp_path: Path, planner_url: str | None = None,
                   **api: Any) -> Settings:
    """Settings for an app on `database`; the planner role on `planner_url` when given (no
    reply cache, so every plan is asked)."""
    base = Settings(database=database.settings, var_dir=tmp_path / "var")
    planner = ModelEndpoint(base_url=planner_url, model="test/planner", timeout_s=60.0)
    models = ModelSettings(planner=planner if planner_url else ModelEndpoint(),
                           cache_enabled=False)
    values = {"search_workers": 2, "database_retry_s": 1.0, **api}
    return api_settings_for(base, **values).model_copy(update={"models": models})


@contextmanager
def fault_client(settings: Settings) -> Iterator[TestClient]:
    """A client of an app that connects to the database itself (as `crase serve` does)."""
    with TestClient(create_app(settings)) as client:
        client.headers["X-API-Key"] = API_KEY
        yield client


def load_corpus(client: TestClient) -> None:
    papers, citations = fixture_corpus()
    response = client.post("/papers/batch", json={"papers": papers, "citations": citations})
    assert response.status_code == 200, response.text


# sub_queries > 0: the plan asks the planner model; 0: no model call at all.
ASKS_THE_PLANNER = {"sub_queries": 1, "query_seeds": 5, "weighting": "uniform", "k": 10}
OFFLINE = {"sub_queries": 0, "weighting": "uniform", "k": 10}


def start(client: TestClient, params: dict[str, Any]) -> str:
    response = client.post("/searches", json={"query": QUERY, "params": params})
    assert response.status_code == 202, response.text
    return str(response.json()["run_id"])


def stage_of(client: TestClient, run_id: str) -> str | None:
    run = client.get(f"/runs/{run_id}").json()
    return run["progress"]["stage"] if run["status"] == "running" else None


def recorded(graph: Graph, run_id: str) -> dict[str, Any]:
    with graph.driver.session(database=graph.database) as session:
        record = session.run("MATCH (r:Run {id: $id}) RETURN r.status AS status, "
                             "r.error AS error", id=run_id).single(strict=True)
    return record.data()
