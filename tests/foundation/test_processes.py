"""The shared server lifecycle (crase/processes.py) on real child processes: no server and
no /proc assumed, so it holds on macOS too."""

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from crase import processes

# A command line that carries a marker and waits to be stopped.
MARKER = "crase-test-sleeper"
SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)", MARKER]
# Ignores SIGTERM, so only the SIGKILL after the timeout ends it.
STUBBORN = [sys.executable, "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(600)", MARKER]


@pytest.fixture
def pid_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "server.pid"
    yield path
    processes.stop(path, MARKER, timeout_s=5)  # whatever a failed test left running


def start(command: list[str], pid_file: Path) -> int:
    """Spawn the command and wait until the child has become it: until its exec, the
    forked child still carries the test runner's command line (a loaded machine shows it)."""
    process = processes.spawn(command, pid_file.parent / "server.log", pid_file)
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline and not processes.runs(process.pid, MARKER):
        time.sleep(0.05)
    return process.pid


def test_a_started_server_is_found_by_its_pid_file(pid_file: Path) -> None:
    pid = start(SLEEPER, pid_file)
    assert processes.is_alive(pid)
    assert processes.runs(pid, MARKER)
    assert processes.live_pid(pid_file, MARKER) == pid


def test_a_process_without_the_marker_is_not_the_server(pid_file: Path) -> None:
    pid = start(SLEEPER, pid_file)
    assert not processes.runs(pid, "some-other-server")
    assert processes.live_pid(pid_file, "some-other-server") is None


def test_stop_ends_the_process_and_removes_the_pid_file(pid_file: Path) -> None:
    pid = start(SLEEPER, pid_file)
    assert processes.stop(pid_file, MARKER, timeout_s=10)
    assert not processes.is_alive(pid)  # the unreaped child is a zombie: not alive
    assert not pid_file.exists()


def test_stop_kills_a_process_that_ignores_sigterm(pid_file: Path) -> None:
    pid = start(STUBBORN, pid_file)
    wait_for_output(pid_file.parent / "server.log", "ready")
    assert processes.stop(pid_file, MARKER, timeout_s=0.5)
    # SIGKILL is sent, not waited for: the kernel ends the process a moment later.
    assert eventually(lambda: not processes.is_alive(pid))


def test_a_stale_or_bad_pid_file_stops_nothing_and_is_removed(tmp_path: Path) -> None:
    for content in ["", "not a pid", "0", "-1", str(2**22 + 12345)]:
        pid_file = tmp_path / "server.pid"
        pid_file.write_text(content)
        assert processes.live_pid(pid_file, MARKER) is None
        assert not processes.stop(pid_file, MARKER, timeout_s=1)
        assert not pid_file.exists()


def test_no_pid_file_means_no_server(tmp_path: Path) -> None:
    assert processes.live_pid(tmp_path / "none.pid", MARKER) is None
    assert not processes.stop(tmp_path / "none.pid", MARKER, timeout_s=1)


def test_group_and_invalid_pids_are_never_alive() -> None:
    assert not processes.is_alive(0)
    assert not processes.is_alive(-1)


def eventually(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def wait_for_output(log: Path, text: str, timeout_s: float = 30.0) -> None:
    # The SIGTERM handler is installed only once the interpreter has started.
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never appeared in {log}")
