"""The joint expert ranking and its validation.

One decision over the whole shortlist (abstracts, assessments, the PDF windows actually
acquired): exactly min(5, |shortlist|) distinct works in ranks 1, 2, ... each with a one-
or two-sentence reason and the evidence source that matches what was supplied for it
("abstract", "fulltext", "abstract_and_fulltext", "metadata_only").

Validation (`validate_ranking`, the same check the model client applies) refuses: an id
not in the shortlist, a repeated id or two versions of one work, ranks that are not
1..n in order, the wrong number of candidates, an evidence source that claims material
that was not supplied (or hides material that was), and anything that is not the JSON
object asked for. A reply that still fails after the client's one repair request is a
ranking failure on record: there is then no final ranking, and nothing rule-based is put
in its place.
"""

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, Literal

from crase.graph import Graph
from crase.idea.candidates import NEIGHBOUR_ROUTES, Candidate
from crase.idea.roles import model_calls
from crase.models.reply_json import validate_reply
from crase.prompts.replies import ExpertRankingReply, check_expert_ranking
from crase.search.text_ranking import Encoder, query_hits

# How deep the idea's own text ranking is read for the expert's text-rank signal.
TEXT_RANK_DEPTH = 200


@dataclass(frozen=True)
class RankedItem:
    rank: int
    paper_id: str
    reason: str
    evidence_source: str


@dataclass
class ExpertOutcome:
    status: Literal["valid", "failed"]
    backend: str
    ranking: list[RankedItem] = field(default_factory=list)
    failure: dict[str, Any] | None = None  # kind, detail, the rejected reply
    reply: str | None = None  # the accepted reply as JSON, for the audit

    def to_audit(self) -> dict[str, Any]:
        return asdict(self)


def idea_text_ranks(graph: Graph, encoder: Encoder | None, idea: str,
                    excluded: list[str]) -> dict[str, int]:
    """Paper id -> place in the idea's own text ranking (search/text_ranking.py), to
    TEXT_RANK_DEPTH."""
    hits = query_hits(graph, encoder, idea, TEXT_RANK_DEPTH, excluded)
    return {hit.id: rank for rank, hit in enumerate(hits, start=1)}


def shortlist_entries(shortlist: Sequence[Candidate],
                      text_ranks: Mapping[str, int] | None = None
                      ) -> list[model_calls.ShortlistEntry]:
    """What the expert is given per work: the abstract, the assessment, the PDF outcome,
    only the windows actually acquired and selected, the work's text rank and its links
    to the idea's seeds."""
    entries = []
    for candidate in shortlist:
        record = candidate.primary
        pdf_status: model_calls.PdfStatus = "not_attempted"
        if candidate.pdf is not None:
            pdf_status = "acquired" if candidate.pdf.status == "acquired" else "unavailable"
        windows = tuple(model_calls.EvidenceWindow(w.id, w.page, w.start, w.end, w.sha256, w.text)
                        for w in candidate.windows)
        entries.append(model_calls.ShortlistEntry(
            paper=model_calls.IdeaPaper(id=candidate.paper_id, title=record.title,
                                  abstract=record.abstract or None, year=record.year,
                                  venue=record.venue),
            work_id=candidate.work_id, pdf_status=pdf_status, windows=windows,
            assessment=compact_assessment(candidate),
            text_rank=(text_ranks or {}).get(candidate.paper_id),
            neighbour_links=sum(hit.route in NEIGHBOUR_ROUTES for hit in candidate.routes),
        ))
    return entries


def compact_assessment(candidate: Candidate) -> dict[str, Any] | None:
    a = candidate.assessment
    if a is None:
        return None
    return {"status": a.status, "grade": a.score, "covered_facets": a.covered_facets,
            "task_similarity": a.task_similarity, "method_similarity": a.method_similarity,
            "notes": a.note, "assessor": a.assessor}


def validate_ranking(content: str, entries: Sequence[model_calls.ShortlistEntry]
                     ) -> tuple[ExpertRankingReply | None, list[str]]:
    """The parsed ranking and no problems, or None and every problem found."""
    check = partial(check_expert_ranking,
                    supplied={entry.paper.id: entry.supplied for entry in entries},
                    work_ids={entry.paper.id: entry.work_id for entry in entries})
    return validate_reply(ExpertRankingReply, check, content)


def outcome_from_reply(backend: str, reply: ExpertRankingReply) -> ExpertOutcome:
    ranking = [RankedItem(item.rank, item.paper_id, item.expert_reason, item.evidence_source)
               for item in reply.candidates]
    return ExpertOutcome("valid", backend, ranking, reply=reply.model_dump_json())


def failed_outcome(backend: str, kind: str, detail: str,
                   rejected: str | None = None) -> ExpertOutcome:
    return ExpertOutcome("failed", backend, failure={
        "kind": kind, "detail": detail, "rejected_reply": rejected})


def check_and_build(backend: str, content: str,
                    entries: Sequence[model_calls.ShortlistEntry]) -> ExpertOutcome:
    """Validate a reply text; a valid ranking or a failure on record."""
    reply, problems = validate_ranking(content, entries)
    if reply is None:
        return failed_outcome(backend, "invalid_reply", "; ".join(problems), content[:2000])
    return outcome_from_reply(backend, reply)

