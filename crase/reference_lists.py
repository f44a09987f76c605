"""Reference lists as people bring them: BibTeX entries, RIS records (what Zotero, Mendeley
and Crase's own export write), a JSON list of objects, or CSV with a header (a Connected
Papers or spreadsheet export). One reader (`read_reference_entries`) reads every kind, by
one rule: every entry is read, in order, into a ReferenceEntry, and one that names no paper
is kept, with no reference, so that a caller can say so. A search's given papers list it
as not found (search/given_papers.py, from `read_reference_file`); the citation-gap
analysis and the evolution map's comparison measure shares of a list, to which an entry
that names no paper adds nothing, so they take its `named_references` (`parse_bibtex`,
`read_reference_list`) and refuse a list with none. search/reference_resolution.py then
finds the corpus papers the references name.

Every kind is read by one set of rules, BibTeX's field names (`reference_from_fields`): a
DOI from `doi`, else from a DOI URL in `url`; an arXiv id from `eprint` (unless its
`archivePrefix` or `eprinttype` names another archive), `arxiv` or Mendeley's `arxivid`,
else from an arXiv URL in `url`.

The text is user text: it is bounded in size before anything is read, BibTeX goes
through crase.bibtex (bibtexparser, with @string macros and `#` concatenation
resolved within size and CPU limits) and RIS through crase.ris."""

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from crase.bibtex import MAX_BIBTEX_CHARS, PARSE_CPU_S, read_bibtex
from crase.errors import InvalidRequest, ReferenceFileUnreadable
from crase.paper_identity import lookup_keys
from crase.ris import MAX_RIS_CHARS, RisRecord, read_ris, tagged
from crase.text_limits import CpuDeadline, check_text_size
from crase.user_files import read_user_text

# BibTeX fields that hold an arXiv id, and the archives an `eprint` may name for one.
ARXIV_FIELDS = ("eprint", "arxiv", "arxivid")
ARXIV_ARCHIVES = ("", "arxiv")
# RIS tags read, as BibTeX's field names (the year is the first four characters of PY/Y1/DA).
RIS_TITLE = ("TI", "T1", "CT", "BT")
RIS_YEAR = ("PY", "Y1", "DA")
RIS_NOTES = ("N1", "M1", "M3")  # Crase's own export writes `arXiv:<id>` in a note
# The CSV columns read, each under any of the header names people use for it (compared in
# lower case, spaces around them ignored).
CSV_COLUMNS = {"title": ("title",), "year": ("year",), "doi": ("doi",),
               "arxiv_id": ("arxiv_id", "arxiv", "eprint", "arxiv id"), "id": ("id",),
               "authors": ("authors", "author")}
# The kinds a reference file may be told to be by its name's ending.
BIBTEX_SUFFIXES = (".bib", ".bibtex", ".biblatex")
RIS_SUFFIXES = (".ris",)
FILE_KINDS = ("BibTeX", "RIS")  # what a reference manager exports, and a reference file holds
LABEL_CHARS = 120  # what an entry names, in its label
# The most bytes a reference file may have: its parser's character limit, at 4 bytes a
# character of UTF-8, and a byte-order mark.
MAX_REFERENCE_FILE_BYTES = 4 * max(MAX_BIBTEX_CHARS, MAX_RIS_CHARS) + 3


class ReferenceItem(BaseModel):
    """One reference: any of an id, a DOI, an arXiv id, a title (with year and authors)."""

    model_config = ConfigDict(extra="forbid")

    key: str | None = Field(None, max_length=1000, description="Citation key, list position")
    id: str | None = Field(None, min_length=1, max_length=1000, description="Corpus paper id")
    title: str | None = Field(None, min_length=1, max_length=2000)
    year: int | None = Field(None, ge=1600, le=2200)
    doi: str | None = Field(None, min_length=1, max_length=1000)
    arxiv_id: str | None = Field(None, min_length=1, max_length=1000)
    authors: list[str] = Field(default_factory=list, max_length=1000)

    @model_validator(mode="after")
    def names_a_paper(self) -> "ReferenceItem":
        if not (self.id or self.title or self.doi or self.arxiv_id):
            raise ValueError("a reference needs an id, a title, a doi or an arxiv_id")
        return self


@dataclass(frozen=True)
class ReferenceEntry:
    """One entry of a reference list, or one paper a person typed: how a message names it,
    the reference it makes (None: it names no paper, or it is a block that cannot be read),
    and for a typed entry the graph ids it may be (search/given_papers.py)."""

    label: str
    reference: ReferenceItem | None = None
    ids: list[str] = field(default_factory=list)


def labelled(key: str, reference: ReferenceItem | None) -> ReferenceEntry:
    """An entry named by its key and what it names (cut short), or as naming nothing."""
    if reference is None:
        return ReferenceEntry(label=f"{key} (names no DOI, arXiv id or title)")
    named = reference.doi or reference.arxiv_id or reference.title or reference.id or ""
    if len(named) > LABEL_CHARS:
        named = named[:LABEL_CHARS].rsplit(" ", 1)[0] + "..."
    return ReferenceEntry(label=f"{key} ({named})", reference=reference)


def named_references(entries: list[ReferenceEntry]) -> list[ReferenceItem]:
    """The references of the entries that name a paper, for a caller that measures a list."""
    return [entry.reference for entry in entries if entry.reference is not None]


def reference_kind(text: str, name: str = "") -> str:
    """BibTeX, RIS, JSON or CSV: as the name's ending says, else as the text starts."""
    suffix = Path(name).suffix.lower()
    if suffix in BIBTEX_SUFFIXES:
        return "BibTeX"
    if suffix in RIS_SUFFIXES:
        return "RIS"
    start = text.lstrip("\ufeff").lstrip()
    if start.startswith("@"):
        return "BibTeX"
    if tagged(start.split("\n", 1)[0].rstrip()) is not None:
        return "RIS"
    return "JSON" if start.startswith("[") else "CSV"


def read_reference_entries(text: str, kind: str, what: str | None = None,
                           unreadable: list[str] | None = None) -> list[ReferenceEntry]:
    """Every entry of a reference list of `kind` (`reference_kind`), in order, each that
    names no paper with no reference. `what` names the text in a refusal; a BibTeX block
    that cannot be read is named in `unreadable` where one is given (crase.bibtex)."""
    if kind == "BibTeX":
        return bibtex_entries(text, what or "the BibTeX", unreadable)
    if kind == "RIS":
        return ris_entries(text, what or "the RIS file")
    return json_entries(text) if kind == "JSON" else csv_entries(text)


def read_reference_list(text: str) -> list[ReferenceItem]:
    """The references of a list as BibTeX, RIS, a JSON list of objects, or CSV with a header
    naming title / year / doi / arxiv_id (or arxiv, eprint) / id / authors, as a Connected
    Papers export or a spreadsheet gives it. Raises InvalidRequest when nothing in it names
    a paper."""
    check_text_size(text, "the reference list", MAX_BIBTEX_CHARS)
    items = named_references(read_reference_entries(text, reference_kind(text)))
    if not items:
        raise InvalidRequest("the reference list names no paper; give BibTeX entries, RIS "
                             "records, a JSON list, or CSV with a title, doi, arxiv_id or id "
                             "column")
    return items


def parse_bibtex(text: str) -> list[ReferenceItem]:
    """The references of the entries of a BibTeX text that name a paper (title, year, doi,
    eprint/arxiv, author, key). @comment, @string and @preamble are no entries."""
    return named_references(read_reference_entries(text, "BibTeX"))


def reference_file_entries(text: str, name: str) -> list[ReferenceEntry]:
    """Every entry of a reference manager's export, BibTeX or RIS (by its name's ending,
    else by its first line), and each BibTeX block that cannot be read, listed last as an
    entry that names no paper. ReferenceFileUnreadable for another kind of file, a file
    with no entry, and BibTeX of which no block can be read."""
    kind, what = reference_kind(text, name), Path(name).name
    if kind not in FILE_KINDS:
        raise ReferenceFileUnreadable(f"{what} is neither BibTeX nor RIS (its name ends in "
                                      "neither .bib nor .ris, and it starts with neither "
                                      "'@' nor 'TY  - '); export the references as BibTeX "
                                      "or RIS")
    unreadable: list[str] = []
    entries = read_reference_entries(text, kind, what, unreadable)
    if unreadable and not entries:
        raise ReferenceFileUnreadable(f"{what} is not BibTeX that can be read (no entry "
                                      f"can; the first at {unreadable[0]}); export the "
                                      "references as BibTeX again, or as RIS")
    entries += [ReferenceEntry(label=f"unreadable entry at {block}") for block in unreadable]
    if not entries:
        raise ReferenceFileUnreadable(f"{what} holds no entry; export the references again "
                                      "(BibTeX or RIS)")
    return entries


def read_reference_file(path: Path) -> list[ReferenceEntry]:
    """`reference_file_entries` of a file on disk (UTF-8, as reference managers write it),
    refused before it is read when it is no regular file or past MAX_REFERENCE_FILE_BYTES."""
    try:
        text = read_user_text(path, "the reference file", MAX_REFERENCE_FILE_BYTES,
                              encoding="utf-8-sig")
    except FileNotFoundError:
        raise ReferenceFileUnreadable(f"no file {path}; give the path of a .bib or .ris "
                                      "file") from None
    except UnicodeDecodeError as err:
        raise ReferenceFileUnreadable(f"{path.name} is not UTF-8 text (byte {err.start}); "
                                      "export it again as UTF-8") from err
    except OSError as err:
        raise ReferenceFileUnreadable(f"{path} cannot be read ({err.strerror}); give a "
                                      "readable .bib or .ris file") from err
    return reference_file_entries(text, path.name)


def bibtex_entries(text: str, what: str, unreadable: list[str] | None) -> list[ReferenceEntry]:
    """The entries of a BibTeX text (crase.bibtex: @string macros and `#` concatenation
    resolved, size and CPU bounded), each named by its key, else by its place."""
    return [labelled(bib.key or f"entry {number}", reference_from_fields(bib.key, bib.fields))
            for number, bib in enumerate(read_bibtex(text, what, unreadable), start=1)]


def ris_entries(text: str, what: str) -> list[ReferenceEntry]:
    """The records of a RIS text (crase.ris: size and CPU bounded), read as BibTeX fields
    would be (`ris_fields`), each named by its ID, else by its place and line."""
    return [labelled(record.first("ID") or f"record {number} (line {record.line})",
                     reference_from_fields(record.first("ID"), ris_fields(record)))
            for number, record in enumerate(read_ris(text, what), start=1)]


def ris_fields(record: RisRecord) -> dict[str, str]:
    """A RIS record's title, year, authors, DOI, links and arXiv note under BibTeX's names."""
    # `arXiv:2101.01234` (Crase), `arXiv: hep-th/9711200` (Zotero), perhaps with a class
    # after it (`[hep-th]`): the first word after the colon.
    notes = [words[0] for note in record.all(*RIS_NOTES) if note.lower().startswith("arxiv:")
             for words in [note.split(":", 1)[1].split()] if words]
    return {"title": record.first(*RIS_TITLE) or "",
            "year": (record.first(*RIS_YEAR) or "")[:4],
            "author": " and ".join(record.all("AU", "A1")),
            "doi": record.first("DO") or "",
            "url": " ".join(record.all("UR", "L1", "L2")),
            "arxiv": notes[0] if notes else ""}


def arxiv_field(fields: dict[str, str]) -> str | None:
    """The arXiv id an entry names in its own fields: `eprint` counts only where no other
    archive is named for it (a HAL or SSRN eprint is no arXiv id)."""
    archive = (fields.get("archiveprefix") or fields.get("eprinttype") or "").strip().lower()
    for name in ARXIV_FIELDS:
        if fields.get(name) and (name != "eprint" or archive in ARXIV_ARCHIVES):
            return fields[name]
    return None


def url_identifiers(urls: str) -> tuple[str | None, str | None]:
    """(DOI, arXiv id) that the first DOI URL and the first arXiv URL among `urls` (white
    space between them) name (crase.paper_identity reads both spellings)."""
    doi = arxiv = None
    for url in urls.split():
        keys = lookup_keys(url)
        doi = doi or (url if keys.dois else None)
        arxiv = arxiv or (keys.arxiv_ids[0] if keys.arxiv_ids and not keys.dois else None)
    return doi, arxiv


def reference_from_fields(key: str | None, fields: dict[str, str]) -> ReferenceItem | None:
    """The reference that BibTeX-named fields describe, or None when they name no paper."""
    url_doi, url_arxiv = url_identifiers(fields.get("url", ""))
    arxiv = arxiv_field(fields) or url_arxiv
    year = fields.get("year", "")
    authors = [a.strip() for a in fields.get("author", "").split(" and ") if a.strip()]
    try:
        return ReferenceItem(key=key, title=fields.get("title") or None,
                             year=int(year) if year.isdigit() else None,
                             doi=fields.get("doi") or url_doi, arxiv_id=arxiv or None,
                             authors=authors)
    except ValidationError:
        return None  # an entry with neither title nor identifier names no paper


def json_entries(text: str) -> list[ReferenceEntry]:
    """The objects of a JSON list, each a reference (one that is not refuses the list),
    named by its key, else by its place."""
    try:
        items = [ReferenceItem.model_validate(row) for row in json.loads(text)]
    except (ValueError, ValidationError, RecursionError) as err:  # too deeply nested
        raise InvalidRequest(f"the JSON reference list is not a list of references "
                             f"({err.__class__.__name__}); give objects with title, year, "
                             "doi, arxiv_id or id") from err
    return [labelled(item.key or str(number), item)
            for number, item in enumerate(items, start=1)]


def csv_entries(text: str) -> list[ReferenceEntry]:
    try:
        return csv_rows(text)
    except csv.Error as err:  # a field past the csv module's limit
        raise InvalidRequest(f"the CSV reference list cannot be read ({err}); give one row "
                             "per reference under a header") from err


def csv_rows(text: str) -> list[ReferenceEntry]:
    """One entry per row, named and keyed by the row's number. A row is read as BibTeX
    fields would be, so both kinds of list follow one set of rules."""
    rows = csv.DictReader(io.StringIO(text))
    names = {name.strip().lower(): name for name in rows.fieldnames or []}
    column = {wanted: next((names[n] for n in options if n in names), None)
              for wanted, options in CSV_COLUMNS.items()}
    deadline = CpuDeadline(PARSE_CPU_S, "the CSV reference list")
    entries = []
    for number, row in enumerate(rows, start=1):
        deadline.check()
        values = {f: (row.get(c) or "").strip() if c else "" for f, c in column.items()}
        entries.append(labelled(str(number), csv_reference(str(number), values)))
    return entries


def csv_reference(key: str, values: dict[str, str]) -> ReferenceItem | None:
    fields = {"title": values["title"], "year": values["year"], "doi": values["doi"],
              "eprint": values["arxiv_id"],
              "author": values["authors"].replace(";", " and ").replace(", ", " and ")}
    item = reference_from_fields(key, fields)
    if not values["id"]:
        return item
    try:  # validated, so that an id past its length is dropped like a bad entry
        return ReferenceItem.model_validate(
            {**(item.model_dump() if item else {"key": key}), "id": values["id"]})
    except ValidationError:
        return item
