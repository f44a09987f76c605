"""The semantic citation-neighbour gate: exact counts for every rule on fixture data."""

import json
import re
from collections import Counter
from typing import Any

from crase.idea.candidates import NeighbourVerdict
from crase.idea.neighbour_gate import GateEntry, admit_neighbours, choose_seeds
from crase.idea.roles.model import ModelNeighbourScorer
from crase.models.chat import ModelRunner
from crase.settings import ModelEndpoint
from tests.idea.builders import candidate, graded, record, structure
from tests.llm.chat_server import ChatServer, Reply, Status


def verdict(score: int | None, status: str = "graded") -> NeighbourVerdict:
    return NeighbourVerdict(status, score, "fixture", "fixture-scorer")  # type: ignore[arg-type]


def five_seed_fixture() -> list[GateEntry]:
    """Per seed (5 seeds): 3 zeros, 6 x grade 3, 6 x grade 2, 6 x grade 1, and 4 unassessed
    (2 without abstract, 1 insufficient, 1 failed): 125 neighbours."""
    entries = []
    order = 0
    for seed in range(5):
        grades: list[tuple[int | None, str]] = [(0, "graded")] * 3
        grades += [(1, "graded")] * 6 + [(2, "graded")] * 6 + [(3, "graded")] * 6
        grades += [(None, "no_abstract")] * 2 + [(None, "insufficient"), (None, "failed")]
        for score, status in grades:
            entries.append(GateEntry(f"s{seed}n{order}", seed, order, verdict(score, status)))
            order += 1
    return entries


def test_published_budgets_give_exact_counts() -> None:
    entries = five_seed_fixture()
    decisions = admit_neighbours(entries, per_seed=15, budget=50)
    assert len(decisions) == 125
    reasons = Counter(
        "admitted" if d.kept else "zero" if "score 0" in d.reason
        else "cap" if "per-seed cap" in d.reason
        else "budget" if "global neighbour budget" in d.reason else "other"
        for d in decisions.values())
    assert reasons == {"zero": 15, "cap": 15, "budget": 45, "admitted": 50}
    admitted = [e for e in entries if decisions[e.work_id].kept]
    # 3 > 2 > 1: all 30 grade-3 neighbours, then the first 20 grade-2 ones, in seed order.
    assert Counter(e.verdict.score for e in admitted) == {3: 30, 2: 20}
    twos = [e for e in admitted if e.verdict.score == 2]
    assert Counter(e.seed_index for e in twos) == {0: 6, 1: 6, 2: 6, 3: 2}
    # The capped ones are each seed's last three grade-1 neighbours.
    capped = [e for e in entries if "per-seed cap" in decisions[e.work_id].reason]
    assert all(e.verdict.score == 1 for e in capped)
    assert Counter(e.seed_index for e in capped) == {s: 3 for s in range(5)}
    assert sorted(decisions[e.work_id].position or 0 for e in admitted) == list(range(1, 51))


def test_unassessed_bypass_the_per_seed_cap_but_not_the_global_budget() -> None:
    entries = [GateEntry(f"p{i}", 0, i, verdict(2)) for i in range(10)]
    entries += [GateEntry(f"u{i}", 0, 10 + i, verdict(None, "no_abstract")) for i in range(30)]
    entries += [GateEntry(f"q{i}", 1, 40 + i, verdict(1)) for i in range(20)]
    decisions = admit_neighbours(entries, per_seed=15, budget=50)
    admitted = [e for e in entries if decisions[e.work_id].kept]
    per_seed = Counter(e.seed_index for e in admitted)
    # Positives first (10 of seed 0, 15 of seed 1 after its cap), then the unassessed, of
    # which the budget leaves room for 25: seed 0 ends with 35 admitted, far above 15.
    assert per_seed == {0: 35, 1: 15}
    assert len(admitted) == 50
    assert sum(not d.kept and "per-seed cap" in d.reason for d in decisions.values()) == 5
    over = [pid for pid, d in decisions.items() if "global neighbour budget" in d.reason]
    assert over == [f"u{i}" for i in range(25, 30)]
    # Positives go first; unassessed neighbours fill after them.
    assert all((decisions[f"p{i}"].position or 99) <= 10 for i in range(10))


def test_a_smaller_budget_and_cap_are_respected_exactly() -> None:
    decisions = admit_neighbours(five_seed_fixture(), per_seed=4, budget=7)
    assert sum(d.kept for d in decisions.values()) == 7
    assert sum("per-seed cap of 4" in d.reason for d in decisions.values()) == 5 * 14


def test_valid_zeros_are_excluded_even_under_budget() -> None:
    entries = [GateEntry(f"z{i}", 0, i, verdict(0)) for i in range(5)]
    decisions = admit_neighbours(entries, per_seed=15, budget=50)
    assert not any(d.kept for d in decisions.values())


def test_seeds_are_at_most_five_positive_assessed_corpus_works_best_first() -> None:
    works = [candidate(f"g{n}", grade=n % 4) for n in range(12)]
    works.append(candidate("none", status="no_abstract"))
    works.append(candidate("failed", status="failed"))
    seeds = choose_seeds(works, 5)
    assert len(seeds) == 5
    assert [graded(s) for s in seeds] == [3, 3, 3, 2, 2]
    assert choose_seeds(works, 0) == []


def respond_by_id(body: dict[str, Any]) -> Reply | Status:
    """Grades by id: 'z' -> 0, 'x' -> a server error, else 2; one entry per supplied id."""
    text = body["messages"][1]["content"]
    ids = re.findall(r'"paper_id": "([^"]+)"', text)
    if any(pid.startswith("x") for pid in ids):
        return Status(500)
    papers = [{"paper_id": pid, "score": 0 if pid.startswith("z") else 2, "reason": "r"}
              for pid in ids]
    return Reply(json.dumps({"papers": papers}))


def test_model_scorer_sends_batches_of_at_most_twenty(tmp_path: Any) -> None:
    server = ChatServer(respond_by_id)
    papers = [record(f"n{i}") for i in range(45)] + [record(f"z{i}") for i in range(3)]
    papers += [record(f"e{i}", abstract="") for i in range(2)]
    with server.running():
        endpoint = ModelEndpoint(base_url=server.base_url, model="test/grader", max_retries=0,
                                 timeout_s=5)
        scorer = ModelNeighbourScorer(endpoint)
        verdicts = scorer.score(ModelRunner(), structure(), papers, batch_size=20)
    # Batches go out concurrently, so they may arrive in any order.
    assert sorted((len(re.findall('"paper_id"', r["messages"][1]["content"]))
                   for r in server.requests), reverse=True) == [20, 20, 8]
    statuses = Counter(v.status for v in verdicts)
    assert statuses == {"graded": 48, "no_abstract": 2}
    assert [v.score for v in verdicts[45:48]] == [0, 0, 0]


def test_a_failed_batch_leaves_its_papers_unassessed_not_zero() -> None:
    server = ChatServer(respond_by_id)
    papers = [record(f"n{i}") for i in range(20)] + [record("x1")]
    with server.running():
        endpoint = ModelEndpoint(base_url=server.base_url, model="test/grader", max_retries=0,
                                 timeout_s=5)
        verdicts = ModelNeighbourScorer(endpoint).score(ModelRunner(), structure(), papers, 20)
    assert Counter(v.status for v in verdicts) == {"graded": 20, "failed": 1}
    assert verdicts[-1].score is None
