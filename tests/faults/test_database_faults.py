"""The database going away under the HTTP API: nothing is accepted while it is down (503
with the reason), runs it took down are failed with the reason and stay visible, their
Runs are recorded once it is back, and a server's start-up closes the Runs a stopped
server left 'running' or 'queued'."""

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.runs import DATABASE_DOWN, STALE_RUN
from crase.bench.loopback_http import free_port
from crase.graph import Graph
from crase.run_lifecycle import RunRecorder
from crase.settings import DatabaseSettings, Settings
from tests.api.conftest import api_settings_for, wait_for_run
from tests.api.corpus import QUERY
from tests.faults.conftest import (
    ASKS_THE_PLANNER,
    OFFLINE,
    fault_client,
    fault_settings,
    load_corpus,
    recorded,
    start,
)
from tests.faults.servers import DisposableNeo4j, wait_until
from tests.llm.chat_server import Action, ChatServer, Reply

IDEA = {"idea": "Tachyon condensation on unstable D-branes"}


def planner_held_by(gate: threading.Event) -> Callable[[dict[str, Any]], Action]:
    """A planner that answers (one keyword sub-query) only once `gate` is set."""
    def answer(_: dict[str, Any]) -> Action:
        gate.wait(60.0)
        return Reply(json.dumps({"queries": ["tachyon condensation"]}))
    return answer


def assert_refused(client: TestClient) -> None:
    started = time.monotonic()
    for path, body in (("/searches", {"query": QUERY}), ("/ideas", IDEA)):
        response = client.post(path, json=body)
        assert response.status_code == 503, response.text
        assert response.json() == {"status_code": 503, "error": "DatabaseUnavailable",
                                   "detail": DATABASE_DOWN}
    assert time.monotonic() - started < 10.0  # a cheap check, not the driver's retries (30 s)


def test_runs_are_refused_while_the_database_is_down(tmp_path: Path) -> None:
    down = DatabaseSettings(uri=f"bolt://127.0.0.1:{free_port()}", password="unused")
    settings = api_settings_for(Settings(database=down, var_dir=tmp_path / "var"))
    with fault_client(settings) as client:  # the start-up hook does not stop the start
        assert_refused(client)


@pytest.mark.integration
@pytest.mark.slow
def test_the_database_stopped_mid_run(fault_db: DisposableNeo4j, fault_graph: Graph,
                                      tmp_path: Path) -> None:
    gate = threading.Event()
    with ChatServer(planner_held_by(gate)).running() as planner, \
            fault_client(fault_settings(fault_db, tmp_path, planner.base_url)) as client:
        load_corpus(client)
        in_flight = [start(client, ASKS_THE_PLANNER) for _ in range(2)]
        queued = start(client, OFFLINE)
        wait_until(lambda: planner.in_flight == 2, 30.0)

        fault_db.stop()
        assert_refused(client)
        gate.set()  # the plans come back; the next stage needs the database
        runs = [wait_for_run(client, run_id, 60.0) for run_id in (*in_flight, queued)]
        for run in runs:
            assert (run["status"], run["tracked"]) == ("failed", True), run
            assert run["error"].startswith("DatabaseUnavailable: Neo4j is not reachable")
            assert "\n" not in run["error"]

        fault_db.start()
        # The first run accepted again also records what the database missed. A restarted
        # server compiles every query afresh, which takes minutes on a loaded machine.
        assert wait_for_run(client, start(client, OFFLINE), 180.0)["status"] == "done"
        for run in runs:
            assert recorded(fault_graph, run["id"]) == {"status": "failed",
                                                        "error": run["error"]}
    # After a restart of the API every run is still there, failed, with its reason.
    with fault_client(fault_settings(fault_db, tmp_path)) as fresh:
        for run in runs:
            again = fresh.get(f"/runs/{run['id']}").json()
            assert (again["status"], again["tracked"], again["error"]) == (
                "failed", False, run["error"])


@pytest.mark.integration
def test_start_up_closes_the_runs_a_stopped_server_left_open(
        fault_db: DisposableNeo4j, fault_graph: Graph, tmp_path: Path) -> None:
    for run_id in ("was-running", "was-queued", "was-done"):
        RunRecorder(fault_graph, run_id).open("search", QUERY, {}, {})
    RunRecorder(fault_graph, "was-done").close("done", [], {}, {}, {}, None)
    with fault_graph.driver.session(database=fault_graph.database) as session:
        session.run("MATCH (r:Run {id: 'was-queued'}) SET r.status = 'queued'").consume()

    with fault_client(fault_settings(fault_db, tmp_path)) as client:
        for run_id in ("was-running", "was-queued"):
            run = client.get(f"/runs/{run_id}").json()
            assert (run["status"], run["tracked"], run["error"]) == ("failed", False, STALE_RUN)
            assert run["finished"] is not None
            cancel = client.post(f"/runs/{run_id}/cancel")
            assert cancel.status_code == 409 and "already finished" in cancel.json()["detail"]
        assert client.get("/runs/was-done").json()["status"] == "done"
