"""Abstract assessment: a grade 0/1/2/3 with covered facets, task and method similarity and a
short note, per selected work.

The grade is None unless the work was really assessed: no abstract -> 'no_abstract', the
assessor saying the evidence is insufficient -> 'insufficient', a failed or invalid reply
-> 'failed' (with the failure on record). None of these is ever turned into a 0.
"""

from collections.abc import Callable, Sequence

from crase.idea.candidates import Candidate
from crase.idea.roles.protocols import Assessor
from crase.idea.structuring import IdeaStructure
from crase.models.chat import ModelRunner

# (stage, done, total): the run observer's items_done, so a terminal shows a count.
Progress = Callable[[str, int, int], None]
# Works per call to the assessor: enough to keep a model endpoint's concurrency (8 by
# default) busy, few enough that the count moves every few seconds.
ASSESS_BATCH = 32


def assess_candidates(
    assessor: Assessor, runner: ModelRunner, structure: IdeaStructure,
    candidates: Sequence[Candidate], progress: Progress | None = None,
    stage: str = "assessment",
) -> None:
    """Assess each work once, from its primary record; the result lands on the candidate."""
    todo = [candidate for candidate in candidates if candidate.assessment is None]
    if not todo:
        return
    for start in range(0, len(todo), ASSESS_BATCH):
        if progress is not None:
            progress(stage, start, len(todo))
        batch = todo[start:start + ASSESS_BATCH]
        results = assessor.assess(runner, structure, [candidate.primary for candidate in batch])
        for candidate, result in zip(batch, results, strict=True):
            candidate.assessment = result
    if progress is not None:
        progress(stage, len(todo), len(todo))


def assessment_key(candidate: Candidate) -> tuple[float, ...]:
    """Sort key, best first: grade, then task + method similarity, covered facets, then the
    selection score. Citation counts play no part."""
    a = candidate.assessment
    grade = a.score if a is not None and a.score is not None else -1
    similarity = ((a.task_similarity or 0.0) + (a.method_similarity or 0.0)) if a else 0.0
    covered = len(a.covered_facets) if a else 0
    return (-grade, -similarity, -covered, -candidate.signals.get("selection_score", 0.0))


# How well a work's assessment matches the idea, in words. The grade alone ties too often
# (an off-topic corpus gives every work grade 1), so a weak grade is split by the
# idea-paper similarity at the offline assessor's threshold for an adjacent work.
WEAK_SIMILARITY = 0.25


def match_strength(grade: int | None, similarity: float | None) -> str:
    """'strong', 'partial', 'weak', 'very weak' or 'unassessed'."""
    if grade is None:
        return "unassessed"
    if grade >= 3:
        return "strong"
    if grade == 2:
        return "partial"
    if grade == 1 and similarity is not None and similarity >= WEAK_SIMILARITY:
        return "weak"
    return "very weak"


def weak_match_warning(grades: Sequence[int | None],
                       similarities: Sequence[float | None]) -> str | None:
    """A warning when even the best evidence for the final works is weak (no grade above
    1): the corpus probably does not cover the idea. None when some work matches."""
    graded = [g for g in grades if g is not None]
    if not grades or any(g >= 2 for g in graded):
        return None
    sims = [s for s in similarities if s is not None]
    spread = ""
    if sims:
        low, high = f"{min(sims):.2f}", f"{max(sims):.2f}"
        spread = f", idea-paper similarity {low if low == high else f'{low}-{high}'}"
    best = f"best grade {max(graded)} of 3" if graded else "no work could be graded"
    return (f"weak match: the best evidence is weak ({best}{spread}); the corpus may not "
            "cover this idea: rephrase it, or load a corpus that covers it (crase load DIR)")
