"""A loopback HTTP server that replays recorded Semantic Scholar replies, for the tests.

Replies are scripted per (method, path): a list consumed in order, the last one repeated.
A reply may be a status with a body and headers, a delay (to provoke client timeouts), or
a paged list served the way the API pages references and citations. Every request is
recorded with its arrival time, query and headers.
"""

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from crase.bench.loopback_http import JsonHandler, LoopbackJsonServer

FIXTURES = Path(__file__).parent / "fixtures" / "s2"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    paged: list[Any] | None = None  # serve this list with offset/limit/next
    cap: int = 10_000  # the API refuses offset + limit beyond this

    @classmethod
    def json(cls, data: Any, status: int = 200, **kwargs: Any) -> "Reply":
        return cls(status=status, body=json.dumps(data).encode(), **kwargs)


@dataclass
class Seen:
    at: float
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


class ReplayServer(LoopbackJsonServer):
    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], list[Reply]] = {}
        self.requests: list[Seen] = []
        self.lock = threading.Lock()
        super().__init__()

    def add(self, method: str, path: str, *replies: Reply) -> None:
        self.routes[(method, "/graph/v1/" + path)] = list(replies)

    def seen(self, path: str) -> list[Seen]:
        return [r for r in self.requests if r.path == "/graph/v1/" + path]

    def next_reply(self, method: str, path: str) -> Reply | None:
        with self.lock:
            replies = self.routes.get((method, path))
            if not replies:
                return None
            return replies.pop(0) if len(replies) > 1 else replies[0]

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                self.answer("GET")

            def do_POST(self) -> None:  # noqa: N802
                self.answer("POST")

            def answer(self, method: str) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                query = parse_qs(parts.query)
                server.requests.append(Seen(time.monotonic(), method, parts.path, query,
                                            {k.lower(): v for k, v in self.headers.items()},
                                            body))
                reply = server.next_reply(method, parts.path)
                if reply is None:
                    reply = Reply.json({"error": "Paper not found"}, status=404)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.paged is not None:
                    reply = page_of(reply, query)
                self.send_json(reply.status, reply.body, reply.headers)

        return Handler


def page_of(reply: Reply, query: dict[str, list[str]]) -> Reply:
    """One page of a paged list, as the references/citations endpoints serve it."""
    assert reply.paged is not None
    offset = int(query.get("offset", ["0"])[0])
    limit = int(query.get("limit", ["100"])[0])
    if offset + limit > reply.cap:
        return Reply.json({"error": "offset + limit must be <= 10000"}, status=400)
    data = reply.paged[offset:offset + limit]
    page: dict[str, Any] = {"offset": offset, "data": data}
    if offset + limit < len(reply.paged):
        page["next"] = offset + limit
    return Reply.json(page)
