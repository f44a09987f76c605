"""One lifecycle for every run, search or idea: open the Run node, time each named stage,
stop between stages when asked, and close the Run with its status on every way out.

    with RunLifecycle.open(graph, run_id, "search", query, params, backends,
                           STAGES, observer) as run:
        with run.stage("plan"):
            ...
        run.plan, run.counts, run.usage = ...

Leaving the block normally closes the Run as `run.status` ('done' unless the pipeline
decided otherwise); RunCancelled closes it 'cancelled'; any other exception, or an
interrupt, closes it 'failed' with the error. The exception is re-raised, so a Run is never
left 'running'. The observer hears each stage as it starts (the HTTP API's progress) and is
asked before each cancellable stage whether to stop.

Waits inside a stage are stoppable too: while the block runs, `current_stop_check()` gives
a long wait (a model call: crase.models.chat.ModelRunner) the run's own check to ask every
fraction of a second, so a cancel or a passed deadline ends the wait, not only the stage.
A run past its deadline raises RunDeadlineExceeded and is closed 'failed'.

While the block runs, the Run names its owner (this process, `process_owner()`) and a
heartbeat the process refreshes every HEARTBEAT_S from a thread of its own. A server
starting up closes only the Runs whose heartbeat is older than `api.stale_run_after_s`
(their owner is gone), never a live run of another server or of `crase search`.
"""

import hashlib
import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from crase.errors import DatabaseError, RunCancelled, RunDeadlineExceeded
from crase.graph import Graph

# A run's status, on its Run node and in the API (`queued`: waiting for a server's worker).
RunStatus = Literal["queued", "running", "done", "partial", "failed", "cancelled"]
# `partial`: a search through a provider that left some lists unfetched; it has results.
FINISHED: frozenset[str] = frozenset({"done", "partial", "failed", "cancelled"})
WITH_RESULTS: frozenset[str] = frozenset({"done", "partial"})

LINK_BATCH = 5000
# How often a process marks its open Runs alive; api.stale_run_after_s is a few of these.
HEARTBEAT_S = 30.0

log = logging.getLogger(__name__)
_OWNERS: dict[int, str] = {}


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def to_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def process_owner() -> str:
    """The owner id this process writes on the Runs it opens: host and pid, and a random
    part, since a pid comes back after a restart. Per pid, so a forked child has its own."""
    pid = os.getpid()
    if pid not in _OWNERS:
        _OWNERS[pid] = f"{socket.gethostname()}:{pid}:{secrets.token_hex(4)}"
    return _OWNERS[pid]


# What the printed query opens by default: the papers a run returned and the seeds it
# started from, not the hundreds it only considered.
OPEN_RUN_LINKS = "RETURNED|SEEDED"
# The Run's own properties; a parameter of the same name is not copied over one of them.
RUN_PROPERTIES = frozenset({
    "id", "kind", "query", "params", "status", "started", "finished", "backends", "plan",
    "counts", "timings", "usage", "error", "outcome", "audit", "audit_path", "report"})
PlainValue = str | int | float | bool | list[Any]


def browser_query(run_id: str, relationship: str = OPEN_RUN_LINKS) -> str:
    """The Cypher that shows a run in Neo4j Browser: its returned and seed papers, or the
    links of the kinds given ('' for all)."""
    kind = f":{relationship}" if relationship else ""
    return f"MATCH (r:Run {{id: '{run_id}'}})-[x{kind}]->(p:Paper) RETURN r, x, p"


def plain_properties(params: dict[str, Any]) -> dict[str, PlainValue]:
    """The run's parameters as properties Neo4j can hold (`r.tau`, `r.k`, `r.mode`): nested
    settings are flattened to their own names (`params.tau` -> `tau`; a second `x` under
    another part becomes `part_x`); a summarised list or text as its count and hash
    (`exclude_count`, `exclude_sha256`); nulls, maps in lists and mixed lists are left to
    the JSON string `r.params`, which keeps the whole summary."""
    flat: dict[str, PlainValue] = {}

    def visit(values: dict[str, Any], path: tuple[str, ...]) -> None:
        for key, value in values.items():
            if is_summary(value):  # a summarised list or text: its count and hash
                size = "count" if "count" in value else "chars"
                visit({f"{key}_{size}": value[size], f"{key}_sha256": value["sha256"]}, path)
                continue
            if isinstance(value, dict):
                visit(value, (*path, key))
                continue
            if not is_plain(value):
                continue
            name = key if key not in flat and key not in RUN_PROPERTIES \
                else "_".join((*path, key))
            if name not in flat and name not in RUN_PROPERTIES:
                flat[name] = value
    visit(params, ())
    return flat


# What a Run keeps of its request, on its node and in the server's memory alike: the request
# itself where it is small; a list of more than STORED_ITEMS items, or of more than
# STORED_CHARS characters as JSON, by its count, the sha256 of its JSON and its first
# SHOWN_ITEMS items; a text of more than STORED_CHARS characters by its length, its sha256
# and its start. 20 requests with 10,000 excluded ids of 900 characters each wrote 37 MB of
# database a request while the whole body was kept.
STORED_ITEMS = 100
STORED_CHARS = 4_000
SHOWN_ITEMS = 5
SHOWN_CHARS = 200
LIST_SUMMARY = frozenset({"count", "sha256", "first"})
TEXT_SUMMARY = frozenset({"chars", "sha256", "start"})


def sha256_of(value: Any) -> str:
    return hashlib.sha256(to_json(value).encode()).hexdigest()


def summarise_request(value: Any) -> Any:
    """The request as a Run keeps it: its own shape, with each large list and each long
    text replaced by a summary (see STORED_ITEMS); small requests are kept whole."""
    if isinstance(value, dict):
        return {key: summarise_request(item) for key, item in value.items()}
    if isinstance(value, list):
        if len(value) > STORED_ITEMS or len(to_json(value)) > STORED_CHARS:
            return {"count": len(value), "sha256": sha256_of(value),
                    "first": [summarise_request(item) for item in value[:SHOWN_ITEMS]]}
        return [summarise_request(item) for item in value]
    if isinstance(value, str) and len(value) > STORED_CHARS:
        return {"chars": len(value), "sha256": sha256_of(value), "start": value[:SHOWN_CHARS]}
    return value


def is_summary(value: Any) -> bool:
    """A summary of a large list or a long text, as summarise_request writes them."""
    return isinstance(value, dict) and value.keys() in (LIST_SUMMARY, TEXT_SUMMARY)


def is_plain(value: Any) -> bool:
    """A value Neo4j stores as a property: a scalar, or a list of scalars of one type."""
    if isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list):
        kinds = {type(item) for item in value}
        return len(kinds) <= 1 and kinds <= {str, int, float, bool}
    return False


class RunObserver(Protocol):
    """Who follows a run while it works (the HTTP API's registry, a terminal)."""

    def stage_started(self, name: str) -> None: ...

    def items_done(self, stage: str, done: int, total: int) -> None: ...

    def cancel_requested(self) -> bool: ...

    def past_deadline(self) -> str | None:
        """Why the run must end now (its time is up); None while it may go on."""
        ...


@dataclass
class Callbacks:
    """A RunObserver from plain functions; each one optional."""

    on_stage: Callable[[str], None] | None = None
    on_items: Callable[[str, int, int], None] | None = None
    should_cancel: Callable[[], bool] | None = None

    def stage_started(self, name: str) -> None:
        if self.on_stage is not None:
            self.on_stage(name)

    def items_done(self, stage: str, done: int, total: int) -> None:
        if self.on_items is not None:
            self.on_items(stage, done, total)

    def cancel_requested(self) -> bool:
        return self.should_cancel is not None and self.should_cancel()

    def past_deadline(self) -> str | None:
        return None  # a terminal's user stops a run with Ctrl-C


SILENT = Callbacks()
StopCheck = Callable[[], None]  # raises RunCancelled or RunDeadlineExceeded to stop a run
# The stop check of the run this thread (or task) is working on; see current_stop_check.
_STOP_CHECK: ContextVar[StopCheck | None] = ContextVar("crase_run_stop_check", default=None)


def check_stop(observer: RunObserver, when: str) -> None:
    """Raises what ends the run now: RunCancelled when cancel was asked, RunDeadlineExceeded
    when its time is up. `when` says where it stopped ("before stage seeds")."""
    if observer.cancel_requested():
        raise RunCancelled(f"cancelled {when}")
    reason = observer.past_deadline()
    if reason is not None:
        raise RunDeadlineExceeded(reason)


def never_stop() -> None:
    """The stop check outside any run: a command-line call is stopped by Ctrl-C."""


def current_stop_check() -> StopCheck:
    """The stop check of the run in progress in this context, for waits inside a stage."""
    return _STOP_CHECK.get() or never_stop


@contextmanager
def stoppable_waits(observer: RunObserver) -> Iterator[None]:
    """While the block runs, `current_stop_check()` asks `observer` whether to stop."""
    token = _STOP_CHECK.set(lambda: check_stop(observer, "while waiting for a model reply"))
    try:
        yield
    finally:
        _STOP_CHECK.reset(token)


class StageClock:
    """Times the stages of one run; each name must be one of the pipeline's stages."""

    def __init__(self, stages: Sequence[str], observer: RunObserver = SILENT) -> None:
        self.stages = tuple(stages)
        self.observer = observer
        self.timings: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str, cancellable: bool = True) -> Iterator[None]:
        if name not in self.stages:
            raise ValueError(f"stage {name!r} is not one of {self.stages}")
        if cancellable:
            check_stop(self.observer, f"before stage {name}")
        self.observer.stage_started(name)
        started = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(time.perf_counter() - started, 4)


class RunRecorder:
    """Writes one Run node and its links (the queries in cypher/ name the link kinds)."""

    def __init__(self, graph: Graph, run_id: str) -> None:
        self.graph = graph
        self.run_id = run_id
        self.closing_links: list[tuple[str, dict[str, Any]]] = []

    def open(self, kind: str, query: str, params: dict[str, Any],
             backends: dict[str, str], owner: str | None = None) -> None:
        """The Run node, 'running', with the summary of its request (never its bulk: see
        STORED_ITEMS); with an owner, marked alive in the same transaction (a Run without
        one is closed by the next server that starts)."""
        stored = summarise_request(params)
        create = {"id": self.run_id, "kind": kind, "query": query[:STORED_CHARS],
                  "params": to_json(stored),
                  "started": now_iso(), "backends": to_json(backends),
                  "properties": plain_properties(stored)}
        alive = [("mark_run_alive", {"id": self.run_id, "owner": owner})] if owner else []
        self.graph.write_all([("create_run", create), *alive])

    def link(self, query: str, rows: list[dict[str, Any]], batch: int = LINK_BATCH) -> None:
        """Rows to a link query (`$run_id`, `$rows`), in batches of `batch`."""
        for start in range(0, len(rows), batch):
            self.graph.write(query, run_id=self.run_id, rows=rows[start:start + batch])

    def link_at_close(self, query: str, rows: list[dict[str, Any]],
                      batch: int = LINK_BATCH) -> None:
        """Rows to a link query, written with the Run's status when it closes: one
        transaction, so a finished run is never seen without its last links (and a warm
        search pays one commit for its results, not one per kind of link)."""
        self.closing_links.extend(
            (query, {"run_id": self.run_id, "rows": rows[start:start + batch]})
            for start in range(0, len(rows), batch))

    def close(self, status: str, plan: list[str], counts: dict[str, Any],
              timings: dict[str, float], usage: dict[str, Any], error: str | None) -> None:
        finish = {"id": self.run_id, "status": status, "plan": plan,
                  "counts": to_json(counts), "timings": to_json(timings),
                  "usage": to_json(usage), "error": error, "finished": now_iso()}
        links, self.closing_links = self.closing_links, []
        self.graph.write_all([*links, ("finish_run", finish)])


class RunHeartbeat:
    """Marks one open Run alive every `interval_s` until stopped, from a daemon thread, so
    that a long stage (a model call of minutes) does not make the run look abandoned."""

    def __init__(self, graph: Graph, run_id: str, owner: str, interval_s: float) -> None:
        self.graph, self.run_id, self.owner = graph, run_id, owner
        self.interval_s = interval_s
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._beat_until_stopped, daemon=True,
                                       name=f"crase-heartbeat-{run_id}")

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()

    def _beat_until_stopped(self) -> None:
        while not self.stopped.wait(self.interval_s):
            try:
                self.graph.write("mark_run_alive", id=self.run_id, owner=self.owner)
            except DatabaseError as err:
                # The database is away: the run finds out at its next query; the next
                # beat tries again.
                log.warning("run %s: heartbeat not written: %s", self.run_id, err)


@dataclass
class RunLifecycle:
    """A run in progress: its recorder and clock, and what its Run is closed with."""

    recorder: RunRecorder
    clock: StageClock
    status: str = "done"  # what a normal exit closes the Run as; a pipeline may set 'failed'
    error: str | None = None
    plan: list[str] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    usage: Callable[[], dict[str, Any]] = dict  # read once, at close

    @property
    def run_id(self) -> str:
        return self.recorder.run_id

    @property
    def timings(self) -> dict[str, float]:
        return self.clock.timings

    def stage(self, name: str, cancellable: bool = True) -> Any:
        return self.clock.stage(name, cancellable)

    @classmethod
    @contextmanager
    def open(cls, graph: Graph, run_id: str, kind: str, query: str, params: dict[str, Any],
             backends: dict[str, str], stages: Sequence[str],
             observer: RunObserver = SILENT,
             heartbeat_s: float = HEARTBEAT_S) -> Iterator["RunLifecycle"]:
        recorder = RunRecorder(graph, run_id)
        owner = process_owner()
        recorder.open(kind, query, params, backends, owner)
        heartbeat = RunHeartbeat(graph, run_id, owner, heartbeat_s)
        heartbeat.start()
        run = cls(recorder, StageClock(stages, observer))
        try:
            with stoppable_waits(observer):
                yield run
        except BaseException as err:
            run.status = "cancelled" if isinstance(err, RunCancelled) else "failed"
            run.error = f"{type(err).__name__}: {err}"
            raise
        finally:
            heartbeat.stop()
            recorder.close(run.status, run.plan, run.counts, run.timings, run.usage(),
                           run.error)


def record_cancelled_before_start(graph: Graph, run_id: str, kind: str, query: str,
                                  params: dict[str, Any]) -> None:
    """A queued run that was cancelled before it began still gets its closed Run node."""
    recorder = RunRecorder(graph, run_id)
    recorder.open(kind, query, params, {})
    recorder.close("cancelled", [], {}, {}, {}, "RunCancelled: cancelled before it started")
