"""The rows a corpus is made of, validated: `Paper` and `Citation`, and why a row is refused.

A row that fails a check becomes a `Reject` with its file, line number and a reason; it is
never silently dropped and never stops the load. The checks that need only the row itself
live here; the ones that need the rows seen before (duplicate ids, duplicate edges,
edges to unknown papers) live in `crase.ingest.registry`.

Some rows are repaired rather than refused, since one bad field must not cost a paper and
its citations: author lists lose linking "and"s, empty names, stray commas and entries that
are no name (`repair_authors`); a year that is no plausible year is left out; text loses
whitespace at its ends. The Paper keeps what was done in `repairs`, which the loader writes
to its notes file. A null value is an absent one.
"""

import datetime
import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from crase.paper_identity import arxiv_key, normalise_doi
from crase.settings import IngestSettings
from crase.text_limits import compile_linear


class RejectKind(StrEnum):
    """Every reason a row can be refused; the rejects file and the summary count by these."""

    EMPTY_FILE = "empty_file"
    BAD_SHARD = "bad_shard"
    BAD_ENCODING = "bad_encoding"
    HUGE_ROW = "huge_row"
    MALFORMED_JSON = "malformed_json"
    TOO_DEEP = "too_deep"
    HUGE_NUMBER = "huge_number"
    NOT_AN_OBJECT = "not_an_object"
    MISSING_ID = "missing_id"
    BAD_ID = "bad_id"
    MISSING_TITLE = "missing_title"
    HUGE_FIELD = "huge_field"
    ID_TOO_LONG = "id_too_long"
    INVALID_FIELD = "invalid_field"
    DUPLICATE_PAPER = "duplicate_paper"
    CONFLICTING_PAPER = "conflicting_paper"
    MALFORMED_EDGE = "malformed_edge"
    SELF_CITATION = "self_citation"
    UNKNOWN_PAPER = "unknown_paper"
    DUPLICATE_EDGE = "duplicate_edge"


@dataclass(frozen=True)
class Reject:
    file: str
    line: int  # 1-based; 0 for a whole-file problem such as an empty file
    kind: RejectKind
    reason: str
    text: str = ""  # the start of the offending line, for a human to find it
    # The id of a refused paper row, where it could be read: edges to it say it was
    # refused. Not written to the rejects file (the reason and text show it).
    paper_id: str | None = field(default=None, compare=False)

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "kind": self.kind.value,
                "reason": self.reason, "text": self.text}


@dataclass(frozen=True)
class Limits:
    """What counts as plausible; from `IngestSettings`, passed to validation as context."""

    max_field_chars: int = 100_000
    min_year: int = 1600
    max_year: int = datetime.date.today().year + 1

    @classmethod
    def from_settings(cls, settings: IngestSettings) -> "Limits":
        return cls(max_field_chars=settings.max_field_chars, min_year=settings.min_year)


DEFAULT_LIMITS = Limits()
# Identifiers are keys of Neo4j range indexes (paper_id_unique, paper_doi, paper_arxiv_id,
# paper_s2_id), which refuse a key over about 8 KB of UTF-8 and fail the whole write with it.
# 1,000 characters is at most 4,000 bytes in any script, and far above any real identifier.
MAX_ID_CHARS = 1_000
ID_FIELDS = ("id", "arxiv_id", "doi", "s2_id")
MAX_YEAR_CHARS = 20  # a longer text is no year ("1999.0" and spaces fit); int() of 4,300+
# digits even raises
TEXT_FIELDS = ("id", "title", "abstract", "venue", "arxiv_id", "doi", "s2_id", "intro", "date",
               "journal_ref")
LIST_FIELDS = ("authors", "categories")
# Bumped when a rule changes what a valid row holds (v2: author names repaired; v3: junk
# names and years dropped, empty text left out; v4: a DOI's resolver URL or doi: prefix
# dropped; v5: an arXiv id without its version or `arXiv:` prefix, or taken from an arXiv
# DOI; v6: authors given as one string kept as one author), so a finished load of
# unchanged input is loaded again under the new rules.
VALIDATION_VERSION = 6
# The kinds of the notes file: what validation repaired in a row it kept.
REPAIRED_AUTHORS = "repaired_authors"
DROPPED_YEAR = "dropped_year"
TRIMMED_TEXT = "trimmed_text"
Repairs = dict[str, list[str]]  # note kind -> one line per repair


class Paper(BaseModel):
    """One `:Paper` node. `id` is the corpus's own id (hepth: `9201021`)."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    id: str = Field(min_length=1)
    title: str = Field(min_length=1)
    abstract: str = ""
    year: int | None = None
    venue: str | None = None
    authors: list[str] = Field(default_factory=list)
    arxiv_id: str | None = None
    doi: str | None = None
    s2_id: str | None = None
    intro: str | None = None
    categories: list[str] = Field(default_factory=list)
    date: str | None = None
    journal_ref: str | None = None
    # How validation repaired the row, by note kind; not a property.
    _repairs: Repairs = PrivateAttr(default_factory=dict)

    @property
    def repairs(self) -> Repairs:
        return self._repairs

    @model_validator(mode="wrap")
    @classmethod
    def repair_row(cls, data: Any, handler: ModelWrapValidatorHandler["Paper"],
                   info: ValidationInfo) -> "Paper":
        """Repair the raw row before the field checks, and keep what was done: the repairs
        need the values as given (a year 801, an author 10), which the checks refuse."""
        if not isinstance(data, dict):
            return handler(data)
        limits: Limits = (info.context or {}).get("limits", DEFAULT_LIMITS)
        repairs: Repairs = {}
        cleaned = {key: value for key, value in data.items() if value is not None}
        trim_text_fields(cleaned, repairs)
        check_year(cleaned, limits, repairs)
        repair_author_entries(cleaned, repairs)
        paper = handler(cleaned)
        paper._repairs = repairs
        return paper

    @field_validator("id", mode="before")
    @classmethod
    def accept_integer_id(cls, value: Any) -> Any:
        # Some corpora write numeric ids as JSON numbers; the graph keys on strings.
        if isinstance(value, int) and not isinstance(value, bool):
            # Over 4,000 bits is over 1,200 digits: too long for an id, and str() of one
            # past 4,300 digits raises. Shorter ones are measured by check_id_lengths.
            if value.bit_length() > MAX_ID_CHARS * 4:
                raise PydanticCustomError(
                    "id_too_long", "id is a number of more than {limit} digits",
                    {"limit": MAX_ID_CHARS})
            return str(value)
        if not isinstance(value, str):
            # A fraction or a list has no one text the edges could name: refuse, not guess.
            raise PydanticCustomError(
                "bad_id", "id {id} is a {kind}; an id is a string or an integer",
                {"id": shown_value(value), "kind": json_kind(value)})
        return value

    @field_validator("doi")
    @classmethod
    def doi_as_key(cls, value: str | None) -> str | None:
        # Stored as the comparison key (no prefix, lower case): the graph's DOI lookups
        # (identity resolution, reference lists) send keys in this spelling.
        return normalise_doi(value)

    @model_validator(mode="after")
    def arxiv_id_as_key(self) -> "Paper":
        # Stored as the comparison key (no version, no prefix; from an arXiv DOI where no
        # arXiv id is given): one spelling per work, so look-ups send one key.
        self.arxiv_id = arxiv_key(self.arxiv_id, self.doi)
        return self

    @field_validator("categories", mode="before")
    @classmethod
    def split_categories(cls, value: Any) -> Any:
        # arXiv writes categories as one space-separated string.
        return value.split() if isinstance(value, str) else value

    @model_validator(mode="after")
    def check_sizes(self, info: ValidationInfo) -> "Paper":
        context = info.context or {}
        limits: Limits = context.get("limits", DEFAULT_LIMITS)
        # No field can be longer than the line it came on: a short line skips the checks.
        line_chars = context.get("line_chars")
        if line_chars is None or line_chars > MAX_ID_CHARS:
            self.check_id_lengths()
        if line_chars is None or line_chars > limits.max_field_chars:
            self.check_field_sizes(limits)
        return self

    def check_id_lengths(self) -> None:
        for name in ID_FIELDS:
            value = getattr(self, name)
            if value is not None and len(value) > MAX_ID_CHARS:
                raise PydanticCustomError(
                    "id_too_long", "{field} has {size} characters, more than the {limit} an "
                    "indexed identifier may have", {"field": name, "size": len(value),
                                                    "limit": MAX_ID_CHARS})

    def check_field_sizes(self, limits: Limits) -> None:
        for name in TEXT_FIELDS:
            value = getattr(self, name)
            if value is not None and len(value) > limits.max_field_chars:
                raise PydanticCustomError(
                    "huge_field", "{field} has {size} characters, more than {limit}",
                    {"field": name, "size": len(value), "limit": limits.max_field_chars})
        for name in LIST_FIELDS:
            items = getattr(self, name)
            size = sum(len(item) for item in items)
            if size > limits.max_field_chars:
                raise PydanticCustomError(
                    "huge_field", "{field} has {size} characters, more than {limit}",
                    {"field": name, "size": size, "limit": limits.max_field_chars})

    def graph_properties(self) -> dict[str, Any]:
        """Properties to SET on the node: unknown (None), empty text and empty lists are left
        out, so a partial record (a corpus without abstracts, Semantic Scholar) never
        erases what the graph knows."""
        # Read from __dict__: model_dump is several times slower, and this runs per row.
        return {name: value for name, value in self.__dict__.items()
                if name != "id" and value is not None and value != "" and value != []}


# Repairs of the raw row -----------------------------------------------------------------------
def trim_text_fields(data: dict[str, Any], repairs: Repairs) -> None:
    """Whitespace at the ends of a text is dropped (as everywhere: `str.strip`, which knows
    the non-breaking and the other Unicode spaces); a text that had any is noted."""
    for name in TEXT_FIELDS:
        value = data.get(name)
        if isinstance(value, str) and (trimmed := value.strip()) != value:
            data[name] = trimmed
            if trimmed:  # a blank text is no text: left out, nothing of it lost
                repairs.setdefault(TRIMMED_TEXT, []).append(
                    f"{name}: whitespace removed from the ends")


def check_year(data: dict[str, Any], limits: Limits, repairs: Repairs) -> None:
    """The year as an int, or (no plausible year: 801, "", "19x5") left out and noted."""
    if "year" not in data:
        return
    value = data["year"]
    year = read_year(value)
    if year is not None and limits.min_year <= year <= limits.max_year:
        data["year"] = year
        return
    del data["year"]
    why = "is no year" if year is None else f"is outside {limits.min_year}..{limits.max_year}"
    repairs.setdefault(DROPPED_YEAR, []).append(f"year {shown_value(value)} {why}; left out")


def read_year(value: Any) -> int | None:
    """The whole number a year was written as (1999, "1999", 1999.0, "1999.0"), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value.bit_length() <= 64 else None  # str() of a huge one raises
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if not isinstance(value, str) or len(value) > MAX_YEAR_CHARS:
        return None
    whole, point, fraction = value.strip().partition(".")
    if not (whole.isascii() and whole.isdigit()) or fraction.strip("0") or (point and not fraction):
        return None
    return int(whole)


def repair_author_entries(data: dict[str, Any], repairs: Repairs) -> None:
    """Authors repaired by `repair_authors`; an entry that is not text (10, null) is no
    name and is dropped like one. Authors given as one string are one author (a list
    written without its brackets; splitting at commas would cut "Smith, J." in two)."""
    raw = data.get("authors")
    if isinstance(raw, str):
        name = raw.strip()
        data["authors"] = [name] if name else []
        repairs.setdefault(REPAIRED_AUTHORS, []).append(
            "authors given as one string, not a list: "
            + ("kept as one author" if name else f"{raw!r} dropped, no name in it"))
        return
    if not isinstance(raw, list):
        return  # absent, or neither a list nor a string: the field check says so
    notes = [f"{shown_value(entry)} dropped: not a name" for entry in raw
             if not isinstance(entry, str)]
    repaired = repair_authors([entry for entry in raw if isinstance(entry, str)])
    notes += repaired.notes
    if notes:
        data["authors"] = repaired.names
        repairs.setdefault(REPAIRED_AUTHORS, []).extend(notes)


def json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, float):
        return "number with a fraction"
    if isinstance(value, dict):
        return "object"
    return "list" if isinstance(value, list) else type(value).__name__


# Author names -------------------------------------------------------------------------------
# arXiv listings split "A, B, and C" at the commas, which leaves "and C" (108 of the 3,000
# papers of data/sample), and now and then an empty name, a lone "and", a stray comma or
# a "Jr." cut off from its name.
# On RE2 (crase.text_limits): a name of many "and"s made `(?:\s+and)+$` quadratic.
LINKING_AND = compile_linear(r"^(?:and\s+)+|(?:\s+and)+$|^and$", re.IGNORECASE)
INNER_AND = compile_linear(r"\s+and\s+(?:and\s+)*", re.IGNORECASE)
STRAY_PUNCTUATION = " \t,;"
NAME_SUFFIX = re.compile(r"^(?:Jr|Sr)\.?$|^(?:II|III|IV)$")


@dataclass(frozen=True)
class AuthorRepair:
    names: list[str]
    notes: list[str]  # what was repaired, one line each; empty when nothing was


def repair_authors(raw: list[str]) -> AuthorRepair:
    """The author list with linking "and"s, empty names and stray commas removed, names
    joined by "and" split, and a suffix ("Jr.") put back on the name before it. A name
    with no letter in it (`1994`, `***`) cannot be a name and is dropped (hep-th 9302046
    lists "10": one such entry must not cost the paper and its citations)."""
    names: list[str] = []
    notes: list[str] = []
    for original in raw:
        pieces = split_name(original)
        if pieces != [original]:
            notes.append(describe_repair(original, pieces))
        for name in pieces:
            if not any(char.isalpha() for char in name):
                notes.append(f"{name!r} dropped: no letter in it")
            elif NAME_SUFFIX.match(name) and names:
                names[-1] = f"{names[-1]} {name}"
                notes.append(f"{name!r} joined to the name before it: {names[-1]!r}")
            else:
                names.append(name)
    return AuthorRepair(names, notes)


def split_name(original: str) -> list[str]:
    """The names one list entry holds: none (empty, a lone "and"), one, or several that a
    linking "and" joined."""
    pieces = (clean_name(piece) for piece in INNER_AND.split(clean_name(original)))
    return [piece for piece in pieces if piece]


def clean_name(piece: str) -> str:
    name = " ".join(piece.split()).strip(STRAY_PUNCTUATION)
    while (stripped := LINKING_AND.sub("", name).strip(STRAY_PUNCTUATION)) != name:
        name = stripped
    return name


def describe_repair(original: str, names: list[str]) -> str:
    if not names:
        return f"{original!r} dropped: no name in it"
    return f"{original!r} -> " + ", ".join(repr(name) for name in names)


def shown_value(value: Any) -> str:
    """A value as a reason quotes it: short, and never str() of a huge int (which raises)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        digits = int(value.bit_length() * 0.30103) + 1  # log10(2): about right, never raises
        return f"(a number of about {digits:,} digits)"
    if isinstance(value, str) and len(value) > 30:
        return f"{value[:30]!r}... ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}..."


class Citation(BaseModel):
    """One `(:Paper)-[:CITES]->(:Paper)` edge; no properties at load time."""

    model_config = ConfigDict(str_strip_whitespace=True)

    citing_id: str = Field(min_length=1)
    cited_id: str = Field(min_length=1)

    @model_validator(mode="after")
    def refuse_self_citation(self) -> "Citation":
        if self.citing_id == self.cited_id:
            raise PydanticCustomError("self_citation", "paper {id} cites itself",
                                      {"id": self.citing_id})
        return self


class EdgeRow(NamedTuple):
    """A citation read from a file, before the checks against the papers."""

    line: int
    citing: str
    cited: str


def validate_paper(data: Any, limits: Limits = DEFAULT_LIMITS,
                   line_chars: int | None = None) -> Paper | tuple[RejectKind, str]:
    """The Paper, or why the object is not one (the first problem found). `line_chars`:
    the length of the line the object was parsed from, if any (bounds every field)."""
    if not isinstance(data, dict):
        return RejectKind.NOT_AN_OBJECT, f"expected a JSON object, got {type(data).__name__}"
    context: dict[str, Any] = {"limits": limits}
    if line_chars is not None:
        context["line_chars"] = line_chars
    try:
        return Paper.model_validate(data, context=context)
    except ValidationError as err:
        return classify_error(err)


def classify_error(err: ValidationError) -> tuple[RejectKind, str]:
    first = err.errors(include_url=False)[0]
    field = str(first["loc"][0]) if first["loc"] else ""
    message = first["msg"]
    if first["type"] == "huge_field":
        return RejectKind.HUGE_FIELD, message
    if first["type"] == "id_too_long":
        return RejectKind.ID_TOO_LONG, message
    if first["type"] == "bad_id":
        return RejectKind.BAD_ID, message
    if field == "id":
        return RejectKind.MISSING_ID, f"id: {message}"
    if field == "title":
        return RejectKind.MISSING_TITLE, f"title: {message}"
    return RejectKind.INVALID_FIELD, f"{field}: {message}" if field else message


def check_edge(citing: str, cited: str) -> tuple[RejectKind, str] | None:
    """The row-level checks of `Citation`, without a model per row: edge files run to tens
    of millions of lines and this is on the hot path of the bulk import."""
    if not citing or not cited:
        return RejectKind.MALFORMED_EDGE, "an id is empty"
    too_long = long_id_reason(citing, cited)
    if too_long is not None:
        return RejectKind.ID_TOO_LONG, too_long
    if citing == cited:
        return RejectKind.SELF_CITATION, f"paper {citing} cites itself"
    return None


def long_id_reason(citing: str, cited: str) -> str | None:
    """Why an edge end is too long to be a paper id (see MAX_ID_CHARS), or None."""
    for end, paper_id in (("citing", citing), ("cited", cited)):
        if len(paper_id) > MAX_ID_CHARS:
            return (f"the {end} id has {len(paper_id):,} characters, more than the "
                    f"{MAX_ID_CHARS:,} a paper id may have")
    return None


@dataclass
class PaperRecord:
    """One bibliographic record from any source (the corpus, Semantic Scholar, Crossref,
    arXiv): the idea workflow's unit. `id` is the corpus Paper id, None for an external one."""

    id: str | None
    title: str
    abstract: str = ""
    year: int | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    s2_id: str | None = None
    authors: list[str] = field(default_factory=list)
    venue: str | None = None
    source: str = "corpus"  # corpus | semantic_scholar | crossref | arxiv

    @property
    def has_abstract(self) -> bool:
        return bool(self.abstract and self.abstract.strip())

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> "PaperRecord":
        """A record from a Cypher row (search_idea_candidates and its siblings)."""
        return cls(
            id=row["id"], title=row.get("title") or "", abstract=row.get("abstract") or "",
            year=row.get("year"), doi=row.get("doi"), arxiv_id=row.get("arxiv_id"),
            s2_id=row.get("s2_id"), authors=list(row.get("authors") or []),
            venue=row.get("venue"), source="corpus",
        )
