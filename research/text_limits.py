"""Bounds on user text (a paper's text, a draft's reference list): its size, its longest
line, and the CPU time a parse of it may use. User text is hostile, so every reader in
research/ checks the size before it starts and the deadline while it works, and stops with
a named error (UserTextTooLarge, ParseDeadlineExceeded) rather than stall a server thread."""

import time

from crase.errors import ParseDeadlineExceeded, UserTextTooLarge


def check_text_size(text: str, what: str, max_chars: int, max_line_chars: int | None = None
                    ) -> None:
    """UserTextTooLarge when `text` has more than `max_chars` characters, or a line of more
    than `max_line_chars` (None: lines are not limited)."""
    if len(text) > max_chars:
        raise UserTextTooLarge(f"{what} has {len(text):,} characters, more than the "
                               f"{max_chars:,} allowed; send a shorter one")
    if max_line_chars is None:
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > max_line_chars:
            raise UserTextTooLarge(f"line {number} of {what} has {len(line):,} characters, "
                                   f"more than the {max_line_chars:,} allowed in one line; "
                                   "break it into lines")


class CpuDeadline:
    """The CPU time (of the calling thread, so that a busy server does not count against
    it) a parse may use; `check` between steps raises ParseDeadlineExceeded past it."""

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self.ends = time.thread_time() + seconds

    def check(self) -> None:
        if time.thread_time() > self.ends:
            raise ParseDeadlineExceeded(f"reading {self.what} took more than its "
                                        f"{self.seconds:g} s CPU deadline; send a shorter "
                                        "or plainer text")


def text_pieces(text: str, size: int = 65_536) -> list[str]:
    """`text` cut at line ends into pieces of about `size` characters, so that a pattern
    searched piece by piece holds the interpreter for a bounded time per call (a regex
    search is one C call: over two megabytes it kept every other request waiting) and a
    deadline can be checked between pieces. A match that spans a line end at a cut is lost."""
    pieces = []
    start = 0
    while start < len(text):
        end = start + size
        if end < len(text):
            newline = text.rfind("\n", start, end)
            end = newline + 1 if newline > start else end
        pieces.append(text[start:end])
        start = end
    return pieces
