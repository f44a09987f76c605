"""OpenAlex as a discovery route of the idea workflow, against the stand-in: with a key
the route runs and every hit is recorded with its route, query and rank in the audit;
without one the route is skipped with the setting named."""

from pathlib import Path

import pytest
from pydantic import SecretStr

from crase.bench.openalex_standin import OpenAlexStandIn
from crase.graph import Graph
from crase.idea.pipeline import run_idea
from crase.idea.request import IdeaRequest
from crase.idea.roles.protocols import IdeaBackends
from crase.settings import IdeaSettings, ProviderSettings
from tests.idea.corpus import IDEA
from tests.idea.test_providers import closed_port_url
from tests.openalex_standin_fixture import standin_fixture

pytestmark = pytest.mark.integration

KEY = "idea-key-3"


standin = standin_fixture(KEY)


def run_with(graph: Graph, backends: IdeaBackends, settings: ProviderSettings) -> dict:
    backends.providers = settings
    request = IdeaRequest(idea=IDEA, exclude=["src"], providers=True,
                          params=IdeaSettings(provider_probe_timeout_s=2.0))
    return run_idea(graph, backends, request).audit


def settings(standin_url: str, folder: Path, key: str | None) -> ProviderSettings:
    closed = closed_port_url()
    return ProviderSettings(semantic_scholar_url=closed, crossref_url=closed,
                            arxiv_url=closed, openalex_url=standin_url,
                            openalex_api_key=SecretStr(key) if key else None,
                            openalex_dir=folder, openalex_requests_per_second=100,
                            timeout_s=2.0, max_retries=0, backoff_base_s=0.0)


def test_the_openalex_route_runs_and_records_each_hit(
        corpus: Graph, offline_backends: IdeaBackends, standin: OpenAlexStandIn,
        tmp_path: Path) -> None:
    audit = run_with(corpus, offline_backends, settings(standin.url, tmp_path, KEY))
    routes = {route["route"]: route for route in audit["routes"]}
    ran = routes["openalex_search"]
    assert ran["status"] == "ran" and ran["records"] > 0
    assert all("hits" in detail for detail in ran["details"])
    hits = [hit for work in audit["candidates"] for hit in work["routes"]
            if hit["route"] == "openalex_search"]
    assert hits and all({"query", "rank"} <= set(hit["detail"]) for hit in hits)
    # The searches carry the key; the availability probe (a free singleton) needs none.
    assert all(a.key == KEY for a in standin.seen() if a.path == "works")


def test_without_a_key_the_route_is_skipped_and_says_why(
        corpus: Graph, offline_backends: IdeaBackends, standin: OpenAlexStandIn,
        tmp_path: Path) -> None:
    standin.reset()
    audit = run_with(corpus, offline_backends, settings(standin.url, tmp_path, None))
    routes = {route["route"]: route for route in audit["routes"]}
    assert routes["openalex_search"]["status"] == "skipped"
    assert "CRASE_PROVIDERS__OPENALEX_API_KEY" in routes["openalex_search"]["reason"]
    assert standin.seen() == []
