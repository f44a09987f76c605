"""An app per test, on the session's Neo4j, with one API key; and a loaded fixture corpus."""

import time
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.graph import Graph
from crase.settings import ApiSettings, ProviderSettings, Settings
from tests.api.corpus import QUERY, fixture_corpus

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


@pytest.fixture
def corpus(client: TestClient) -> dict[str, Any]:
    """The fixture corpus, loaded through POST /papers/batch; returns the load's answer."""
    papers, citations = fixture_corpus()
    response = client.post("/papers/batch", json={"papers": papers, "citations": citations})
    assert response.status_code == 200, response.text
    return response.json()


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
