"""Fixture data for the idea workflow tests, built in code."""

from crase.idea.candidates import (
    Assessment,
    AssessmentStatus,
    Candidate,
    Decision,
    RouteHit,
)
from crase.idea.structuring import IdeaStructure
from crase.ingest.records import PaperRecord


def record(pid: str, title: str | None = None, abstract: str = "An abstract.",
           year: int | None = 2020, **fields: object) -> PaperRecord:
    return PaperRecord(id=pid, title=title or f"Paper {pid}", abstract=abstract, year=year,
                       **fields)  # type: ignore[arg-type]


def fulltext_hit(rank: int, query_index: int = 0) -> RouteHit:
    return RouteHit("fulltext", {"query_index": query_index, "query": f"q{query_index}",
                                 "rank": rank, "score": 1.0 / rank})


def candidate(pid: str, *, rank: int = 50, abstract: str = "An abstract.",
              routes: list[RouteHit] | None = None, grade: int | None = None,
              status: AssessmentStatus | None = None, selected: bool = True,
              year: int | None = 2020,
              title: str | None = None) -> Candidate:
    work = Candidate(work_id=pid, records=[record(pid, title, abstract, year)],
                     routes=routes if routes is not None else [fulltext_hit(rank)])
    if selected:
        work.selection = Decision(True, "selected in a fixture")
    if status is not None or grade is not None:
        work.assessment = Assessment(status or "assessed", grade,
                                     task_similarity=0.5, method_similarity=0.5)
    return work


def decided(decision: Decision | None) -> Decision:
    """A decision a stage must have made (fails the test when it did not)."""
    assert decision is not None
    return decision


def graded(work: Candidate) -> int:
    """The grade of a work the test expects to be graded."""
    assert work.assessment is not None and work.assessment.score is not None
    return work.assessment.score


def structure(idea: str = "graph neural networks for few-shot image classification",
              facets: list[str] | None = None) -> IdeaStructure:
    return IdeaStructure(
        idea=idea, facets=facets or ["graph neural networks", "few-shot learning",
                                     "image classification"],
        structural={"datasets": [], "metrics": [], "method_families": ["graph neural network"]},
        high_level={"problem_facets": ["few-shot image classification"], "setting_facets": [],
                    "mechanism_facets": ["message passing"], "assumption_facets": []},
        queries=["graph neural networks few-shot", "few-shot image classification"],
        keywords=["graph neural networks"], sources={"facets": "fixture"})
