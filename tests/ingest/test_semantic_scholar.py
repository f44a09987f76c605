"""The Semantic Scholar client against recorded replies on a loopback server: pagination,
the neighbour cap, null abstracts, the shared rate limit, and every failure mode ending
in a named error or a correct result."""

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from crase.errors import (
    ProviderRateLimited,
    ProviderReplyInvalid,
    ProviderRequestRejected,
    ProviderTimeout,
    ProviderUnavailable,
)
from crase.http import retry_after_seconds
from crase.ingest.semantic_scholar import (
    REFERENCE_ID_FIELDS,
    RateLimiter,
    S2Paper,
    SemanticScholarClient,
    neighbour_pages,
    paper_from_s2,
)
from crase.settings import ProviderSettings
from tests.ingest.replay_server import ReplayServer, Reply, fixture

CENTRE = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer().running() as running:
        yield running


def provider_settings(server: ReplayServer, **overrides: Any) -> ProviderSettings:
    values: dict[str, Any] = {
        "semantic_scholar_url": server.url, "requests_per_second": 100.0, "timeout_s": 2.0,
        "max_retries": 2, "backoff_base_s": 0.01, "backoff_max_s": 3.0}
    return ProviderSettings(**{**values, **overrides})


def run(server: ReplayServer, call: Any, **overrides: Any) -> Any:
    async def go() -> Any:
        async with SemanticScholarClient(provider_settings(server, **overrides)) as client:
            return await call(client)
    return asyncio.run(go())


class FakeClock:
    """Time that passes only when the limiter sleeps; what it slept, in order."""

    def __init__(self, start: float = 100.0) -> None:
        self.time = start
        self.slept: list[float] = []

    def now(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.time += seconds


class SendTimes(httpx.AsyncHTTPTransport):
    """The real transport, noting the clock as each request goes out (the limiter has let
    it through by then; nothing between the two gives way to another caller)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        super().__init__()
        self.clock = clock
        self.times: list[float] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.times.append(self.clock())
        return await super().handle_async_request(request)


async def retry_pending(client: SemanticScholarClient) -> None:
    """Returns once the client is waiting out a retry (a 429's Retry-After)."""
    while client.retry_wait_s == 0:
        await asyncio.sleep(0.01)


def test_batch_details_keep_the_order_and_mark_unknown_ids(server: ReplayServer) -> None:
    server.add("POST", "paper/batch", Reply.json(fixture("paper_batch.json")))
    found = run(server, lambda c: c.papers(["arXiv:hep-th/0101001", "CorpusId:1", "nope"]))
    assert [p.paperId if p else None for p in found] == [
        CENTRE, "b2c3d4e5f60718293a4b5c6d7e8f901234567890", None]
    request = server.seen("paper/batch")[0]
    assert request.body == b'{"ids":["arXiv:hep-th/0101001","CorpusId:1","nope"]}'
    assert "externalIds" in request.query["fields"][0]


def test_records_become_validated_papers() -> None:
    centre, silent, _ = fixture("paper_batch.json")
    paper = paper_from_s2(S2Paper.model_validate(centre))
    assert paper is not None
    assert paper.id == f"s2:{CENTRE}" and paper.s2_id == CENTRE
    assert (paper.arxiv_id, paper.doi) == ("hep-th/0101001", "10.9999/wb.2001.7")
    assert paper.authors == ["P. Widget", "Q. Brane"] and paper.year == 2001
    assert paper.journal_ref == "J. Widget Phys. 12 (2001) 100-120"
    without = paper_from_s2(S2Paper.model_validate(silent))
    assert without is not None and without.abstract == ""  # a null abstract: missing, not bad
    assert paper_from_s2(S2Paper.model_validate({"paperId": None, "title": "x"})) is None
    assert paper_from_s2(S2Paper.model_validate({"paperId": "x", "title": None})) is None


def test_single_paper_and_404(server: ReplayServer) -> None:
    server.add("GET", f"paper/{CENTRE}", Reply.json(fixture("paper.json")))
    paper = run(server, lambda c: c.paper(CENTRE))
    assert paper.title.startswith("Tachyon condensation")
    assert run(server, lambda c: c.paper("unknown")) is None


def test_search(server: ReplayServer) -> None:
    server.add("GET", "paper/search", Reply.json(fixture("search.json")))
    result = run(server, lambda c: c.search("widget branes", limit=500))
    assert result.total == 2 and result.next_offset == 2 and len(result.papers) == 2
    assert server.seen("paper/search")[0].query["limit"] == ["100"]  # the API's page maximum


def test_references_follow_next_and_count_unresolved(server: ReplayServer,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("crase.ingest.semantic_scholar.PAGE_SIZE", 3)
    server.add("GET", f"paper/{CENTRE}/references",
               Reply(paged=fixture("references.json")["data"]))
    refs = run(server, lambda c: c.references(CENTRE))
    assert len(refs.papers) == 6 and refs.unresolved == 1 and not refs.truncated
    assert [r.query["offset"][0] for r in server.seen(f"paper/{CENTRE}/references")] == [
        "0", "3", "6"]
    assert sum(1 for p in refs.papers if p.abstract is None) == 1


def test_the_neighbour_cap_is_reported_as_truncation(server: ReplayServer,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("crase.ingest.semantic_scholar.PAGE_SIZE", 4)
    server.add("GET", f"paper/{CENTRE}/citations",
               Reply(paged=fixture("citations.json")["data"], cap=10))
    cits = run(server, lambda c: c.citations(CENTRE, cap=10))
    assert len(cits.papers) == 10 and cits.truncated
    limits = [int(r.query["limit"][0]) for r in server.seen(f"paper/{CENTRE}/citations")]
    assert limits == [4, 4, 2]  # never asks past the cap


def test_retry_after_is_honoured_then_the_answer_comes(server: ReplayServer) -> None:
    server.add("GET", f"paper/{CENTRE}",
               Reply.json({"message": "Too Many Requests"}, 429, headers={"Retry-After": "1"}),
               Reply.json(fixture("paper.json")))
    paper = run(server, lambda c: c.paper(CENTRE))
    assert paper.paperId == CENTRE
    first, second = server.seen(f"paper/{CENTRE}")
    assert second.at - first.at >= 0.95


def test_a_429_pauses_every_caller_sharing_the_limiter(server: ReplayServer) -> None:
    server.add("GET", "paper/a",
               Reply.json({}, 429, headers={"Retry-After": "1"}), Reply.json({"paperId": "a"}))
    server.add("GET", "paper/b", Reply.json({"paperId": "b"}))

    async def both(client: SemanticScholarClient) -> None:
        first = asyncio.create_task(client.paper("a"))
        # b asks once a is waiting out its Retry-After (not after a guessed pause: on a
        # busy machine the 429 may take longer than any guess to come back).
        await asyncio.wait_for(retry_pending(client), timeout=10.0)
        await asyncio.gather(first, client.paper("b"))

    run(server, both)
    a_first = server.seen("paper/a")[0].at
    assert server.seen("paper/b")[0].at - a_first >= 0.95


def test_persistent_429_is_a_rate_limit_error(server: ReplayServer) -> None:
    server.add("GET", "paper/x", Reply.json({}, 429))
    with pytest.raises(ProviderRateLimited):
        run(server, lambda c: c.paper("x"))
    assert len(server.seen("paper/x")) == 3  # one try and two retries


def test_a_5xx_is_retried(server: ReplayServer) -> None:
    server.add("GET", "paper/x", Reply.json({}, 500), Reply.json({}, 502),
               Reply.json({"paperId": "x", "title": "Fine"}))
    assert run(server, lambda c: c.paper("x")).title == "Fine"
    server.add("GET", "paper/y", Reply.json({}, 503))
    with pytest.raises(ProviderUnavailable, match="503"):
        run(server, lambda c: c.paper("y"))


def test_a_slow_server_times_out(server: ReplayServer) -> None:
    server.add("GET", "paper/slow", Reply.json({"paperId": "slow"}, delay_s=1.0))
    with pytest.raises(ProviderTimeout):
        run(server, lambda c: c.paper("slow"), timeout_s=0.2, max_retries=1)
    server.add("GET", "paper/once", Reply.json({}, delay_s=1.0),
               Reply.json({"paperId": "once", "title": "Late but fine"}))
    assert run(server, lambda c: c.paper("once"), timeout_s=0.3).title == "Late but fine"


def test_malformed_bodies_are_named_errors(server: ReplayServer) -> None:
    server.add("GET", "paper/broken", Reply(body=b'{"paperId": "broken", "title": '))
    with pytest.raises(ProviderReplyInvalid, match="not JSON"):
        run(server, lambda c: c.paper("broken"))
    server.add("GET", "paper/x/references", Reply.json({"data": "not a list"}))
    with pytest.raises(ProviderReplyInvalid):
        run(server, lambda c: c.references("x"))
    server.add("POST", "paper/batch", Reply.json({"unexpected": True}))
    with pytest.raises(ProviderReplyInvalid):
        run(server, lambda c: c.papers(["a"]))


def test_a_bad_request_is_not_retried(server: ReplayServer) -> None:
    server.add("GET", "paper/search", Reply.json({"error": "query is required"}, 400))
    with pytest.raises(ProviderRequestRejected, match="400"):
        run(server, lambda c: c.search(""))
    assert len(server.seen("paper/search")) == 1


def test_the_api_key_goes_in_its_header(server: ReplayServer) -> None:
    server.add("GET", "paper/x", Reply.json({"paperId": "x"}))
    run(server, lambda c: c.paper("x"), semantic_scholar_key="secret-key")
    assert server.seen("paper/x")[0].headers["x-api-key"] == "secret-key"
    run(server, lambda c: c.paper("x"))
    assert "x-api-key" not in server.seen("paper/x")[1].headers


def test_the_rate_limit_holds_across_concurrent_callers(server: ReplayServer) -> None:
    """Five callers at once, five requests a second: each request goes out a full interval
    after the one before, on the limiter's clock (a fake one, so a busy machine cannot
    narrow the gaps as arrival times at the server could)."""
    for name in "abcde":
        server.add("GET", f"paper/{name}", Reply.json({"paperId": name}))
    clock = FakeClock()
    sent = SendTimes(clock.now)

    async def five() -> None:
        settings = provider_settings(server, requests_per_second=5.0)
        limiter = RateLimiter(1.0 / settings.requests_per_second, clock=clock.now,
                              sleep=clock.sleep)
        async with SemanticScholarClient(settings, limiter=limiter, transport=sent) as client:
            found = await asyncio.gather(*(client.paper(name) for name in "abcde"))
        assert [paper.paperId if paper else None for paper in found] == list("abcde")

    asyncio.run(five())
    gaps = [b - a for a, b in zip(sent.times, sent.times[1:], strict=False)]
    assert len(server.requests) == len(sent.times) == 5
    assert min(gaps) >= 0.2 - 1e-9 and clock.slept == pytest.approx([0.2] * 4)


def test_rate_limiter_with_a_fake_clock() -> None:
    clock = FakeClock()
    limiter = RateLimiter(1.0, clock=clock.now, sleep=clock.sleep)

    async def three() -> None:
        await asyncio.gather(limiter.wait(), limiter.wait(), limiter.wait())
        limiter.pause(5.0)
        await limiter.wait()

    asyncio.run(three())
    assert clock.slept == [1.0, 1.0, 5.0]


def test_retry_after_forms() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 < (retry_after_seconds(future) or 0) <= 31


def test_a_lower_cap_than_assumed_ends_the_list_as_truncated(
        server: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("crase.ingest.semantic_scholar.PAGE_SIZE", 4)
    server.add("GET", f"paper/{CENTRE}/citations",
               Reply(paged=fixture("citations.json")["data"], cap=8))
    cits = run(server, lambda c: c.citations(CENTRE))
    assert len(cits.papers) == 8 and cits.truncated
    server.add("GET", "paper/z/citations", Reply.json({"error": "bad fields"}, 400))
    with pytest.raises(ProviderRequestRejected):  # refused at the first page: a real error
        run(server, lambda c: c.citations("z"))


def test_the_client_counts_calls_tries_and_waits(server: ReplayServer) -> None:
    server.add("GET", "paper/x", Reply.json({}, 503), Reply.json({"paperId": "x"}))
    server.add("GET", "paper/y", Reply.json({"paperId": "y"}))

    async def two(client: SemanticScholarClient) -> tuple[int, int, float, float, float]:
        started = time.monotonic()
        await client.paper("x")
        await client.paper("y")
        return client.calls, client.requests_sent, client.retry_wait_s, \
            client.rate_limit_wait_s, time.monotonic() - started

    calls, tries, retry_wait, rate_wait, elapsed = run(server, two, requests_per_second=5.0)
    assert (calls, tries) == (2, 3) and retry_wait > 0
    # Three tries 0.2 s apart: the third starts 0.4 s after the first at the earliest. The
    # limiter waits for what the requests and the back-off did not already spend, which a
    # loaded machine makes less (0.27 s at load 8), never more than the two slots.
    assert elapsed >= 0.4 - 1e-3
    assert 0.0 <= rate_wait <= 0.4 + 1e-3


def test_pages_per_list_are_known_before_the_calls(server: ReplayServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert [neighbour_pages(n, 10_000) for n in (0, 1, 1000, 1001, 25_000)] == [1, 1, 1, 2, 10]
    assert neighbour_pages(50, 5) == 1
    monkeypatch.setattr("crase.ingest.semantic_scholar.PAGE_SIZE", 3)
    server.add("GET", f"paper/{CENTRE}/references",
               Reply(paged=fixture("references.json")["data"]))

    async def count(client: SemanticScholarClient) -> int:
        await client.references(CENTRE)
        return client.calls

    assert run(server, count) == 3  # seven entries, pages of three


def test_reference_lists_come_from_the_batch_endpoint(server: ReplayServer) -> None:
    server.add("POST", "paper/batch", Reply.json([
        {"paperId": "a", "references": [{"paperId": "b"}, {"paperId": None}]}, None]))
    found = run(server, lambda c: c.papers(["a", "z"], fields=REFERENCE_ID_FIELDS))
    assert [r.paperId for r in found[0].references] == ["b", None] and found[1] is None
    assert server.seen("paper/batch")[0].query["fields"] == ["paperId,references.paperId"]
