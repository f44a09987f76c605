"""Bounds on user text (a paper's text, a draft, a reference list, a stored abstract): its
size, its longest line, the CPU time a parse of it may use, and the engine its patterns run
on. User text is hostile, so every reader checks the size before it starts and the deadline
while it works, and stops with a named error (UserTextTooLarge, ParseDeadlineExceeded) rather
than stall a server thread; and every pattern applied to it is compiled by `compile_linear`
(RE2: time linear in the text, whatever the pattern, where Python's engine backtracks)."""

import functools
import re
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import re2  # type: ignore[import-untyped]

from crase.errors import ParseDeadlineExceeded, UserTextTooLarge

# The flags of Python's `re` that RE2 reads as inline flags; any other is refused.
INLINE_FLAGS = {re.IGNORECASE: "i", re.MULTILINE: "m", re.DOTALL: "s"}
# What Python's `\s`, `\w` and `\d` match in a str, as members of an RE2 class.
PYTHON_CLASS_MEMBERS = {"s": r"\s\x0b\x1c-\x1f\x85\p{Z}", "w": r"\p{L}\p{N}_", "d": r"\p{Nd}"}


class LinearMatch(Protocol):
    """A match of a LinearPattern: the part of re.Match the callers use. Groups are str
    for a str text, bytes for a bytes one (a search from an offset into a long str encodes
    it again each time; into bytes it does not)."""

    def group(self, group: int | str = 0, /) -> Any: ...

    def groups(self, default: str | None = None) -> tuple[Any, ...]: ...

    def start(self, group: int = 0, /) -> int: ...

    def end(self, group: int = 0, /) -> int: ...

    def span(self, group: int = 0, /) -> tuple[int, int]: ...

    @property
    def lastgroup(self) -> str | None: ...


class LinearPattern(Protocol):
    """A compiled pattern that runs in linear time (RE2), used like re.Pattern."""

    @property
    def pattern(self) -> str: ...

    def search(self, text: str | bytes, pos: int | None = None,
               endpos: int | None = None) -> LinearMatch | None: ...

    def match(self, text: str | bytes, pos: int | None = None,
              endpos: int | None = None) -> LinearMatch | None: ...

    def fullmatch(self, text: str | bytes, pos: int | None = None,
                  endpos: int | None = None) -> LinearMatch | None: ...

    def finditer(self, text: str, pos: int | None = None,
                 endpos: int | None = None) -> Iterator[LinearMatch]: ...

    def findall(self, text: str, pos: int | None = None,
                endpos: int | None = None) -> list[Any]: ...

    def split(self, text: str, maxsplit: int = 0) -> list[str]: ...

    def sub(self, repl: str | Callable[[LinearMatch], str], text: str,
            count: int = 0) -> str: ...


@functools.lru_cache(maxsize=1024)
def compile_linear(pattern: str, flags: int = 0) -> LinearPattern:
    """`pattern` compiled by RE2, which matches in time linear in the text (no backtracking):
    the engine for every pattern applied to user text. It reads Python's syntax except
    look-around and back-references (refused here, at import, with re2.error). `\\s`, `\\w`
    and `\\d` keep Python's Unicode meaning (see `unicode_classes`); `\\b` is ASCII, and `$`
    without re.MULTILINE is the end of the text only (not before a final newline). `flags`
    takes re.IGNORECASE, re.MULTILINE and re.DOTALL."""
    unknown = flags & ~sum(INLINE_FLAGS)
    if unknown:
        raise ValueError(f"compile_linear takes re.IGNORECASE, re.MULTILINE and re.DOTALL, "
                         f"not {re.RegexFlag(unknown)!r}; write the pattern without it")
    letters = "".join(letter for flag, letter in INLINE_FLAGS.items() if flags & flag)
    translated = unicode_classes(pattern)
    compiled: LinearPattern = re2.compile(f"(?{letters}){translated}" if letters
                                          else translated)
    return compiled


def unicode_classes(pattern: str) -> str:
    """`pattern` with `\\s`, `\\w`, `\\d` (and outside a class `\\S`, `\\W`, `\\D`) written
    as the Unicode classes Python means by them; RE2 reads them as ASCII."""
    out: list[str] = []
    index, in_class, class_body = 0, False, 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            out.append(unicode_escape(pattern[index + 1], in_class))
            index += 2
            continue
        if in_class and char == "]" and index > class_body:
            in_class = False
        elif not in_class and char == "[":
            in_class = True
            class_body = index + 1 + (pattern[index + 1:index + 2] == "^")
        out.append(char)
        index += 1
    return "".join(out)


def unicode_escape(letter: str, in_class: bool) -> str:
    """The escape `\\letter` with Python's meaning, inside or outside a character class."""
    members = PYTHON_CLASS_MEMBERS.get(letter.lower())
    if members is None:
        return "\\" + letter
    if letter.islower():
        return members if in_class else f"[{members}]"
    if in_class:
        # RE2 has no spelling of a negated Unicode class inside a class (`[^\W_]`), and
        # its own `\W` there is ASCII: a letter would silently stop being a letter.
        raise ValueError(f"compile_linear cannot read \\{letter} inside a character class; "
                         "write the class out (`[^\\W_]` is `[\\p{L}\\p{N}]`)")
    return f"[^{members}]"



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
    it) a parse may use; `check` between steps raises ParseDeadlineExceeded past it.

    `check` is cheap enough for every line of a text: it reads the thread's CPU clock (over
    a microsecond) only once LOOK_INTERVAL_S of wall time has passed since it last did, and
    a thread cannot have used more CPU time than the wall time that passed."""

    LOOK_INTERVAL_S = 0.005

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self.ends = time.thread_time() + seconds
        self.next_look = time.perf_counter()  # the first check looks

    def check(self) -> None:
        now = time.perf_counter()
        if now < self.next_look:
            return
        self.next_look = now + self.LOOK_INTERVAL_S
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
