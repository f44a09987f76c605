"""An app per test with one API key: on the session's Neo4j (`client`, with a loaded
fixture corpus and a finished run where a test asks), or on a recording graph that needs
no server (`recording_client`, for tests of what the app checks, sends and words)."""

import time
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.graph import Graph
from crase.settings import ApiSettings, ProviderSettings, Settings
from tests.api.corpus import QUERY, load_corpus_into
from tests.recording_graph import RecordingGraph

API_KEY = "test-key-for-the-api-tests"


# Nothing in these tests may reach past loopback: providers are off, and their addresses
# point at a closed local port all the same.
CLOSED = "http://127.0.0.1:9"


def api_settings_for(settings: Settings, **api: Any) -> Settings:
    values = {"api_keys": [API_KEY], "search_workers": 1, "analyst_timeout_s": 2.0,
              "analyst_row_limit": 50, **api}
    providers = ProviderSettings(enabled=False, semantic_scholar_url=CLOSED,
                                 crossref_url=CLOSED, arxiv_url=CLOSED)
    idea = settings.idea.model_copy(update={"use_providers": False, "arxiv_pdf_url": CLOSED})
    return settings.model_copy(update={"api": ApiSettings(**values), "providers": providers,
                                       "idea": idea})


@pytest.fixture
def api_settings(settings: Settings) -> Settings:
    return api_settings_for(settings)


@pytest.fixture
def client(api_settings: Settings, graph: Graph) -> Iterator[TestClient]:
    """A client that sends the key; the app shares the test's (cleaned) graph."""
    with TestClient(create_app(api_settings, graph=graph)) as test_client:
        test_client.headers["X-API-Key"] = API_KEY
        yield test_client


# What the health check reads, as the session's Neo4j answers it: for the recording graph.
HEALTHY = {"read_database_components": [{"version": "5.26.0", "edition": "community"}],
           "read_gds_version": [{"version": "2.13.0"}]}


@pytest.fixture(scope="session")
def offline_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The API tests' settings, without a database: for the recording graph."""
    return api_settings_for(Settings(var_dir=tmp_path_factory.mktemp("offline") / "var"))


@pytest.fixture(scope="session")
def recording_app(offline_settings: Settings) -> Iterator[tuple[RecordingGraph, TestClient]]:
    """One app on one recording graph for the whole session: building an app and its
    schema costs about 0.3 s, more than most tests that use it."""
    graph = RecordingGraph()
    with TestClient(create_app(offline_settings, graph=graph)) as test_client:
        yield graph, test_client


@pytest.fixture
def recording_graph(recording_app: tuple[RecordingGraph, TestClient]) -> RecordingGraph:
    """The recording graph, with no calls recorded yet (start-up's included) and no rows."""
    graph = recording_app[0]
    graph.calls.clear()
    graph.answers.clear()
    return graph


@pytest.fixture
def recording_client(recording_app: tuple[RecordingGraph, TestClient],
                     recording_graph: RecordingGraph) -> TestClient:
    """A client that sends the key (and no cookie), of the app on the recording graph."""
    test_client = recording_app[1]
    test_client.headers.clear()
    test_client.headers.update({"X-API-Key": API_KEY})
    test_client.cookies.clear()
    return test_client


@pytest.fixture
def corpus(api_settings: Settings, graph: Graph) -> dict[str, Any]:
    """The fixture corpus, written by the loader; returns the load's answer. (Read-only
    tests share one loaded corpus: tests/api/loaded/.)"""
    return load_corpus_into(graph, api_settings)


def wait_for_run(client: TestClient, run_id: str, timeout_s: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = client.get(f"/runs/{run_id}").json()
        if run["status"] not in ("queued", "running"):
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not finish within {timeout_s} s")


# Few seeds and a deeper k, so results include papers reached by the walk, not only seeds.
# The paper's pipeline (plan seeds, Delta, pruning): the corpus is built to show its cuts.
SEARCH_PARAMS = {"k": 20, "seeds_per_query": 2, "sub_queries": 2, "tau": 0.2,
                 "weighting": "coverage", "query_seeds": 0}


def start_search(client: TestClient, **body: Any) -> str:
    response = client.post("/searches", json={"query": QUERY, "params": SEARCH_PARAMS, **body})
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert accepted["run_url"] == f"/runs/{accepted['run_id']}"
    assert accepted["status"] in ("queued", "running")
    return str(accepted["run_id"])


@pytest.fixture
def finished_run(client: TestClient, corpus: dict[str, Any]) -> dict[str, Any]:
    """A search over the fixture corpus, run to the end through the API."""
    run = wait_for_run(client, start_search(client))
    assert run["status"] == "done", run
    return run
