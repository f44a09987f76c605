"""Progress on stderr: a bar for long loads (rows, rows/s, share of the file, ETA), and
counters for the long stages of a search or idea run (CountProgress).

The share and the ETA come from the byte position in the input file, so no pass is
needed to count lines first. On a terminal the bar redraws in place; elsewhere (logs,
`make demo` output) it prints a line every `log_interval_s` seconds and a final one.
"""

import sys
import time
from typing import TextIO


class ProgressBar:
    def __init__(self, label: str, total_bytes: int, stream: TextIO | None = None,
                 enabled: bool = True, log_interval_s: float = 10.0,
                 start_position: int = 0) -> None:
        """`start_position`: where a resumed load starts, so the ETA counts this run only."""
        self.label = label
        self.total_bytes = max(total_bytes, 1)
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.interactive = self.stream.isatty()
        self.interval_s = 0.2 if self.interactive else log_interval_s
        self.started = time.monotonic()
        self.last_drawn = 0.0
        self.rows = 0
        self.position = start_position
        self.start_position = start_position

    def update(self, position: int, rows: int) -> None:
        """`position` is the byte offset reached, `rows` the rows this run handled so far."""
        self.position, self.rows = position, rows
        now = time.monotonic()
        if self.enabled and now - self.last_drawn >= self.interval_s:
            self.last_drawn = now
            self.draw(final=False)

    def close(self) -> None:
        if self.enabled:
            self.draw(final=True)

    def draw(self, final: bool) -> None:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        share = min(self.position / self.total_bytes, 1.0)
        done_bytes = self.position - self.start_position
        remaining = self.total_bytes - self.position
        eta = remaining * elapsed / done_bytes if done_bytes > 0 else float("nan")
        filled = int(share * 24)
        timing = f"done in {format_seconds(elapsed)}" if final else f"ETA {format_seconds(eta)}"
        text = (f"{self.label:<10} [{'#' * filled}{'.' * (24 - filled)}] {share:6.1%} "
                f"{self.rows:>12,} rows {self.rows / elapsed:>10,.0f}/s {timing}")
        if self.interactive:
            self.stream.write("\r" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


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
