"""Where each idea-run candidate was lost, from its audit record (no database)."""

from typing import Any

from crase.api.pages.idea_summary import STAGES, summarize_audit, where_lost


def decision(kept: bool, reason: str) -> dict[str, Any]:
    return {"kept": kept, "reason": reason, "position": None, "score": None, "extra": {}}


ELIGIBLE = decision(True, "eligible: no year range requested")


def candidate(paper_id: str, **fields: Any) -> dict[str, Any]:
    return {"paper_id": paper_id, "title": paper_id.title(), "year": 2000,
            "eligibility": ELIGIBLE, "identity_conflict": False, "selection": None,
            "assessment": None, "shortlist": None, "final": None, **fields}


CANDIDATES = [
    candidate("returned", selection=decision(True, "slot 1"),
              shortlist=decision(True, "assessed rank 1: grade 3"),
              assessment={"score": 3}, final={"rank": 1, "reason": "best"}),
    candidate("too-old", eligibility=decision(False, "ineligible: year 1980 < 1990")),
    candidate("twin", identity_conflict=True,
              selection=decision(False, "not selected: identity conflict")),
    candidate("budget", selection=decision(False, "not selected: below the budget of 120")),
    candidate("neighbour", selection=decision(
        False, "not admitted by the citation gate: neighbour score 0: clearly unrelated")),
    candidate("zero", selection=decision(True, "slot 4"), assessment={"score": 0},
              shortlist=decision(False, "graded 0: no overlap with the idea")),
    candidate("full", selection=decision(True, "slot 5"), assessment={"score": 1},
              shortlist=decision(False, "not shortlisted: boundary (assessed rank 61), "
                                        "the buffer of 10 is full")),
    candidate("sixth", selection=decision(True, "slot 6"), assessment={"score": 1},
              shortlist=decision(True, "assessed rank 6: grade 1")),
]


def test_each_candidate_is_lost_at_the_first_decision_that_dropped_it() -> None:
    stages = {c["paper_id"]: where_lost(c)[0] for c in CANDIDATES}
    assert stages == {"returned": "returned", "too-old": "eligibility", "twin": "identity",
                      "budget": "selection", "neighbour": "gate", "zero": "grade",
                      "full": "shortlist", "sixth": "final ranking"}
    assert where_lost(CANDIDATES[1])[1] == "ineligible: year 1980 < 1990"


def test_the_summary_counts_every_stage_and_lists_the_returned_first() -> None:
    summary = summarize_audit({"candidates": CANDIDATES, "outcome": "complete",
                               "incomplete": ["1 of 5 PDF attempts without text"],
                               "structure": {"facet_labels": ["F1"], "facets": ["level"]}})
    assert [stage for stage, _, _ in summary["stages"]] == list(STAGES)
    assert all(count == 1 for _, _, count in summary["stages"])
    assert summary["candidates"][0]["paper_id"] == "returned"
    assert summary["facets"] == [("F1", "level")]
    assert summary["notes"] == ["1 of 5 PDF attempts without text"]


def test_an_audit_without_candidates_summarizes_to_nothing() -> None:
    summary = summarize_audit({"run_id": "x", "audit": None})
    assert summary["candidates"] == [] and all(c == 0 for _, _, c in summary["stages"])
