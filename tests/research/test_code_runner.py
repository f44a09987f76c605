"""The runner of a paper's code blocks, against blocks that try to outlive it, hold its
output, read its secrets or reach the network: whatever it started is gone after it, it
keeps its timeout, the block sees an empty environment and a temporary folder, and the
containment it reports is the one that applied."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest

from crase.research.code_extractor import CodeBlock, execute_block
from crase.research.code_runner import (
    MARKER,
    cgroup2_mount,
    marked_processes,
    run_python,
    tasks_of,
)


def python_block(text: str) -> CodeBlock:
    return CodeBlock("code", "python", text, "lines 1-9", "fenced block", syntax="ok")


def daemon_block(started: Path, late: Path, clear_environment: bool = False) -> str:
    """A block whose grandchild leaves the session (setsid, double fork) and writes `late`
    three seconds on, unless it is killed first."""
    clear = "os.environ.clear()" if clear_environment else "pass"
    return (f"import os, time\n"
            f"if os.fork() == 0:\n"
            f"    os.setsid()\n"
            f"    if os.fork() == 0:\n"
            f"        {clear}\n"
            f"        open({str(started)!r}, 'w').write('up')\n"
            f"        time.sleep(3)\n"
            f"        open({str(late)!r}, 'w').write('still running')\n"
            f"    os._exit(0)\n"
            f"time.sleep(60)\n")


@pytest.mark.slow  # waits out the grandchild's three seconds
def test_a_grandchild_that_left_the_session_is_killed_at_the_timeout(tmp_path: Path) -> None:
    started, late = tmp_path / "started", tmp_path / "late"
    outcome = execute_block(python_block(daemon_block(started, late)), timeout_s=1.5)
    assert outcome["status"] == "timed out"
    assert started.exists(), outcome  # the grandchild did run
    time.sleep(4)
    assert not late.exists(), "a process the block started outlived it"


@pytest.mark.slow  # waits out the grandchild's three seconds
def test_a_grandchild_that_also_cleared_its_environment_is_killed_by_the_cgroup(
        tmp_path: Path) -> None:
    started, late = tmp_path / "started", tmp_path / "late"
    outcome = run_python(daemon_block(started, late, clear_environment=True), timeout_s=1.5)
    if "cgroup" not in outcome["containment"]["kill"]:
        pytest.skip("no writable cgroup v2 here: only the session and the marker are killed")
    assert started.exists(), outcome
    time.sleep(4)
    assert not late.exists()


def test_a_grandchild_holding_the_output_does_not_extend_the_timeout() -> None:
    holder = ("import os, time\n"
              "if os.fork() == 0:\n"
              "    os.setsid()\n"
              "    time.sleep(8)\n"  # keeps stdout and stderr open
              "    os._exit(0)\n"
              "print('started', flush=True)\n")
    started = time.monotonic()
    outcome = execute_block(python_block(holder + "time.sleep(60)\n"), timeout_s=2.0)
    assert outcome["status"] == "timed out"
    assert time.monotonic() - started < 2.0 + 2.0  # the start of Python on a busy host
    assert outcome["stdout"] == "started\n"
    # A block that ends at once is not kept waiting for its grandchild either, which is
    # killed with it.
    started = time.monotonic()
    outcome = execute_block(python_block(holder), timeout_s=10.0)
    assert (outcome["status"], outcome["stdout"]) == ("ok", "started\n")
    assert time.monotonic() - started < 5.0  # the grandchild would hold it 8 s
    assert any("were killed" in note for note in outcome["containment"]["notes"])


def test_the_block_sees_an_empty_environment_and_a_temporary_folder(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRASE_API__KEY", "a-secret-the-block-must-not-see")
    monkeypatch.setenv("NEO4J_PASSWORD", "another-secret")
    outcome = execute_block(python_block(
        "import json, os\nprint(json.dumps({'env': dict(os.environ), 'cwd': os.getcwd()}))\n"),
        timeout_s=10.0)
    seen = json.loads(outcome["stdout"])
    assert sorted(seen["env"]) == sorted(["PATH", "HOME", "LANG", MARKER])
    assert not any("secret" in value for value in seen["env"].values())
    cwd = Path(seen["cwd"])
    assert cwd != Path.cwd() and cwd.is_relative_to(tempfile.gettempdir())
    assert cwd.parent.name.startswith("crase-code-run-") and seen["env"]["HOME"] == str(cwd)
    assert not cwd.exists()  # removed afterwards


def test_the_limits_hold_and_the_block_cannot_raise_them() -> None:
    outcome = execute_block(python_block(
        "import json, resource\n"
        "names = ['CPU', 'AS', 'NPROC', 'FSIZE', 'NOFILE', 'CORE']\n"
        "limits = {n: resource.getrlimit(getattr(resource, 'RLIMIT_' + n)) for n in names}\n"
        "try:\n"
        "    resource.setrlimit(resource.RLIMIT_CPU, (10**6, 10**6))\n"
        "    raised = True\n"
        "except (ValueError, OSError):\n"
        "    raised = False\n"
        "print(json.dumps({'limits': limits, 'raised': raised}))\n"), timeout_s=5.0)
    seen = json.loads(outcome["stdout"])
    asked = outcome["containment"]["limits"]
    assert seen["limits"] == {"CPU": [6, 6], "AS": [asked["memory_bytes"]] * 2,
                              "NPROC": [asked["processes"]] * 2,
                              "FSIZE": [asked["file_bytes"]] * 2,
                              "NOFILE": [asked["open_files"]] * 2, "CORE": [0, 0]}
    if "user" in outcome["containment"]["namespaces"] or os.geteuid() != 0:
        assert seen["raised"] is False


def test_no_network_and_no_secrets_from_proc_where_namespaces_apply() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        outcome = execute_block(python_block(
            "import json, os, socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
            "    reached = True\n"
            "except OSError:\n"
            "    reached = False\n"
            "try:\n"
            "    open(f'/proc/{os.getppid()}/environ', 'rb').read()\n"
            "    environ = True\n"
            "except OSError:\n"
            "    environ = False\n"
            "print(json.dumps({'reached': reached, 'environ': environ}))\n"), timeout_s=10.0)
    seen = json.loads(outcome["stdout"])
    containment = outcome["containment"]
    if "net" in containment["namespaces"]:
        assert seen["reached"] is False
    else:  # then the runner must say so
        assert any("network" in note for note in containment["notes"])
    if "user" in containment["namespaces"]:
        assert seen["environ"] is False  # the server's environment, secrets included
    # What this host gives is what the docs describe (a root VM with cgroup v2 writable).
    print(containment)


def test_a_process_carrying_the_run_marker_is_found_and_no_other() -> None:
    token, other = uuid.uuid4().hex, uuid.uuid4().hex
    marked = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                              env={**os.environ, MARKER: token})
    try:
        assert marked.pid in marked_processes(token)
        assert marked.pid not in marked_processes(other)
        assert marked.pid not in marked_processes(token[:-1])  # the whole value, not a prefix
    finally:
        marked.kill()
        marked.wait()
    assert marked.pid not in marked_processes(token)


def test_the_tasks_of_a_user_count_the_threads_of_this_process() -> None:
    release = threading.Event()
    waiting = [threading.Thread(target=release.wait) for _ in range(3)]
    for thread in waiting:
        thread.start()
    try:
        assert tasks_of(os.getuid()) >= threading.active_count() >= 4
        assert tasks_of(unused_uid()) == 0
    finally:
        release.set()
        for thread in waiting:
            thread.join()


def unused_uid() -> int:
    """A user that runs nothing here: one above every uid in use."""
    uids = [process.info["uids"] for process in psutil.process_iter(["uids"])]
    return max(uid.real for uid in uids if uid is not None) + 1


def test_the_cgroup2_mount_is_a_cgroup2_folder() -> None:
    mount = cgroup2_mount()
    if mount is None:
        pytest.skip("no cgroup v2 mounted here")
    assert (mount / "cgroup.procs").is_file()
