"""Test harness: one real Neo4j + GDS per test session.

Order of preference: `NEO4J_URI` (with NEO4J_USER / NEO4J_PASSWORD) when set; else a
disposable server from the assembled jars on free loopback ports; else, only where a
Docker engine answers, testcontainers. Start-up failures keep the server logs (their path
is in the error). Between tests the graph and every GDS projection are cleaned.
"""

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from crase.bench.loopback_http import free_port
from crase.database import Neo4jServer
from crase.errors import ServerStartError
from crase.graph import Graph
from crase.settings import DatabaseSettings, Settings

TEST_PASSWORD = "crase-test-password"
# Set by `make fuzz`: the tests marked `fuzz` explore only then (tests/api/test_openapi_fuzz.py).
FUZZ_VARIABLE = "CRASE_FUZZ_EXAMPLES"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that starts the server is marked `integration`, so the server-free tier
    (`make test-unit`) never starts one. The generated-request fuzz is exploration, not a
    verdict: deselected unless `make fuzz` asks for it, so every other run collects the
    same tests."""
    unmarked = [item.nodeid for item in items
                if "database_settings" in getattr(item, "fixturenames", ())
                and not item.get_closest_marker("integration")]
    if unmarked:
        raise pytest.UsageError(
            f"{len(unmarked)} tests use the session's Neo4j without the integration marker "
            f"(first: {unmarked[0]}); mark them @pytest.mark.integration")
    if os.environ.get(FUZZ_VARIABLE) is not None:
        return
    fuzz = [item for item in items if item.get_closest_marker("fuzz")]
    if fuzz:
        config.hook.pytest_deselected(items=fuzz)
        items[:] = [item for item in items if not item.get_closest_marker("fuzz")]


def docker_engine_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    return os.system("docker info >/dev/null 2>&1") == 0


@pytest.fixture(scope="session")
def database_settings() -> Iterator[DatabaseSettings]:
    if os.environ.get("NEO4J_URI"):
        yield DatabaseSettings(
            uri=os.environ["NEO4J_URI"],
            user=os.environ.get("NEO4J_USER", "neo4j"),
            password=os.environ.get("NEO4J_PASSWORD", TEST_PASSWORD),
        )
        return
    if any((DatabaseSettings().jars_dir / "lib").glob("*.jar")):
        yield from _disposable_server()
        return
    if docker_engine_answers():
        yield from _testcontainer()
        return
    pytest.fail("no Neo4j: set NEO4J_URI, run `make jars`, or start a Docker engine")


def _disposable_server() -> Iterator[DatabaseSettings]:
    home = Path(tempfile.mkdtemp(prefix="crase-neo4j-test-"))
    settings = DatabaseSettings(
        home=home, bolt_port=free_port(), http_port=free_port(), password=TEST_PASSWORD,
        heap="1g", pagecache="256m",
    )
    server = Neo4jServer(settings)
    try:
        server.start()
    except ServerStartError:
        server.stop()
        kept = Path(tempfile.gettempdir()) / "crase-neo4j-failed-logs"
        shutil.copytree(home / "logs", kept, dirs_exist_ok=True)
        raise
    try:
        yield settings
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


def _testcontainer() -> Iterator[DatabaseSettings]:
    from testcontainers.neo4j import Neo4jContainer  # only where a Docker engine exists

    container = Neo4jContainer("neo4j:5.26-community", password=TEST_PASSWORD).with_env(
        "NEO4J_PLUGINS", '["graph-data-science"]'
    )
    with container:
        yield DatabaseSettings(uri=container.get_connection_url(), password=TEST_PASSWORD)


@pytest.fixture(scope="session")
def session_graph(database_settings: DatabaseSettings) -> Iterator[Graph]:
    graph = Graph.connect(database_settings)
    graph.apply_schema()
    yield graph
    graph.close()


@pytest.fixture
def graph(session_graph: Graph) -> Iterator[Graph]:
    """A clean graph for one test; projections and data are removed afterwards."""
    yield session_graph
    clean_graph(session_graph)


@pytest.fixture
def settings(database_settings: DatabaseSettings, tmp_path: Path) -> Settings:
    return Settings(database=database_settings, var_dir=tmp_path / "var")


def clean_graph(graph: Graph) -> None:
    with graph.driver.session(database=graph.database) as session:
        session.run("CALL gds.graph.list() YIELD graphName "
                    "CALL gds.graph.drop(graphName, false) YIELD graphName AS dropped "
                    "RETURN count(*)").consume()
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS"
                    ).consume()


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, database_settings: DatabaseSettings,
            tmp_path: Path) -> Path:
    """The `crase` command line pointed at the session's database, with its own var_dir."""
    monkeypatch.setenv("CRASE_DATABASE__URI", database_settings.bolt_uri())
    monkeypatch.setenv("CRASE_DATABASE__USER", database_settings.user)
    monkeypatch.setenv("CRASE_DATABASE__PASSWORD", database_settings.password or "")
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path / "var"))
    return tmp_path
