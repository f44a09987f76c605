"""What the server keeps of a finished run: a summary of its request, not its bulk. A
9 MB `exclude` kept whole was 16.7 MB of memory per run, kept after cancel, for up to
1,000 runs; the goal is under 64 KB a finished run."""

import gc
import threading
import time
import tracemalloc
from typing import Any

import pytest

from crase.api.runs import RunRegistry
from crase.errors import DatabaseError
from crase.graph import Graph
from crase.run_lifecycle import to_json
from crase.search.request import SearchRequest

pytestmark = pytest.mark.integration

PER_RUN_LIMIT = 64_000  # bytes


def heavy_request(number: int) -> SearchRequest:
    """The largest request the schema takes: 10,000 excluded ids of 900 characters."""
    return SearchRequest(query=f"black holes, run {number}",
                         exclude=[f"{number:03d}-{n:05d}-" + "x" * 890 for n in range(10_000)])


def test_a_summary_keeps_the_shape_and_says_what_was_left_out() -> None:
    from crase.run_lifecycle import summarise_request

    summary = summarise_request(heavy_request(1).model_dump(mode="json"))
    assert summary["query"] == "black holes, run 1" and summary["params"]["k"] > 0
    shown = summary["exclude"]
    assert shown["count"] == 10_000 and len(shown["first"]) == 5
    assert all(len(item) <= 903 for item in shown["first"])
    assert len(repr(summary)) < 8_000


def test_finished_runs_keep_a_summary_of_their_request(graph: Graph) -> None:
    release = threading.Event()

    def blocking_backends() -> Any:
        release.wait(120)  # holds the one worker, so the runs after it wait in the queue
        raise DatabaseError("no backends in this test")

    registry = RunRegistry(graph, blocking_backends, workers=1)
    registry.submit_search(SearchRequest(query="the run that holds the worker"))

    def cancel_queued(first: int, count: int) -> None:
        for number in range(first, first + count):
            run = registry.submit_search(heavy_request(number))
            registry.cancel(run.id)

    tracemalloc.start()
    cancel_queued(0, 2)  # the driver's buffers grow to the request's size once
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    cancel_queued(2, 6)
    release.set()
    deadline = time.monotonic() + 60
    while any(run.status not in ("cancelled", "failed") for run in registry.runs.values()):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    gc.collect()
    kept = (tracemalloc.get_traced_memory()[0] - before) / 6
    tracemalloc.stop()
    registry.shutdown()
    print(f"memory kept per cancelled run: {kept / 1000:.1f} KB")
    assert kept < PER_RUN_LIMIT, kept
    cancelled = [run for run in registry.runs.values() if run.status == "cancelled"]
    assert len(cancelled) == 8
    assert all(run.params["exclude"]["count"] == 10_000 for run in cancelled)
    # What a run object holds, measured directly too (the memory figure above is of the
    # whole process, freed driver buffers included).
    assert all(len(to_json(run.params)) + len(run.query) < 10_000 for run in cancelled)
