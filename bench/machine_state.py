"""What a benchmark prints beside its figures about the machine: the load average (on a
shared machine other work moves every figure) and a process's peak memory."""

import os
from pathlib import Path


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, e.g. '0.98 2.00 2.25'."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def peak_memory_mib(pid: int | None) -> float | None:
    """A process's peak resident memory (VmHWM), or None when it cannot be read."""
    if pid is None:
        return None
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None
