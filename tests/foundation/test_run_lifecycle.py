"""The one run lifecycle both pipelines use: every way out of a run closes its Run node."""

import time
from typing import Any

import pytest

from crase.errors import RunCancelled
from crase.graph import Graph
from crase.run_lifecycle import Callbacks, RunLifecycle, StageClock, process_owner

STAGES = ("first", "second")


def run_node(graph: Graph, run_id: str) -> dict[str, Any]:
    with graph.driver.session(database=graph.database) as session:
        return dict(session.run("MATCH (r:Run {id: $id}) RETURN r.status AS status, "
                                "r.error AS error, r.finished AS finished, r.plan AS plan",
                                id=run_id).single() or {})


def open_run(graph: Graph, run_id: str, observer: Callbacks | None = None) -> Any:
    return RunLifecycle.open(graph, run_id, "search", "a query", {"k": 1}, {}, STAGES,
                             observer or Callbacks())


@pytest.mark.integration
def test_a_normal_exit_closes_the_run_done_with_what_it_set(graph: Graph) -> None:
    with open_run(graph, "life-done") as run:
        with run.stage("first"):
            run.plan = ["a b"]
    node = run_node(graph, "life-done")
    assert node["status"] == "done" and node["error"] is None and node["finished"]
    assert node["plan"] == ["a b"] and set(run.timings) == {"first"}


@pytest.mark.integration
@pytest.mark.parametrize(("error", "status"), [
    (RunCancelled("stop"), "cancelled"),
    (RuntimeError("a bug"), "failed"),
    (KeyboardInterrupt(), "failed"),
])
def test_every_exception_closes_the_run_and_is_raised_again(
        graph: Graph, error: BaseException, status: str) -> None:
    with pytest.raises(type(error)), open_run(graph, f"life-{status}-{type(error).__name__}"):
        raise error
    node = run_node(graph, f"life-{status}-{type(error).__name__}")
    assert node["status"] == status and type(error).__name__ in node["error"]


@pytest.mark.integration
def test_a_pipeline_may_close_its_run_failed_without_raising(graph: Graph) -> None:
    with open_run(graph, "life-ranking") as run:
        run.status, run.error = "failed", "the expert ranking failed: invalid_reply"
    assert run_node(graph, "life-ranking")["status"] == "failed"


def test_the_clock_announces_each_stage_and_refuses_unknown_names() -> None:
    heard: list[str] = []
    clock = StageClock(STAGES, Callbacks(on_stage=heard.append))
    with clock.stage("first"):
        pass
    assert heard == ["first"] and "first" in clock.timings
    with pytest.raises(ValueError, match="not one of"), clock.stage("third"):
        pass


def test_the_clock_stops_before_a_cancellable_stage_when_asked() -> None:
    clock = StageClock(STAGES, Callbacks(should_cancel=lambda: True))
    with pytest.raises(RunCancelled, match="before stage second"), clock.stage("second"):
        pass
    with clock.stage("second", cancellable=False):  # recording after a cancel still runs
        pass
    assert "second" in clock.timings


def heartbeat_of(graph: Graph, run_id: str) -> tuple[str | None, Any]:
    with graph.driver.session(database=graph.database) as session:
        row = session.run("MATCH (r:Run {id: $id}) RETURN r.owner AS owner, "
                          "r.heartbeat AS heartbeat", id=run_id).single()
    assert row is not None
    return row["owner"], row["heartbeat"]


@pytest.mark.integration
def test_an_open_run_names_its_owner_and_beats_until_it_closes(graph: Graph) -> None:
    with open_run(graph, "life-beat"):
        owner, first = heartbeat_of(graph, "life-beat")
        assert owner and first is not None, "an open run has no owner or heartbeat"
        assert owner == process_owner()
    assert heartbeat_of(graph, "life-beat")[1] == first  # short run: no second beat


@pytest.mark.integration
def test_the_heartbeat_is_refreshed_while_the_run_works(graph: Graph) -> None:
    with RunLifecycle.open(graph, "life-long", "search", "a query", {}, {}, STAGES,
                           heartbeat_s=0.2):
        first = heartbeat_of(graph, "life-long")[1]
        time.sleep(1.0)
        later = heartbeat_of(graph, "life-long")[1]
        assert later > first
    closed = heartbeat_of(graph, "life-long")[1]
    time.sleep(0.5)
    assert heartbeat_of(graph, "life-long")[1] == closed  # a closed run beats no more
