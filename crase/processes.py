"""Background servers this project starts itself (Neo4j, the local model server): the one
lifecycle they share. A server is started once and its pid recorded in a file; it is
stopped by that pid only; and a recycled pid is never taken for it, since the process's
command line must carry the server's marker (its main class or module)."""

import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path


def is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited child not yet reaped) still answers kill(0).
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
    except (FileNotFoundError, IndexError):
        return True
    return state != "Z"


def runs(pid: int, marker: str) -> bool:
    """Whether the process's command line names `marker` (guards against a recycled pid)."""
    try:
        return marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return False


def live_pid(pid_file: Path, marker: str) -> int | None:
    """The pid in `pid_file` when that process is alive and is the server; else None."""
    try:
        pid = int(pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    return pid if is_alive(pid) and runs(pid, marker) else None


def spawn(command: list[str], log_file: Path, pid_file: Path,
          env: Mapping[str, str] | None = None) -> "subprocess.Popen[bytes]":
    """Start `command` in its own session (a Ctrl-C in the shell does not reach it), its
    output appended to `log_file`, its pid written to `pid_file`."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with log_file.open("ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True,
                                   env=dict(env) if env is not None else None)
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text(str(process.pid))
    return process


def stop(pid_file: Path, marker: str, timeout_s: float) -> bool:
    """Stop the server recorded in `pid_file`: SIGTERM, then SIGKILL past `timeout_s`.
    False when none ran (a stale pid file is removed)."""
    pid = live_pid(pid_file, marker)
    if pid is None:
        pid_file.unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and is_alive(pid):
        time.sleep(0.1)
    if is_alive(pid):
        os.kill(pid, signal.SIGKILL)
    pid_file.unlink(missing_ok=True)
    return True
