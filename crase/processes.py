"""Background servers this project starts itself (Neo4j, the local model server): the one
lifecycle they share. A server is started once and its pid recorded in a file; it is
stopped by that pid only; and a recycled pid is never taken for it, since the process's
command line must carry the server's marker (its main class or module).

Processes are looked at through psutil rather than /proc, which macOS does not have: there
a /proc check found no server, so `crase db stop` deleted the pid file and left Neo4j up."""

import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

import psutil


def is_alive(pid: int) -> bool:
    """Whether `pid` is a running process; a zombie (exited, not yet reaped) is not."""
    process = _process(pid)
    return process is not None and _alive(process)


def runs(pid: int, marker: str) -> bool:
    """Whether the process's command line names `marker` (guards against a recycled pid)."""
    process = _process(pid)
    return process is not None and _runs(process, marker)


def live_pid(pid_file: Path, marker: str) -> int | None:
    """The pid in `pid_file` when that process is alive and is the server; else None."""
    process = _server_process(pid_file, marker)
    return process.pid if process is not None else None


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
    Only that pid is signalled, never its group or anything found by name.
    False when none ran (a stale pid file is removed)."""
    process = _server_process(pid_file, marker)
    if process is not None:
        _terminate(process, timeout_s)
    pid_file.unlink(missing_ok=True)
    return process is not None


def _process(pid: int) -> psutil.Process | None:
    # 0 and negative numbers name process groups to kill(2), never one server.
    if pid <= 0:
        return None
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None


def _server_process(pid_file: Path, marker: str) -> psutil.Process | None:
    try:
        pid = int(pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    process = _process(pid)
    if process is None or not (_alive(process) and _runs(process, marker)):
        return None
    return process


def _alive(process: psutil.Process) -> bool:
    try:
        # is_running() is False also when the pid was recycled since `process` was made.
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # includes ZombieProcess
        return False
    except psutil.AccessDenied:  # another user's process: it exists
        return True


def _runs(process: psutil.Process, marker: str) -> bool:
    try:
        # Joined as /proc/PID/cmdline holds it, so a marker matches as it always did.
        return marker in "\0".join(process.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def _terminate(process: psutil.Process, timeout_s: float) -> None:
    """SIGTERM, then SIGKILL past `timeout_s`. psutil refuses to signal a pid that was
    recycled since `process` was looked up, so nothing else is ever hit."""
    try:
        process.terminate()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and _alive(process):
            time.sleep(0.1)
        if _alive(process):
            process.kill()
    except psutil.NoSuchProcess:
        return  # it exited on its own meanwhile
    except psutil.AccessDenied as err:
        raise PermissionError(f"not allowed to stop process {process.pid}") from err
