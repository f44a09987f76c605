"""One loaded fixture corpus and one finished search, shared by every test of this package.

The corpus is written by the loader once and searched once through the API; nothing is
cleaned between the tests, so every test here only reads: each is checked to leave the
graph's nodes and relationships as it found them. A test that writes (a second search, a
claim, a batch) belongs beside this package, on the per-test `graph` and `client`.

The fixtures keep the names of the per-test ones (`graph`, `api_settings`, `client`,
`corpus`, `finished_run`), at package scope.
"""

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.graph import Graph
from crase.settings import DatabaseSettings, Settings
from tests.api.conftest import API_KEY, api_settings_for, start_search, wait_for_run
from tests.api.corpus import load_corpus_into
from tests.conftest import clean_graph

# (label or type, count) of everything in the graph.
CENSUS = ("CALL () { MATCH (n) UNWIND labels(n) AS kind RETURN kind, count(*) AS n "
          "UNION ALL MATCH ()-[r]->() RETURN type(r) AS kind, count(*) AS n } "
          "RETURN kind, sum(n) AS n ORDER BY kind")


@pytest.fixture(scope="package")
def api_settings(database_settings: DatabaseSettings,
                 tmp_path_factory: pytest.TempPathFactory) -> Settings:
    var_dir = tmp_path_factory.mktemp("loaded") / "var"
    return api_settings_for(Settings(database=database_settings, var_dir=var_dir))


@pytest.fixture(scope="package")
def graph(session_graph: Graph) -> Iterator[Graph]:
    """The session's graph, emptied before the package and after it (not in between)."""
    clean_graph(session_graph)
    yield session_graph
    clean_graph(session_graph)


@pytest.fixture(scope="package")
def corpus(graph: Graph, api_settings: Settings) -> dict[str, Any]:
    return load_corpus_into(graph, api_settings)


@pytest.fixture(scope="package")
def client(api_settings: Settings, graph: Graph,
           corpus: dict[str, Any]) -> Iterator[TestClient]:
    with TestClient(create_app(api_settings, graph=graph)) as test_client:
        test_client.headers["X-API-Key"] = API_KEY
        yield test_client


@pytest.fixture(scope="package")
def finished_run(client: TestClient) -> dict[str, Any]:
    """A search over the fixture corpus, run to the end through the API."""
    run = wait_for_run(client, start_search(client))
    assert run["status"] == "done", run
    return run


def census(graph: Graph) -> list[tuple[str, int]]:
    with graph.driver.session(database=graph.database) as session:
        return [(row["kind"], row["n"]) for row in session.run(CENSUS)]


@pytest.fixture(autouse=True)
def reads_only(graph: Graph, client: TestClient,
               finished_run: dict[str, Any]) -> Iterator[None]:
    """Every test finds the corpus and the finished run, whichever runs first or alone, and
    leaves the shared graph as it found it (and the shared client's headers)."""
    before = census(graph)
    yield
    client.headers.clear()
    client.headers["X-API-Key"] = API_KEY
    assert census(graph) == before, "a test of tests/api/loaded/ changed the shared graph"
