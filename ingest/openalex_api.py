"""The OpenAlex API (`/works`): works by id in OR-filters, works by DOI, the works citing
given works (cursor paging), one work by id (following a merge's 301), and a keyword
search; the replies are Work objects in the shape the snapshot reader
(crase.ingest.openalex) turns into Papers.

A thin client of our own rather than PyAlex: every request has to go through the one
retry policy (crase.http), the daily budget in dollars (crase.ingest.openalex_budget) and
the on-disk cache keyed by request (crase.ingest.request_cache) that makes an
interrupted grow resume without sending a request twice; PyAlex brings its own session,
retries and paging, which would each have to be worked around, for five URLs.

- Requests are spaced at `openalex_requests_per_second`; 429, 5xx, a 403 with
  Retry-After (OpenAlex's throttle) and transport errors are retried by the shared
  policy, Retry-After honoured. A reply whose body is cut short is a broken transfer and
  is retried the same way.
- The key goes in the `api_key` parameter, as the API documents; it is never part of the
  cache key or a message, and httpx's own request log lines have it taken out. 401, and
  403 without Retry-After, are the key refused (ProviderKeyRefused, naming the setting).
- 404 is "no such work" (None); a 301 (a merged work) is followed to the work it names.
- The client counts what it spends: calls by kind, replies read from the cache, tries
  (retries included), dollars booked, and seconds waited.
"""

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from crase.errors import (
    ProviderError,
    ProviderKeyRefused,
    ProviderRateLimited,
    ProviderReplyInvalid,
    ProviderRequestRejected,
    ProviderTimeout,
    ProviderUnavailable,
)
from crase.http import RetryPolicy, TryOutcome, send_with_retries_sync
from crase.ingest.openalex import short_id
from crase.ingest.openalex_budget import CallKind, DailyBudget
from crase.ingest.request_cache import RequestCache, request_key
from crase.settings import ProviderSettings

# Only the fields a Paper and its edges are built from (crase.ingest.openalex.map_work).
SELECT = ("id,doi,ids,title,display_name,publication_year,publication_date,authorships,"
          "abstract_inverted_index,referenced_works,primary_location,locations,"
          "best_oa_location")
OR_VALUES = 100  # values one filter may OR together (the API's documented limit)
KEY_SETTING = "CRASE_PROVIDERS__OPENALEX_API_KEY"
URL_SETTING = "CRASE_PROVIDERS__OPENALEX_URL"
MAX_REDIRECTS = 3
HTTPX_LOG = logging.getLogger("httpx")
# Characters that end a filter value; a DOI holding one cannot be asked in a filter.
FILTER_SYNTAX = (",", "|")


class KeyRedaction(logging.Filter):
    """Takes an API key out of httpx's request lines (it logs each URL at INFO, and the key
    is a URL parameter), for whoever turns that logger on."""

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(str(a).replace(self.key, "***") if self.key in str(a) else a
                                for a in record.args)
        return True


@dataclass
class OpenAlexCalls:
    """What the client has spent so far."""

    by_kind: dict[str, int] = field(default_factory=lambda: {"singleton": 0, "list": 0,
                                                             "search": 0})
    cached: int = 0  # replies read from the cache instead of a call
    tries: int = 0  # HTTP requests sent, retries included
    cost_usd: float = 0.0
    retry_wait_s: float = 0.0
    rate_limit_wait_s: float = 0.0
    merged_works: int = 0  # 301s followed

    @property
    def made(self) -> int:
        return sum(self.by_kind.values())

    def to_dict(self) -> dict[str, Any]:
        return {"calls": dict(self.by_kind), "cached": self.cached, "tries": self.tries,
                "cost_usd": round(self.cost_usd, 6), "retry_wait_s": round(self.retry_wait_s, 3),
                "rate_limit_wait_s": round(self.rate_limit_wait_s, 3)}


@dataclass(frozen=True)
class Page:
    works: list[dict[str, Any]]
    count: int | None
    next_cursor: str | None


class OpenAlexClient:
    def __init__(self, settings: ProviderSettings, folder: Path,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.settings = settings
        self.policy = RetryPolicy.of(settings)
        self.per_page = settings.openalex_per_page
        self.chunk = min(OR_VALUES, self.per_page)  # every work of an id filter on one page
        key = settings.openalex_api_key
        self._key = key.get_secret_value() if key is not None else None
        if self._key:
            HTTPX_LOG.addFilter(KeyRedaction(self._key))
        self.http = httpx.Client(base_url=settings.openalex_url.rstrip("/") + "/",
                                 timeout=settings.timeout_s, follow_redirects=False,
                                 transport=transport)
        self.cache = RequestCache(folder / "requests", settings.openalex_max_age_days)
        self.budget = DailyBudget(settings.openalex_daily_budget_usd, folder / "spend")
        self.spent = OpenAlexCalls()
        self.interval_s = 1.0 / settings.openalex_requests_per_second
        self.next_slot = 0.0

    def close(self) -> None:
        self.http.close()
        for added in [f for f in HTTPX_LOG.filters if isinstance(f, KeyRedaction)]:
            HTTPX_LOG.removeFilter(added)

    def __enter__(self) -> "OpenAlexClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # what CallBudget meters (crase.ingest.provider_budget.CallMeter) ---------------------
    @property
    def calls(self) -> int:
        return self.spent.made

    @property
    def requests_sent(self) -> int:
        return self.spent.tries

    @property
    def retry_wait_s(self) -> float:
        return self.spent.retry_wait_s

    @property
    def rate_limit_wait_s(self) -> float:
        return self.spent.rate_limit_wait_s

    # the API --------------------------------------------------------------------------------
    def works(self, ids: list[str]) -> list[dict[str, Any]]:
        """The works of `ids` (W ids, either spelling) that OpenAlex lists, one list call per
        OR_VALUES ids; an id it does not list is simply absent (see `work`)."""
        found: list[dict[str, Any]] = []
        for start in range(0, len(ids), self.chunk):
            chunk = [short_id(i) or "" for i in ids[start:start + self.chunk]]
            found += self.list_page({"filter": "openalex_id:" + "|".join(chunk)}).works
        return found

    def works_by_doi(self, dois: list[str]) -> list[dict[str, Any]]:
        """The works with these DOIs (bare, as crase.paper_identity keeps them)."""
        usable = [d for d in dois if not any(ch in d for ch in FILTER_SYNTAX)]
        found: list[dict[str, Any]] = []
        for start in range(0, len(usable), self.chunk):
            found += self.list_page({"filter": "doi:" + "|".join(
                usable[start:start + self.chunk])}).works
        return found

    def citing_pages(self, ids: list[str]) -> Iterator[Page]:
        """Pages of the works citing any of `ids` (at most OR_VALUES), cursor paging to the
        end; the caller stops asking when it has enough."""
        cited = "|".join(short_id(i) or "" for i in ids[:OR_VALUES])
        cursor: str | None = "*"
        read = 0
        while cursor is not None:
            page = self.list_page({"filter": f"cites:{cited}", "cursor": cursor})
            yield page
            read += len(page.works)
            # The API's end is an empty page with a null cursor; the count says it first,
            # which saves that call.
            done = not page.works or (page.count is not None and read >= page.count)
            cursor = None if done else page.next_cursor

    def work(self, work_id: str) -> dict[str, Any] | None:
        """One work by id, free with a key; a merged id's 301 is followed to the work it
        now is. None when OpenAlex has no such work."""
        asked = short_id(work_id) or ""
        for _ in range(MAX_REDIRECTS + 1):
            reply = self.get(f"works/{asked}", {"select": SELECT}, "singleton")
            moved = reply.get("moved_to")
            if not moved:
                body = reply.get("body")
                return body if isinstance(body, dict) else None
            self.spent.merged_works += 1
            asked = moved
        raise ProviderReplyInvalid(f"OpenAlex works/{short_id(work_id)}: more than "
                                   f"{MAX_REDIRECTS} redirects")

    def search(self, text: str, per_page: int) -> Page:
        """One keyword search (the API's most expensive kind of call)."""
        return self.page_of(self.get("works", {"search": text, "select": SELECT,
                                               "per_page": min(per_page, self.per_page)},
                                     "search"), "works?search")

    def list_page(self, params: dict[str, Any]) -> Page:
        reply = self.get("works", {**params, "select": SELECT, "per_page": self.per_page},
                         "list")
        return self.page_of(reply, "works?filter")

    @staticmethod
    def page_of(reply: dict[str, Any], what: str) -> Page:
        body = reply.get("body")
        results = body.get("results") if isinstance(body, dict) else None
        meta = body.get("meta") if isinstance(body, dict) else None
        if not isinstance(results, list) or not isinstance(meta, dict):
            raise ProviderReplyInvalid(f"OpenAlex {what}: the reply has no results and meta")
        cursor = meta.get("next_cursor")
        count = meta.get("count")
        return Page([w for w in results if isinstance(w, dict)],
                    count if isinstance(count, int) else None,
                    cursor if isinstance(cursor, str) and cursor else None)

    # transport ------------------------------------------------------------------------------
    def get(self, path: str, params: dict[str, Any], kind: CallKind) -> dict[str, Any]:
        """The reply as cached: {"body": JSON or None for 404} or {"moved_to": W id}."""
        key = request_key(path, params)
        cached = self.cache.read(key)
        if cached is not None:
            self.spent.cached += 1
            return cached
        self.spent.by_kind[kind] += 1
        sent_params = {**params, **self.credentials()}

        def send() -> httpx.Response:
            self.wait_turn()
            self.spent.cost_usd += self.budget.charge(kind)
            self.spent.tries += 1
            response = self.http.get(path, params=sent_params)
            if response.status_code == 200:
                try:
                    response.json()
                except ValueError:
                    # A body cut short is a broken transfer: retried as one.
                    raise httpx.RemoteProtocolError("the reply's body is cut short") from None
            return response

        try:
            sent = send_with_retries_sync(send, self.policy, on_retry=self.note_retry)
        except httpx.HTTPError as err:
            raise ProviderUnavailable(f"OpenAlex {path}: {type(err).__name__}") from err
        reply = self.reply_of(sent.outcome, sent.gave_up, sent.retries + 1, path)
        self.cache.write(key, reply)
        return reply

    def credentials(self) -> dict[str, str]:
        sent = {"api_key": self._key} if self._key else {}
        if self.settings.openalex_mailto:
            sent["mailto"] = self.settings.openalex_mailto
        return sent

    def wait_turn(self) -> None:
        delay = self.next_slot - time.monotonic()
        if delay > 0:
            self.spent.rate_limit_wait_s += delay
            time.sleep(delay)
        self.next_slot = max(time.monotonic(), self.next_slot) + self.interval_s

    def note_retry(self, outcome: TryOutcome, delay: float) -> None:
        self.spent.retry_wait_s += delay
        self.next_slot = max(self.next_slot, time.monotonic() + delay)

    def reply_of(self, outcome: TryOutcome, gave_up: bool, tries: int,
                 path: str) -> dict[str, Any]:
        if isinstance(outcome, httpx.TimeoutException):
            raise ProviderTimeout(f"OpenAlex {path}: no answer within "
                                  f"{self.settings.timeout_s} s, {tries} tries")
        if isinstance(outcome, httpx.TransportError):
            raise ProviderUnavailable(f"OpenAlex {path}: {type(outcome).__name__} after "
                                      f"{tries} tries; check {URL_SETTING} and the network")
        status = outcome.status_code
        if gave_up:
            cls = ProviderRateLimited if status in (403, 429) else ProviderUnavailable
            raise cls(f"OpenAlex {path}: HTTP {status} after {tries} tries")
        if status == 404:
            return {"body": None}
        if status in (301, 302, 307, 308):
            return {"moved_to": self.moved_to(outcome, path)}
        if status in (401, 403):
            raise self.key_refused(status)
        if status >= 400:
            raise ProviderRequestRejected(f"OpenAlex {path}: HTTP {status}: "
                                          f"{self.scrub(error_text(outcome))}")
        return {"body": outcome.json()}

    def moved_to(self, response: httpx.Response, path: str) -> str:
        target = short_id(response.headers.get("location", "").split("?")[0].rstrip("/")
                          .rsplit("/", 1)[-1])
        if not target:
            raise ProviderReplyInvalid(f"OpenAlex {path}: a redirect without a work to go to")
        return target

    def key_refused(self, status: int) -> ProviderError:
        if self._key is None:
            return ProviderKeyRefused(f"OpenAlex answered HTTP {status} to a request without "
                                      f"a key; set {KEY_SETTING} (free at openalex.org)")
        return ProviderKeyRefused(f"OpenAlex refused the API key (HTTP {status}); check "
                                  f"{KEY_SETTING}")

    def scrub(self, text: str) -> str:
        """A server's text with the key taken out, should it echo the request."""
        return text.replace(self._key, "***") if self._key else text


def error_text(response: httpx.Response) -> str:
    """The error a reply states, in at most 200 characters."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(body, dict):
        return " ".join(str(body.get(k, "")) for k in ("error", "message")).strip()[:200]
    return str(body)[:200]
