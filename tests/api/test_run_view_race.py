"""A run that closes while its view is read is shown as still running, never as done
with the node as it was before its close (server-free: the recording graph's read of the
Run node is where the worker finishes)."""

from typing import Any

from crase.api.run_views import describe_run
from crase.api.runs import TrackedRun
from tests.recording_graph import RecordingGraph

OPEN_NODE = {"id": "r1", "kind": "idea", "query": "an idea", "status": "running",
             "params": "{}", "backends": "{}", "plan": None, "counts": None,
             "timings": None, "usage": None, "error": None, "started": "2026-12-07T00:00:00Z",
             "finished": None}


def test_a_run_closing_during_the_read_is_not_done_without_its_timings() -> None:
    tracked = TrackedRun("r1", "idea", "an idea", {})
    tracked.begin()
    tracked.stage_started("structure")

    def node_read_as_the_worker_finishes(_: dict[str, Any]) -> list[dict[str, Any]]:
        tracked.finish("done")  # the worker closes the run after the node was read
        return [OPEN_NODE]

    graph = RecordingGraph({"read_run": node_read_as_the_worker_finishes})
    view = describe_run(graph, "r1", tracked)
    assert view["status"] == "running" and view["timings"] == {}
    # The next read sees the closed run as done.
    closed = {**OPEN_NODE, "status": "done", "timings": '{"structure": 0.1}'}
    view = describe_run(RecordingGraph({"read_run": [closed]}), "r1", tracked)
    assert view["status"] == "done" and view["timings"] == {"structure": 0.1}
