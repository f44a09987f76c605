"""Progress on stderr: a bar for long loads (rows, rows/s, share of the file, ETA). The
counters of a run's stages are crase.progress.CountProgress.

The share and the ETA come from the byte position in the input file, so no pass is
needed to count lines first. On a terminal the bar redraws in place; elsewhere (logs,
`make demo` output) it prints a line every `log_interval_s` seconds and a final one.
"""

import sys
import time
from typing import TextIO

from crase.progress import format_seconds


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
