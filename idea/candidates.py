"""The candidate registry's records: what each route found, and every decision about a work.

A `PaperRecord` is one bibliographic record as a route found it (a corpus Paper node, or a
provider's record). A `Candidate` is one *work* after identity resolution: its versions
(records), every route that brought it, and the outcome of each stage (eligibility,
selection, assessment, neighbour gate, shortlist, PDF, final rank). Stages fill their own
field and never erase another's, so the audit can tell a discovery miss from a candidate
lost at a gate.
"""

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from crase.ingest.records import PaperRecord

RouteName = Literal[
    "fulltext",  # the local full-text index, with a generated query
    "recalled",  # a title the expert model recalled, resolved against the corpus
    "citation_neighbour",  # a reference or citing paper of a gate seed, from the graph
    "semantic_scholar_search",  # a provider search hit
    "semantic_scholar_neighbour",  # a provider citation neighbour of a gate seed
    "openalex_search",  # an OpenAlex search hit (where a key is set)
]
# The routes that link a work to a gate seed by a citation (the graph's or a provider's).
NEIGHBOUR_ROUTES = ("citation_neighbour", "semantic_scholar_neighbour")
AssessmentStatus = Literal["assessed", "insufficient", "no_abstract", "failed", "not_selected"]
VerdictStatus = Literal["graded", "insufficient", "no_abstract", "failed"]


@dataclass(frozen=True)
class RouteHit:
    """How a route brought a record: the route and what it knew (query, rank, seed...)."""

    route: RouteName
    detail: dict[str, Any]


@dataclass
class Assessment:
    """The abstract assessment of one work. `score` is None unless status is 'assessed':
    a missing abstract, an 'insufficient evidence' reply and a failed call are not zeros."""

    status: AssessmentStatus
    score: int | None = None
    covered_facets: list[str] = field(default_factory=list)
    task_similarity: float | None = None
    method_similarity: float | None = None
    note: str = ""
    paper_facets: dict[str, list[str]] = field(default_factory=dict)
    assessor: str = ""
    failure: dict[str, Any] | None = None


@dataclass(frozen=True)
class NeighbourVerdict:
    """The neighbour scorer's grade of one citation neighbour against the idea (0-3), before
    the citation gate decides on it."""

    status: VerdictStatus
    score: int | None  # None unless graded
    reason: str
    scorer: str


@dataclass
class Decision:
    """A gate's or a budget's verdict on a work, with the reason written for a person."""

    kept: bool
    reason: str
    position: int | None = None  # rank within the stage's own order, where it has one
    score: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Window:
    """A PDF text window: located (page, offsets, hash), scored, and always partial."""

    id: str
    page: int  # 1-based page where the window starts
    page_offset: int  # character offset of the start within that page
    start: int  # character offsets in the whole extracted text
    end: int
    sha256: str
    text: str
    score: float
    terms: tuple[str, ...]
    cues: tuple[str, ...]
    partial: bool = True


@dataclass
class PdfOutcome:
    """One of the fixed acquisition attempts, whatever happened."""

    attempt: int  # 1..5, in the pre-expert shortlist order
    status: Literal["acquired", "unavailable"]
    source: str | None  # local | arxiv | None when nothing was found
    tried: list[str] = field(default_factory=list)  # what was looked at, in order
    path: str | None = None
    sha256: str | None = None
    pages: int = 0
    chars: int = 0
    detail: str = ""


@dataclass
class FinalRank:
    rank: int
    reason: str
    evidence_source: str


@dataclass
class Candidate:
    work_id: str
    records: list[PaperRecord]
    routes: list[RouteHit] = field(default_factory=list)
    identity_notes: list[str] = field(default_factory=list)
    identity_conflict: bool = False
    eligibility: Decision = field(default_factory=lambda: Decision(True, "eligible"))
    selection: Decision | None = None
    assessment: Assessment | None = None
    gate: Decision | None = None  # only for candidates the citation gate considered
    shortlist: Decision | None = None
    pdf: PdfOutcome | None = None
    windows: list[Window] = field(default_factory=list)
    final: FinalRank | None = None
    signals: dict[str, float] = field(default_factory=dict)  # scores computed on the way

    @property
    def primary(self) -> PaperRecord:
        """The record that speaks for the work: a corpus record with an abstract first."""
        return sorted(self.records, key=_record_preference)[0]

    @property
    def paper_id(self) -> str:
        """The id shown to the expert and used in the audit: the corpus id when there is one."""
        return self.primary.id or self.work_id

    @property
    def corpus_ids(self) -> list[str]:
        return [record.id for record in self.records if record.id is not None]

    @property
    def in_corpus(self) -> bool:
        return bool(self.corpus_ids)

    @property
    def route_names(self) -> list[str]:
        return sorted({hit.route for hit in self.routes})

    @property
    def is_assessed(self) -> bool:
        return self.assessment is not None and self.assessment.status == "assessed"

    def add_route(self, hit: RouteHit) -> None:
        if hit not in self.routes:
            self.routes.append(hit)

    def best_fulltext_rank(self) -> int | None:
        ranks = [hit.detail["rank"] for hit in self.routes if hit.route == "fulltext"]
        return min(ranks) if ranks else None

    def to_audit(self) -> dict[str, Any]:
        """Everything known about the work, JSON-serialisable."""
        return {
            "work_id": self.work_id,
            "paper_id": self.paper_id,
            "in_corpus": self.in_corpus,
            "title": self.primary.title,
            "year": self.primary.year,
            "doi": self.primary.doi,
            "arxiv_id": self.primary.arxiv_id,
            "versions": [asdict(record) | {"abstract": bool(record.has_abstract)}
                         for record in self.records],
            "routes": [asdict(hit) for hit in self.routes],
            "route_names": self.route_names,
            "identity_notes": list(self.identity_notes),
            "identity_conflict": self.identity_conflict,
            "eligibility": asdict(self.eligibility),
            "selection": asdict(self.selection) if self.selection else None,
            "assessment": asdict(self.assessment) if self.assessment else None,
            "neighbour_gate": asdict(self.gate) if self.gate else None,
            "shortlist": asdict(self.shortlist) if self.shortlist else None,
            "pdf": asdict(self.pdf) if self.pdf else None,
            "windows_sent": [window_audit(window) for window in self.windows],
            "final": asdict(self.final) if self.final else None,
            "signals": {name: round(value, 6) for name, value in sorted(self.signals.items())},
        }


def window_audit(window: Window) -> dict[str, Any]:
    return asdict(window) | {"terms": list(window.terms), "cues": list(window.cues)}


def _record_preference(record: PaperRecord) -> tuple[int, int, str]:
    return (record.id is None, not record.has_abstract, record.id or record.title)
