"""Reference lists as people bring them: BibTeX entries, RIS records (what Zotero, Mendeley
and Crase's own export write), a JSON list of objects, or CSV with a header (a Connected
Papers or spreadsheet export), each read into ReferenceItems. The citation-gap analysis
reads a draft's BibTeX this way, the evolution map's comparison reads its list this way,
and a search starts from a reference file this way (search/given_papers.py);
search/reference_resolution.py then finds the corpus papers they name.

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

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from crase.bibtex import MAX_BIBTEX_CHARS, PARSE_CPU_S, read_bibtex
from crase.errors import InvalidRequest
from crase.paper_identity import lookup_keys
from crase.ris import RisRecord, read_ris, tagged
from crase.text_limits import CpuDeadline, check_text_size

# The CSV columns read, each under any of the header names people use for it (compared in
# lower case, spaces around them ignored).
# BibTeX fields that hold an arXiv id, and the archives an `eprint` may name for one.
ARXIV_FIELDS = ("eprint", "arxiv", "arxivid")
ARXIV_ARCHIVES = ("", "arxiv")
# RIS tags read, as BibTeX's field names (the year is the first four characters of PY/Y1/DA).
RIS_TITLE = ("TI", "T1", "CT", "BT")
RIS_YEAR = ("PY", "Y1", "DA")
RIS_NOTES = ("N1", "M1", "M3")  # Crase's own export writes `arXiv:<id>` in a note
CSV_COLUMNS = {"title": ("title",), "year": ("year",), "doi": ("doi",),
               "arxiv_id": ("arxiv_id", "arxiv", "eprint", "arxiv id"), "id": ("id",),
               "authors": ("authors", "author")}


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


def read_reference_list(text: str) -> list[ReferenceItem]:
    """A reference list as BibTeX, a JSON list of objects, or CSV with a header naming
    title / year / doi / arxiv_id (or arxiv, eprint) / id / authors, as a Connected Papers
    export or a spreadsheet gives it. Raises InvalidRequest when nothing in it names a paper."""
    check_text_size(text, "the reference list", MAX_BIBTEX_CHARS)
    stripped = text.lstrip()
    if stripped.startswith("@"):
        items = parse_bibtex(text)
    elif tagged(stripped.split("\n", 1)[0].rstrip()) is not None:
        items = parse_ris(text)
    elif stripped.startswith("["):
        items = references_from_json(text)
    else:
        try:
            items = references_from_csv(text)
        except csv.Error as err:  # a field past the csv module's limit
            raise InvalidRequest(f"the CSV reference list cannot be read ({err}); give one "
                                 "row per reference under a header") from err
    if not items:
        raise InvalidRequest("the reference list names no paper; give BibTeX entries, RIS "
                             "records, a JSON list, or CSV with a title, doi, arxiv_id or id "
                             "column")
    return items


def parse_bibtex(text: str) -> list[ReferenceItem]:
    """The entries of a BibTeX text (crase.bibtex: @string macros and `#`
    concatenation resolved, size and CPU bounded) that name a paper: title, year, doi,
    eprint/arxiv, author, key. @comment, @string and @preamble are no entries."""
    items = []
    for entry in read_bibtex(text):
        item = reference_from_fields(entry.key, entry.fields)
        if item is not None:
            items.append(item)
    return items


def parse_ris(text: str) -> list[ReferenceItem]:
    """The records of a RIS text (crase.ris: size and CPU bounded) that name a
    paper, read as BibTeX fields would be (`ris_fields`)."""
    items = []
    for record in read_ris(text):
        item = reference_from_fields(record.first("ID"), ris_fields(record))
        if item is not None:
            items.append(item)
    return items


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


def references_from_json(text: str) -> list[ReferenceItem]:
    try:
        return [ReferenceItem.model_validate(row) for row in json.loads(text)]
    except (ValueError, ValidationError, RecursionError) as err:  # too deeply nested
        raise InvalidRequest(f"the JSON reference list is not a list of references "
                             f"({err.__class__.__name__}); give objects with title, year, "
                             "doi, arxiv_id or id") from err


def references_from_csv(text: str) -> list[ReferenceItem]:
    """One reference per row that names a paper; the key is the row's number. A row is
    read as BibTeX fields would be, so both kinds of list follow one set of rules."""
    rows = csv.DictReader(io.StringIO(text))
    names = {name.strip().lower(): name for name in rows.fieldnames or []}
    column = {field: next((names[n] for n in options if n in names), None)
              for field, options in CSV_COLUMNS.items()}
    deadline = CpuDeadline(PARSE_CPU_S, "the CSV reference list")
    items = []
    for number, row in enumerate(rows, start=1):
        deadline.check()
        values = {f: (row.get(c) or "").strip() if c else "" for f, c in column.items()}
        item = csv_reference(str(number), values)
        if item is not None:
            items.append(item)
    return items


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
