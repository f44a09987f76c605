"""The Semantic Scholar Graph API: paper search, paper details (batch), references and
citations with pagination, and their conversion into validated `Paper` rows.

- One shared `RateLimiter` spaces requests (1/s by default) across every coroutine that
  uses the client; a 429's `Retry-After` pauses all of them, not just the one that got it.
- 429, 5xx, timeouts and connection errors are retried by the policy of `crase.http`
  (exponential backoff with jitter, Retry-After honoured); when the retries run out the
  error says which it was (`ProviderRateLimited`, `ProviderUnavailable`, `ProviderTimeout`).
  A body that is not the documented JSON is a `ProviderReplyInvalid`, not retried. 404
  means "no such paper" (None).
- The references and citations endpoints serve at most ~10,000 neighbours; a longer list
  comes back with `truncated=True`. Null abstracts are common and are counted.
- The optional API key goes in the `x-api-key` header; it is never part of a message.
- The client counts what it spends: `calls` (requests asked for), `requests_sent` (tries,
  retries included), the seconds its limiter made callers wait (`limiter.waited_s`) and the
  seconds spent in retry back-off (`retry_wait_s`), so a search can record its budget.
"""

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

from crase.errors import (
    ProviderError,
    ProviderRateLimited,
    ProviderReplyInvalid,
    ProviderRequestRejected,
    ProviderTimeout,
    ProviderUnavailable,
)
from crase.http import RetryPolicy, TryOutcome, send_with_retries
from crase.ingest.records import Paper, validate_paper
from crase.settings import ProviderSettings

PAPER_FIELDS = ("paperId,externalIds,title,abstract,year,venue,authors,publicationDate,"
                "journal,citationCount,referenceCount")
NEIGHBOUR_FIELDS = "paperId,externalIds,title,abstract,year,venue,authors,publicationDate,journal"
REFERENCE_ID_FIELDS = "paperId,references.paperId"  # a paper's reference list, ids only
BATCH_IDS = 500  # the batch endpoint takes at most 500 ids
PAGE_SIZE = 1000  # largest page of the references/citations endpoints
SEARCH_PAGE_SIZE = 100
NEIGHBOUR_CAP = 10_000  # offset + limit may not pass this
ModelT = TypeVar("ModelT", bound=BaseModel)


class RateLimiter:
    """At most one request per `interval_s`, shared by every caller of one event loop."""

    def __init__(self, interval_s: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.interval_s = interval_s
        self.clock = clock
        self.sleep = sleep
        self.next_slot = 0.0
        self.lock = asyncio.Lock()
        self.waited_s = 0.0  # seconds callers have spent waiting for their slot

    async def wait(self) -> None:
        async with self.lock:
            delay = self.next_slot - self.clock()
            if delay > 0:
                self.waited_s += delay
                await self.sleep(delay)
            self.next_slot = max(self.clock(), self.next_slot) + self.interval_s

    def pause(self, seconds: float) -> None:
        """Nobody sends before `seconds` from now (a server's Retry-After)."""
        self.next_slot = max(self.next_slot, self.clock() + seconds)


# replies ----------------------------------------------------------------------------------
class S2Author(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str | None = None


class S2Journal(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str | None = None
    volume: str | None = None
    pages: str | None = None


class S2Reference(BaseModel):
    model_config = ConfigDict(extra="ignore")
    paperId: str | None = None  # noqa: N815 - the API's field name


class S2Paper(BaseModel):
    model_config = ConfigDict(extra="ignore")
    paperId: str | None = None  # noqa: N815 - the API's field names
    externalIds: dict[str, Any] | None = None  # noqa: N815
    title: str | None = None
    abstract: str | None = None
    year: int | None = None
    venue: str | None = None
    authors: list[S2Author] | None = None
    publicationDate: str | None = None  # noqa: N815
    journal: S2Journal | None = None
    citationCount: int | None = None  # noqa: N815
    referenceCount: int | None = None  # noqa: N815
    references: list[S2Reference] | None = None  # only when asked for (REFERENCE_ID_FIELDS)


class S2Page(BaseModel):
    model_config = ConfigDict(extra="ignore")
    offset: int = 0
    next: int | None = None
    total: int | None = None
    data: list[dict[str, Any]]


@dataclass
class SearchResult:
    total: int
    papers: list[S2Paper]
    next_offset: int | None


@dataclass
class NeighbourList:
    """References or citations of one paper, as far as the API serves them."""

    paper_id: str
    direction: Literal["references", "citations"]
    papers: list[S2Paper] = field(default_factory=list)
    unresolved: int = 0  # entries the API lists without a paperId (no record behind them)
    truncated: bool = False  # the API stopped at its cap before the end of the list


# client -----------------------------------------------------------------------------------
class SemanticScholarClient:
    def __init__(self, settings: ProviderSettings, limiter: RateLimiter | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.settings = settings
        self.policy = RetryPolicy.of(settings)
        self.limiter = limiter or RateLimiter(1.0 / settings.requests_per_second)
        headers = {"x-api-key": settings.semantic_scholar_key} \
            if settings.semantic_scholar_key else {}
        self.http = httpx.AsyncClient(base_url=settings.semantic_scholar_url.rstrip("/") + "/",
                                      headers=headers, timeout=settings.timeout_s,
                                      transport=transport)
        self.requests_sent = 0  # tries, retries included
        self.calls = 0  # requests asked for, each counted once however often it was tried
        self.retry_wait_s = 0.0

    async def __aenter__(self) -> "SemanticScholarClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.http.aclose()

    @property
    def rate_limit_wait_s(self) -> float:
        return self.limiter.waited_s

    async def search(self, query: str, limit: int = SEARCH_PAGE_SIZE,
                     offset: int = 0) -> SearchResult:
        reply = await self.request("GET", "paper/search", params={
            "query": query, "fields": PAPER_FIELDS, "offset": offset,
            "limit": min(limit, SEARCH_PAGE_SIZE)})
        page = parse_model(S2Page, reply, "paper/search")
        papers = [parse_model(S2Paper, item, "paper/search") for item in page.data]
        return SearchResult(page.total or len(papers), papers, page.next)

    async def paper(self, paper_id: str) -> S2Paper | None:
        """One paper by any id S2 accepts (`arXiv:...`, `DOI:...`, its own); None if unknown."""
        reply = await self.request("GET", f"paper/{paper_id}", params={"fields": PAPER_FIELDS})
        return None if reply is None else parse_model(S2Paper, reply, "paper")

    async def papers(self, paper_ids: list[str],
                     fields: str = PAPER_FIELDS) -> list[S2Paper | None]:
        """Details of many papers, in the order asked; None where S2 has no such paper.
        One call per BATCH_IDS ids."""
        found: list[S2Paper | None] = []
        for start in range(0, len(paper_ids), BATCH_IDS):
            chunk = paper_ids[start:start + BATCH_IDS]
            reply = await self.request("POST", "paper/batch", params={"fields": fields},
                                       json={"ids": chunk})
            if not isinstance(reply, list) or len(reply) != len(chunk):
                raise ProviderReplyInvalid(
                    f"paper/batch answered {type(reply).__name__} for {len(chunk)} ids")
            found.extend(None if item is None else parse_model(S2Paper, item, "paper/batch")
                         for item in reply)
        return found

    async def references(self, paper_id: str, cap: int | None = None) -> NeighbourList:
        return await self.neighbours(paper_id, "references", "citedPaper", cap)

    async def citations(self, paper_id: str, cap: int | None = None) -> NeighbourList:
        return await self.neighbours(paper_id, "citations", "citingPaper", cap)

    async def neighbours(self, paper_id: str, direction: Literal["references", "citations"],
                         key: str, cap: int | None = None) -> NeighbourList:
        """Every page up to the cap (the settings' neighbour cap unless given); None-paperId
        entries are counted, not kept. An empty list for an unknown paper. Calls made:
        `neighbour_pages(count, cap)` for a list of `count` entries."""
        cap = min(NEIGHBOUR_CAP, self.settings.semantic_scholar_neighbour_cap
                  if cap is None else cap)
        result = NeighbourList(paper_id, direction)
        offset: int | None = 0
        while offset is not None:
            limit = min(PAGE_SIZE, cap - offset)
            if limit <= 0:
                result.truncated = True
                break
            try:
                reply = await self.request("GET", f"paper/{paper_id}/{direction}", params={
                    "fields": NEIGHBOUR_FIELDS, "offset": offset, "limit": limit})
            except ProviderRequestRejected:
                if offset == 0:
                    raise
                # Deep pages refused: the API's cap is lower than assumed. What came so far
                # is valid; the list is reported as cut short.
                result.truncated = True
                break
            if reply is None:
                break
            page = parse_model(S2Page, reply, direction)
            for item in page.data:
                record = parse_model(S2Paper, item.get(key) or {}, direction)
                if record.paperId:
                    result.papers.append(record)
                else:
                    result.unresolved += 1
            offset = page.next if page.data else None
        return result

    # transport --------------------------------------------------------------------------
    async def request(self, method: str, path: str, params: dict[str, Any] | None = None,
                      json: Any = None) -> Any:
        """The parsed JSON reply; None for 404. Retries as the module docstring says."""

        async def send() -> httpx.Response:
            await self.limiter.wait()
            self.requests_sent += 1
            return await self.http.request(method, path, params=params, json=json)

        self.calls += 1
        sent = await send_with_retries(send, self.policy, on_retry=self.pause_after_429)
        outcome = sent.outcome
        if isinstance(outcome, httpx.Response) and not sent.gave_up:
            return self.reply_of(outcome, path)
        cause = outcome if isinstance(outcome, httpx.TransportError) else None
        raise self.exhausted(outcome, path, sent.retries + 1) from cause

    def pause_after_429(self, outcome: TryOutcome, delay: float) -> None:
        self.retry_wait_s += delay
        # A 429 is about this client's pace, not about one request: every caller waits.
        if isinstance(outcome, httpx.Response) and outcome.status_code == 429:
            self.limiter.pause(delay)

    def exhausted(self, outcome: TryOutcome, path: str, tries: int) -> ProviderError:
        """The error for a request whose last try still failed."""
        if isinstance(outcome, httpx.TimeoutException):
            return ProviderTimeout(f"Semantic Scholar {path}: no answer within "
                                   f"{self.settings.timeout_s} s, {tries} tries")
        if isinstance(outcome, httpx.TransportError):
            return ProviderUnavailable(f"Semantic Scholar {path}: connection error: {outcome}")
        if outcome.status_code == 429:
            return ProviderRateLimited(f"Semantic Scholar {path}: still 429 after {tries} tries")
        return ProviderUnavailable(f"Semantic Scholar {path}: HTTP {outcome.status_code} after "
                                   f"{tries} tries")

    @staticmethod
    def reply_of(response: httpx.Response, path: str) -> Any:
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise ProviderRequestRejected(
                f"Semantic Scholar {path}: HTTP {response.status_code}: {response.text[:300]}")
        try:
            return response.json()
        except ValueError as err:
            raise ProviderReplyInvalid(
                f"Semantic Scholar {path}: the body is not JSON: {response.text[:200]!r}"
            ) from err


def neighbour_pages(count: int, cap: int) -> int:
    """Calls `neighbours` makes for a list of `count` entries under `cap`: one per page of
    PAGE_SIZE, and one for an empty list (the answer that says it is empty)."""
    return max(1, -(-min(count, cap, NEIGHBOUR_CAP) // PAGE_SIZE))


def parse_model(model: type[ModelT], data: Any, path: str) -> ModelT:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ProviderReplyInvalid(f"Semantic Scholar {path}: unexpected reply: "
                                   f"{err.errors(include_url=False)[0]['msg']}") from err


# conversion ---------------------------------------------------------------------------------
def paper_from_s2(record: S2Paper) -> Paper | None:
    """The Paper row for an S2 record (id `s2:<paperId>` until matched to a graph paper),
    or None for a record without an id or a title, which cannot be a node."""
    if not record.paperId:
        return None
    external = record.externalIds or {}
    journal = record.journal
    journal_ref = " ".join(part for part in (
        journal.name, journal.volume, f"({record.year})" if record.year else None,
        journal.pages) if part) if journal and journal.name else None
    result = validate_paper({
        "id": f"s2:{record.paperId}",
        "s2_id": record.paperId,
        "title": record.title,
        "abstract": record.abstract,
        "year": record.year,
        "venue": record.venue or None,
        "authors": [author.name for author in record.authors or [] if author.name],
        "arxiv_id": external.get("ArXiv"),
        "doi": external.get("DOI"),
        "date": record.publicationDate,
        "journal_ref": journal_ref,
    })
    return result if isinstance(result, Paper) else None
