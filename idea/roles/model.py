"""The idea workflow's roles served by a model: each adapter sends its prompt to the role's
OpenAI-compatible endpoint (crase/idea/roles/model_calls.py makes the calls) and turns the
validated reply, or the recorded failure, into what the pipeline expects.

Roles and their endpoints (`ModelSettings`): structuring -> planner, recall -> expert,
abstract assessment -> assessor, neighbour grades -> neighbour_scorer, ranking -> expert,
report -> reporter (with refine_fulltext on the assessor endpoint).
"""

import json
from collections.abc import Sequence
from typing import Any, Literal

from crase.idea.candidates import (
    Assessment,
    AssessmentStatus,
    Candidate,
    NeighbourVerdict,
    VerdictStatus,
)
from crase.idea.discovery import RecalledTitle, RecallOutcome
from crase.idea.expert import ExpertOutcome, check_and_build, failed_outcome, shortlist_entries
from crase.idea.report import ReportOutcome, render_report
from crase.idea.roles import model_calls
from crase.idea.roles.offline_structure import structure_offline
from crase.idea.structuring import IdeaStructure, structure_with_model
from crase.ingest.records import PaperRecord
from crase.models.chat import ModelFailure, ModelReply, ModelRunner
from crase.prompts.catalog import load_prompt
from crase.prompts.replies import AbstractAssessmentReply
from crase.settings import IdeaSettings, ModelEndpoint


class ModelStructurer:
    def __init__(self, endpoint: ModelEndpoint) -> None:
        self.endpoint = endpoint
        self.name = f"model:{endpoint.model}:idea_facets+features+high_level+queries"

    def structure(self, runner: ModelRunner, idea: str, params: IdeaSettings) -> IdeaStructure:
        return structure_with_model(runner, self.endpoint, idea, params, structure_offline)


class ModelRecaller:
    """idea_recall_papers on the expert endpoint."""

    def __init__(self, endpoint: ModelEndpoint) -> None:
        self.endpoint = endpoint
        self.name = f"model:{endpoint.model}:{load_prompt('idea_recall_papers').ref}"

    def recall(self, runner: ModelRunner, idea: str, max_papers: int) -> RecallOutcome:
        if max_papers == 0:
            return RecallOutcome("skipped", self.name, reason="recall_max_papers is 0")
        outcome = model_calls.recall_papers(runner, self.endpoint, idea, max_papers)
        if isinstance(outcome, ModelFailure):
            return RecallOutcome("failed", self.name, reason=f"{outcome.kind}: {outcome.detail}",
                                 failure=outcome.to_record())
        titles = [RecalledTitle(p.title, p.year, p.venue, p.doi, p.arxiv_id, p.url)
                  for p in outcome.value.papers]
        return RecallOutcome("recalled", f"model:{outcome.model}:{outcome.prompt}", titles)


# --- the local full-text route -----------------------------------------------------------


def idea_paper(record: PaperRecord, paper_id: str) -> model_calls.IdeaPaper:
    return model_calls.IdeaPaper(id=paper_id, title=record.title, abstract=record.abstract or None,
                           year=record.year, venue=record.venue)


class ModelAssessor:
    """The merged assess_abstract prompt on the assessor endpoint."""

    def __init__(self, endpoint: ModelEndpoint) -> None:
        self.endpoint = endpoint
        self.name = f"model:{endpoint.model}:{load_prompt('assess_abstract').ref}"

    def assess(
        self, runner: ModelRunner, structure: IdeaStructure, papers: Sequence[PaperRecord]
    ) -> list[Assessment]:
        ids = [record.id or f"x{number}" for number, record in enumerate(papers)]
        outcomes = model_calls.assess_abstracts(
            runner, self.endpoint, structure.idea, model_calls.IdeaFacets(structure.facets),
            [idea_paper(record, pid) for record, pid in zip(papers, ids, strict=True)],
        )
        return [self._convert(outcome) for outcome in outcomes]

    def _convert(
        self, outcome: ModelReply[AbstractAssessmentReply] | ModelFailure | model_calls.Unassessed
    ) -> Assessment:
        if isinstance(outcome, model_calls.Unassessed):
            return Assessment("no_abstract", note=outcome.reason, assessor=self.name)
        if isinstance(outcome, ModelFailure):
            return Assessment("failed", note=f"{outcome.kind}: {outcome.detail}"[:500],
                              assessor=self.name, failure=outcome.to_record())
        reply = outcome.value
        status: AssessmentStatus = ("assessed" if reply.coverage_level is not None
                                    else "insufficient")
        return Assessment(
            status=status, score=reply.coverage_level, covered_facets=list(reply.covered_facets),
            task_similarity=reply.task_similarity, method_similarity=reply.method_similarity,
            note=reply.notes, paper_facets=reply.paper_facets.model_dump(),
            assessor=f"model:{outcome.model}:{outcome.prompt}",
        )


class ModelNeighbourScorer:
    """The score_neighbours prompt on the neighbour_scorer endpoint, batches of <= 20."""

    def __init__(self, endpoint: ModelEndpoint) -> None:
        self.endpoint = endpoint
        self.name = f"model:{endpoint.model}:{load_prompt('score_neighbours').ref}"

    def score(
        self,
        runner: ModelRunner,
        structure: IdeaStructure,
        papers: Sequence[PaperRecord],
        batch_size: int,
    ) -> list[NeighbourVerdict]:
        request = model_calls.NeighbourRequest(
            research_query=structure.idea, idea=structure.idea,
            search_queries=structure.queries, keywords=structure.keywords,
            facets=structure.facets,
        )
        ids = [record.id or f"x{number}" for number, record in enumerate(papers)]
        outcomes = model_calls.score_neighbours(
            runner, self.endpoint, request,
            [idea_paper(record, pid) for record, pid in zip(papers, ids, strict=True)],
            batch_size=batch_size,
        )
        return [self._convert(outcome) for outcome in outcomes]

    def _convert(
        self, outcome: model_calls.NeighbourGrade | ModelFailure | model_calls.Unassessed
    ) -> NeighbourVerdict:
        if isinstance(outcome, model_calls.Unassessed):
            return NeighbourVerdict("no_abstract", None, outcome.reason, self.name)
        if isinstance(outcome, ModelFailure):
            return NeighbourVerdict("failed", None, f"{outcome.kind}: {outcome.detail}"[:500],
                                    self.name)
        status: VerdictStatus = "graded" if outcome.score is not None else "insufficient"
        return NeighbourVerdict(status, outcome.score, outcome.reason,
                                f"model:{outcome.model}:{outcome.prompt}")


class ModelExpert:
    """rank_expert on the expert endpoint; the client validates and asks for one repair."""

    def __init__(self, endpoint: ModelEndpoint) -> None:
        self.endpoint = endpoint
        self.name = f"model:{endpoint.model}:{load_prompt('rank_expert').ref}"

    def rank(self, runner: ModelRunner, structure: IdeaStructure,
             entries: Sequence[model_calls.ShortlistEntry]) -> ExpertOutcome:
        outcome = model_calls.rank_shortlist(runner, self.endpoint, structure.idea,
                                       model_calls.IdeaFacets(structure.facets), list(entries))
        if isinstance(outcome, ModelFailure):
            return failed_outcome(f"model:{outcome.model}:{outcome.prompt}", outcome.kind,
                                  outcome.detail, outcome.last_reply)
        # Validated by the client already; checked again so the rule holds for any path.
        return check_and_build(f"model:{outcome.model}:{outcome.prompt}",
                               json.dumps(outcome.value.model_dump()), entries)


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
