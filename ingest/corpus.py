"""Readers for the two corpus formats: the normalized one and the arXiv metadata snapshot.

Both read bytes line by line, so a bad line (wrong encoding, broken JSON, a line of
gigabytes) is one reject with its line number and the next line is read as usual. They
check single rows only; `crase.ingest.registry` checks rows against each other.

- normalized: a folder with `papers.jsonl` (one Paper object per line, see `records.Paper`)
  and `citations.csv` (header `citing_id,cited_id`).
- arxiv: the public arXiv metadata snapshot (JSON lines with `id`, `title`, `abstract`,
  `authors`, `authors_parsed`, `categories`, `versions`, `update_date`, `doi`,
  `journal-ref`), plus a separate edge list in the `citations.csv` format.
"""

import email.utils
import json
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


class Line(NamedTuple):
    number: int  # 1-based
    end: int  # byte offset just after this line
    data: bytes | None  # without the line break; None when the line was too long to read


def read_lines(handle: BinaryIO, max_bytes: int) -> Iterator[tuple[int, int, bytes | None]]:
    """Lines of a binary file as `Line` fields (plain tuples: this loop runs per line of
    multi-GB files). A line over `max_bytes` is skipped in chunks, never held in memory,
    and comes back with `data=None`."""
    number, offset = 0, 0
    readline = handle.readline
    while True:
        chunk = readline(max_bytes + 1)
        if not chunk:
            return
        number += 1
        offset += len(chunk)
        if len(chunk) > max_bytes and not chunk.endswith(b"\n"):
            offset += skip_rest_of_line(handle)
            yield number, offset, None
            continue
        yield number, offset, chunk.rstrip(b"\r\n")


def skip_rest_of_line(handle: BinaryIO) -> int:
    skipped = 0
    while True:
        chunk = handle.readline(READ_BUFFER)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped


def decode_line(line: Line, file: str) -> str | Reject:
    """The text of a line, or the reject that says why there is none."""
    if line.data is None:
        return Reject(file, line.number, RejectKind.HUGE_ROW, "line is longer than the limit")
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
    text = decode_line(line, file)
    if isinstance(text, Reject):
        return text
    if not text.strip():
        return None
    data = parse_json(text, file, line.number)
    if isinstance(data, Reject):
        return data
    if mapper is not None and isinstance(data, dict):
        data = mapper(data)
    result = validate_paper(data, limits, line_chars=len(text))
    if isinstance(result, Paper):
        return result
    kind, reason = result
    return Reject(file, line.number, kind, reason, text[:SHOWN_CHARS])


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

    Accepts `citing_id,cited_id` CSV (the header may also name the columns the other way
    round), and whitespace-separated pairs with `#` comments (the SNAP edge-list style).
    Edge files run to tens of millions of lines, so the plain `a,b` line takes a short
    path; anything else goes through `parse_edge`."""
    file = path.name
    with open_corpus_file(path) as handle:
        swap = False
        number = 0
        for number, end, data in read_lines(handle, max_line_bytes):
            text = decode_line(Line(number, end, data), file) if number == 1 or data is None \
                else decode_fast(data, number, file)
            if isinstance(text, Reject):
                yield number, end, text
                continue
            fields = text.split(",")
            if len(fields) == 2 and not swap and '"' not in text and " " not in text \
                    and "\t" not in text and number > 1 and len(text) <= MAX_ID_CHARS:
                citing, cited = fields
                if citing and cited and citing != cited:
                    yield number, end, EdgeRow(number, citing, cited)
                    continue
            stripped = text.strip()
            if not stripped or stripped.startswith("#"):
                yield number, end, None
                continue
            fields = split_edge_line(stripped)
            if number == 1 and is_header(fields):
                swap = fields[0].strip('"') == EDGE_HEADER[1]
                yield number, end, None
                continue
            yield number, end, parse_edge(fields, number, file, swap, stripped)
        if number == 0:
            yield 0, 0, empty_file_reject(path)


def decode_fast(data: bytes, number: int, file: str) -> str | Reject:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return decode_line(Line(number, 0, data), file)


def split_edge_line(text: str) -> list[str]:
    if "," in text:
        return [field.strip().strip('"').strip() for field in text.split(",")]
    return text.split()


def is_header(fields: list[str]) -> bool:
    return sorted(field.strip('"') for field in fields) == sorted(EDGE_HEADER)


def parse_edge(fields: list[str], number: int, file: str, swap: bool,
               text: str) -> EdgeRow | Reject:
    if len(fields) != 2:
        return Reject(file, number, RejectKind.MALFORMED_EDGE,
                      f"expected 2 fields, found {len(fields)}", text[:SHOWN_CHARS])
    citing, cited = (fields[1], fields[0]) if swap else (fields[0], fields[1])
    problem = check_edge(citing, cited)
    if problem is not None:
        return Reject(file, number, problem[0], problem[1], text[:SHOWN_CHARS])
    return EdgeRow(number, citing, cited)
