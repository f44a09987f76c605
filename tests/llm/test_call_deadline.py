"""A model endpoint that hangs cannot hold a run: every call has an overall deadline, and a
batch inside a run stops within a fraction of a second when its run is cancelled or out of
time (the run's stop check, crase/run_lifecycle.py)."""

import threading
import time
from collections.abc import Iterator

import pytest

from crase.errors import RunCancelled, RunDeadlineExceeded
from crase.models.chat import STOP_POLL_S, ModelFailure, ModelReply, ModelRunner
from crase.run_lifecycle import Callbacks, StageClock, check_stop, stoppable_waits
from crase.settings import ModelEndpoint
from tests.faults.servers import SilentServer, wait_until
from tests.llm.calls import GOOD_2X3, entailment_call
from tests.llm.chat_server import ChatServer, Reply, Sleep
from tests.llm.conftest import MakeEndpoint


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    with SilentServer().running() as server:
        yield server


def silent_endpoint(server: SilentServer, **overrides: object) -> ModelEndpoint:
    # Per-request timeouts and retries far longer than any test: only a deadline ends it.
    values: dict[str, object] = {"base_url": server.base_url, "model": "test/silent",
                                 "timeout_s": 60.0, "max_retries": 4, "backoff_base_s": 0.01}
    return ModelEndpoint.model_validate({**values, **overrides})


class Observer(Callbacks):
    """Callbacks whose deadline can pass."""

    def __init__(self, cancel: threading.Event, overdue: threading.Event) -> None:
        super().__init__(should_cancel=cancel.is_set)
        self.overdue = overdue

    def past_deadline(self) -> str | None:
        return "out of time" if self.overdue.is_set() else None


def test_a_silent_endpoint_fails_as_a_timeout_by_the_call_deadline(
        silent: SilentServer) -> None:
    runner = ModelRunner()
    started = time.monotonic()
    outcome = runner.run_one(silent_endpoint(silent, call_deadline_s=1.0), entailment_call())
    elapsed = time.monotonic() - started

    assert isinstance(outcome, ModelFailure) and outcome.kind == "timeout"
    assert "call deadline of 1s" in outcome.detail
    assert 1.0 <= elapsed < 2.5
    assert runner.ledger.totals().failed == 1
    wait_until(lambda: silent.dropped == silent.accepted == 1, 2.0)


def test_the_deadline_spans_the_retries(chat_server: ChatServer,
                                        make_endpoint: MakeEndpoint) -> None:
    # Each try times out after 0.4 s; 3 retries would take 1.6 s, the deadline ends it at 1.
    chat_server.script(*[Sleep(3.0, Reply(GOOD_2X3)) for _ in range(4)])
    endpoint = make_endpoint(timeout_s=0.4, max_retries=3, call_deadline_s=1.0)
    started = time.monotonic()
    outcome = ModelRunner().run_one(endpoint, entailment_call())

    assert isinstance(outcome, ModelFailure) and outcome.kind == "timeout"
    assert "call deadline" in outcome.detail and "after 2 retries" in outcome.detail
    assert time.monotonic() - started < 2.5  # the request count above is the exact check
    assert outcome.usage.requests == 3


def test_the_deadline_covers_the_repair_request(chat_server: ChatServer,
                                                make_endpoint: MakeEndpoint) -> None:
    chat_server.script(Reply('{"matrix": [[0.9'), Sleep(3.0, Reply(GOOD_2X3)))
    endpoint = make_endpoint(timeout_s=10.0, call_deadline_s=1.0)
    started = time.monotonic()
    outcome = ModelRunner().run_one(endpoint, entailment_call())

    assert isinstance(outcome, ModelFailure) and outcome.kind == "timeout"
    assert outcome.usage.requests == 2  # the reply and its repair request
    assert time.monotonic() - started < 2.8  # the repair's reply would come at 3 s


def test_time_queued_behind_the_concurrency_limit_does_not_count(
        chat_server: ChatServer, make_endpoint: MakeEndpoint) -> None:
    # One request at a time, 0.4 s each: the third call starts 0.8 s after the batch and
    # finishes at 1.2 s, past a deadline that counts from the batch's start.
    chat_server.script(*[Sleep(0.4, Reply(GOOD_2X3)) for _ in range(3)])
    endpoint = make_endpoint(max_concurrency=1, call_deadline_s=0.9)
    calls = [entailment_call(tag=str(i)) for i in range(3)]
    outcomes = ModelRunner().run(endpoint, calls)
    assert all(isinstance(outcome, ModelReply) for outcome in outcomes)


def test_a_stop_check_ends_a_waiting_batch_and_drops_its_requests(
        silent: SilentServer) -> None:
    cancel = threading.Event()
    runner = ModelRunner(stop_check=lambda: check_stop(Callbacks(should_cancel=cancel.is_set),
                                                       "while waiting"))
    calls = [entailment_call(tag=str(i)) for i in range(3)]
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(RunCancelled, match="cancelled while waiting"):
        runner.run(silent_endpoint(silent), calls)
    assert time.monotonic() - started < 0.3 + STOP_POLL_S + 1.0
    wait_until(lambda: silent.accepted == 3 and silent.open_connections == 0, 2.0)


def test_a_run_in_progress_gives_its_model_calls_its_stop_check(
        silent: SilentServer) -> None:
    cancel, overdue = threading.Event(), threading.Event()
    runner = ModelRunner()  # no stop check of its own: the run's is used
    threading.Timer(0.3, overdue.set).start()
    with stoppable_waits(Observer(cancel, overdue)):
        with pytest.raises(RunDeadlineExceeded, match="out of time"):
            runner.run_one(silent_endpoint(silent), entailment_call())
    # Outside a run nothing stops a batch but its deadline.
    outcome = runner.run_one(silent_endpoint(silent, call_deadline_s=0.3), entailment_call())
    assert isinstance(outcome, ModelFailure) and outcome.kind == "timeout"


def test_a_stopped_run_sends_nothing_more(chat_server: ChatServer,
                                          make_endpoint: MakeEndpoint) -> None:
    cancel = threading.Event()
    cancel.set()
    with stoppable_waits(Observer(cancel, threading.Event())):
        with pytest.raises(RunCancelled):
            ModelRunner().run_one(make_endpoint(), entailment_call())
    assert chat_server.requests == []


def test_a_run_past_its_deadline_stops_before_the_next_stage() -> None:
    overdue = threading.Event()
    clock = StageClock(("plan", "seeds"), Observer(threading.Event(), overdue))
    with clock.stage("plan"):
        overdue.set()
    with pytest.raises(RunDeadlineExceeded, match="out of time"):
        with clock.stage("seeds"):
            pass
