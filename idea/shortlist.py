"""The shortlist the expert sees: up to 50 assessed works plus a buffer of up to 10
boundary or uncertain works, at most 60 distinct eligible works in all.

Assessed part: works graded 1-3, ordered by grade, then task + method similarity, covered
facets and the selection score (`assessment.assessment_key`); citation counts play no
part. Works graded 0 are left out ("no overlap"). Buffer: first the uncertain works (no
abstract, insufficient evidence, a failed assessment: missing evidence is not negative
evidence), by selection score; then the boundary, the graded works just beyond the 50.
The shortlist order is the pre-expert order that picks the five PDF attempts.
"""

from collections.abc import Sequence

from crase.idea.assessment import assessment_key
from crase.idea.candidates import Candidate, Decision
from crase.settings import IdeaSettings

UNCERTAIN = ("no_abstract", "insufficient", "failed")


def build_shortlist(candidates: Sequence[Candidate], params: IdeaSettings) -> list[Candidate]:
    """Decide shortlist membership for every candidate; return the shortlist in order."""
    positives: list[Candidate] = []
    uncertain: list[Candidate] = []
    for candidate in candidates:
        reason = _ineligible_reason(candidate)
        if reason is not None:
            candidate.shortlist = Decision(False, reason)
            continue
        assessment = candidate.assessment
        assert assessment is not None  # _ineligible_reason checked it
        if assessment.status == "assessed" and assessment.score == 0:
            candidate.shortlist = Decision(False, "graded 0: no overlap with the idea")
        elif assessment.status == "assessed":
            positives.append(candidate)
        else:
            uncertain.append(candidate)
    positives.sort(key=assessment_key)
    uncertain.sort(key=lambda c: (-c.signals.get("selection_score", 0.0), c.work_id))
    head, boundary = positives[: params.shortlist_assessed], positives[params.shortlist_assessed:]
    shortlist = []
    for number, candidate in enumerate(head, start=1):
        grade = candidate.assessment.score  # type: ignore[union-attr]
        candidate.shortlist = Decision(True, f"assessed rank {number}: grade {grade}",
                                       position=number)
        shortlist.append(candidate)
    buffer = [(c, f"uncertain ({c.assessment.status})") for c in uncertain]  # type: ignore[union-attr]
    buffer += [(c, f"boundary (assessed rank {params.shortlist_assessed + n})")
               for n, c in enumerate(boundary, start=1)]
    for number, (candidate, label) in enumerate(buffer, start=1):
        if number <= params.shortlist_buffer:
            candidate.shortlist = Decision(
                True, f"buffer slot {number} of {params.shortlist_buffer}: {label}",
                position=len(shortlist) + 1)
            shortlist.append(candidate)
        else:
            candidate.shortlist = Decision(
                False, f"not shortlisted: {label}, the buffer of {params.shortlist_buffer} "
                       "is full")
    return shortlist


def _ineligible_reason(candidate: Candidate) -> str | None:
    if not candidate.eligibility.kept:
        return f"not shortlisted: {candidate.eligibility.reason}"
    if candidate.identity_conflict:
        return "not shortlisted: identity conflict (see identity notes)"
    if candidate.selection is None or not candidate.selection.kept:
        return "not shortlisted: not selected for assessment"
    if candidate.assessment is None:
        return "not shortlisted: not assessed"
    return None
