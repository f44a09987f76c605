"""Counters of a run's long stages on stderr (CountProgress), for the search and idea
commands and the embedding of a bulk import; and the clock format they and the load bar
(crase.ingest.progress) share."""

import sys
import time
from typing import TextIO


def format_seconds(seconds: float) -> str:
    if seconds != seconds:  # NaN: no rate yet
        return "--:--"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class CountProgress:
    """Counters of a run's long stages (claims, entailment, assessment...) on stderr.

    On a terminal one line per stage redraws in place with the count, the rate and the
    ETA; elsewhere (a pipe, a log) a plain line comes every `log_interval_s` seconds and
    when the stage ends, without a carriage return."""

    def __init__(self, stream: TextIO | None = None, log_interval_s: float = 10.0) -> None:
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty()
        self.interval_s = 0.2 if self.interactive else log_interval_s
        self.stage = ""
        self.started = 0.0
        self.last_drawn = 0.0

    def update(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage != self.stage:  # a new stage shows its first count at once
            self.stage, self.started, self.last_drawn = stage, now, float("-inf")
        final = done >= total
        if final or now - self.last_drawn >= self.interval_s:
            self.last_drawn = now
            self.draw(done, total, now - self.started, final)

    def draw(self, done: int, total: int, elapsed: float, final: bool) -> None:
        rate = done / elapsed if elapsed > 0 else float("nan")
        eta = (total - done) / rate if rate and rate == rate else float("nan")
        timing = f"done in {format_seconds(elapsed)}" if final else f"ETA {format_seconds(eta)}"
        speed = f"{rate:,.1f}/s" if rate == rate else "--/s"
        text = f"  {self.stage}: {done:,}/{total:,} {speed} {timing}"
        if self.interactive:
            self.stream.write("\r" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
