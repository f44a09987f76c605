"""Background runs of the HTTP API: a queue of runs served by worker threads.

The pipelines are synchronous, so each run (a search or an idea run) goes to a worker
thread; `api.search_workers` of them run at once and the rest wait, queued. The registry
keeps each run's live state (status, the stage it is in, per-stage progress) in memory
while the server lives; the pipeline itself records the run on its Run node (status,
plan, counts, timings, results), so a finished run can still be read after a restart.

Each worker thread builds its own backends on its first run of a kind: a backend's usage
counters then belong to one run at a time, so every run's recorded model usage is its
own, and no backend cache is shared between threads.
"""

import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from crase.errors import CraseError, RunCancelled, RunNotCancellable, SettingsError
from crase.graph import Graph
from crase.idea.pipeline import STAGES as IDEA_STAGES
from crase.idea.pipeline import run_idea
from crase.idea.request import IdeaRequest
from crase.idea.roles.protocols import IdeaBackends
from crase.run_lifecycle import now_iso, record_cancelled_before_start
from crase.search.pipeline import STAGES as SEARCH_STAGES
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.protocols import SearchBackends

RunStatus = Literal["queued", "running", "done", "failed", "cancelled"]
FINISHED: frozenset[str] = frozenset({"done", "failed", "cancelled"})
# Each pipeline's own list of its stages, in order: what a queued run shows as pending.
STAGES = {"search": SEARCH_STAGES, "idea": IDEA_STAGES}

log = logging.getLogger(__name__)


def pending(kind: str) -> dict[str, "StageProgress"]:
    return {name: StageProgress() for name in STAGES[kind]}


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

    # RunObserver: the pipeline announces each stage by name as it starts it.
    def stage_started(self, name: str) -> None:
        if self.stage is not None:
            self.stages[self.stage].state = "done"
        self.stage = name
        self.stages.setdefault(name, StageProgress()).state = "running"

    def items_done(self, stage: str, done: int, total: int) -> None:
        progress = self.stages.setdefault(stage, StageProgress(state="running"))
        progress.done, progress.total = done, total

    def cancel_requested(self) -> bool:
        return self.stop.is_set()

    def finish(self, status: RunStatus, error: str | None = None) -> None:
        if status == "done":
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


class RunRegistry:
    def __init__(self, graph: Graph, build_backends: BackendsFactory, workers: int,
                 keep: int = 1000, build_idea_backends: IdeaBackendsFactory | None = None,
                 ) -> None:
        self.graph = graph
        self.build_backends = build_backends
        self.build_idea_backends = build_idea_backends
        self.keep = keep
        self.executor = ThreadPoolExecutor(max_workers=workers,
                                           thread_name_prefix="crase-search")
        self.runs: OrderedDict[str, TrackedRun] = OrderedDict()
        self.lock = threading.Lock()
        self.local = threading.local()

    # submitting and reading -----------------------------------------------------------
    def submit_search(self, request: SearchRequest) -> TrackedRun:
        run = TrackedRun(id=uuid.uuid4().hex[:12], kind="search", query=request.query,
                         params=request.model_dump(mode="json"), stages=pending("search"))
        return self._submit(run, lambda: self._execute_search(run, request))

    def submit_idea(self, request: IdeaRequest) -> TrackedRun:
        if self.build_idea_backends is None:
            raise SettingsError("this server was started without the idea workflow")
        run = TrackedRun(id=uuid.uuid4().hex[:12], kind="idea", query=request.idea,
                         params=request.model_dump(mode="json"), stages=pending("idea"))
        return self._submit(run, lambda: self._execute_idea(run, request))

    def _submit(self, run: TrackedRun, work: Callable[[], None]) -> TrackedRun:
        with self.lock:
            self.runs[run.id] = run
            self._forget_old_runs()
        run.future = self.executor.submit(work)
        run.future.add_done_callback(lambda future: self._note_crash(run, future))
        return run

    def get(self, run_id: str) -> TrackedRun | None:
        with self.lock:
            return self.runs.get(run_id)

    def cancel(self, run_id: str) -> TrackedRun | None:
        """Ask a run to stop. A queued run never starts (and is recorded as cancelled); a
        running one stops before its next stage. None if this server does not track it."""
        run = self.get(run_id)
        if run is None:
            return None
        if run.status in FINISHED:
            raise RunNotCancellable(f"run {run_id} has already finished ({run.status})")
        run.stop.set()
        if run.future is not None and run.future.cancel():
            self._record_cancelled_before_start(run)
        return run

    def shutdown(self) -> None:
        """Stop taking work, cancel what waits, let running searches stop at a stage end."""
        with self.lock:
            runs = list(self.runs.values())
        for run in runs:
            if run.status not in FINISHED:
                run.stop.set()
        self.executor.shutdown(wait=True, cancel_futures=True)

    # the worker side ----------------------------------------------------------------------
    def _execute_search(self, run: TrackedRun, request: SearchRequest) -> None:
        if run.stop.is_set():
            self._record_cancelled_before_start(run)
            return
        run.status = "running"
        try:
            backends = self._thread_backends()
            run_search(self.graph, backends, request, run_id=run.id, observer=run)
        except RunCancelled as err:
            run.finish("cancelled", str(err))
        except CraseError as err:
            run.finish("failed", f"{type(err).__name__}: {err}")
        else:
            run.finish("done")

    def _execute_idea(self, run: TrackedRun, request: IdeaRequest) -> None:
        if run.stop.is_set():
            self._record_cancelled_before_start(run)
            return
        run.status = "running"
        try:
            backends = self._thread_idea_backends()
            result = run_idea(self.graph, backends, request, run_id=run.id, observer=run)
        except RunCancelled as err:
            run.finish("cancelled", str(err))
        except CraseError as err:
            run.finish("failed", f"{type(err).__name__}: {err}")
        else:
            # A ranking failure is an answer, not an exception: the run is 'failed' with
            # its outcome and the reason in the audit.
            run.finish("done" if result.status == "done" else "failed",
                       None if result.status == "done" else f"outcome {result.outcome}")

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
            run.finish("failed", f"internal error: {type(error).__name__}: {error}")

    def _record_cancelled_before_start(self, run: TrackedRun) -> None:
        run.finish("cancelled", "cancelled before it started")
        record_cancelled_before_start(self.graph, run.id, run.kind, run.query, run.params)

    def _forget_old_runs(self) -> None:
        finished = [run_id for run_id, run in self.runs.items() if run.status in FINISHED]
        for run_id in finished[:max(0, len(self.runs) - self.keep)]:
            del self.runs[run_id]
