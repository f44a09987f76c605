"""Background runs of the HTTP API: a queue of runs served by worker threads.

The pipelines are synchronous, so each run (a search or an idea run) goes to a worker
thread; `api.search_workers` of them run at once and the rest wait, queued, up to
`api.max_queued_runs` (one more is refused with RunQueueFull, a 429). The registry
keeps each run's live state (status, the stage it is in, per-stage progress) in memory
while the server lives; the pipeline itself records the run on its Run node (status,
plan, counts, timings, results), so a finished run can still be read after a restart.

No accepted run may vanish or stay 'running' forever:
- a run is accepted only while the database answers (else DatabaseUnavailable, a 503);
- a run gets `api.run_deadline_s`; past it, it stops (its model calls too) and fails;
- when the database goes away mid-run, the Run node cannot be closed (or, for a queued
  run, made): the tracked state is the record, written once the database answers again
  (at the next submission);
- at start-up, Run nodes left 'running' or 'queued' by a process that is gone (no
  heartbeat for `api.stale_run_after_s`; crase/run_lifecycle.py) are closed 'failed'
  (`close_stale_runs`); the live runs of another server or of `crase search` are not.

Each worker thread builds its own backends on its first run of a kind: a backend's usage
counters then belong to one run at a time, so every run's recorded model usage is its
own, and no backend cache is shared between threads.
"""

import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from crase.errors import (
    CraseError,
    DatabaseError,
    DatabaseUnavailable,
    RunCancelled,
    RunNotCancellable,
    RunQueueFull,
    SettingsError,
)
from crase.graph import Graph
from crase.idea.pipeline import STAGES as IDEA_STAGES
from crase.idea.pipeline import run_idea
from crase.idea.request import IdeaRequest
from crase.idea.roles.protocols import IdeaBackends
from crase.neo4j_driver import DriverError, Neo4jError
from crase.run_lifecycle import (
    FINISHED,
    HEARTBEAT_S,
    RunStatus,
    now_iso,
    process_owner,
    record_cancelled_before_start,
    summarise_request,
    to_json,
)
from crase.search.pipeline import STAGES as SEARCH_STAGES
from crase.search.pipeline import partial_reason, run_search
from crase.search.request import SearchRequest
from crase.search.roles.protocols import SearchBackends

# A run's statuses (RunStatus, FINISHED, WITH_RESULTS) are the run lifecycle's.
# Each pipeline's own list of its stages, in order: what a queued run shows as pending.
STAGES = {"search": SEARCH_STAGES, "idea": IDEA_STAGES}
DATABASE_DOWN = "the database is not reachable; start it with `crase db start`"
STALE_RUN = ("the process running it stopped while the run was in flight (no heartbeat); "
             "run it again")
MAX_ERROR_CHARS = 1000
# What a client refused for a full queue is told to wait: about one warm search's time
# with every worker busy (docs/speed.md), after which a place has usually come free.
QUEUE_RETRY_AFTER_S = 10

log = logging.getLogger(__name__)


def pending(kind: str) -> dict[str, "StageProgress"]:
    return {name: StageProgress() for name in STAGES[kind]}


def one_line(text: str) -> str:
    """An error for the API: driver messages span lines; the answer is one line."""
    return " ".join(text.split())[:MAX_ERROR_CHARS]


def require_database(graph: Graph) -> None:
    """DatabaseUnavailable unless the database answers now. Asked before a run is accepted,
    so that no accepted run is lost to a database that is already away."""
    try:
        graph.driver.verify_connectivity()
    except (DriverError, Neo4jError, OSError) as err:
        raise DatabaseUnavailable(DATABASE_DOWN) from err


@dataclass
class StageProgress:
    state: Literal["pending", "running", "done"] = "pending"
    done: int | None = None  # items finished, where the stage reports them (claims, ...)
    total: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {"state": self.state, "done": self.done, "total": self.total}


@dataclass
class TrackedRun:
    id: str
    kind: str
    query: str
    params: dict[str, Any]
    submitted: str = field(default_factory=now_iso)
    status: RunStatus = "queued"
    stage: str | None = None
    stages: dict[str, StageProgress] = field(default_factory=dict)
    error: str | None = None
    stop: threading.Event = field(default_factory=threading.Event)  # cancel was asked
    future: Future[None] | None = None
    deadline_s: float | None = None  # api.run_deadline_s, counted from the start of work
    started_at: float | None = None  # time.monotonic() when a worker took the run

    def begin(self) -> None:
        self.status, self.started_at = "running", time.monotonic()

    # RunObserver: the pipeline announces each stage by name as it starts it.
    def stage_started(self, name: str) -> None:
        if self.stage is not None:
            self.stages[self.stage].state = "done"
        self.stage = name
        self.stages.setdefault(name, StageProgress()).state = "running"

    def items_done(self, stage: str, done: int, total: int) -> None:
        # A counter named after a step within a stage ("neighbours assessed") counts on
        # the stage it runs in, so progress lists the pipeline's own stages only.
        name = stage if stage in self.stages or self.stage is None else self.stage
        progress = self.stages.setdefault(name, StageProgress(state="running"))
        progress.done, progress.total = done, total

    def cancel_requested(self) -> bool:
        return self.stop.is_set()

    def past_deadline(self) -> str | None:
        if self.deadline_s is None or self.started_at is None:
            return None
        if time.monotonic() - self.started_at < self.deadline_s:
            return None
        return (f"the run went on past its deadline of {self.deadline_s:g} s "
                "(api.run_deadline_s); narrow the request or raise the deadline")

    def finish(self, status: RunStatus, error: str | None = None) -> None:
        # What stays here for up to api.runs_in_memory runs is the summary the Run node
        # keeps too (a 9 MB exclude list kept whole was 16.7 MB a run).
        self.params = summarise_request(self.params)
        if status in ("done", "partial"):
            # A stage a finished run never entered (an idea run's report in retrieval mode).
            self.stages = {name: p for name, p in self.stages.items() if p.state != "pending"}
            for progress in self.stages.values():
                progress.state = "done"
        self.status, self.error = status, error

    def progress_json(self) -> dict[str, Any]:
        return {"stage": self.stage,
                "stages": {name: p.as_json() for name, p in self.stages.items()}}


BackendsFactory = Callable[[], SearchBackends]
IdeaBackendsFactory = Callable[[], IdeaBackends]
Work = Callable[[], tuple[RunStatus, str | None]]  # a pipeline run: its status and error


class RunRegistry:
    def __init__(self, graph: Graph, build_backends: BackendsFactory, workers: int,
                 keep: int = 1000, build_idea_backends: IdeaBackendsFactory | None = None,
                 run_deadline_s: float | None = None, max_queued: int | None = None,
                 stale_after_s: float = 10 * HEARTBEAT_S) -> None:
        self.graph = graph
        self.build_backends = build_backends
        self.build_idea_backends = build_idea_backends
        self.keep = keep
        self.run_deadline_s = run_deadline_s
        self.max_queued = max_queued  # runs waiting for a worker at most; None: no bound
        self.stale_after_s = stale_after_s  # a Run not marked alive this long has no owner
        # Finished runs whose Run node may not say so (the database was away), recorded by
        # the next submission that finds the database up.
        self.unrecorded: dict[str, TrackedRun] = {}
        self.stale_closed = False  # close_stale_runs has run (at start-up, or later)
        self.executor = ThreadPoolExecutor(max_workers=workers,
                                           thread_name_prefix="crase-search")
        self.runs: OrderedDict[str, TrackedRun] = OrderedDict()
        self.lock = threading.Lock()
        self.local = threading.local()

    # submitting and reading -----------------------------------------------------------
    def submit_search(self, request: SearchRequest) -> TrackedRun:
        run = TrackedRun(id=uuid.uuid4().hex[:12], kind="search", query=request.query,
                         params=request.model_dump(mode="json"), stages=pending("search"),
                         deadline_s=self.run_deadline_s)
        return self._submit(run, lambda: self._execute(run, lambda: self._search(run, request)))

    def submit_idea(self, request: IdeaRequest) -> TrackedRun:
        if self.build_idea_backends is None:
            raise SettingsError("this server was started without the idea workflow")
        run = TrackedRun(id=uuid.uuid4().hex[:12], kind="idea", query=request.idea,
                         params=request.model_dump(mode="json"), stages=pending("idea"),
                         deadline_s=self.run_deadline_s)
        return self._submit(run, lambda: self._execute(run, lambda: self._idea(run, request)))

    def _submit(self, run: TrackedRun, work: Callable[[], None]) -> TrackedRun:
        require_database(self.graph)
        self._write_missed_records()
        with self.lock:
            self._check_room()
            self.runs[run.id] = run
            self._forget_old_runs()
        run.future = self.executor.submit(work)
        run.future.add_done_callback(lambda future: self._note_crash(run, future))
        return run

    def _check_room(self) -> None:
        """RunQueueFull when as many runs wait for a worker as the queue holds (under the
        lock, so that a burst cannot slip past the bound between count and add)."""
        if self.max_queued is None:
            return
        waiting = sum(1 for run in self.runs.values() if run.status == "queued")
        if waiting >= self.max_queued:
            raise RunQueueFull(
                f"{waiting} runs already wait for a worker, as many as this server queues "
                f"(api.max_queued_runs = {self.max_queued}); try again in "
                f"{QUEUE_RETRY_AFTER_S} s", retry_after_s=QUEUE_RETRY_AFTER_S)

    def get(self, run_id: str) -> TrackedRun | None:
        with self.lock:
            return self.runs.get(run_id)

    def cancel(self, run_id: str) -> TrackedRun | None:
        """Ask a run to stop. A queued run never starts (and is recorded as cancelled); a
        running one stops before its next stage, or within a second while it waits for a
        model. None if this server does not track it."""
        run = self.get(run_id)
        if run is None:
            return None
        if run.status in FINISHED:
            raise RunNotCancellable(f"run {run_id} has already finished ({run.status})")
        run.stop.set()
        if run.future is not None and run.future.cancel():
            self._record_cancelled_before_start(run)
        return run

    def close_stale_runs(self) -> None:
        """The start-up hook: a Run node left 'running' or 'queued' whose owner has not
        marked it alive for `stale_after_s` was in flight when its process stopped; it is
        closed 'failed'. With the database away it is tried again at the next submission."""
        with self.lock:
            keep = list(self.runs)
        try:
            require_database(self.graph)
            closed = self.graph.write("close_stale_runs", keep=keep, owner=process_owner(),
                                      stale_after_s=self.stale_after_s, error=STALE_RUN,
                                      finished=now_iso())
        except DatabaseError as err:
            log.warning("runs left open by an earlier server are not closed yet: %s",
                        one_line(str(err)))
            return
        self.stale_closed = True
        if closed:
            log.warning("closed %d runs whose process is gone: %s", len(closed),
                        ", ".join(f"{row['id']} ({row['owner'] or 'no owner'})"
                                  for row in closed))

    def _write_missed_records(self) -> None:
        """With the database back, what it missed while away: the Runs an earlier server
        left open, and the runs of this server it could not record."""
        if not self.stale_closed:
            self.close_stale_runs()
        with self.lock:
            written = list(self.unrecorded)
            rows = [{"id": run.id, "kind": run.kind, "query": run.query,
                     "params": to_json(run.params), "status": run.status, "error": run.error}
                    for run in self.unrecorded.values()]
        if not rows:
            return
        try:
            self.graph.write("record_unrecorded_runs", rows=rows, finished=now_iso())
        except DatabaseError as err:
            log.warning("finished runs are not recorded yet: %s", one_line(str(err)))
            return
        with self.lock:
            for run_id in written:
                self.unrecorded.pop(run_id, None)

    def shutdown(self) -> None:
        """Stop taking work; what waits is cancelled (and recorded so); running runs stop
        at a stage end or, waiting for a model, within a second."""
        with self.lock:
            runs = list(self.runs.values())
        for run in runs:
            if run.status not in FINISHED:
                run.stop.set()
                if run.future is not None and run.future.cancel():
                    self._record_cancelled_before_start(run)
        self.executor.shutdown(wait=True, cancel_futures=True)

    # the worker side ----------------------------------------------------------------------
    def _execute(self, run: TrackedRun, work: Work) -> None:
        if run.stop.is_set():
            self._record_cancelled_before_start(run)
            return
        run.begin()
        try:
            status, error = work()
        except RunCancelled as err:
            run.finish("cancelled", str(err))
        except CraseError as err:  # RunDeadlineExceeded and DatabaseUnavailable included
            self._fail(run, f"{type(err).__name__}: {err}")
        else:
            run.finish(status, error)

    def _search(self, run: TrackedRun, request: SearchRequest) -> tuple[RunStatus, str | None]:
        result = run_search(self.graph, self._thread_backends(), request, run_id=run.id,
                            observer=run)
        if result.status == "partial":
            return "partial", partial_reason(result.problems)
        return "done", None

    def _idea(self, run: TrackedRun, request: IdeaRequest) -> tuple[RunStatus, str | None]:
        result = run_idea(self.graph, self._thread_idea_backends(), request, run_id=run.id,
                          observer=run)
        # A ranking failure is an answer, not an exception: the run is 'failed' with its
        # outcome and the reason in the audit.
        if result.status == "done":
            return "done", None
        return "failed", f"outcome {result.outcome}"

    def _fail(self, run: TrackedRun, error: str) -> None:
        """A failed run; its Run node may not say so (the database may be away), so its
        close is written again once the database answers (only where it is still open)."""
        run.finish("failed", one_line(error))
        with self.lock:
            self.unrecorded[run.id] = run

    def _thread_idea_backends(self) -> IdeaBackends:
        assert self.build_idea_backends is not None
        backends: IdeaBackends | None = getattr(self.local, "idea_backends", None)
        if backends is None:
            backends = self.build_idea_backends()
            self.local.idea_backends = backends
        return backends

    def _thread_backends(self) -> SearchBackends:
        backends: SearchBackends | None = getattr(self.local, "backends", None)
        if backends is None:
            backends = self.build_backends()
            self.local.backends = backends
        return backends

    def _note_crash(self, run: TrackedRun, future: Future[None]) -> None:
        # A bug (not a CraseError) in a worker must not leave the run "running" forever.
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            log.error("search run %s crashed", run.id, exc_info=error)
            self._fail(run, f"internal error: {type(error).__name__}: {error}")

    def _record_cancelled_before_start(self, run: TrackedRun) -> None:
        params = run.params  # the recorder keeps its summary, as the run does
        run.finish("cancelled", "cancelled before it started")
        try:
            record_cancelled_before_start(self.graph, run.id, run.kind, run.query, params)
        except DatabaseError as err:
            log.warning("run %s was cancelled but not recorded yet: %s", run.id,
                        one_line(str(err)))
            with self.lock:
                self.unrecorded[run.id] = run

    def _forget_old_runs(self) -> None:
        finished = [run_id for run_id, run in self.runs.items() if run.status in FINISHED]
        for run_id in finished[:max(0, len(self.runs) - self.keep)]:
            del self.runs[run_id]
