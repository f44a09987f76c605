"""Search with `source="semantic-scholar"` against the local stand-in of the Graph API,
backed by the committed hep-th sample: the graph built through the provider, the call
budget and the cache, every fault ending in a Run status with its reasons, and the key."""

import json
import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.api.cli import main
from crase.bench.semantic_scholar_standin import SemanticScholarStandIn, paper_id_of
from crase.errors import ProviderNotEnabled, ProviderUnavailable
from crase.graph import Graph
from crase.search.expansion import expand
from crase.search.pipeline import SearchResult, run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.protocols import SearchBackends
from crase.search.seeds import unique_seed_ids
from crase.settings import ProviderSettings, SearchSettings, Settings
from tests.api.conftest import API_KEY, api_settings_for, wait_for_run
from tests.conftest import clean_graph, free_port
from tests.sample_slice import SAMPLE, load_sample_slice

pytestmark = pytest.mark.integration

QUERY = "D-brane dynamics and tachyon condensation in open string field theory"
SEEDS = 4


@pytest.fixture(scope="module")
def standin() -> Iterator[SemanticScholarStandIn]:
    with SemanticScholarStandIn(SAMPLE).running() as running:
        yield running


@pytest.fixture
def fresh_standin(standin: SemanticScholarStandIn) -> SemanticScholarStandIn:
    """The module's stand-in with no faults left and an empty request log."""
    with standin.lock:
        standin.faults.clear()
        standin.requests.clear()
    standin.neighbour_cap = 10_000
    return standin


@pytest.fixture(scope="module")
def offline_backends() -> SearchBackends:
    return build_search_backends(Settings())


def provider(url: str, **overrides: Any) -> ProviderSettings:
    values: dict[str, Any] = {"enabled": True, "semantic_scholar_url": url,
                              "requests_per_second": 500.0, "timeout_s": 5.0,
                              "max_retries": 3, "backoff_base_s": 0.01, "backoff_max_s": 0.2}
    return ProviderSettings(**{**values, **overrides})


def search(graph: Graph, backends: SearchBackends, settings: ProviderSettings,
           run_id: str | None = None, **params: Any) -> SearchResult:
    values = {"source": "semantic-scholar", "query_seeds": SEEDS, "k": 20, "fill": "none",
              **params}
    request = SearchRequest(query=QUERY, params=SearchSettings(**values))
    return run_search(graph, replace(backends, provider=settings), request, run_id=run_id)


def top_seeds(standin: SemanticScholarStandIn, count: int = SEEDS) -> list[str]:
    """The stand-in's paperIds of the first hits of QUERY: the search's seeds."""
    return [paper_id_of(i) for i in standin.index.search(QUERY)[:count]]


def run_node(graph: Graph, run_id: str) -> dict[str, Any]:
    with graph.driver.session(database=graph.database) as session:
        record = session.run("MATCH (r:Run {id: $id}) RETURN properties(r) AS r",
                             id=run_id).single()
    assert record is not None
    return dict(record["r"])


def stages(result: SearchResult) -> dict[str, dict[str, Any]]:
    return result.counts["provider"]["calls"]["stages"]


def corpus_ids(graph: Graph, ids: list[str]) -> dict[str, str]:
    """Graph id -> the sample's id, through the arXiv id the provider gave each paper."""
    arxiv = {json.loads(line)["arxiv_id"]: json.loads(line)["id"]
             for line in (SAMPLE / "papers.jsonl").open()}
    rows = graph.read("read_papers", ids=ids)
    return {row["id"]: arxiv[row["arxiv_id"]] for row in rows}


def test_the_provider_graph_is_the_local_one_and_half_hop_neighbourhood(
        graph: Graph, offline_backends: SearchBackends,
        fresh_standin: SemanticScholarStandIn) -> None:
    result = search(graph, offline_backends, provider(fresh_standin.url))
    assert result.status == "done" and result.problems == []
    seeds = unique_seed_ids(result.seeds)
    assert len(seeds) == SEEDS and all(s.startswith("s2:") for s in seeds)
    built = expand(graph, seeds, "1.5", [])
    to_corpus = corpus_ids(graph, built.nodes)
    nodes = {to_corpus[n] for n in built.nodes}
    edges = {(to_corpus[a], to_corpus[b]) for a, b in built.edges}
    grown = result.counts["provider"]
    assert grown["null_abstracts"] > 0  # the stand-in serves some, as the API does

    clean_graph(graph)
    load_sample_slice(graph, 3000)  # the whole sample: the corpus the stand-in serves
    local = expand(graph, [to_corpus[s] for s in seeds], "1.5", [])
    assert nodes == set(local.nodes)
    assert edges == set(local.edges)
    seed_edges = {e for e in edges if e[0] in local.seeds or e[1] in local.seeds}
    assert len(edges) > len(seed_edges) > 0  # neighbour-to-neighbour edges came too


def test_calls_made_equal_the_plan_and_a_second_search_fetches_no_neighbourhood(
        graph: Graph, offline_backends: SearchBackends,
        fresh_standin: SemanticScholarStandIn) -> None:
    settings = provider(fresh_standin.url)
    first = search(graph, offline_backends, settings)
    calls = stages(first)
    assert list(calls) == ["search", "neighbours", "edges"]
    assert calls["search"]["planned"] == 1
    assert calls["neighbours"]["planned"] >= 2 * SEEDS and calls["edges"]["planned"] >= 1
    for stage in calls.values():
        assert stage["made"] == stage["planned"] == stage["tries"]
    assert first.counts["provider"]["calls"]["total"]["tries"] == len(fresh_standin.seen())

    before = len(fresh_standin.seen())
    second = search(graph, offline_backends, settings)
    again = stages(second)
    assert again["neighbours"]["planned"] == again["neighbours"]["made"] == 0
    assert again["edges"]["planned"] == again["edges"]["made"] == 0
    assert [r.path for r in fresh_standin.seen()[before:]] == ["paper/search"]
    assert second.counts["provider"]["seeds_cached"] == unique_seed_ids(second.seeds)
    assert (second.counts["nodes"], second.counts["edges"]) == (
        first.counts["nodes"], first.counts["edges"])

    # Older than the configured age: fetched again.
    third = search(graph, offline_backends, provider(fresh_standin.url,
                                                     semantic_scholar_max_age_days=0))
    assert stages(third)["neighbours"]["made"] == calls["neighbours"]["planned"]


def test_a_429_storm_is_waited_out_and_one_that_never_ends_names_its_seed(
        graph: Graph, offline_backends: SearchBackends,
        fresh_standin: SemanticScholarStandIn) -> None:
    fresh_standin.fault(r"^paper/", status=429, retry_after="0.05", times=3)
    storm_seed = top_seeds(fresh_standin)[1]
    fresh_standin.fault(rf"^paper/{storm_seed}/citations", status=429, retry_after="0.01")
    result = search(graph, offline_backends, provider(fresh_standin.url), run_id="storm")
    assert result.status == "partial"
    assert result.problems == [f"seed s2:{storm_seed} citations: ProviderRateLimited: "
                               f"Semantic Scholar paper/{storm_seed}/citations: still 429 "
                               f"after 4 tries"]
    calls = result.counts["provider"]["calls"]["total"]
    assert calls["tries"] > calls["made"] and calls["retry_wait_s"] > 0
    node = run_node(graph, "storm")
    assert node["status"] == "partial" and storm_seed in node["error"]
    assert storm_seed in json.loads(node["counts"])["provider"]["problems"][0]
    assert result.results  # it still ranks what it has


def test_a_5xx_on_one_seed_makes_the_run_partial(
        graph: Graph, offline_backends: SearchBackends,
        fresh_standin: SemanticScholarStandIn) -> None:
    broken = top_seeds(fresh_standin)[0]
    fresh_standin.fault(rf"^paper/{broken}/references", status=503)
    result = search(graph, offline_backends, provider(fresh_standin.url), run_id="five")
    assert result.status == "partial" and len(result.problems) == 1
    assert result.problems[0].startswith(f"seed s2:{broken} references: ProviderUnavailable")
    assert "HTTP 503 after 4 tries" in result.problems[0]
    assert run_node(graph, "five")["status"] == "partial"
    # Its citations came, and so did the other seeds' lists.
    assert result.counts["nodes"] > SEEDS and result.results


def test_a_truncated_list_is_named(graph: Graph, offline_backends: SearchBackends,
                                   fresh_standin: SemanticScholarStandIn) -> None:
    settings = provider(fresh_standin.url, semantic_scholar_neighbour_cap=5)
    result = search(graph, offline_backends, settings, run_id="cut")
    long_lists = [(s, d) for s in top_seeds(fresh_standin) for d in ("references", "citations")
                  if len(getattr(fresh_standin.corpus, d).get(
                      fresh_standin.corpus.by_paper_id[s], [])) > 5]
    assert long_lists and result.status == "partial"
    assert sorted(result.problems) == sorted(
        f"seed s2:{s} {d}: truncated: Semantic Scholar serves at most 5 {d} per paper; "
        f"5 were read" for s, d in long_lists)
    assert "truncated" in run_node(graph, "cut")["error"]


def test_a_dropped_connection_is_retried_and_one_that_stays_dropped_is_named(
        graph: Graph, offline_backends: SearchBackends,
        fresh_standin: SemanticScholarStandIn) -> None:
    fresh_standin.fault(r"^paper/batch", drop=True, times=1)
    lost = top_seeds(fresh_standin)[2]
    fresh_standin.fault(rf"^paper/{lost}/citations", drop=True)
    result = search(graph, offline_backends, provider(fresh_standin.url), run_id="drop")
    assert stages(result)["edges"]["tries"] == stages(result)["edges"]["made"] + 1
    assert result.status == "partial" and len(result.problems) == 1
    assert result.problems[0].startswith(f"seed s2:{lost} citations: ProviderUnavailable: "
                                         f"Semantic Scholar paper/{lost}/citations: "
                                         f"connection error")
    assert run_node(graph, "drop")["status"] == "partial"


def test_an_unreachable_provider_fails_the_run_with_a_hint(
        graph: Graph, offline_backends: SearchBackends) -> None:
    closed = f"http://127.0.0.1:{free_port()}/graph/v1"
    with pytest.raises(ProviderUnavailable, match="--source local"):
        search(graph, offline_backends, provider(closed, max_retries=1), run_id="gone")
    node = run_node(graph, "gone")
    assert node["status"] == "failed"
    assert "did not answer the seed search" in node["error"]
    assert "--source local" in node["error"]
    assert json.loads(node["counts"])["provider"]["calls"]["stages"]["search"] == {
        "planned": 1, "made": 1, "tries": 2, "rate_limit_wait_s": pytest.approx(0, abs=0.1),
        "retry_wait_s": pytest.approx(0.01, abs=0.02),
        "seconds": pytest.approx(0.05, abs=1.0)}


def test_providers_off_refuses_before_any_run(graph: Graph,
                                              offline_backends: SearchBackends) -> None:
    with pytest.raises(ProviderNotEnabled, match="--source local"):
        search(graph, offline_backends, provider("http://127.0.0.1:9", enabled=False))
    assert graph.read("count_runs", kind=None)[0]["total"] == 0


def test_with_and_without_a_key_the_key_is_never_recorded(
        graph: Graph, offline_backends: SearchBackends, caplog: pytest.LogCaptureFixture,
        tmp_path: Path) -> None:
    secret = "s2-key-that-must-not-leak"
    caplog.set_level(logging.DEBUG)
    with SemanticScholarStandIn(SAMPLE, api_key=secret).running() as keyed:
        result = search(graph, offline_backends,
                        provider(keyed.url, semantic_scholar_key=secret), run_id="keyed")
        assert result.status == "done" and result.results
        assert {r.key for r in keyed.seen()} == {secret}
        with pytest.raises(Exception) as refused:
            search(graph, offline_backends, provider(keyed.url), run_id="unkeyed")
        assert "403" in str(refused.value)
    with SemanticScholarStandIn(SAMPLE).running() as open_api:
        assert search(graph, offline_backends, provider(open_api.url)).status == "done"
        assert {r.key for r in open_api.seen()} == {None}
    with graph.driver.session(database=graph.database) as session:
        runs = [dict(r["r"]) for r in session.run("MATCH (r:Run) RETURN properties(r) AS r")]
    assert len(runs) == 3
    recorded = json.dumps(runs, default=str) + json.dumps(result.to_dict(), default=str)
    assert secret not in recorded and secret not in caplog.text
    assert secret not in str(refused.value)


def test_post_searches_takes_the_source(graph: Graph, settings: Settings,
                                        fresh_standin: SemanticScholarStandIn) -> None:
    off = api_settings_for(settings)
    on = off.model_copy(update={"providers": provider(fresh_standin.url)})
    body = {"query": QUERY, "params": {"source": "semantic-scholar", "query_seeds": 3,
                                       "k": 10, "fill": "none"}}
    with TestClient(create_app(off, graph=graph)) as client:
        client.headers["X-API-Key"] = API_KEY
        refused = client.post("/searches", json=body)
        assert refused.status_code == 422 and "--source" not in refused.text
        assert "source local" in refused.text
    with TestClient(create_app(on, graph=graph)) as client:
        client.headers["X-API-Key"] = API_KEY
        accepted = client.post("/searches", json=body)
        assert accepted.status_code == 202, accepted.text
        run = wait_for_run(client, accepted.json()["run_id"])
        assert run["params"]["params"]["source"] == "semantic-scholar"
        assert [r.path for r in fresh_standin.seen()][0] == "paper/search"
        assert run["counts"]["provider"]["calls"]["stages"]["search"]["made"] == 1


def test_the_command_line_flag_shows_the_plan_before_waiting(
        graph: Graph, cli_env: Path, fresh_standin: SemanticScholarStandIn,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in {"ENABLED": "true", "SEMANTIC_SCHOLAR_URL": fresh_standin.url,
                        "REQUESTS_PER_SECOND": "50", "SEMANTIC_SCHOLAR_NEIGHBOUR_CAP": "5"
                        }.items():
        monkeypatch.setenv(f"CRASE_PROVIDERS__{name}", value)
    code = main(["search", QUERY, "--source", "semantic-scholar", "--query-seeds", "2",
                 "-k", "5", "--fill", "none"])
    out, err = capsys.readouterr()
    assert code == 0 and "Run " in out
    assert "Semantic Scholar search: 1 call planned, about 0 s at 50 request/s" in err
    assert "Semantic Scholar neighbours: 4 calls planned" in err
    assert "crase: partial: seed s2:" in err and "truncated" in err
    assert main(["search", QUERY, "--source", "semantic-scholar", "--hops", "2"]) != 0
    assert "--source semantic-scholar fetches a radius of 1 or 1.5: set --hops to 1 or " \
           "1.5, or --source to local" in capsys.readouterr().err


def test_a_failed_search_beside_one_that_answered_is_named(
        graph: Graph, offline_backends: SearchBackends,
        fresh_standin: SemanticScholarStandIn) -> None:
    # The query's own search runs first and gets every one of its 4 tries refused.
    fresh_standin.fault(r"^paper/search$", status=502, times=4)
    result = search(graph, offline_backends, provider(fresh_standin.url), run_id="half",
                    sub_queries=1)
    assert result.status == "partial" and result.seeds
    assert all(seed.sub_query_index == 1 for seed in result.seeds)
    assert result.problems == [f"search {QUERY!r}: ProviderUnavailable: Semantic Scholar "
                               f"paper/search: HTTP 502 after 4 tries"]
    assert stages(result)["search"] == {**stages(result)["search"], "planned": 2, "made": 2,
                                        "tries": 5}
    assert run_node(graph, "half")["status"] == "partial"
