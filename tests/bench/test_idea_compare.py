"""The comparison of two idea_eval runs: which relevant works the two experts placed
differently, and the mean stage times."""

from typing import Any

from crase.bench.idea_compare import placed_differently, stage_seconds


def run(shortlist: list[str], returned: list[str], timings: dict[str, float]
        ) -> dict[str, Any]:
    final = [{"paper_id": p, "rank": n, "title": p, "reason": ""}
             for n, p in enumerate(returned, start=1)]
    return {"audit": {"shortlist": shortlist, "final_ranking": final, "timings": timings}}


def test_relevant_works_placed_differently_by_the_two_experts() -> None:
    query = {"query_id": "q", "relevant_ids": ["r1", "r2", "r3", "r4"]}
    a = run(["r1", "r2", "r3", "x"], ["r1", "x", "r2"], {"expert": 2.0})
    b = run(["r1", "r2", "r4", "x"], ["x", "r1", "r2"], {"expert": 4.0})
    # r3 and r4 were shortlisted by one run only; r2 kept its place.
    assert placed_differently(query, a, b) == [("r1", 1, 2)]
    b_without_r1 = run(["r1", "r2"], ["r2"], {"expert": 4.0})
    assert placed_differently(query, a, b_without_r1) == [("r1", 1, None), ("r2", 3, 1)]


def test_stage_seconds_are_means_over_the_runs_in_stage_order() -> None:
    runs = {"q1": run([], [], {"expert": 2.0, "structure": 1.0}),
            "q2": run([], [], {"expert": 4.0, "structure": 3.0})}
    assert list(stage_seconds(runs).items()) == [("structure", 2.0), ("expert", 3.0)]
