"""A local stand-in for the OpenAlex API's `/works`, backed by a real corpus in the
normalized format (the committed hep-th sample, or all of hep-th), for tests and
benchmarks without internet. Its search is a plain BM25 over title and abstract.

It answers in the shapes the API documents (developers.openalex.org):

- `GET /works?filter=...&select=...&per_page=...&cursor=*|page=...|search=...`:
  `{"meta": {"count", "db_response_time_ms", "page", "per_page", "next_cursor",
  "groups_count"}, "results": [Work], "group_by": []}`; per_page 1 to 200, basic paging to
  10,000 results, cursor paging (`cursor=*`, then `meta.next_cursor` until it is null and
  the results are empty); filters `openalex_id` (or `ids.openalex`), `doi` and `cites`,
  AND-ed with commas, each OR-ing at most 100 values with `|`; `select` of top-level fields
  only (another is a 400).
- `GET /works/{id}`: a W id, its URL, `doi:...` or a DOI URL; 404 when unknown; a merged
  work's old id answers 301 with the new one in Location.
- Work objects as the snapshot holds them: `id` and `referenced_works` as URLs, `doi` as a
  DOI URL (an arXiv DOI, 10.48550/arXiv.*, for a preprint, a journal DOI for every third
  work), `authorships[].author.display_name`, `abstract_inverted_index` (null for every
  tenth work, as OpenAlex has none for many), arXiv landing pages in `locations`.
- A merged work (every 25th): the works citing it name its old id in `referenced_works`,
  the filters list it under its new id only, and its old id's singleton answers 301.
- The key goes in `api_key`; a wrong one is a 403 without Retry-After. Each answered call
  is charged at the API's prices; past `daily_budget_usd` the API answers 429. Past
  `max_per_second` requests in one second, 429 with Retry-After: 1.

Scripted faults per request (a regular expression over `path?query`): a status with or
without Retry-After (a 429 or 403 storm, a 500 burst), a dropped connection, a delay, a
page cut short mid-body; each for a number of requests or for good. Every request is
logged (path, parameters, key) with its arrival time.

    python -m crase.bench.openalex_standin --corpus data/sample --port 8766
"""

import argparse
import base64
import json
import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from crase.bench.loopback_http import JsonHandler, LoopbackJsonServer
from crase.bench.semantic_scholar_standin import Bm25, Corpus, Fault

OPENALEX = "https://openalex.org/"
CANONICAL_BASE, MERGED_BASE = 4_000_000_000, 3_000_000_000
MAX_PER_PAGE, OR_LIMIT, BASIC_PAGING_WINDOW = 200, 100, 10_000
FILTERS = ("openalex_id", "ids.openalex", "doi", "cites")
PRICES = {"singleton": 0.0, "list": 0.0001, "search": 0.001}
WORK_FIELDS = ("id", "doi", "ids", "title", "display_name", "publication_year",
               "publication_date", "type", "authorships", "abstract_inverted_index",
               "referenced_works", "referenced_works_count", "cited_by_count",
               "primary_location", "locations", "best_oa_location", "updated_date")
ARXIV_SOURCE = {"id": "https://openalex.org/S4306400194",
                "display_name": "arXiv (Cornell University)", "type": "repository"}


@dataclass
class OpenAlexFault(Fault):
    truncate: bool = False  # send half the body, then close the connection


@dataclass
class Asked:
    at: float
    path: str
    params: dict[str, str]
    key: str | None
    status: int = 0  # what it was answered (0: no answer, a dropped connection)


def work_number(work_id: str) -> int | None:
    """The number in a W id (`W4000000012`, or its URL), or None for another text."""
    match = re.fullmatch(r"(?:https://openalex\.org/)?[Ww](\d+)", work_id.strip())
    return int(match.group(1)) if match else None


def bare_doi(doi: str) -> str:
    return re.sub(r"^(https?://(dx\.)?doi\.org/|doi:)", "", doi.strip(), flags=re.I).lower()


def inverted_index(text: str) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for position, word in enumerate(text.split()):
        index.setdefault(word, []).append(position)
    return index


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps([offset]).encode()).decode()


def decode_cursor(cursor: str) -> int | None:
    if cursor == "*":
        return 0
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return int(value[0])
    except (ValueError, TypeError, IndexError):
        return None


class OpenAlexStandIn(LoopbackJsonServer):
    def __init__(self, corpus_dir: Path, api_key: str | None = None,
                 no_abstract_every: int = 10, merged_every: int = 25, doi_every: int = 3,
                 daily_budget_usd: float | None = None, max_per_second: int | None = None,
                 port: int = 0) -> None:
        self.corpus = Corpus.read(corpus_dir)
        self.index = Bm25(self.corpus)
        self.api_key = api_key
        self.no_abstract_every = no_abstract_every
        self.merged_every = merged_every
        self.doi_every = doi_every
        self.daily_budget_usd = daily_budget_usd
        self.max_per_second = max_per_second
        self.charged_usd = 0.0
        self.numbers = {cid: row["_corpus_number"] for cid, row in self.corpus.rows.items()}
        self.by_number = {n: cid for cid, n in self.numbers.items()}
        self.by_doi = {bare_doi(self.doi(cid)): cid for cid in self.corpus.rows}
        self.faults: list[OpenAlexFault] = []
        self.requests: list[Asked] = []
        self.recent: deque[float] = deque()
        self.lock = threading.Lock()
        super().__init__(port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def fault(self, pattern: str, **kwargs: Any) -> OpenAlexFault:
        added = OpenAlexFault(pattern, **kwargs)
        with self.lock:
            self.faults.append(added)
        return added

    def seen(self, path_prefix: str = "") -> list[Asked]:
        with self.lock:
            return [r for r in self.requests if r.path.startswith(path_prefix)]

    def reset(self) -> None:
        with self.lock:
            self.faults.clear()
            self.requests.clear()
            self.recent.clear()
            self.charged_usd = 0.0

    # the corpus as OpenAlex works -----------------------------------------------------------
    def work_id(self, corpus_id: str) -> str:
        return f"W{CANONICAL_BASE + self.numbers[corpus_id]}"

    def is_merged(self, corpus_id: str) -> bool:
        return bool(self.merged_every) and self.numbers[corpus_id] % self.merged_every == 0

    def listed_id(self, corpus_id: str) -> str:
        """The id other works' reference lists name it by: its old id if it was merged."""
        number = self.numbers[corpus_id]
        base = MERGED_BASE if self.is_merged(corpus_id) else CANONICAL_BASE
        return f"W{base + number}"

    def doi(self, corpus_id: str) -> str:
        row = self.corpus.rows[corpus_id]
        if self.doi_every and self.numbers[corpus_id] % self.doi_every == 0:
            return "https://doi.org/10.5555/hepth." + corpus_id.replace("/", ".")
        return f"https://doi.org/10.48550/arxiv.{row.get('arxiv_id') or corpus_id}"

    def has_abstract(self, corpus_id: str) -> bool:
        return not (self.no_abstract_every
                    and self.numbers[corpus_id] % self.no_abstract_every == 0)

    def work(self, corpus_id: str) -> dict[str, Any]:
        row = self.corpus.rows[corpus_id]
        own = OPENALEX + self.work_id(corpus_id)
        arxiv = row.get("arxiv_id") or corpus_id
        location = {"is_oa": True, "landing_page_url": f"https://arxiv.org/abs/{arxiv}",
                    "pdf_url": f"https://arxiv.org/pdf/{arxiv}", "source": ARXIV_SOURCE}
        names = row.get("authors") or []
        references = self.corpus.references.get(corpus_id, [])
        return {
            "id": own, "doi": self.doi(corpus_id),
            "ids": {"openalex": own, "doi": self.doi(corpus_id)},
            "title": row.get("title"), "display_name": row.get("title"),
            "publication_year": row.get("year"), "publication_date": row.get("date"),
            "type": "article",
            "authorships": [{"author_position": "first" if i == 0 else
                             "last" if i == len(names) - 1 else "middle",
                             "author": {"id": f"https://openalex.org/A{5_000_000_000 + i}",
                                        "display_name": name},
                             "institutions": [], "raw_author_name": name}
                            for i, name in enumerate(names)],
            "abstract_inverted_index": inverted_index(row.get("abstract") or "")
            if self.has_abstract(corpus_id) and row.get("abstract") else None,
            "referenced_works": [OPENALEX + self.listed_id(r) for r in references],
            "referenced_works_count": len(references),
            "cited_by_count": len(self.corpus.citations.get(corpus_id, [])),
            "primary_location": location, "locations": [location],
            "best_oa_location": location, "updated_date": "2026-11-30T00:00:00",
        }

    def find(self, asked: str) -> tuple[str | None, bool]:
        """(corpus id, whether `asked` is a merged work's old id) of a singleton's id."""
        asked = unquote(asked).strip()
        if asked.lower().startswith(("doi:", "https://doi.org/", "http://doi.org/", "10.")):
            return self.by_doi.get(bare_doi(asked)), False
        number = work_number(asked)
        if number is None:
            return None, False
        if number > CANONICAL_BASE:
            return self.by_number.get(number - CANONICAL_BASE), False
        corpus_id = self.by_number.get(number - MERGED_BASE)
        return (corpus_id, True) if corpus_id and self.is_merged(corpus_id) else (None, False)

    # endpoints ------------------------------------------------------------------------------
    def answer(self, path: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        if path == "works":
            return self.list_works(query)
        if path.startswith("works/"):
            return self.singleton(path.removeprefix("works/"), query)
        return 404, {"error": "404 Not Found", "message": f"no endpoint /{path}"}, {}

    def singleton(self, asked: str, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        corpus_id, merged = self.find(asked)
        if corpus_id is None:
            return 404, {"error": "404 Not Found",
                         "message": f"Work {asked} does not exist."}, {}
        if merged:
            return 301, {}, {"Location": f"{self.url}/works/{self.work_id(corpus_id)}"}
        selected = self.select(self.work(corpus_id), query.get("select"))
        if isinstance(selected, str):
            return 400, {"error": "Invalid query parameters error.", "message": selected}, {}
        self.charge("singleton")
        return 200, selected, {}

    def list_works(self, query: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        per_page_text = query.get("per_page", query.get("per-page", "25"))
        if not per_page_text.isdigit() or not 1 <= int(per_page_text) <= MAX_PER_PAGE:
            return 400, {"error": "Invalid query parameters error.",
                         "message": f"per-page parameter must be between 1 and "
                                    f"{MAX_PER_PAGE}"}, {}
        per_page = int(per_page_text)
        matched = self.matching(query.get("filter", ""), query.get("search"))
        if isinstance(matched, str):
            return 400, {"error": "Invalid query parameters error.", "message": matched}, {}
        window = self.window(query, per_page, len(matched))
        if isinstance(window, str):
            return 400, {"error": "Invalid query parameters error.", "message": window}, {}
        offset, page, next_cursor = window
        results = []
        for corpus_id in matched[offset:offset + per_page]:
            selected = self.select(self.work(corpus_id), query.get("select"))
            if isinstance(selected, str):
                return 400, {"error": "Invalid query parameters error.", "message": selected}, {}
            results.append(selected)
        self.charge("search" if query.get("search") else "list")
        return 200, {"meta": {"count": len(matched), "db_response_time_ms": 3, "page": page,
                              "per_page": per_page, "next_cursor": next_cursor,
                              "groups_count": None},
                     "results": results, "group_by": []}, {}

    def window(self, query: dict[str, str], per_page: int,
               count: int) -> tuple[int, int | None, str | None] | str:
        """(offset, page, next cursor) of a list request, or why it is refused."""
        if "cursor" in query:
            offset = decode_cursor(query["cursor"])
            if offset is None:
                return "cursor is not valid"
            # As documented: a cursor comes with every page that has results; the page
            # past the end has none, and a null cursor.
            return offset, None, encode_cursor(offset + per_page) if offset < count else None
        page = int(query.get("page", "1")) if query.get("page", "1").isdigit() else 0
        if page < 1 or page * per_page > BASIC_PAGING_WINDOW:
            return ("Maximum results size of 10,000 records is exceeded. Cursor pagination "
                    "is required for records beyond 10,000.")
        return (page - 1) * per_page, page, None

    def matching(self, filters: str, search: str | None) -> list[str] | str:
        """The corpus ids a list request names, in order (search: by BM25), or why the
        request is refused."""
        ids = self.index.search(search) if search else list(self.corpus.rows)
        for part in filter(None, filters.split(",")):
            name, _, values_text = part.partition(":")
            values = [v for v in values_text.split("|") if v]
            if name not in FILTERS:
                return f"{name} is not a valid filter"
            if len(values) > OR_LIMIT:
                return f"Maximum number of values exceeded for {name}. Decrease values to " \
                       f"{OR_LIMIT} or below."
            kept = self.filtered(name, values)
            ids = [i for i in ids if i in kept]
        return ids

    def filtered(self, name: str, values: list[str]) -> set[str]:
        if name == "doi":
            return {self.by_doi[d] for d in map(bare_doi, values) if d in self.by_doi}
        numbers = [work_number(v) for v in values]
        canonical = {self.by_number[n - CANONICAL_BASE] for n in numbers
                     if n and n - CANONICAL_BASE in self.by_number}
        if name in ("openalex_id", "ids.openalex"):
            return canonical  # a merged work is listed under its new id only
        return {citing for cited in canonical for citing in self.corpus.citations.get(cited, [])}

    @staticmethod
    def select(work: dict[str, Any], fields: str | None) -> dict[str, Any] | str:
        if not fields:
            return work
        names = [f.strip() for f in fields.split(",") if f.strip()]
        bad = [n for n in names if n not in WORK_FIELDS]
        if bad:
            return f"{bad[0]} is not a valid select field. Valid fields for select are: " \
                   f"{', '.join(WORK_FIELDS)}."
        return {name: work.get(name) for name in names}

    def charge(self, kind: str) -> None:
        with self.lock:
            self.charged_usd += PRICES[kind]

    def over_budget(self, path: str, query: dict[str, str]) -> bool:
        if self.daily_budget_usd is None:
            return False
        kind = ("search" if query.get("search") else "list") if path == "works" \
            else "singleton"
        with self.lock:
            return self.charged_usd + PRICES[kind] > self.daily_budget_usd + 1e-9

    def too_fast(self, now: float) -> bool:
        if self.max_per_second is None:
            return False
        with self.lock:
            while self.recent and now - self.recent[0] > 1.0:
                self.recent.popleft()
            self.recent.append(now)
            return len(self.recent) > self.max_per_second

    # transport ------------------------------------------------------------------------------
    def fault_for(self, target: str) -> OpenAlexFault | None:
        with self.lock:
            for fault in self.faults:
                if re.search(fault.pattern, target) and (fault.times is None
                                                         or fault.hits < fault.times):
                    fault.hits += 1
                    return fault
        return None

    def reply(self, path: str, query: dict[str, str],
              fault: OpenAlexFault | None) -> tuple[int, Any, dict[str, str]]:
        if fault is not None and fault.status is not None:
            headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
            return fault.status, {"error": "scripted fault", "message": "scripted fault"}, \
                headers
        given = query.get("api_key")
        if self.api_key is not None and given is not None and given != self.api_key:
            return 403, {"error": "Forbidden", "message": "Invalid API key."}, {}
        if self.too_fast(time.monotonic()):
            return 429, {"error": "Too Many Requests",
                         "message": "Rate limit exceeded: at most "
                                    f"{self.max_per_second} requests per second"}, \
                {"Retry-After": "1"}
        if self.over_budget(path, query):
            return 429, {"error": "Too Many Requests",
                         "message": "Daily budget exceeded"}, {}
        return self.answer(path, query)

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JsonHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                parts = urlsplit(self.path)
                path = unquote(parts.path).strip("/")
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                asked = Asked(time.monotonic(), path, query, query.get("api_key"))
                with server.lock:
                    server.requests.append(asked)
                target = f"{path}?{unquote(parts.query)}"
                fault = server.fault_for(target)
                if fault is not None and fault.delay_s:
                    time.sleep(fault.delay_s)
                if fault is not None and fault.drop:
                    self.drop()
                    return
                status, reply, headers = server.reply(path, query, fault)
                body = json.dumps(reply).encode()
                if fault is not None and fault.truncate:
                    self.send_cut_short(body)
                    return
                asked.status = status
                self.send_json(status, body, headers)

            def drop(self) -> None:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)

            def send_cut_short(self, body: bytes) -> None:
                """A 200 that announces the whole body and sends half of it."""
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[:len(body) // 2])
                self.wfile.flush()
                self.drop()

        return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default=None)
    args = parser.parse_args()
    OpenAlexStandIn(args.corpus, api_key=args.api_key, port=args.port).serve_until_interrupted(
        f"OpenAlex stand-in over {args.corpus}")


if __name__ == "__main__":
    main()
