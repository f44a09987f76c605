"""How long a call holds the interpreter: the call runs in a thread while this one wakes every
millisecond, so the longest gap between wake-ups is the longest time the call kept every other
thread (a server's /health among them) from running: one regex call on a hostile line held it
for seconds."""

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Measured:
    result: Any  # what the call returned, or the exception it raised
    cpu_s: float  # the CPU time of the call's thread
    longest_pause_s: float  # the longest gap between this thread's wake-ups meanwhile


def measure_pauses(call: Callable[[], Any]) -> Measured:
    outcome: dict[str, Any] = {}

    def run() -> None:
        started = time.thread_time()
        try:
            outcome["result"] = call()
        except Exception as err:  # noqa: BLE001  (handed back to the test, which checks it)
            outcome["result"] = err
        outcome["cpu_s"] = time.thread_time() - started

    worker = threading.Thread(target=run, daemon=True)
    longest = 0.0
    last = time.perf_counter()
    worker.start()
    while worker.is_alive():
        time.sleep(0.001)
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    worker.join()
    return Measured(outcome["result"], outcome["cpu_s"], longest)
