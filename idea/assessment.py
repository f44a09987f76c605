"""Abstract assessment: a grade 0/1/2/3 with covered facets, task and method similarity and a
short note, per selected work.

The grade is None unless the work was really assessed: no abstract -> 'no_abstract', the
assessor saying the evidence is insufficient -> 'insufficient', a failed or invalid reply
-> 'failed' (with the failure on record). None of these is ever turned into a 0.
"""

from collections.abc import Sequence
from typing import Protocol

from crase.idea.candidates import Assessment, AssessmentStatus, Candidate, PaperRecord
from crase.idea.roles import model_calls
from crase.idea.structuring import IdeaStructure
from crase.models.chat import ModelFailure, ModelReply, ModelRunner
from crase.prompts.catalog import load_prompt
from crase.prompts.replies import AbstractAssessmentReply
from crase.settings import ModelEndpoint


class Assessor(Protocol):
    name: str

    def assess(
        self, runner: ModelRunner, structure: IdeaStructure, papers: Sequence[PaperRecord]
    ) -> list[Assessment]:
        """One Assessment per paper, in order; papers without an abstract -> 'no_abstract'."""
        ...


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


def assess_candidates(
    assessor: Assessor, runner: ModelRunner, structure: IdeaStructure,
    candidates: Sequence[Candidate],
) -> None:
    """Assess each work once, from its primary record; the result lands on the candidate."""
    todo = [candidate for candidate in candidates if candidate.assessment is None]
    if not todo:
        return
    results = assessor.assess(runner, structure, [candidate.primary for candidate in todo])
    for candidate, result in zip(todo, results, strict=True):
        candidate.assessment = result


def assessment_key(candidate: Candidate) -> tuple[float, ...]:
    """Sort key, best first: grade, then task + method similarity, covered facets, then the
    selection score. Citation counts play no part."""
    a = candidate.assessment
    grade = a.score if a is not None and a.score is not None else -1
    similarity = ((a.task_similarity or 0.0) + (a.method_similarity or 0.0)) if a else 0.0
    covered = len(a.covered_facets) if a else 0
    return (-grade, -similarity, -covered, -candidate.signals.get("selection_score", 0.0))
