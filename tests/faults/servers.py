"""Reusable faults for tests.

- `SilentServer`: a TCP server on 127.0.0.1 that accepts every connection and never answers
  (a model endpoint that hangs). It counts the connections it was given and tells when the
  client dropped them.
- `DisposableNeo4j`: a Neo4j + GDS server of the test's own (not the session's shared one,
  see tests/conftest.py), on free loopback ports, that a test may `stop()` mid-run and
  `start()` again on the same data.
"""

import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from crase.database import Neo4jServer
from crase.graph import Graph
from crase.settings import DatabaseSettings
from tests.conftest import TEST_PASSWORD, free_port


class SilentServer:
    """Accepts, reads nothing, answers nothing; the connections stay open until the client
    drops them or the server stops."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self.accepted = 0
        self.dropped = 0  # connections the client closed

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._open)

    @contextmanager
    def running(self) -> Iterator["SilentServer"]:
        thread = threading.Thread(target=self._serve, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stopped.set()
            thread.join(timeout=5)
            self._listener.close()
            with self._lock:
                for conn in self._open:
                    conn.close()

    def _serve(self) -> None:
        while not self._stopped.is_set():
            self._accept()
            self._notice_dropped()

    def _accept(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except TimeoutError:
            return
        conn.setblocking(False)
        with self._lock:
            self._open.append(conn)
            self.accepted += 1

    def _notice_dropped(self) -> None:
        with self._lock:
            for conn in list(self._open):
                if _closed_by_peer(conn):
                    conn.close()
                    self._open.remove(conn)
                    self.dropped += 1


def _closed_by_peer(conn: socket.socket) -> bool:
    # The request bytes are drained and ignored; an empty read is the client's close.
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


class DisposableNeo4j:
    """A Neo4j of one test module: started in a temporary home, removed at the end."""

    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="crase-neo4j-faults-"))
        self.settings = DatabaseSettings(
            home=self.home, bolt_port=free_port(), http_port=free_port(),
            password=TEST_PASSWORD, heap="1g", pagecache="256m",
        )
        self.server = Neo4jServer(self.settings)

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    @property
    def running(self) -> bool:
        return self.server.status().running

    def connect(self, retry_s: float | None = None) -> Graph:
        return Graph.connect(self.settings, retry_s=retry_s)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)


@contextmanager
def disposable_neo4j() -> Iterator[DisposableNeo4j]:
    """A started DisposableNeo4j with the schema applied; stopped and removed afterwards."""
    database = DisposableNeo4j()
    try:
        database.start()
        graph = database.connect()
        try:
            graph.apply_schema()
        finally:
            graph.close()
        yield database
    finally:
        database.remove()


def wait_until(condition: Callable[[], bool], timeout_s: float, poll_s: float = 0.05) -> float:
    """Seconds until `condition()` held; AssertionError after `timeout_s`."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if condition():
            return time.monotonic() - started
        time.sleep(poll_s)
    raise AssertionError(f"not within {timeout_s} s")

