"""A model endpoint that accepts connections and never answers, behind the HTTP API: a run
waiting on it is cancelled within seconds of POST /runs/{id}/cancel, a run past
`api.run_deadline_s` fails with the reason, and the workers are free for the next runs."""

import time
from pathlib import Path

import pytest

from crase.graph import Graph
from tests.api.conftest import wait_for_run
from tests.faults.conftest import (
    ASKS_THE_PLANNER,
    OFFLINE,
    fault_client,
    fault_settings,
    load_corpus,
    recorded,
    stage_of,
    start,
)
from tests.faults.servers import DisposableNeo4j, SilentServer, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_cancel_interrupts_runs_waiting_on_a_silent_model(
        fault_db: DisposableNeo4j, fault_graph: Graph, tmp_path: Path) -> None:
    with SilentServer().running() as silent, \
            fault_client(fault_settings(fault_db, tmp_path, silent.base_url)) as client:
        load_corpus(client)
        hung = [start(client, ASKS_THE_PLANNER) for _ in range(2)]  # both workers
        waiting = start(client, OFFLINE)
        wait_until(lambda: silent.accepted == 2, 30.0)
        assert [stage_of(client, run_id) for run_id in hung] == ["plan", "plan"]
        assert client.get(f"/runs/{waiting}").json()["status"] == "queued"

        asked = time.monotonic()
        for run_id in hung:
            assert client.post(f"/runs/{run_id}/cancel").status_code == 202
        runs = [wait_for_run(client, run_id, timeout_s=10.0) for run_id in hung]
        assert time.monotonic() - asked < 5.0
        assert [run["status"] for run in runs] == ["cancelled", "cancelled"]
        # The workers are free: the queued run and a new one both finish.
        assert wait_for_run(client, waiting, 60.0)["status"] == "done"
        assert wait_for_run(client, start(client, OFFLINE), 60.0)["status"] == "done"
        wait_until(lambda: silent.open_connections == 0, 5.0)  # the requests were dropped
    for run_id in hung:
        assert recorded(fault_graph, run_id) == {
            "status": "cancelled",
            "error": "RunCancelled: cancelled while waiting for a model reply"}


def test_a_run_past_its_deadline_fails_with_the_reason(
        fault_db: DisposableNeo4j, fault_graph: Graph, tmp_path: Path) -> None:
    with SilentServer().running() as silent:
        settings = fault_settings(fault_db, tmp_path, silent.base_url, run_deadline_s=2.0)
        with fault_client(settings) as client:
            load_corpus(client)
            started = time.monotonic()
            run = wait_for_run(client, start(client, ASKS_THE_PLANNER), timeout_s=20.0)
            assert time.monotonic() - started < 8.0
    assert run["status"] == "failed"
    assert "deadline of 2 s (api.run_deadline_s)" in run["error"]
    node = recorded(fault_graph, run["id"])
    assert node["status"] == "failed" and node["error"].startswith("RunDeadlineExceeded: ")


def test_shutdown_does_not_wait_for_a_silent_model(
        fault_db: DisposableNeo4j, fault_graph: Graph, tmp_path: Path) -> None:
    with SilentServer().running() as silent:
        settings = fault_settings(fault_db, tmp_path, silent.base_url, search_workers=1)
        with fault_client(settings) as client:
            load_corpus(client)
            hung, queued = start(client, ASKS_THE_PLANNER), start(client, OFFLINE)
            wait_until(lambda: silent.accepted == 1, 30.0)
            stopping = time.monotonic()
        assert time.monotonic() - stopping < 5.0
    assert recorded(fault_graph, hung) == {
        "status": "cancelled", "error": "RunCancelled: cancelled while waiting for a model reply"}
    assert recorded(fault_graph, queued) == {
        "status": "cancelled", "error": "RunCancelled: cancelled before it started"}
