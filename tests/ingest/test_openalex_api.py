"""The OpenAlex client against the stand-in, server-free (no Neo4j): the documented shapes
the stand-in answers in, OR-filters of 100, cursor paging to its end, a merge's 301, the
faults retried, the key refused, the budget, and the cache keyed by request."""

import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from crase.bench.openalex_standin import CANONICAL_BASE, MERGED_BASE, OpenAlexStandIn
from crase.errors import ProviderBudgetSpent, ProviderKeyRefused
from crase.ingest.openalex import map_work
from crase.ingest.openalex_api import OpenAlexClient
from crase.ingest.openalex_budget import DailyBudget
from crase.settings import ProviderSettings
from tests.openalex_standin_fixture import standin_fixture

KEY = "unit-key-91c2"


standin = standin_fixture(KEY)


@pytest.fixture
def fresh(standin: OpenAlexStandIn) -> OpenAlexStandIn:
    standin.reset()
    return standin


def client(standin: OpenAlexStandIn, folder: Path, **overrides: Any) -> OpenAlexClient:
    values: dict[str, Any] = {"enabled": True, "openalex_url": standin.url,
                              "openalex_api_key": SecretStr(KEY),
                              "openalex_requests_per_second": 100, "max_retries": 3,
                              "backoff_base_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 5}
    return OpenAlexClient(ProviderSettings(**{**values, **overrides}), folder)


def wid(number: int) -> str:
    return f"W{CANONICAL_BASE + number}"


def test_the_standin_answers_in_the_documented_list_shape(fresh: OpenAlexStandIn) -> None:
    with httpx.Client(base_url=fresh.url) as http:
        page = http.get("/works", params={"filter": "cites:" + wid(1117), "per_page": 200,
                                          "cursor": "*"}).json()
        assert set(page) == {"meta", "results", "group_by"}
        assert set(page["meta"]) == {"count", "db_response_time_ms", "page", "per_page",
                                     "next_cursor", "groups_count"}
        seen, cursor = len(page["results"]), page["meta"]["next_cursor"]
        while cursor:
            page = http.get("/works", params={"filter": "cites:" + wid(1117),
                                              "per_page": 200, "cursor": cursor}).json()
            seen += len(page["results"])
            cursor = page["meta"]["next_cursor"]
        assert page["results"] == [] and seen == page["meta"]["count"] > 200
        assert http.get("/works", params={"per_page": 201}).status_code == 400
        many = "|".join(wid(n) for n in range(1, 102))
        assert http.get("/works", params={"filter": f"openalex_id:{many}"}).status_code == 400
        assert http.get("/works", params={"select": "id,nonsense"}).status_code == 400
        merged = http.get(f"/works/W{MERGED_BASE + 25}")
        assert merged.status_code == 301 and merged.headers["location"].endswith(wid(25))
        assert http.get("/works/W1").status_code == 404


def test_a_work_reads_as_the_snapshot_reader_expects(fresh: OpenAlexStandIn,
                                                     tmp_path: Path) -> None:
    with client(fresh, tmp_path) as api:
        work = api.works([wid(1)])[0]
        without = api.works([wid(10)])[0]
    paper = map_work(work)
    assert paper["id"] == "hep-th/9201021" and paper["abstract"].startswith("We discuss")
    assert paper["authors"] and paper["year"] == 1992
    assert without["abstract_inverted_index"] is None and map_work(without)["abstract"] == ""


def test_ids_go_in_or_filters_of_100_and_a_merged_id_follows_its_301(
        fresh: OpenAlexStandIn, tmp_path: Path) -> None:
    with client(fresh, tmp_path) as api:
        works = api.works([wid(n) for n in range(1, 251)])
        assert len(works) == 250 and api.spent.by_kind["list"] == 3
        moved = api.work(f"W{MERGED_BASE + 50}")
        assert moved is not None and moved["id"].endswith(wid(50))
        assert api.spent.merged_works == 1 and api.spent.by_kind["singleton"] == 2


def test_faults_are_retried_and_a_cut_page_is_asked_again(fresh: OpenAlexStandIn,
                                                          tmp_path: Path) -> None:
    fresh.fault(r"works\?", status=500, times=1)
    fresh.fault(r"works\?", status=403, retry_after="0", times=1)
    fresh.fault(r"works\?", truncate=True, times=1)
    with client(fresh, tmp_path) as api:
        assert len(api.works([wid(3)])) == 1
        assert api.spent.tries == 4 and api.spent.by_kind["list"] == 1


def test_a_refused_key_names_the_setting_and_never_the_key(fresh: OpenAlexStandIn,
                                                           tmp_path: Path) -> None:
    with client(fresh, tmp_path, openalex_api_key=SecretStr("not-the-key")) as api, \
            pytest.raises(ProviderKeyRefused) as refused:
        api.works([wid(3)])
    assert "CRASE_PROVIDERS__OPENALEX_API_KEY" in str(refused.value)
    assert "not-the-key" not in str(refused.value)


def test_a_401_is_the_key_refused_too(fresh: OpenAlexStandIn, tmp_path: Path) -> None:
    fresh.fault(r"works\?", status=401, times=1)
    with client(fresh, tmp_path) as api, pytest.raises(ProviderKeyRefused, match="HTTP 401"):
        api.works([wid(3)])
    assert len(fresh.seen()) == 1  # a refusal is final: not retried


def test_the_budget_refuses_a_call_before_it_is_sent(fresh: OpenAlexStandIn,
                                                     tmp_path: Path) -> None:
    with client(fresh, tmp_path, openalex_daily_budget_usd=0.0002) as api:
        api.works([wid(1)])
        api.works([wid(2)])
        with pytest.raises(ProviderBudgetSpent):
            api.works([wid(3)])
        assert api.work(wid(4)) is not None  # singletons are free
    assert len(fresh.seen("works")) == 3
    assert fresh.charged_usd == pytest.approx(0.0002)


def test_a_reply_is_read_from_the_cache_and_the_key_is_not_in_it(
        fresh: OpenAlexStandIn, tmp_path: Path) -> None:
    with client(fresh, tmp_path, openalex_mailto="me@example.org") as api:
        api.works([wid(7)])
    with client(fresh, tmp_path) as again:
        assert len(again.works([wid(7)])) == 1
        assert again.spent.cached == 1 and again.spent.made == 0
    assert len(fresh.seen()) == 1 and fresh.seen()[0].params["mailto"] == "me@example.org"
    assert not any(KEY in p.read_text() for p in tmp_path.rglob("*.json"))


def test_httpx_request_lines_never_show_the_key(fresh: OpenAlexStandIn, tmp_path: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="httpx"), client(fresh, tmp_path) as api:
        api.works([wid(8)])
    assert "HTTP Request" in caplog.text and KEY not in caplog.text


def test_ten_thousand_list_calls_are_a_dollar(tmp_path: Path) -> None:
    budget = DailyBudget(1.0, tmp_path, day=lambda: "2026-12-06")
    budget.write(9_999 * 0.10 / 1000)  # 9,999 list calls booked earlier today
    budget.charge("list")
    with pytest.raises(ProviderBudgetSpent):
        budget.charge("list")
    assert budget.charge("singleton") == 0.0 and budget.left_usd() == pytest.approx(0.0)
