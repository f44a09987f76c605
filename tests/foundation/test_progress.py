"""A run's stage counters on stderr (crase.progress): redrawn in place with rate and ETA
on a terminal; plain periodic lines in a pipe or a log, never a carriage return there."""

import io
import os
import time

from crase.progress import CountProgress, format_seconds


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_stage_counts_in_a_pipe_are_plain_lines() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as pipe:
        progress = CountProgress(pipe, log_interval_s=0.05)
        for done in range(0, 101, 10):
            progress.update("assessment", done, 100)
            time.sleep(0.01)
        progress.update("neighbours graded", 0, 4)
        progress.update("neighbours graded", 4, 4)
    with os.fdopen(read_end) as reader:
        text = reader.read()
    assert "\r" not in text
    lines = text.splitlines()
    assert lines[0].startswith("  assessment: 0/100 ")
    assert any(line.startswith("  assessment: 100/100 ") and "done in" in line
               for line in lines)
    assert 3 <= sum(line.startswith("  assessment:") for line in lines) < 11  # periodic
    assert lines[-1].startswith("  neighbours graded: 4/4 ")


def test_stage_counts_on_a_terminal_redraw_with_rate_and_eta() -> None:
    terminal = Terminal()
    progress = CountProgress(terminal)
    progress.update("claims", 0, 50)
    time.sleep(0.25)
    progress.update("claims", 10, 50)
    progress.update("claims", 50, 50)
    text = terminal.getvalue()
    assert text.startswith("\r  claims: 0/50 ") and text.endswith("\n")
    assert "\r  claims: 10/50 " in text and "/s ETA " in text
    assert "claims: 50/50 " in text and "done in" in text


def test_the_clock_format() -> None:
    assert format_seconds(65) == "01:05"
    assert format_seconds(3725) == "1:02:05"
    assert format_seconds(float("nan")) == "--:--"
