"""The joint expert ranking: each validation failure is a ranking failure on record, and the
offline expert is a named deterministic scorer whose reply passes the same validation."""

import json
import re
from typing import Any

import pytest

from crase.idea.expert import validate_ranking
from crase.idea.roles import model_calls
from crase.idea.roles.model import ModelExpert
from crase.models.chat import ModelRunner
from crase.settings import ModelEndpoint
from tests.idea.builders import structure
from tests.llm.chat_server import ChatServer, Reply


def entry(pid: str, abstract: bool = True, windows: int = 0,
          work_id: str | None = None) -> model_calls.ShortlistEntry:
    paper = model_calls.IdeaPaper(pid, f"Title {pid}", "An abstract." if abstract else None, 2020)
    window = tuple(model_calls.EvidenceWindow(f"{pid}:w{n}", 1, 0, 10, "0" * 64, "text")
                   for n in range(windows))
    return model_calls.ShortlistEntry(paper, work_id or pid, "acquired" if windows else
                                "unavailable", window, {"grade": 2})


# a: abstract + windows, b: abstract only, c: windows only, d: nothing, e..g: abstract only
ENTRIES = [entry("a", windows=2), entry("b"), entry("c", abstract=False, windows=1),
           entry("d", abstract=False), entry("e"), entry("f"), entry("g")]
SOURCES = {"a": "abstract_and_fulltext", "b": "abstract", "c": "fulltext",
           "d": "metadata_only", "e": "abstract", "f": "abstract", "g": "abstract"}


def ranking(ids: list[str], ranks: list[int] | None = None,
            sources: dict[str, str] | None = None) -> str:
    sources = {**SOURCES, **(sources or {})}
    ranks = ranks or list(range(1, len(ids) + 1))
    return json.dumps({"candidates": [
        {"rank": rank, "paper_id": pid, "expert_reason": f"Matches because of {pid}.",
         "evidence_source": sources.get(pid, "abstract")} for rank, pid in zip(
            ranks, ids, strict=True)]})


GOOD = ranking(["a", "b", "c", "d", "e"])
FAILURES: dict[str, tuple[str, str]] = {
    "unknown id": (ranking(["a", "b", "c", "d", "zz"]), "'zz' is not in the shortlist"),
    "duplicate id": (ranking(["a", "b", "c", "d", "a"]), "'a' appears 2 times"),
    "non-consecutive ranks": (ranking(["a", "b", "c", "d", "e"], [1, 2, 3, 5, 6]),
                              "ranks must be 1..5 in order"),
    "wrong count": (ranking(["a", "b", "c", "d"]), "candidates: expected 5, got 4"),
    "evidence source claims fulltext not supplied": (
        ranking(["a", "b", "c", "d", "e"], sources={"b": "abstract_and_fulltext"}),
        "evidence_source must be 'abstract'"),
    "evidence source hides the supplied fulltext": (
        ranking(["a", "b", "c", "d", "e"], sources={"c": "metadata_only"}),
        "evidence_source must be 'fulltext'"),
    "malformed JSON": ('{"candidates": [{"rank": 1, "paper_id": "a",', "not valid JSON"),
}


def run_model_expert(*replies: str,
                     entries: list[model_calls.ShortlistEntry] = ENTRIES) -> tuple[Any, ChatServer]:
    server = ChatServer()
    server.script(*(Reply(text) for text in replies))
    with server.running():
        endpoint = ModelEndpoint(base_url=server.base_url, model="test/expert", max_retries=0,
                                 timeout_s=5)
        outcome = ModelExpert(endpoint).rank(ModelRunner(), structure(), entries)
    return outcome, server


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_each_validation_failure_is_a_ranking_failure_on_record(case: str) -> None:
    reply, problem = FAILURES[case]
    outcome, server = run_model_expert(reply, reply)  # the reply, and again after the repair
    assert outcome.status == "failed" and outcome.ranking == []
    assert outcome.failure["kind"] == "invalid_reply"
    assert problem in outcome.failure["detail"]
    assert outcome.failure["rejected_reply"] == reply
    assert len(server.requests) == 2  # one repair request, then the failure stands
    assert "could not be accepted" in server.requests[1]["messages"][-1]["content"]


def test_validate_ranking_names_each_failure_directly() -> None:
    for case, (reply, problem) in FAILURES.items():
        value, problems = validate_ranking(reply, ENTRIES)
        assert value is None and any(problem in p for p in problems), case


def test_two_versions_of_one_work_are_refused() -> None:
    entries = [entry("a"), entry("a2", work_id="a"), entry("b")]
    reply = json.dumps({"candidates": [
        {"rank": r, "paper_id": pid, "expert_reason": "x.", "evidence_source": "abstract"}
        for r, pid in enumerate(["a", "a2", "b"], start=1)]})
    value, problems = validate_ranking(reply, entries)
    assert value is None and "versions of the same work" in problems[0]


def test_a_valid_reply_and_a_successful_repair() -> None:
    outcome, _ = run_model_expert(GOOD)
    assert outcome.status == "valid" and [i.paper_id for i in outcome.ranking] == list("abcde")
    assert [i.evidence_source for i in outcome.ranking] == [SOURCES[p] for p in "abcde"]
    repaired, server = run_model_expert(FAILURES["wrong count"][0], GOOD)
    assert repaired.status == "valid" and len(server.requests) == 2


def test_a_short_shortlist_needs_exactly_its_size() -> None:
    short = ENTRIES[:3]
    outcome, _ = run_model_expert(ranking(["a", "b", "c"]), entries=short)
    assert outcome.status == "valid" and len(outcome.ranking) == 3
    failed, _ = run_model_expert(ranking(["a", "b"]), ranking(["a", "b"]), entries=short)
    assert failed.status == "failed" and "expected 3, got 2" in failed.failure["detail"]


def test_an_empty_shortlist_is_a_failure_without_a_request() -> None:
    outcome, server = run_model_expert(entries=[])
    assert outcome.status == "failed" and outcome.failure["kind"] == "missing_input"
    assert server.requests == []


class FixedEncoder:
    """Vectors from word counts over a tiny vocabulary: enough to order the fixture."""

    name = "fixture-encoder"
    vocabulary = ("graph", "few", "shot", "image", "weather", "passing")

    def encode(self, texts: list[str]) -> Any:
        import numpy as np

        rows = []
        for text in texts:
            words = re.findall(r"[a-z]+", text.lower())
            vector = np.array([words.count(w) for w in self.vocabulary], dtype=np.float32) + 0.01
            rows.append(vector / np.linalg.norm(vector))
        return np.vstack(rows) if rows else np.zeros((0, len(self.vocabulary)), np.float32)


def test_the_offline_expert_is_named_deterministic_and_valid() -> None:
    from crase.idea.roles.model_calls import EvidenceWindow, IdeaPaper, ShortlistEntry
    from crase.idea.roles.offline_expert import EXPERT, OfflineExpert

    entries = [
        ShortlistEntry(IdeaPaper("w", "Weather records", "Weather weather.", 2020),
                       "w", "unavailable", (), {"grade": 1}),
        ShortlistEntry(IdeaPaper("g", "Graph few shot image", "Graph passing few "
                                 "shot image classification.", 2020),
                       "g", "acquired", (EvidenceWindow("g:w1", 2, 0, 20, "0" * 64,
                                                        "graph passing"),),
                       {"grade": 3, "covered_facets": ["F1"]}),
        ShortlistEntry(IdeaPaper("t", "Graph image (title only)", None, 2020), "t",
                       "not_attempted", (), {"grade": None, "status": "no_abstract"}),
    ]
    expert = OfflineExpert(FixedEncoder())
    first = expert.rank(ModelRunner(), structure(), entries)
    second = expert.rank(ModelRunner(), structure(), entries)
    assert first.status == "valid" and first.backend == EXPERT
    assert first.ranking == second.ranking
    assert [i.paper_id for i in first.ranking][0] == "g"
    assert {i.paper_id: i.evidence_source for i in first.ranking} == {
        "g": "abstract_and_fulltext", "w": "abstract", "t": "metadata_only"}
    assert all(i.reason.startswith("Offline fused rank score") for i in first.ranking)
    assert all(i.reason.count(". ") <= 2 for i in first.ranking)
    assert validate_ranking(first.reply or "", entries)[0] is not None


def test_the_offline_expert_weighs_the_idea_s_own_text_ranking() -> None:
    from dataclasses import replace

    from crase.idea.roles.offline_expert import OfflineExpert

    # Two works the other signals cannot tell apart; the text rank decides, both ways.
    paper = "Graph passing few shot image classification."
    a = model_calls.ShortlistEntry(model_calls.IdeaPaper("a", "Graph few shot", paper, 2020), "a",
                             "unavailable", (), {"grade": 2})
    b = model_calls.ShortlistEntry(model_calls.IdeaPaper("b", "Graph few shot", paper, 2020), "b",
                             "unavailable", (), {"grade": 2})
    expert = OfflineExpert(FixedEncoder())
    ranked = expert.rank(ModelRunner(), structure(), [a, replace(b, text_rank=1)])
    assert [i.paper_id for i in ranked.ranking] == ["b", "a"]
    assert "rank 1 in the idea's own text ranking" in ranked.ranking[0].reason
    ranked = expert.rank(ModelRunner(), structure(), [b, replace(a, text_rank=3)])
    assert [i.paper_id for i in ranked.ranking] == ["a", "b"]
    # Without text ranks, ties keep shortlist order.
    assert [i.paper_id for i in expert.rank(ModelRunner(), structure(), [b, a]).ranking] == \
        ["b", "a"]


def test_model_expert_receives_only_the_material_supplied() -> None:
    outcome, server = run_model_expert(GOOD)
    user = server.requests[0]["messages"][1]["content"]
    assert user.count('"window_id"') == 3 and '"pdf_status": "unavailable"' in user
