"""Budgeted local selection with protected capacity: exact counts on fixture pools."""

from crase.idea.candidates import Decision, RouteHit
from crase.idea.selection import bm25_scores, select_for_assessment
from crase.settings import IdeaSettings
from tests.idea.builders import candidate, decided, fulltext_hit

TERMS = ["graph", "network"]


def pool() -> list:
    """200 works: ranks 1..200 of one query; 4 found also by a second route; 8 without an
    abstract; 3 ineligible; 1 identity conflict."""
    works = []
    for rank in range(1, 201):
        abstract = "" if rank % 25 == 0 else f"graph network {'graph ' * (rank % 3)}text {rank}"
        works.append(candidate(f"p{rank}", rank=rank, abstract=abstract, selected=False))
    for work in works[150:154]:
        work.add_route(RouteHit("recalled", {"index": 0}))
    for work in works[100:103]:
        work.eligibility = Decision(False, "excluded: year [2001] outside 2015-2025")
    works[120].identity_conflict = True
    return works


def test_budget_and_protected_quotas_are_exact() -> None:
    params = IdeaSettings(selection_budget=40, protect_corroborated=3, protect_strong_rank=2,
                          protect_missing_abstract=5)
    works = pool()
    selected = select_for_assessment(works, TERMS, params)
    assert len(selected) == 40
    reasons = [decided(w.selection).reason for w in selected]
    assert sum("corroborated" in r for r in reasons) == 3
    assert sum("strong full-text rank" in r for r in reasons) == 2
    assert sum("missing abstract" in r for r in reasons) == 5
    assert sum("within the budget" in r for r in reasons) == 30
    not_selected = [w for w in works if not decided(w.selection).kept]
    assert len(not_selected) == 160
    assert sum("below the selection budget of 40" in decided(w.selection).reason
               for w in not_selected) == 156
    assert sum("outside 2015-2025" in decided(w.selection).reason for w in not_selected) == 3
    assert sum("identity conflict" in decided(w.selection).reason for w in not_selected) == 1


def test_protected_slots_never_exceed_the_budget() -> None:
    params = IdeaSettings(selection_budget=4, protect_corroborated=10, protect_strong_rank=10,
                          protect_missing_abstract=10)
    selected = select_for_assessment(pool(), TERMS, params)
    assert len(selected) == 4
    assert all("corroborated" in decided(w.selection).reason for w in selected)


def test_every_candidate_gets_a_reason_and_a_score_rank() -> None:
    works = pool()
    select_for_assessment(works, TERMS, IdeaSettings(selection_budget=10))
    open_works = [w for w in works if w.eligibility.kept and not w.identity_conflict]
    assert sorted(decided(w.selection).position or 0 for w in open_works) == list(range(1, 197))
    assert all(decided(w.selection).reason for w in works)


def test_bm25_prefers_more_matching_terms() -> None:
    scores = bm25_scores(["graph", "network"], [["graph", "network"], ["graph"], ["other"]])
    assert scores[0] > scores[1] > scores[2] == 0.0


def test_a_top_ranked_hit_without_terms_is_protected_by_its_rank() -> None:
    works = [candidate("top", rank=1, abstract="unrelated words only", selected=False)]
    works += [candidate(f"p{n}", rank=n + 2, abstract="graph network graph", selected=False)
              for n in range(10)]
    params = IdeaSettings(selection_budget=3, protect_corroborated=0, protect_strong_rank=1,
                          strong_rank_cutoff=1,
                          protect_missing_abstract=0)
    selected = select_for_assessment(works, TERMS, params)
    assert selected[0].work_id == "top"
    assert works[0].best_fulltext_rank() == fulltext_hit(1).detail["rank"]
