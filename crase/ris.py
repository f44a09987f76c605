"""RIS as reference managers write it (Zotero, Mendeley, EndNote, Crase's own export), read
line by line in time linear in its length.

A record is a run of tagged lines, `TY  - JOUR` first and `ER  - ` last; a tagged line is
two capitals or a capital and a digit, two spaces, a hyphen and (usually) a space before
its value. A line without a tag continues the value before it (some writers wrap an
abstract). The text is user text: its size and its lines are bounded before anything is
read and a CPU deadline is checked as it goes. A record that is never closed, a tagged line
outside any record and text without a record are refused (ReferenceFileUnreadable), with
the line number, rather than guessed at.
"""

from dataclasses import dataclass, field

from crase.errors import ReferenceFileUnreadable, UserTextTooLarge
from crase.text_limits import CpuDeadline, check_text_size

MAX_RIS_CHARS = 1_000_000
MAX_LINE_CHARS = 20_000
MAX_RECORDS = 5_000
PARSE_CPU_S = 3.0
DEADLINE_EVERY = 1_000  # lines between two looks at the CPU deadline
TAG_SEPARATOR = "  -"


@dataclass
class RisRecord:
    line: int  # where its TY line is, counted from 1
    fields: dict[str, list[str]] = field(default_factory=dict)  # tag -> values, in order

    def first(self, *tags: str) -> str | None:
        """The first value of the first of `tags` the record has."""
        for tag in tags:
            if self.fields.get(tag):
                return self.fields[tag][0]
        return None

    def all(self, *tags: str) -> list[str]:
        return [value for tag in tags for value in self.fields.get(tag, [])]


def tagged(line: str) -> tuple[str, str] | None:
    """(tag, value) of a tagged line, or None for any other line."""
    if len(line) < 5 or line[2:5] != TAG_SEPARATOR:
        return None
    tag = line[:2]
    if not (tag[0].isascii() and tag[0].isupper() and tag[1].isascii()
            and (tag[1].isupper() or tag[1].isdigit())):
        return None
    return tag, line[5:].strip()


def read_ris(text: str, what: str = "the RIS file") -> list[RisRecord]:
    """The records of a RIS text, in order. UserTextTooLarge past the size limits,
    ParseDeadlineExceeded past PARSE_CPU_S, ReferenceFileUnreadable for text that is not
    RIS (the message names the line and what to do)."""
    check_text_size(text, what, MAX_RIS_CHARS, MAX_LINE_CHARS)
    deadline = CpuDeadline(PARSE_CPU_S, what)
    records: list[RisRecord] = []
    current: RisRecord | None = None
    last_tag: str | None = None
    # The parts of the value being read, joined once it ends: adding each wrapped line to
    # the stored string copied the value so far every time (quadratic in its lines).
    parts: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if number % DEADLINE_EVERY == 0:
            deadline.check()
        line = raw.lstrip("\ufeff").rstrip()
        pair = tagged(line)
        if pair is None:
            if line and current is not None and last_tag is not None:
                parts.append(line.strip())  # a wrapped value
            elif line:
                raise unreadable(what, number, "a line outside any record")
            continue
        if current is not None and last_tag is not None and len(parts) > 1:
            current.fields[last_tag][-1] = " ".join(parts)
        parts = []
        tag, value = pair
        if tag == "TY":
            if current is not None:
                raise unreadable(what, current.line, "a record without its closing ER line")
            current, last_tag = RisRecord(line=number), None
        elif current is None:
            raise unreadable(what, number, f"a {tag} line before any TY line")
        elif tag == "ER":
            records.append(current)
            if len(records) > MAX_RECORDS:
                raise UserTextTooLarge(f"{what} has more than the {MAX_RECORDS:,} records "
                                       "allowed; send fewer references")
            current, last_tag = None, None
            continue
        current.fields.setdefault(tag, []).append(value)
        parts = [value]
        last_tag = tag
    if current is not None:
        raise unreadable(what, current.line, "a record without its closing ER line")
    if not records:
        raise ReferenceFileUnreadable(f"{what} holds no RIS record (none starts with "
                                      "'TY  - '); export the references as RIS again, or "
                                      "give a BibTeX file")
    return records


def unreadable(what: str, line: int, problem: str) -> ReferenceFileUnreadable:
    return ReferenceFileUnreadable(f"{what} is not RIS at line {line}: {problem}; each "
                                   "record runs from 'TY  - ' to 'ER  - ' (export it as RIS "
                                   "again, or give a BibTeX file)")
