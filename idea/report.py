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
from typing import Any, Literal, Protocol

from crase.idea.candidates import Candidate
from crase.idea.expert import RankedItem
from crase.idea.roles import model_calls
from crase.idea.structuring import IdeaStructure
from crase.models.chat import ModelFailure, ModelReply, ModelRunner
from crase.prompts.catalog import load_prompt
from crase.prompts.replies import REPORT_HEADINGS, ReportReply
from crase.settings import ModelEndpoint

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


class Reporter(Protocol):
    name: str

    def write(self, runner: ModelRunner, structure: IdeaStructure, synthesis: dict[str, Any],
              shortlist: Sequence[Candidate]) -> ReportOutcome: ...


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


class ModelReporter:
    """refine_fulltext (assessor endpoint, when configured) then report_full (reporter)."""

    def __init__(self, endpoint: ModelEndpoint, assessor: ModelEndpoint | None) -> None:
        self.endpoint = endpoint
        self.assessor = assessor
        self.template: Literal["report_full", "report_related_work"] = "report_full"
        self.name = f"model:{endpoint.model}:{load_prompt(self.template).ref}"

    def write(self, runner: ModelRunner, structure: IdeaStructure, synthesis: dict[str, Any],
              shortlist: Sequence[Candidate]) -> ReportOutcome:
        refinements = self._refine(runner, structure, shortlist)
        if refinements:
            refined = {r["paper_id"]: r for r in refinements if r["status"] == "refined"}
            for paper in synthesis["papers"]:
                if paper["paper_id"] in refined:
                    paper["refined"] = refined[paper["paper_id"]]
        paper_ids = [paper["paper_id"] for paper in synthesis["papers"]]
        outcome = model_calls.write_report(runner, self.endpoint, self.template, synthesis,
                                           paper_ids)
        if isinstance(outcome, ModelFailure):
            return ReportOutcome("failed", self.name, refinements=refinements,
                                 failure=outcome.to_record())
        return ReportOutcome(
            "written", f"model:{outcome.model}:{outcome.prompt}", render_report(outcome.value),
            outcome.value.tldr, list(outcome.value.cited_paper_ids), refinements)

    def _refine(self, runner: ModelRunner, structure: IdeaStructure,
                shortlist: Sequence[Candidate]) -> list[dict[str, Any]]:
        from crase.idea.expert import shortlist_entries  # the same payload the expert saw

        with_windows = [c for c in shortlist if c.windows]
        if not with_windows:
            return []
        if self.assessor is None:
            return [{"paper_id": c.paper_id, "status": "skipped",
                     "reason": "no assessor endpoint for refine_fulltext"} for c in with_windows]
        outcomes = model_calls.refine_with_fulltext(runner, self.assessor, structure.idea,
                                              model_calls.IdeaFacets(structure.facets),
                                              shortlist_entries(with_windows))
        results = []
        for candidate, outcome in zip(with_windows, outcomes, strict=True):
            if isinstance(outcome, ModelReply):
                results.append({"paper_id": candidate.paper_id, "status": "refined",
                                **outcome.value.model_dump()})
            elif isinstance(outcome, ModelFailure):
                results.append({"paper_id": candidate.paper_id, "status": "failed",
                                "reason": f"{outcome.kind}: {outcome.detail}"[:300]})
            else:
                results.append({"paper_id": candidate.paper_id, "status": "skipped",
                                "reason": outcome.reason})
        return results


def report_headings() -> list[str]:
    return list(REPORT_HEADINGS["report_full"])
