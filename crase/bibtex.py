"""BibTeX as reference managers write it, read in time linear in its length.

bibtexparser (v2) splits the text into blocks; @string macros, `#` concatenation and the
month macros are resolved here, since bibtexparser resolves only a value that is one macro
name. The text is user text: its size and its lines are bounded before anything is read,
it is split piece by piece (each piece starting at an entry) with a CPU deadline checked
between pieces, and a value may not expand past MAX_VALUE_CHARS (macros that double each
other would otherwise fill the memory).
"""

import logging
import re
from dataclasses import dataclass

import bibtexparser
from bibtexparser.model import DuplicateFieldKeyBlock, Entry, ParsingFailedBlock, String

from crase.errors import UserTextTooLarge
from crase.text_limits import CpuDeadline, check_text_size, compile_linear

MAX_BIBTEX_CHARS = 1_000_000
MAX_LINE_CHARS = 20_000
MAX_ENTRIES = 5_000
MAX_VALUE_CHARS = 20_000
PARSE_CPU_S = 3.0
UNREADABLE_SHOWN = 60  # characters of an unreadable block that name it
PIECE_CHARS = 32_768  # a piece is cut at the first entry start after this many characters
ENTRY_START = compile_linear(r"^[ \t]*@", re.MULTILINE)
# A brace, quote or `#`, or one after a backslash (two characters: escaped, no mark).
VALUE_MARK = compile_linear(r'\\?[{}"#]')
# A value's tokens for `plain`: an escaped backslash, an export escape, a control symbol,
# a grouping brace, or a run of anything else.
VALUE_TOKEN = compile_linear(
    r"\\\\|\\text(?:backslash|braceleft|braceright)\{\}|\\.|[{}]|[^\\{}]+|\\",
    re.DOTALL)
EXPORT_ESCAPES = {r"\textbackslash{}": "\\", r"\textbraceleft{}": "{",
                  r"\textbraceright{}": "}", r"\%": "%", r"\&": "&", r"\#": "#"}
MONTHS = {"jan": "January", "feb": "February", "mar": "March", "apr": "April", "may": "May",
          "jun": "June", "jul": "July", "aug": "August", "sep": "September",
          "oct": "October", "nov": "November", "dec": "December"}

# bibtexparser logs a warning for every block it cannot read; hostile text of a megabyte
# would write a hundred thousand of them into the server log. Its errors still show.
logging.getLogger("bibtexparser").setLevel(logging.ERROR)


@dataclass(frozen=True)
class BibtexEntry:
    key: str | None
    kind: str  # article, misc, ...
    fields: dict[str, str]  # lower-case names, values resolved to plain text


def read_bibtex(text: str, what: str = "the BibTeX",
                unreadable: list[str] | None = None) -> list[BibtexEntry]:
    """The entries of a BibTeX text, in order, the first of two with one key kept; a block
    that cannot be read is skipped, and named in `unreadable` where one is given (its line
    and first words), for a caller that must not drop an entry unsaid. UserTextTooLarge
    past the size limits, ParseDeadlineExceeded past PARSE_CPU_S."""
    check_text_size(text, what, MAX_BIBTEX_CHARS, MAX_LINE_CHARS)
    deadline = CpuDeadline(PARSE_CPU_S, what)
    strings: dict[str, str] = {}
    raw_entries: list[Entry] = []
    first_line = 1  # of the piece, in the whole text
    for piece in entry_pieces(text):
        deadline.check()
        for block in bibtexparser.parse_string(piece, parse_stack=[]).blocks:
            if isinstance(block, ParsingFailedBlock) and unreadable is not None:
                start = " ".join(str(block.raw).split())[:UNREADABLE_SHOWN]
                unreadable.append(f"line {first_line + (block.start_line or 0)}: {start}")
            if isinstance(block, String):
                strings[block.key.lower()] = resolve_value(str(block.value), strings)
            elif isinstance(block, Entry):
                raw_entries.append(block)
            elif (isinstance(block, DuplicateFieldKeyBlock)
                  and isinstance(block.ignore_error_block, Entry)):
                raw_entries.append(block.ignore_error_block)  # a field given twice
        first_line += piece.count("\n")
        if len(raw_entries) > MAX_ENTRIES:
            raise UserTextTooLarge(f"{what} has more than the {MAX_ENTRIES:,} entries "
                                   "allowed; send fewer references")
    deadline.check()
    return unique_entries(raw_entries, strings)


def entry_pieces(text: str) -> list[str]:
    """`text` cut into pieces of about PIECE_CHARS, each cut at a line that starts an entry
    (bibtexparser treats such a line as the start of a block too)."""
    pieces = []
    start = 0
    for match in ENTRY_START.finditer(text):
        if match.start() - start >= PIECE_CHARS:
            pieces.append(text[start:match.start()])
            start = match.start()
    pieces.append(text[start:])
    return pieces


def unique_entries(raw_entries: list[Entry], strings: dict[str, str]) -> list[BibtexEntry]:
    entries = []
    seen: set[str] = set()
    for raw in raw_entries:
        if raw.key and raw.key in seen:
            continue  # a duplicate key: the first entry stands, as in BibTeX
        seen.add(raw.key)
        fields: dict[str, str] = {}
        for field in raw.fields:
            fields.setdefault(field.key.lower(), plain(resolve_value(str(field.value), strings)))
        entries.append(BibtexEntry(raw.key or None, raw.entry_type.lower(), fields))
    return entries


def resolve_value(raw: str, strings: dict[str, str]) -> str:
    """A field's value as written (`{...}`, `"..."`, a number, a macro, and `#` between
    them) with its macros replaced and its outer delimiters removed."""
    parts = []
    size = 0
    for part in concatenated_parts(raw):
        if part[:1] + part[-1:] in ("{}", '""') and len(part) >= 2:
            text = part[1:-1]
        else:
            text = strings.get(part.lower(), MONTHS.get(part.lower(), part))
        size += len(text)
        if size > MAX_VALUE_CHARS:
            raise UserTextTooLarge(f"a BibTeX value expands to more than the "
                                   f"{MAX_VALUE_CHARS:,} characters allowed (check its "
                                   "@string macros)")
        parts.append(text)
    return "".join(parts)


def concatenated_parts(raw: str) -> list[str]:
    """The parts of `a # "b" # {c}`, split at each `#` outside braces and quotes; one scan
    from mark to mark."""
    parts = []
    start, depth, quoted = 0, 0, False
    for mark in VALUE_MARK.finditer(raw):
        char = mark.group(0)
        if len(char) == 2:
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        elif char == '"' and depth == 0:
            quoted = not quoted
        elif char == "#" and depth == 0 and not quoted:
            parts.append(raw[start:mark.start()].strip())
            start = mark.end()
    parts.append(raw[start:].strip())
    return [part for part in parts if part]


def plain(value: str) -> str:
    """A value without its grouping braces, on one line, with the escapes Crase's own
    export writes (api/exports.py `bibtex_value`) undone: `\\textbackslash{}`,
    `\\textbraceleft{}` and `\\textbraceright{}` are the characters they name, `\\%`,
    `\\&` and `\\#` the bare ones; other TeX (`\\{`, `\\alpha`, `\\\\`) stays. One
    scan, token by token, so an escaped brace is never taken for a grouping one."""
    out = []
    for match in VALUE_TOKEN.finditer(value):
        token = match.group(0)
        if token in ("{", "}"):
            continue
        out.append(EXPORT_ESCAPES.get(token, token))
    return " ".join("".join(out).split())
