"""Abstract assessment: a grade 0/1/2/3 with covered facets, task and method similarity and a
short note, per selected work.

The grade is None unless the work was really assessed: no abstract -> 'no_abstract', the
assessor saying the evidence is insufficient -> 'insufficient', a failed or invalid reply
-> 'failed' (with the failure on record). None of these is ever turned into a 0.
"""

from collections.abc import Sequence

from crase.idea.candidates import Candidate
from crase.idea.roles.protocols import Assessor
from crase.idea.structuring import IdeaStructure
from crase.models.chat import ModelRunner


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
