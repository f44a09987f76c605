"""A readable summary of an idea run's audit: where each candidate was lost (eligibility,
identity, selection, the citation gate, its grade, the shortlist, the final ranking) or
that it was returned, counted per stage."""

from typing import Any

# In the order a candidate meets them.
STAGES = ("eligibility", "identity", "selection", "gate", "grade", "shortlist",
          "final ranking", "returned")
STAGE_MEANING = {
    "eligibility": "outside the requested years, or excluded",
    "identity": "the same work as another candidate, or a conflict between versions",
    "selection": "below the assessment budget",
    "gate": "a citation neighbour the gate did not admit",
    "grade": "assessed, and graded 0: no overlap with the idea",
    "shortlist": "assessed, but the shortlist was full",
    "final ranking": "shortlisted, but not among the five the ranking returned",
    "returned": "one of the works the run returned",
}


def decision(candidate: dict[str, Any], name: str) -> dict[str, Any]:
    return candidate.get(name) or {}


def where_lost(candidate: dict[str, Any]) -> tuple[str, str]:
    """(stage, reason) of the first decision that dropped the candidate."""
    if candidate.get("final"):
        return "returned", f"rank {candidate['final'].get('rank')}"
    eligibility = decision(candidate, "eligibility")
    if eligibility and not eligibility.get("kept", True):
        return "eligibility", eligibility.get("reason", "")
    selection = decision(candidate, "selection")
    if candidate.get("identity_conflict"):
        return "identity", selection.get("reason") or "identity conflict"
    if not selection.get("kept", False):
        reason = selection.get("reason") or "not selected"
        return ("gate" if "citation gate" in reason else "selection"), reason
    shortlist = decision(candidate, "shortlist")
    if not shortlist.get("kept", False):
        reason = shortlist.get("reason") or "not shortlisted"
        return ("grade" if reason.startswith("graded 0") else "shortlist"), reason
    return "final ranking", shortlist.get("reason", "")


def summarize_audit(audit: dict[str, Any]) -> dict[str, Any]:
    """{'stages': [(stage, meaning, count)], 'candidates': [{...,'stage','reason'}],
    'notes': what the run itself reported as incomplete}."""
    candidates = []
    for candidate in audit.get("candidates") or []:
        stage, reason = where_lost(candidate)
        grade = (candidate.get("assessment") or {}).get("score")
        candidates.append({"paper_id": candidate.get("paper_id") or candidate.get("work_id"),
                           "title": candidate.get("title"), "year": candidate.get("year"),
                           "routes": candidate.get("route_names") or [], "grade": grade,
                           "stage": stage, "reason": reason})
    candidates.sort(key=lambda c: (STAGES.index(c["stage"]) * -1, c["paper_id"] or ""))
    counts = {stage: sum(1 for c in candidates if c["stage"] == stage) for stage in STAGES}
    return {"stages": [(stage, STAGE_MEANING[stage], counts[stage]) for stage in STAGES],
            "candidates": candidates, "outcome": audit.get("outcome"),
            "notes": audit.get("incomplete") or [], "facets": facet_list(audit)}


def facet_list(audit: dict[str, Any]) -> list[tuple[str, str]]:
    structure = audit.get("structure") or {}
    return list(zip(structure.get("facet_labels") or [], structure.get("facets") or [],
                    strict=False))
