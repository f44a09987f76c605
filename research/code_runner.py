"""The runner of a paper's Python blocks (`crase code-extract --execute`), contained as far as
the host allows, and honest about how far that is.

Each block runs as `python -I block.py` with:
- an empty environment (a minimal PATH, HOME and the working folder, LANG, and a marker
  naming the run), so the service's settings and secrets are not passed on;
- a temporary working folder, removed afterwards;
- its own session and process group, and, where the kernel allows it, its own user and
  network namespaces: no network at all (not even loopback), no capability over the host
  (it cannot raise its limits), and no access to the service's /proc entries;
- resource limits: CPU seconds, address space, processes, file size, open files, no core;
- its own cgroup where a cgroup v2 hierarchy is writable, so that everything it started is
  killed at once (`cgroup.kill`) when it ends or times out, whether or not it left its
  session; and in every case its process group and every process whose environment carries
  the run's marker are killed too.

Its output goes to files, not pipes, and only their ends are read: a grandchild holding
stdout cannot keep the runner waiting past the timeout.

What it does not stop is listed in docs/research-validation.md ("What the runner does not
stop"): above all, the block runs as the service's user and can read and write what that
user can, and without the namespaces it can reach the network, loopback included.
"""

import ctypes
import math
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

OUTPUT_TAIL_CHARS = 2000
RUN_PATH = "/usr/local/bin:/usr/bin:/bin"
MARKER = "CODE_RUN_ID"  # the variable that names a run in its processes' environments
MEMORY_BYTES = 4 << 30  # address space: importing torch maps about 3 GiB
MAX_PROCESSES = 64
MAX_FILE_BYTES = 64 << 20
MAX_OPEN_FILES = 256
KILL_ROUNDS = 5
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CGROUP_PREFIX = "crase-code-run-"


@dataclass
class Containment:
    """What applied to one run, as it is reported with the run's outcome."""

    limits: dict[str, int]
    cgroup: Path | None = None
    namespaces: str = "none"
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"environment": f"empty (PATH, HOME, LANG, {MARKER})",
                "working_dir": "a temporary folder", "limits": self.limits,
                "namespaces": self.namespaces,
                "kill": ("its cgroup, its process group and its marked processes"
                         if self.cgroup else "its process group and its marked processes "
                         "(no writable cgroup v2 here)"),
                "notes": self.notes}


def run_python(text: str, timeout_s: float) -> dict[str, Any]:
    """Run `text` as a Python script, contained (see the module), killed with everything
    it started at `timeout_s` or when it ends: status, exit code, seconds, the end of its
    output, and what containment applied."""
    token = uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="crase-code-run-") as folder:
        work = Path(folder) / "work"
        work.mkdir()
        script = work / "block.py"
        script.write_text(text, encoding="utf-8")
        containment = Containment(limits_for(timeout_s), cgroup=make_cgroup(token))
        stdout, stderr = Path(folder) / "stdout", Path(folder) / "stderr"
        try:
            outcome = run_contained(script, work, stdout, stderr, token, timeout_s,
                                    containment)
        finally:
            remove_cgroup(containment.cgroup)
        outcome.update(stdout=read_tail(stdout), stderr=read_tail(stderr),
                       containment=containment.to_dict())
        return outcome


def run_contained(script: Path, work: Path, stdout_path: Path, stderr_path: Path,
                  token: str, timeout_s: float, containment: Containment) -> dict[str, Any]:
    environment = {"PATH": RUN_PATH, "HOME": str(work), "LANG": "C.UTF-8", MARKER: token}
    started = time.perf_counter()
    with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-I", str(script)], cwd=work, env=environment,
            stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, start_new_session=True,
            preexec_fn=contain_child(containment))
    try:
        record_what_applied(process.pid, containment)
        try:
            process.wait(timeout=timeout_s)
            status = "ok" if process.returncode == 0 else "failed"
        except subprocess.TimeoutExpired:
            status = "timed out"
    finally:
        left = kill_everything(process, token, containment.cgroup)
        process.wait()
    if left:
        containment.notes.append(f"{left} process(es) it started were still running at "
                                 "its end and were killed")
    return {"status": status, "returncode": process.returncode,
            "seconds": round(time.perf_counter() - started, 3), "timeout_s": timeout_s}


def limits_for(timeout_s: float) -> dict[str, int]:
    return {"cpu_s": math.ceil(timeout_s) + 1, "memory_bytes": MEMORY_BYTES,
            "processes": MAX_PROCESSES, "file_bytes": MAX_FILE_BYTES,
            "open_files": MAX_OPEN_FILES}


# --- in the child, between fork and exec ---------------------------------------------------


def contain_child(containment: Containment) -> Callable[[], None]:
    """The preexec function. It runs in the forked child of a possibly threaded process,
    so it only makes system calls (everything it needs is prepared here, in the parent),
    and a step that fails is skipped: the parent checks afterwards what applied."""
    procs = str(containment.cgroup / "cgroup.procs") if containment.cgroup else None
    unshare = libc_unshare()
    limits = [(resource.RLIMIT_CPU, containment.limits["cpu_s"]),
              (resource.RLIMIT_AS, containment.limits["memory_bytes"]),
              (resource.RLIMIT_FSIZE, containment.limits["file_bytes"]),
              (resource.RLIMIT_NOFILE, containment.limits["open_files"]),
              (resource.RLIMIT_CORE, 0)]
    processes = containment.limits["processes"]
    # Outside a user namespace the process limit counts every task of this user (the
    # service's threads, a Neo4j it started), so the block gets its share on top of them.
    processes_shared = processes + user_tasks()

    def contain() -> None:
        if procs is not None:
            join_cgroup(procs)
        own_user = unshare is not None and unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0
        if not own_user and unshare is not None:
            unshare(CLONE_NEWNET)  # root without user namespaces still gets a network one
        for kind, value in limits:
            lower_limit(kind, value)
        lower_limit(resource.RLIMIT_NPROC, processes if own_user else processes_shared)

    return contain


def user_tasks() -> int:
    """How many tasks (threads included) this user runs now; 0 for root, whom the process
    limit does not bind."""
    uid = os.getuid()
    if uid == 0:
        return 0
    return tasks_of(uid)


def tasks_of(uid: int) -> int:
    """The threads of every process whose real user is `uid`, the user the kernel counts
    against the process limit."""
    count = 0
    for process in psutil.process_iter(["uids", "num_threads"]):
        uids, threads = process.info["uids"], process.info["num_threads"]
        if uids is not None and threads is not None and uids.real == uid:
            count += threads
    return count


def join_cgroup(procs: str) -> None:
    try:
        descriptor = os.open(procs, os.O_WRONLY)
    except OSError:
        return
    try:
        os.write(descriptor, b"0")  # "0": the writing process itself
    except OSError:
        pass  # the parent sees it is not in the cgroup and says so
    finally:
        os.close(descriptor)


def lower_limit(kind: int, value: int) -> None:
    _soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    try:
        resource.setrlimit(kind, (value, value))
    except (ValueError, OSError):
        pass  # the limit stays as the host set it; the report shows the asked one


def libc_unshare() -> Callable[[int], int] | None:
    """unshare(2) from the C library (os.unshare exists from Python 3.12 only)."""
    try:
        return ctypes.CDLL(None, use_errno=True).unshare
    except (OSError, AttributeError):
        return None


# --- in the parent ---------------------------------------------------------------------------


def record_what_applied(pid: int, containment: Containment) -> None:
    """Check, once the block has started, which namespaces and which cgroup it got."""
    own = Path("/proc/self/ns")
    theirs = Path(f"/proc/{pid}/ns")
    try:
        new = [kind for kind in ("user", "net")
               if os.readlink(own / kind) != os.readlink(theirs / kind)]
    except OSError:
        new = []
    containment.namespaces = " and ".join(new) + " namespaces" if new else "none"
    if "net" not in new:
        containment.notes.append("no network namespace could be made here: the block "
                                 "could reach the network, loopback included")
    if containment.cgroup is not None and not in_cgroup(pid, containment.cgroup):
        containment.notes.append("the block could not join its cgroup")
        remove_cgroup(containment.cgroup)
        containment.cgroup = None
    if containment.cgroup is None:
        containment.notes.append("no cgroup: a process that leaves the block's session and "
                                 "clears its environment escapes the kill")
    if "user" not in new and os.geteuid() != 0:
        containment.notes.append("no user namespace: the process limit counts all of this "
                                 "user's processes, so it was raised by as many as ran")
    if os.geteuid() == 0:
        containment.notes.append("run as root: the process limit is not enforced, and the "
                                 "block can write what root can write")


def in_cgroup(pid: int, cgroup: Path) -> bool:
    try:
        return str(pid) in (cgroup / "cgroup.procs").read_text().split()
    except OSError:
        return False


def kill_everything(process: subprocess.Popen[bytes], token: str,
                    cgroup: Path | None) -> int:
    """Kill the block and all it started: its cgroup, its process group, then every
    process whose environment has the run's marker, until none is left. Returns how many
    were running besides the block's own process."""
    others: set[int] = set()
    if cgroup is not None:
        others.update(cgroup_pids(cgroup))
        kill_cgroup(cgroup)
    try:
        os.killpg(process.pid, signal.SIGKILL)  # the group the block leads, by its pid
    except (ProcessLookupError, PermissionError):
        pass
    for _ in range(KILL_ROUNDS):
        marked = marked_processes(token)
        if not marked:
            break
        others.update(marked)
        for pid in marked:
            kill_pid(pid)
    others.discard(process.pid)
    return len(others)


def kill_cgroup(cgroup: Path) -> None:
    try:
        (cgroup / "cgroup.kill").write_text("1")
    except OSError:  # a kernel before 5.14: no cgroup.kill, so one by one
        for _ in range(KILL_ROUNDS):
            for pid in cgroup_pids(cgroup):
                kill_pid(pid)


def cgroup_pids(cgroup: Path) -> list[int]:
    try:
        return [int(pid) for pid in (cgroup / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def marked_processes(token: str) -> list[int]:
    """Processes whose environment names this run (a block that left its session and
    process group still carries it, unless it replaced its environment); one whose
    environment is not ours to read is left out."""
    return [process.pid for process in psutil.process_iter(["environ"])
            if (process.info["environ"] or {}).get(MARKER) == token]


def kill_pid(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# --- the cgroup -------------------------------------------------------------------------------


def make_cgroup(token: str) -> Path | None:
    """A new cgroup v2 below this process's own, or None where none can be made (no
    cgroup v2 mounted, or not writable by this user)."""
    base = own_cgroup()
    if base is None:
        return None
    cgroup = base / f"{CGROUP_PREFIX}{token[:12]}"
    try:
        cgroup.mkdir()
    except OSError:
        return None
    return cgroup


def own_cgroup() -> Path | None:
    """This process's cgroup v2 folder: the cgroup2 mount plus the `0::` path."""
    mount = cgroup2_mount()
    if mount is None:
        return None
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    path = next((line[3:] for line in lines if line.startswith("0::")), None)
    return None if path is None else mount / path.lstrip("/")


def cgroup2_mount() -> Path | None:
    """Where cgroup v2 is mounted (the mount table's escapes undone), or None."""
    try:
        mounts = psutil.disk_partitions(all=True)
    except OSError:
        return None
    mount = next((part.mountpoint for part in mounts if part.fstype == "cgroup2"), None)
    return None if mount is None else Path(mount)


def remove_cgroup(cgroup: Path | None) -> None:
    """Remove the run's cgroup once its processes are gone (they leave it as they exit)."""
    if cgroup is None:
        return
    for _ in range(50):
        try:
            cgroup.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


def read_tail(path: Path, chars: int = OUTPUT_TAIL_CHARS) -> str:
    """The last `chars` characters of an output file, reading no more than their bytes."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - 4 * chars))
            data = handle.read()
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")[-chars:]
