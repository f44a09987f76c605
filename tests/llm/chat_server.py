"""A local OpenAI-compatible chat-completions server for tests, on 127.0.0.1:<free port>.

It answers each POST to `/v1/chat/completions` with the next scripted action, or, when the
script is empty, with what `responder(request)` returns. Every request body is kept, so a
test can read what the client sent (the repair message, the model name, max_tokens).
"""

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from crase.bench.loopback_http import JsonHandler


@dataclass(frozen=True)
class Reply:
    """A 200 chat completion whose assistant text is `content`."""

    content: str
    prompt_tokens: int = 100
    completion_tokens: int = 20
    with_usage: bool = True


@dataclass(frozen=True)
class Status:
    """An error status, e.g. 429 with {"Retry-After": "1"} or a 500."""

    code: int
    headers: dict[str, str] = field(default_factory=dict)
    body: str = '{"error": "scripted"}'


@dataclass(frozen=True)
class Raw:
    """A 200 whose body is `body` as is (not a chat completion)."""

    body: str


@dataclass(frozen=True)
class Sleep:
    """Wait `seconds` (longer than the client's timeout), then answer with `then`."""

    seconds: float
    then: "Action"


Action = Reply | Status | Raw | Sleep
Responder = Callable[[dict[str, Any]], Action]


def completion(content: str, action: Reply, model: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    if action.with_usage:
        body["usage"] = {
            "prompt_tokens": action.prompt_tokens,
            "completion_tokens": action.completion_tokens,
            "total_tokens": action.prompt_tokens + action.completion_tokens,
        }
    return body


class ChatServer:
    def __init__(self, responder: Responder | None = None) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Action] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, *actions: Action) -> None:
        with self._lock:
            self._script.extend(actions)

    def next_action(self, request: dict[str, Any]) -> Action:
        with self._lock:
            self.requests.append(request)
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return self.responder(request)
        return Status(599, body='{"error": "the test script is exhausted"}')

    @contextmanager
    def running(self) -> Iterator["ChatServer"]:
        thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
            thread.join(timeout=5)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                request = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self.send_json(404, b'{"error": "not found"}', {})
                    return
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._answer(server.next_action(request), request)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, action: Action, request: dict[str, Any]) -> None:
                if isinstance(action, Sleep):
                    time.sleep(action.seconds)
                    action = action.then
                if isinstance(action, Reply):
                    body = completion(action.content, action, str(request.get("model")))
                    self.send_json(200, json.dumps(body).encode(), {})
                elif isinstance(action, Raw):
                    self.send_json(200, action.body.encode(), {})
                elif isinstance(action, Status):
                    self.send_json(action.code, action.body.encode(), action.headers)

        return Handler
