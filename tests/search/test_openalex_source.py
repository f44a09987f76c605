"""Search with `source="openalex"` against the OpenAlex stand-in over the committed hep-th
sample: seeds from one search call, the neighbourhood fetched into the graph, the budget
and the calls on the Run, a second search read from the cache, a failed list making the
run partial, and a provider that answers nothing failing the search with its hint."""

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from crase.bench.openalex_standin import OpenAlexStandIn
from crase.errors import ProviderUnavailable
from crase.graph import Graph
from crase.search.pipeline import SearchResult, run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.protocols import SearchBackends
from crase.search.seeds import unique_seed_ids
from crase.settings import ProviderSettings, SearchSettings, Settings
from tests.openalex_standin_fixture import standin_fixture

pytestmark = pytest.mark.integration

QUERY = "D-brane dynamics and tachyon condensation in open string field theory"
KEY = "search-key-55"


standin = standin_fixture(KEY)


@pytest.fixture
def fresh(standin: OpenAlexStandIn) -> OpenAlexStandIn:
    standin.reset()
    return standin


@pytest.fixture(scope="module")
def backends() -> SearchBackends:
    return build_search_backends(Settings())


def provider(url: str, folder: Path, **overrides: Any) -> ProviderSettings:
    values: dict[str, Any] = {"enabled": True, "openalex_url": url,
                              "openalex_api_key": SecretStr(KEY), "openalex_dir": folder,
                              "openalex_requests_per_second": 100, "timeout_s": 5.0,
                              "max_retries": 2, "backoff_base_s": 0.01, "backoff_max_s": 0.05}
    return ProviderSettings(**{**values, **overrides})


def search(graph: Graph, backends: SearchBackends, settings: ProviderSettings) -> SearchResult:
    request = SearchRequest(query=QUERY, params=SearchSettings(
        source="openalex", query_seeds=4, k=20, fill="none"))
    return run_search(graph, replace(backends, provider=settings), request)


def test_an_openalex_search_grows_the_graph_and_a_second_is_read_from_the_cache(
        graph: Graph, backends: SearchBackends, fresh: OpenAlexStandIn,
        tmp_path: Path) -> None:
    settings = provider(fresh.url, tmp_path)
    first = search(graph, backends, settings)
    assert first.status == "done" and first.problems == []
    seeds = unique_seed_ids(first.seeds)
    assert len(seeds) == 4 and len(first.results) > 0
    grown = first.counts["provider"]
    assert grown["papers_created"] > 20 and grown["openalex"]["calls"]["search"] == 1
    assert grown["calls"]["stages"]["search"]["made"] == 1
    assert first.counts["edges"] > first.counts["seeds"]
    assert all(a.key == KEY for a in fresh.seen())

    before = len(fresh.seen())
    second = search(graph, backends, settings)
    assert len(fresh.seen()) == before  # every reply from the cache
    assert unique_seed_ids(second.seeds) == seeds
    assert second.counts["provider"]["openalex"]["cached"] > 0


def test_a_failed_list_makes_the_run_partial(graph: Graph, backends: SearchBackends,
                                             fresh: OpenAlexStandIn, tmp_path: Path) -> None:
    fresh.fault(r"filter=cites:", status=503, times=None)
    result = search(graph, backends, provider(fresh.url, tmp_path))
    assert result.status == "partial"
    assert any("citations" in p and "503" in p for p in result.problems)
    assert result.results  # it still ranks what it has


def test_no_answer_at_all_fails_the_search_with_its_hint(
        graph: Graph, backends: SearchBackends, fresh: OpenAlexStandIn,
        tmp_path: Path) -> None:
    fresh.fault(r"search=", status=500, times=None)
    with pytest.raises(ProviderUnavailable, match="CRASE_PROVIDERS__OPENALEX_URL"):
        search(graph, backends, provider(fresh.url, tmp_path))
