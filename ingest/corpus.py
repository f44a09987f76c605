"""Readers for the two corpus formats: the normalized one and the arXiv metadata snapshot.

Both read bytes line by line, so a bad line (wrong encoding, broken JSON, a line of
gigabytes) is one reject with its line number and the next line is read as usual. They
check single rows only; `crase.ingest.registry` checks rows against each other.

- normalized: a folder with `papers.jsonl` (one Paper object per line, see `records.Paper`)
  and `citations.csv` (header `citing_id,cited_id`, in any case), read by `read_citations`, the one
  reader of edge lines for every path (the bulk import's column reader takes only files
  in which there is nothing for it to interpret, see `crase.ingest.edge_table`).
- arxiv: the public arXiv metadata snapshot (JSON lines with `id`, `title`, `abstract`,
  `authors`, `authors_parsed`, `categories`, `versions`, `update_date`, `doi`,
  `journal-ref`), plus a separate edge list in the `citations.csv` format.
"""

import csv
import email.utils
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal, NamedTuple

from crase.errors import CorpusError
from crase.ingest.records import (
    DEFAULT_LIMITS,
    MAX_ID_CHARS,
    EdgeRow,
    Limits,
    Paper,
    Reject,
    RejectKind,
    check_edge,
    validate_paper,
)

CorpusFormat = Literal["normalized", "arxiv"]
PAPERS_FILE = "papers.jsonl"
CITATIONS_FILE = "citations.csv"
EDGE_HEADER = ("citing_id", "cited_id")
SHOWN_CHARS = 200  # how much of a bad line the rejects file keeps
READ_BUFFER = 1 << 20
TOO_DEEP_REASON = "JSON nested deeper than the parser allows (about 1,000 levels)"


@dataclass(frozen=True)
class CorpusFiles:
    papers: Path
    citations: Path | None
    format: CorpusFormat

    @property
    def name(self) -> str:
        return self.papers.parent.name if self.format == "normalized" else self.papers.stem


def locate_corpus(path: Path, corpus_format: CorpusFormat = "normalized",
                  citations: Path | None = None) -> CorpusFiles:
    """The files of a corpus: a normalized folder (or its papers.jsonl), or an arXiv file."""
    if corpus_format == "normalized":
        papers = path / PAPERS_FILE if path.is_dir() else path
        beside = papers.parent / CITATIONS_FILE
        # is_symlink too: exists() is False for a link that loops or points nowhere, and
        # such a citations.csv must be an error, not a corpus without citations.
        if citations is None and (beside.exists() or beside.is_symlink()):
            citations = beside
    else:
        papers = path
    check_input_file(papers, "papers")
    if citations is not None:
        check_input_file(citations, "citations")
    return CorpusFiles(papers=papers, citations=citations, format=corpus_format)


def check_input_file(path: Path, role: str) -> None:
    """Raise a CorpusError that names the file unless `path` is a file that can be read."""
    try:
        path.stat()
    except OSError as err:
        if path.is_symlink():
            raise CorpusError(
                f"the {role} file {path} is a symbolic link that cannot be followed "
                f"({err.strerror}); point it at a real file or remove it") from err
        raise CorpusError(f"no {role} file at {path}") from err
    if not path.is_file():
        raise CorpusError(f"the {role} file {path} is not a regular file; give the path of "
                          "a file")


class HugeLine(NamedTuple):
    """A line too long to read: its start, its size in bytes and the limit it broke."""

    head: bytes
    size: int
    limit: int


class Line(NamedTuple):
    number: int  # 1-based
    end: int  # byte offset just after this line
    data: bytes | HugeLine  # without the line break


HEAD_BYTES = 4096  # how much of a huge line is kept, to name its id
# The id near the start of a huge papers.jsonl line, if it is there: a string (escapes
# allowed) or an integer, up to the longest id allowed. Linear: no nested repetition.
ID_IN_HEAD = re.compile(rb'"id"\s*:\s*(?:"((?:[^"\\\n]|\\.){1,1000})"|(-?\d{1,1000})\b)')


def read_lines(handle: BinaryIO,
               max_bytes: int) -> Iterator[tuple[int, int, bytes | HugeLine]]:
    """Lines of a binary file as `Line` fields (plain tuples: this loop runs per line of
    multi-GB files), each ended by LF, CRLF or CR alone. A line over `max_bytes` is
    skipped in chunks, never held in memory, and comes back as a `HugeLine`.

    Lines are read with `readline` (LF) while they hold no other break; from the first
    CR that ends a line (a CR-only file), the rest is split at every break by
    `lines_at_any_break`."""
    number, offset = 0, 0
    readline = handle.readline
    while True:
        chunk = readline(max_bytes + 1)
        if not chunk:
            return
        if b"\r" in chunk and has_lone_return(chunk):
            yield from lines_at_any_break(chunk, handle, max_bytes, number, offset)
            return
        number += 1
        offset += len(chunk)
        if len(chunk) > max_bytes and not chunk.endswith(b"\n"):
            skipped, size, rest = skip_rest_of_line(handle)
            offset += skipped
            yield number, offset, HugeLine(chunk[:HEAD_BYTES], len(chunk) + size, max_bytes)
            if rest is not None:  # a CR alone ended it: the file's breaks are CRs
                yield from lines_at_any_break(rest, handle, max_bytes, number, offset)
                return
            continue
        yield number, offset, chunk.rstrip(b"\r\n")


def has_lone_return(chunk: bytes) -> bool:
    """Whether a chunk read up to LF holds a CR that is not the CR of a closing CRLF."""
    body = chunk[:-2] if chunk.endswith(b"\r\n") else chunk.removesuffix(b"\n")
    return b"\r" in body


LINE_BREAK = re.compile(rb"\r\n?|\n")
NEWLINE = ord("\n")


def lines_at_any_break(buffer: bytes, handle: BinaryIO, max_bytes: int, number: int,
                       offset: int) -> Iterator[tuple[int, int, bytes | HugeLine]]:
    """The lines of `buffer` and of the rest of the file, each ended by LF, CRLF or CR;
    numbered on from `number`, with offsets on from `offset` (see `read_lines`)."""
    read = getattr(handle, "read1", handle.read)
    at, at_end = 0, False
    huge: tuple[bytes, int] | None = None  # head and size so far of a line being skipped
    while True:
        found = LINE_BREAK.search(buffer, at)
        # A CR at the very end may be the first half of a CRLF: read on before deciding.
        if not at_end and (found is None or found.end() == len(buffer) == found.start() + 1
                           and buffer.endswith(b"\r")):
            if found is None and huge is None and len(buffer) - at > max_bytes:
                huge = (buffer[at:at + HEAD_BYTES], 0)
            if found is None and huge is not None:  # drop what is read of the huge line
                huge, offset = (huge[0], huge[1] + len(buffer) - at), offset + len(buffer) - at
                buffer, at = b"", 0
            more = read(READ_BUFFER)
            at_end = not more
            buffer, at = buffer[at:] + more, 0
            continue
        if found is None and at == len(buffer) and huge is None:
            return
        end = found.end() if found is not None else len(buffer)
        data = buffer[at:found.start() if found is not None else len(buffer)]
        number += 1
        offset += end - at
        at = end
        if huge is not None:
            yield number, offset, HugeLine(huge[0], huge[1] + len(data), max_bytes)
            huge = None
        elif len(data) > max_bytes:
            yield number, offset, HugeLine(data[:HEAD_BYTES], len(data), max_bytes)
        else:
            yield number, offset, data


def skip_rest_of_line(handle: BinaryIO) -> tuple[int, int, bytes | None]:
    """Read past the rest of a line: the bytes read, those before the line break, and
    (where a CR alone ended the line) the bytes read past it, which start the next line."""
    skipped = 0
    while True:
        chunk = handle.readline(READ_BUFFER)
        lone = lone_return_at(chunk)
        if lone is not None:
            return skipped + lone + 1, skipped + lone, chunk[lone + 1:]
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped, skipped - len(chunk) + len(chunk.rstrip(b"\r\n")), None


def lone_return_at(chunk: bytes) -> int | None:
    """Where the first CR not followed by LF is inside a chunk, if anywhere (a CR at its
    very end is left for the next chunk's first byte to tell)."""
    at = chunk.find(b"\r")
    while at != -1 and at + 1 < len(chunk):
        if chunk[at + 1] != NEWLINE:
            return at
        at = chunk.find(b"\r", at + 2)
    return None


def huge_row_reject(line: HugeLine, file: str, number: int) -> Reject:
    """A huge row, with its size and (where its start shows it) the paper id."""
    paper_id = id_in_head(line.head)
    named = f"; paper id {paper_id!r}" if paper_id is not None else ""
    return Reject(file, number, RejectKind.HUGE_ROW,
                  f"line of {line.size:,} bytes, over the limit of {line.limit:,} "
                  f"(CRASE_INGEST__MAX_LINE_BYTES){named}",
                  line.head[:SHOWN_CHARS].decode("utf-8", errors="replace"), paper_id=paper_id)


def id_in_head(head: bytes) -> str | None:
    match = ID_IN_HEAD.search(head)
    if match is None:
        return None
    if match.group(2) is not None:
        return match.group(2).decode("ascii")
    try:
        text = json.loads(b'"' + match.group(1) + b'"')
    except ValueError:  # a broken escape, or bytes that are not UTF-8
        return None
    return str(text).strip() or None


def decode_line(line: Line, file: str) -> str | Reject:
    """The text of a line, or the reject that says why there is none."""
    if isinstance(line.data, HugeLine):
        return huge_row_reject(line.data, file, line.number)
    try:
        text = line.data.decode("utf-8")
    except UnicodeDecodeError as err:
        shown = line.data[:SHOWN_CHARS].decode("utf-8", errors="replace")
        return Reject(file, line.number, RejectKind.BAD_ENCODING, f"not UTF-8: {err.reason} "
                      f"at byte {err.start}", shown)
    if line.number == 1:
        text = text.removeprefix("\ufeff")  # a byte-order mark from some editors
    return text


def empty_file_reject(path: Path) -> Reject:
    return Reject(path.name, 0, RejectKind.EMPTY_FILE, "the file is empty")


# papers -----------------------------------------------------------------------------------
# Readers yield (line number, byte offset after the line, item): the item is the row, its
# reject, or None for a line with nothing on it (blank, comment, header), whose position
# still counts for progress and checkpoints.
RecordMapper = Callable[[dict[str, Any]], dict[str, Any]]


def read_papers(path: Path, corpus_format: CorpusFormat = "normalized",
                limits: Limits = DEFAULT_LIMITS, max_line_bytes: int = 1_000_000,
                ) -> Iterator[tuple[int, int, Paper | Reject | None]]:
    """Valid papers and rejects, in file order."""
    mapper = map_arxiv_record if corpus_format == "arxiv" else None
    with open_corpus_file(path) as handle:
        seen_any = False
        for number, end, data in read_lines(handle, max_line_bytes):
            seen_any = True
            yield number, end, parse_paper_line(Line(number, end, data), path.name, mapper,
                                                limits)
        if not seen_any:
            yield 0, 0, empty_file_reject(path)


def parse_paper_line(line: Line, file: str, mapper: RecordMapper | None,
                     limits: Limits) -> Paper | Reject | None:
    parsed = read_json_line(line, file)
    if parsed is None or isinstance(parsed, Reject):
        return parsed
    text, data = parsed
    if mapper is not None and isinstance(data, dict):
        data = mapper(data)
    return paper_from_record(data, text, file, line.number, limits)


def read_json_line(line: Line, file: str) -> tuple[str, Any] | Reject | None:
    """The text of a line and its JSON value; the reject that says why there is none; or
    None for a blank line."""
    text = decode_line(line, file)
    if isinstance(text, Reject):
        return text
    if not text.strip():
        return None
    data = parse_json(text, file, line.number)
    return data if isinstance(data, Reject) else (text, data)


def paper_from_record(data: Any, text: str, file: str, number: int,
                      limits: Limits) -> Paper | Reject:
    """The Paper of a record already in Paper's field names, or its reject (`text`: the
    line it came on, which bounds every field and starts the reject's shown text)."""
    result = validate_paper(data, limits, line_chars=len(text))
    if isinstance(result, Paper):
        return result
    kind, reason = result
    return Reject(file, number, kind, reason, text[:SHOWN_CHARS], paper_id=refused_id(data))


def refused_id(data: Any) -> str | None:
    """The id of a refused row as an edge would name it, if it has a usable one."""
    value = data.get("id") if isinstance(data, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() < 64:
        return str(value)
    if isinstance(value, str) and 0 < len(value.strip()) <= MAX_ID_CHARS:
        return value.strip()
    return None


def parse_json(text: str, file: str, number: int) -> Any:
    """The JSON value of a line, or the Reject that says why it has none."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        return Reject(file, number, RejectKind.MALFORMED_JSON, str(err), text[:SHOWN_CHARS])
    except RecursionError:
        # The parser recurses per level; a deeper line is refused, the next one read.
        return Reject(file, number, RejectKind.TOO_DEEP, TOO_DEEP_REASON, text[:SHOWN_CHARS])
    except ValueError:  # the only other failure: an integer past the int-to-str digit limit
        return Reject(file, number, RejectKind.HUGE_NUMBER, huge_number_reason(),
                      text[:SHOWN_CHARS])


def huge_number_reason() -> str:
    return (f"a number has more than {sys.get_int_max_str_digits():,} digits, more than "
            "Python reads as an integer")


def open_corpus_file(path: Path) -> BinaryIO:
    try:
        return path.open("rb", buffering=READ_BUFFER)
    except OSError as err:
        raise CorpusError(f"cannot read {path}: {err}") from err


# arXiv snapshot ---------------------------------------------------------------------------
def map_arxiv_record(record: dict[str, Any]) -> dict[str, Any]:
    """A snapshot record in the field names of `Paper`. Missing fields stay missing, so the
    Paper checks report them (e.g. a record without a title is a `missing_title`)."""
    arxiv_id = record.get("id")
    date = first_version_date(record)
    return {
        "id": arxiv_id,
        "arxiv_id": arxiv_id,
        "title": collapse_space(record.get("title")),
        "abstract": collapse_space(record.get("abstract")) or "",
        "authors": arxiv_authors(record),
        "categories": record.get("categories") or [],
        "doi": first_word(record.get("doi")),
        "journal_ref": collapse_space(record.get("journal-ref")),
        "date": date,
        "year": int(date[:4]) if date else year_from_update(record.get("update_date")),
    }


def collapse_space(value: Any) -> Any:
    # The snapshot wraps titles and abstracts at ~80 columns with indented continuations.
    return " ".join(value.split()) if isinstance(value, str) else value


def first_word(value: Any) -> Any:
    # A few records list several DOIs separated by spaces; the first is the article's.
    return value.split()[0] if isinstance(value, str) and value.split() else None


def arxiv_authors(record: dict[str, Any]) -> list[str]:
    parsed = record.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        names = []
        for parts in parsed:
            if isinstance(parts, list) and parts:
                last, first = str(parts[0]), str(parts[1]) if len(parts) > 1 else ""
                suffix = str(parts[2]) if len(parts) > 2 else ""
                names.append(" ".join(p for p in (first, last, suffix) if p))
        return names
    raw = record.get("authors")
    if isinstance(raw, str):
        return [name.strip() for name in raw.replace(" and ", ", ").split(",") if name.strip()]
    return []


def first_version_date(record: dict[str, Any]) -> str | None:
    versions = record.get("versions")
    if not isinstance(versions, list) or not versions or not isinstance(versions[0], dict):
        return None
    created = versions[0].get("created")
    if not isinstance(created, str):
        return None
    try:
        return email.utils.parsedate_to_datetime(created).date().isoformat()
    except (TypeError, ValueError):
        return None


def year_from_update(update_date: Any) -> Any:
    if isinstance(update_date, str) and update_date[:4].isdigit():
        return int(update_date[:4])
    return None


# citations --------------------------------------------------------------------------------
def read_citations(path: Path, max_line_bytes: int = 1_000_000,
                   ) -> Iterator[tuple[int, int, EdgeRow | Reject | None]]:
    """Edges and rejects in file order (see `read_papers` for the tuple).

    Accepts `citing_id,cited_id` CSV (RFC 4180: a quoted id may hold a comma or a doubled
    quote; the header may also name the columns the other way round), and
    whitespace-separated pairs with `#` comments (the SNAP edge-list style). One rule for
    whitespace, the papers' own: `str.strip` at both ends of an id (the non-breaking and
    the other Unicode spaces too). Edge files run to tens of millions of lines, so a line
    with nothing to interpret (`a,b`) takes a short path; anything else `edge_fields`."""
    file = path.name
    with open_corpus_file(path) as handle:
        swap = False
        number = 0
        for number, end, data in read_lines(handle, max_line_bytes):
            text = decode_line(Line(number, end, data), file) \
                if number == 1 or isinstance(data, HugeLine) else decode_fast(data, number, file)
            if isinstance(text, Reject):
                yield number, end, text
                continue
            plain = plain_edge(text) if number > 1 else None
            if plain is not None:
                citing, cited = plain
                yield number, end, EdgeRow(number, cited, citing) if swap \
                    else EdgeRow(number, citing, cited)
                continue
            stripped = text.strip()
            if not stripped or stripped.startswith("#"):
                yield number, end, None
                continue
            fields = edge_fields(stripped)
            if number == 1 and isinstance(fields, list) and is_header(fields):
                swap = header_swaps(fields)
                yield number, end, None
                continue
            yield number, end, parse_edge(fields, number, file, swap, stripped)
        if number == 0:
            yield 0, 0, empty_file_reject(path)


def plain_edge(text: str) -> tuple[str, str] | None:
    """The two ids of a line with nothing to interpret (no quote, no whitespace at an id's
    ends, no comment) that passes every row check; else None."""
    fields = text.split(",")
    if len(fields) != 2 or '"' in text or len(text) > MAX_ID_CHARS or text[0] == "#":
        return None
    citing, cited = fields
    if not citing or not cited or citing == cited or citing.strip() != citing \
            or cited.strip() != cited:
        return None
    return citing, cited


def decode_fast(data: bytes, number: int, file: str) -> str | Reject:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return decode_line(Line(number, 0, data), file)


def edge_fields(text: str) -> list[str] | str:
    """The ids on a line (CSV if it has a comma, else split at whitespace), each stripped;
    or why the line is no CSV record."""
    if "," not in text:
        return text.split()
    try:
        # skipinitialspace: a quote after "a, " still opens a quoted id; not strict, so
        # `"a" ,b` is a and b, as the whitespace rule says.
        fields = next(csv.reader((text,), skipinitialspace=True))
    except csv.Error as err:
        return f"not a CSV record: {err}"
    return [field.strip() for field in fields]


def is_header(fields: list[str]) -> bool:
    """Whether the fields are the edge header's column names, in either order and any
    case (`Citing_ID,Cited_ID`)."""
    return sorted(field.lower() for field in fields) == sorted(EDGE_HEADER)


def header_swaps(fields: list[str]) -> bool:
    """Whether a header names the cited column first."""
    return fields[0].lower() == EDGE_HEADER[1]


def first_edge_line(path: Path) -> list[str] | None:
    """The fields of the first line of an edge file, unless it is empty, blank or a
    comment (then None: line 1 is then read like any other line)."""
    with open_corpus_file(path) as handle:
        first = handle.readline(HEAD_BYTES).decode("utf-8", errors="replace")
    stripped = first.lstrip("\ufeff").strip()
    if not stripped or stripped.startswith("#"):
        return None
    fields = edge_fields(stripped)
    return fields if isinstance(fields, list) else None


def ids_in_papers(path: Path, wanted: set[str], max_line_bytes: int) -> set[str]:
    """Which of `wanted` are the id of some line of a papers file: found by the id near
    a line's start (`id_in_head`), without parsing every line."""
    found: set[str] = set()
    with open_corpus_file(path) as handle:
        for _, _, data in read_lines(handle, max_line_bytes):
            head = data.head if isinstance(data, HugeLine) else data[:HEAD_BYTES]
            paper_id = id_in_head(head)
            if paper_id is not None and paper_id.strip() in wanted:
                found.add(paper_id.strip())
    return found


def parse_edge(fields: list[str] | str, number: int, file: str, swap: bool,
               text: str) -> EdgeRow | Reject:
    if isinstance(fields, str):
        return Reject(file, number, RejectKind.MALFORMED_EDGE, fields, text[:SHOWN_CHARS])
    if len(fields) != 2:
        return Reject(file, number, RejectKind.MALFORMED_EDGE,
                      f"expected 2 fields, found {len(fields)}", text[:SHOWN_CHARS])
    citing, cited = (fields[1], fields[0]) if swap else (fields[0], fields[1])
    problem = check_edge(citing, cited)
    if problem is not None:
        return Reject(file, number, problem[0], problem[1], text[:SHOWN_CHARS])
    return EdgeRow(number, citing, cited)
