"""full_report mode: a written report built only from the run's saved evidence.

The SYNTHESIS object gathers the idea, facets, retrieval statistics and limitations, and
the shortlisted works grouped by overlap (high = grade 3, partial = 2, adjacent = 1) with
their notes and the PDF windows already selected (method and experiment windows as
snippets). Nothing is searched or read again. With a reporter endpoint, works with PDF
windows are first refined (refine_fulltext, assessor endpoint) and the report_full prompt
writes the report; a failed call leaves the report failed on record. Offline, a fixed
template lays the same synthesis out in the same seven sections.
"""

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from crase.idea.candidates import Candidate
from crase.idea.expert import RankedItem
from crase.idea.structuring import IdeaStructure
from crase.prompts.replies import REPORT_HEADINGS, ReportReply

BUCKETS = {3: "high_overlap", 2: "partial_overlap", 1: "adjacent"}


@dataclass
class ReportOutcome:
    status: Literal["written", "failed", "skipped"]
    backend: str
    markdown: str | None = None
    tldr: str | None = None
    cited_paper_ids: list[str] = field(default_factory=list)
    refinements: list[dict[str, Any]] = field(default_factory=list)
    failure: dict[str, Any] | None = None
    path: str | None = None

    def to_audit(self) -> dict[str, Any]:
        return asdict(self)


def build_synthesis(structure: IdeaStructure, shortlist: Sequence[Candidate],
                    ranking: Sequence[RankedItem], statistics: dict[str, Any],
                    limitations: list[str], routes: list[dict[str, Any]]) -> dict[str, Any]:
    buckets: dict[str, list[str]] = {name: [] for name in BUCKETS.values()}
    papers = []
    final = {item.paper_id: item for item in ranking}
    for candidate in shortlist:
        a = candidate.assessment
        grade = a.score if a is not None else None
        bucket = BUCKETS.get(grade) if grade is not None else None
        if bucket is not None:
            buckets[bucket].append(candidate.paper_id)
        record = candidate.primary
        papers.append({
            "paper_id": candidate.paper_id, "title": record.title, "year": record.year,
            "venue": record.venue, "overlap_level": grade, "overlap_bucket": bucket,
            "facet_labels": a.covered_facets if a else [], "notes": a.note if a else "",
            "final_rank": final[candidate.paper_id].rank if candidate.paper_id in final
            else None,
            "expert_reason": final[candidate.paper_id].reason if candidate.paper_id in final
            else None,
            "method_exp_snippets": [
                {"window_id": w.id, "page": w.page, "cues": list(w.cues), "text": w.text}
                for w in candidate.windows if {"method", "experiment"} & set(w.cues)],
        })
    return {
        "metadata": {
            "topic": structure.high_level.get("problem_facets", [])[:1] or structure.facets[:1],
            "idea_description": structure.idea,
            "facets": structure.labelled_facets(),
            "task": {"task_type": "prior_work_mapping", "user_query": structure.idea},
            "audience": "expert_researcher",
            "usage_context": ["paper_introduction", "related_work_section"],
        },
        "global_stats": statistics,
        "retrieval_summary": {"query_seeds": structure.queries, "sources": routes},
        "limitations": {"notes": limitations},
        "buckets": buckets,
        "papers": papers,
    }


def render_report(reply: ReportReply) -> str:
    parts = [f"**TL;DR.** {reply.tldr}"]
    parts += [f"## {section.heading}\n\n{section.markdown}" for section in reply.sections]
    return "\n\n".join(parts) + "\n"


def report_headings() -> list[str]:
    return list(REPORT_HEADINGS["report_full"])
