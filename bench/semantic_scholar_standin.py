"""A local stand-in for the Semantic Scholar Graph API, backed by a real corpus in the
normalized format (hep-th: arXiv ids as external ids), for tests and benchmarks without
internet. It is not Semantic Scholar: its search is a plain BM25 over title and abstract.

It speaks the documented endpoints and JSON shapes the client uses:

- `GET paper/search?query&offset&limit&fields`: `{total, offset, next?, data: [paper]}`,
  limit at most 100, offset + limit at most 1,000;
- `GET paper/{id}?fields` (a 40-hex paperId, `arXiv:`, `CorpusId:`, `DOI:`); 404 when unknown;
- `POST paper/batch?fields` with `{"ids": [...]}`: a list in the order asked, null for an
  unknown id, at most 500 ids;
- `GET paper/{id}/references|citations?fields&offset&limit`: `{offset, next?, data:
  [{citedPaper|citingPaper: paper}]}`, limit at most 1,000, offset + limit at most the
  neighbour cap (10,000 as the API);
- nested fields (`references.paperId`), only the fields asked for (paperId always), null
  abstracts for a share of the papers (as the API has for many), and an optional API key
  (`x-api-key`; a wrong or missing one is a 403).

Faults are scripted per path pattern: a status with Retry-After (429 storms, 5xx), a
dropped connection, a delay; each for a number of requests or for good. Every request is
logged with its arrival time.

    python -m crase.bench.semantic_scholar_standin --corpus ../shared/data/hepth --port 8765
"""

import argparse
import hashlib
import json
import math
import re
import socket
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from crase.bench.loopback_http import JsonHandler, LoopbackJsonServer

PREFIX = "/graph/v1/"
SEARCH_LIMIT, SEARCH_WINDOW = 100, 1000
LIST_LIMIT, BATCH_LIMIT = 1000, 500
NEIGHBOUR_CAP = 10_000
TOKEN = re.compile(r"[a-z0-9]+")
BM25_K1, BM25_B = 1.2, 0.75
NESTED_DEFAULT = {"paperId", "title"}


def paper_id_of(corpus_id: str) -> str:
    """The stand-in's 40-hex paperId of a corpus paper (stable across runs)."""
    return hashlib.sha1(f"standin:{corpus_id}".encode()).hexdigest()


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


@dataclass
class Fault:
    """What the server does instead of answering, for requests whose path (after
    /graph/v1/) matches `pattern`: `times` of them (None: all)."""

    pattern: str
    status: int | None = None
    retry_after: str | None = None
    drop: bool = False  # close the connection without a reply
    delay_s: float = 0.0
    times: int | None = None
    hits: int = 0


@dataclass
class Seen:
    at: float
    method: str
    path: str
    key: str | None


@dataclass
class Corpus:
    rows: dict[str, dict[str, Any]]  # corpus id -> paper row
    references: dict[str, list[str]]  # corpus id -> cited corpus ids, file order
    citations: dict[str, list[str]]
    by_paper_id: dict[str, str] = field(default_factory=dict)
    by_external: dict[str, str] = field(default_factory=dict)  # "ARXIV:..." etc. -> corpus id

    @classmethod
    def read(cls, folder: Path) -> "Corpus":
        rows: dict[str, dict[str, Any]] = {}
        with (folder / "papers.jsonl").open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    row = json.loads(line)
                    rows[str(row["id"])] = row
        references: dict[str, list[str]] = defaultdict(list)
        citations: dict[str, list[str]] = defaultdict(list)
        with (folder / "citations.csv").open(encoding="utf-8") as handle:
            next(handle)
            for line in handle:
                citing, _, cited = line.strip().partition(",")
                if citing in rows and cited in rows and citing != cited:
                    references[citing].append(cited)
                    citations[cited].append(citing)
        corpus = cls(rows, dict(references), dict(citations))
        for number, (corpus_id, row) in enumerate(rows.items(), start=1):
            row["_corpus_number"] = number
            corpus.by_paper_id[paper_id_of(corpus_id)] = corpus_id
            corpus.by_external[f"CORPUSID:{number}"] = corpus_id
            if row.get("arxiv_id"):
                corpus.by_external[f"ARXIV:{row['arxiv_id'].upper()}"] = corpus_id
            if row.get("doi"):
                corpus.by_external[f"DOI:{row['doi'].upper()}"] = corpus_id
        return corpus

    def find(self, asked: str) -> str | None:
        if asked in self.by_paper_id:
            return self.by_paper_id[asked]
        return self.by_external.get(asked.upper())


class Bm25:
    """Title (twice) and abstract, BM25; what ranks the stand-in's relevance search."""

    def __init__(self, corpus: Corpus) -> None:
        self.ids = list(corpus.rows)
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self.lengths: list[int] = []
        for number, corpus_id in enumerate(self.ids):
            row = corpus.rows[corpus_id]
            words = tokens(f"{row.get('title') or ''} {row.get('title') or ''} "
                           f"{row.get('abstract') or ''}")
            self.lengths.append(len(words))
            for term, count in Counter(words).items():
                self.postings[term].append((number, count))
        self.mean_length = sum(self.lengths) / max(1, len(self.lengths))

    def search(self, query: str) -> list[str]:
        scores: dict[int, float] = defaultdict(float)
        n = len(self.ids)
        for term in set(tokens(query)):
            postings = self.postings.get(term, [])
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            for number, count in postings:
                norm = BM25_K1 * (1 - BM25_B + BM25_B * self.lengths[number] / self.mean_length)
                scores[number] += idf * count * (BM25_K1 + 1) / (count + norm)
        ranked = sorted(scores, key=lambda number: (-scores[number], self.ids[number]))
        return [self.ids[number] for number in ranked]


class SemanticScholarStandIn(LoopbackJsonServer):
    def __init__(self, corpus_dir: Path, api_key: str | None = None,
                 null_abstract_every: int = 10, neighbour_cap: int = NEIGHBOUR_CAP,
                 port: int = 0) -> None:
        self.corpus = Corpus.read(corpus_dir)
        self.index = Bm25(self.corpus)
        self.api_key = api_key
        # Every n-th paper (by a hash of its id) has a null abstract, as many have on S2.
        self.null_abstract_every = null_abstract_every
        self.neighbour_cap = neighbour_cap
        self.faults: list[Fault] = []
        self.requests: list[Seen] = []
        self.lock = threading.Lock()
        super().__init__(port)

    def fault(self, pattern: str, **kwargs: Any) -> Fault:
        added = Fault(pattern, **kwargs)
        with self.lock:
            self.faults.append(added)
        return added

    def seen(self, prefix: str = "") -> list[Seen]:
        with self.lock:
            return [r for r in self.requests if r.path.startswith(prefix)]

    # records ---------------------------------------------------------------------------------
    def has_null_abstract(self, corpus_id: str) -> bool:
        if not self.null_abstract_every:
            return False
        return int(paper_id_of(corpus_id)[:8], 16) % self.null_abstract_every == 0

    def record(self, corpus_id: str, fields: set[str],
               nested: dict[str, set[str]]) -> dict[str, Any]:
        row = self.corpus.rows[corpus_id]
        external: dict[str, Any] = {"CorpusId": row["_corpus_number"]}
        if row.get("arxiv_id"):
            external["ArXiv"] = row["arxiv_id"]
        if row.get("doi"):
            external["DOI"] = row["doi"]
        values: dict[str, Any] = {
            "externalIds": external, "title": row.get("title"),
            "abstract": None if self.has_null_abstract(corpus_id) else row.get("abstract"),
            "year": row.get("year"), "venue": row.get("venue") or "",
            "authors": [{"authorId": None, "name": name} for name in row.get("authors") or []],
            "publicationDate": row.get("date"),
            "journal": {"name": row["journal_ref"]} if row.get("journal_ref") else None,
            "citationCount": len(self.corpus.citations.get(corpus_id, [])),
            "referenceCount": len(self.corpus.references.get(corpus_id, [])),
        }
        record: dict[str, Any] = {"paperId": paper_id_of(corpus_id)}
        record.update({name: values[name] for name in fields if name in values})
        for name, table in (("references", self.corpus.references),
                            ("citations", self.corpus.citations)):
            if name in nested:
                record[name] = [self.record(other, nested[name], {})
                                for other in table.get(corpus_id, [])[:NEIGHBOUR_CAP]]
        return record

    # endpoints -------------------------------------------------------------------------------
    def answer(self, method: str, path: str, query: dict[str, list[str]],
               body: bytes) -> tuple[int, Any]:
        fields, nested = parse_fields(first(query, "fields", "title"))
        if method == "GET" and path == "paper/search":
            return self.search(first(query, "query", ""), int(first(query, "offset", "0")),
                               int(first(query, "limit", "10")), fields, nested)
        if method == "POST" and path == "paper/batch":
            return self.batch(body, fields, nested)
        if method == "GET" and path.startswith("paper/"):
            # An old arXiv id holds a slash (arXiv:hep-th/0101001): split at the end.
            asked, _, last = path.removeprefix("paper/").rpartition("/")
            if asked and last in ("references", "citations"):
                return self.neighbours(unquote(asked), last, int(first(query, "offset", "0")),
                                       int(first(query, "limit", "100")), fields)
            found = self.corpus.find(unquote(path.removeprefix("paper/")))
            if found is None:
                return 404, {"error": "Paper not found"}
            return 200, self.record(found, fields, nested)
        return 404, {"error": f"no such endpoint: {method} {path}"}

    def search(self, text: str, offset: int, limit: int, fields: set[str],
               nested: dict[str, set[str]]) -> tuple[int, Any]:
        if not text.strip():
            return 400, {"error": "Missing required parameter: 'query'"}
        if limit > SEARCH_LIMIT or offset + limit > SEARCH_WINDOW:
            return 400, {"error": "Requested data for this limit and/or offset is not "
                                  "available"}
        ranked = self.index.search(text)
        page: dict[str, Any] = {"total": len(ranked), "offset": offset,
                                "data": [self.record(i, fields, nested)
                                         for i in ranked[offset:offset + limit]]}
        if offset + limit < len(ranked):
            page["next"] = offset + limit
        return 200, page

    def batch(self, body: bytes, fields: set[str],
              nested: dict[str, set[str]]) -> tuple[int, Any]:
        try:
            ids = json.loads(body or b"{}").get("ids")
        except (ValueError, AttributeError):
            ids = None
        if not isinstance(ids, list):
            return 400, {"error": "Body must be JSON with a list 'ids'"}
        if len(ids) > BATCH_LIMIT:
            return 400, {"error": f"Cannot process more than {BATCH_LIMIT} ids"}
        found = [self.corpus.find(str(asked)) for asked in ids]
        return 200, [None if i is None else self.record(i, fields, nested) for i in found]

    def neighbours(self, asked: str, direction: str, offset: int, limit: int,
                   fields: set[str]) -> tuple[int, Any]:
        if limit > LIST_LIMIT or offset + limit > self.neighbour_cap:
            return 400, {"error": f"offset + limit must be <= {self.neighbour_cap}"}
        found = self.corpus.find(asked)
        if found is None:
            return 404, {"error": "Paper not found"}
        table = self.corpus.references if direction == "references" else self.corpus.citations
        others = table.get(found, [])
        key = "citedPaper" if direction == "references" else "citingPaper"
        page: dict[str, Any] = {"offset": offset, "data": [
            {key: self.record(other, fields, {})} for other in others[offset:offset + limit]]}
        if offset + limit < len(others):
            page["next"] = offset + limit
        return 200, page

    # transport -------------------------------------------------------------------------------
    def fault_for(self, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if re.search(fault.pattern, path) and (fault.times is None
                                                       or fault.hits < fault.times):
                    fault.hits += 1
                    return fault
        return None

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JsonHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                self.serve("GET")

            def do_POST(self) -> None:  # noqa: N802
                self.serve("POST")

            def serve(self, method: str) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                path = parts.path.removeprefix(PREFIX)
                key = self.headers.get("x-api-key")
                with server.lock:
                    server.requests.append(Seen(time.monotonic(), method, path, key))
                fault = server.fault_for(path)
                if fault is not None and fault.delay_s:
                    time.sleep(fault.delay_s)
                if fault is not None and fault.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                headers: dict[str, str] = {}
                if fault is not None and fault.status is not None:
                    status, reply = fault.status, {"message": "scripted fault"}
                    if fault.retry_after is not None:
                        headers["Retry-After"] = fault.retry_after
                elif server.api_key is not None and key != server.api_key:
                    status, reply = 403, {"message": "Forbidden"}
                else:
                    status, reply = server.answer(method, path, parse_qs(parts.query), body)
                self.send_json(status, json.dumps(reply).encode(), headers)

        return Handler


def first(query: dict[str, list[str]], name: str, default: str) -> str:
    return query.get(name, [default])[0]


def parse_fields(text: str) -> tuple[set[str], dict[str, set[str]]]:
    """`a,b,references.paperId` -> ({a, b}, {references: {paperId}}); a nested list asked
    for without subfields gets paperId and title, as the API gives."""
    fields: set[str] = set()
    nested: dict[str, set[str]] = {}
    for name in filter(None, (part.strip() for part in text.split(","))):
        head, _, sub = name.partition(".")
        if head in ("references", "citations"):
            nested.setdefault(head, set()).update({sub} if sub else NESTED_DEFAULT)
        else:
            fields.add(head)
    return fields, nested


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default=None)
    args = parser.parse_args()
    standin = SemanticScholarStandIn(args.corpus, api_key=args.api_key, port=args.port)
    standin.serve_until_interrupted(f"Semantic Scholar stand-in over {args.corpus}")


if __name__ == "__main__":
    main()
