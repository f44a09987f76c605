"""Loopback networking for the benchmarks and tests: a free port, and what every JSON
server they start shares (the server in a thread of its own, a JSON reply that survives
a client that has already given up). The servers themselves (the Semantic Scholar
stand-in, the tests' replay server) only decide what to answer."""

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


def free_port() -> int:
    """A port nothing listens on at this moment, on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LoopbackJsonServer:
    """A ThreadingHTTPServer on 127.0.0.1, at `port` or a free one; `handler_class()` says
    what it answers. `url` is the Semantic Scholar Graph API's root on it."""

    def __init__(self, port: int = 0) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self.handler_class())
        self.httpd.daemon_threads = True

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/graph/v1"

    @contextmanager
    def running(self) -> Iterator[Self]:
        # shutdown() waits for the loop's next poll: 0.05 s, not the default half second.
        thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                  daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()
            thread.join(timeout=5)

    def serve_until_interrupted(self, banner: str) -> None:
        """Serve in the foreground (a stand-in's command line) until Ctrl-C."""
        print(f"{banner} at {self.url}", flush=True)
        try:
            self.httpd.serve_forever()
        except KeyboardInterrupt:
            self.httpd.server_close()


class JsonHandler(BaseHTTPRequestHandler):
    """A request handler that answers JSON and logs nothing per request."""

    def send_json(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        """A JSON reply; a client that gave up (a timeout) is no error of the server's."""
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass
