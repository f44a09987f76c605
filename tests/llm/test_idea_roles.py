"""The idea-workflow role calls over the scripted server."""

import json
from typing import Any

from crase.idea.roles.model_calls import (
    EvidenceWindow,
    IdeaFacets,
    IdeaPaper,
    NeighbourGrade,
    NeighbourRequest,
    ShortlistEntry,
    Unassessed,
    assess_abstracts,
    derive_facets,
    endpoint_for_prompt,
    rank_shortlist,
    refine_with_fulltext,
    score_neighbours,
    write_report,
)
from crase.models.chat import ModelFailure, ModelReply, ModelRunner
from crase.prompts.replies import REPORT_HEADINGS
from crase.settings import ModelEndpoint, ModelSettings
from tests.llm.chat_server import Action, ChatServer, Reply
from tests.llm.conftest import MakeEndpoint

IDEA = "Forecast building electricity demand from weather and Wi-Fi occupancy."
FACETS = IdeaFacets(["building demand forecasting", "Wi-Fi occupancy", "weather inputs"])


def papers_in(request: dict[str, Any]) -> list[dict[str, Any]]:
    text = str(request["messages"][1]["content"])
    blocks = text.split("<untrusted_data>")[1:]
    for block in blocks:
        data = json.loads(block.split("</untrusted_data>")[0])
        if isinstance(data, list) and data and "paper_id" in data[0]:
            return data
    return []


def assessment(level: int | None, facets: list[str]) -> str:
    return json.dumps({
        "coverage_level": level, "covered_facets": facets,
        "task_similarity": None if level is None else 0.7,
        "method_similarity": None if level is None else 0.5, "notes": "Shares the task.",
        "paper_facets": {"problem_facets": ["load forecasting"], "setting_facets": [],
                         "mechanism_facets": [], "assumption_facets": []},
    })


def test_facets_are_derived_and_checked(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Reply('{"facets": ["one", "two"]}'), Reply('{"facets": ["a", "b", "c"]}'))
    outcome = derive_facets(runner, make_endpoint(), IDEA)
    assert isinstance(outcome, ModelReply) and outcome.repaired
    assert outcome.value.facets == ["a", "b", "c"] and outcome.prompt == "idea_facets@1"


def test_abstracts_are_assessed_and_missing_ones_not_sent(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Reply(assessment(2, ["F1", "F9"])), Reply(assessment(2, ["F1", "F2"])))
    papers = [IdeaPaper("p1", "Load forecasting", "We forecast load from weather."),
              IdeaPaper("p2", "Adaptive representations", None)]
    first, second = assess_abstracts(runner, make_endpoint(), IDEA, FACETS, papers)
    assert isinstance(first, ModelReply) and first.repaired  # F9 is not a supplied facet
    assert first.value.covered_facets == ["F1", "F2"]
    assert second == Unassessed("p2", "no abstract")
    assert len(chat_server.requests) == 2
    assert "F1, F2, F3" in chat_server.requests[0]["messages"][0]["content"]


def test_neighbours_are_scored_in_batches_and_unknown_ids_rejected(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    broken_once: set[str] = set()

    def respond(request: dict[str, Any]) -> Action:
        ids = [paper["paper_id"] for paper in papers_in(request)]
        if "n0" in ids and "n0" not in broken_once:  # first batch: an id it was not given
            broken_once.add("n0")
            ids = [*ids[:-1], "made-up-id"]
        if "n20" in ids:  # second batch: always the wrong type for score
            return Reply(json.dumps({"papers": [
                {"paper_id": pid, "score": "high", "reason": "r"} for pid in ids]}))
        return Reply(json.dumps({"papers": [
            {"paper_id": pid, "score": None if pid == "n1" else 2, "reason": "Same task."}
            for pid in ids]}))

    chat_server.responder = respond
    papers = [IdeaPaper(f"n{i}", f"Paper {i}", f"Abstract {i}.") for i in range(23)]
    papers.append(IdeaPaper("n-empty", "No abstract"))
    request = NeighbourRequest(
        "demand forecasting", IDEA, ["wifi occupancy load"], [], FACETS.facets
    )
    results = score_neighbours(runner, make_endpoint(), request, papers)

    assert len(results) == 24
    first = results[0]
    assert isinstance(first, NeighbourGrade) and first.score == 2
    assert isinstance(results[1], NeighbourGrade) and results[1].score is None
    assert all(isinstance(result, ModelFailure) for result in results[20:23])
    assert results[23] == Unassessed("n-empty", "no abstract")
    assert len(chat_server.requests) == 4  # two batches, each repaired once
    assert runner.ledger.stage("idea.neighbours").failed == 1


def entry(pid: str, abstract: bool, windows: int, work: str | None = None) -> ShortlistEntry:
    return ShortlistEntry(
        paper=IdeaPaper(pid, f"Title {pid}", "An abstract." if abstract else None),
        work_id=work or pid, pdf_status="acquired" if windows else "unavailable",
        windows=tuple(EvidenceWindow(f"{pid}-w{i}", i + 1, 0, 100, "h", "text")
                      for i in range(windows)),
    )


def ranking(rows: list[tuple[str, str]]) -> str:
    return json.dumps({"candidates": [
        {"rank": rank, "paper_id": pid, "expert_reason": "Matches.", "evidence_source": source}
        for rank, (pid, source) in enumerate(rows, start=1)]})


def test_expert_ranking_is_validated_against_the_shortlist(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    shortlist = [entry("a", True, 2), entry("b", True, 0), entry("c", False, 0),
                 entry("c2", True, 0, work="c")]
    wrong = ranking([("a", "abstract"), ("b", "abstract"), ("c", "abstract"), ("zz", "abstract")])
    right = ranking([("a", "abstract_and_fulltext"), ("c", "metadata_only"), ("b", "abstract")])
    chat_server.script(Reply(wrong), Reply(wrong))
    failed = rank_shortlist(runner, make_endpoint(), IDEA, FACETS, shortlist)
    assert isinstance(failed, ModelFailure) and failed.kind == "invalid_reply"
    assert "'zz' is not in the shortlist" in failed.detail
    assert "must be 'abstract_and_fulltext'" in failed.detail

    chat_server.script(Reply(ranking([("a", "abstract_and_fulltext"), ("c", "metadata_only"),
                                      ("c2", "abstract"), ("b", "abstract")])), Reply(right))
    shorter = shortlist[:3]
    outcome = rank_shortlist(runner, make_endpoint(), IDEA, FACETS, shorter)
    assert isinstance(outcome, ModelReply) and outcome.repaired
    assert [c.paper_id for c in outcome.value.candidates] == ["a", "c", "b"]
    sent = papers_in(chat_server.requests[-1])
    assert sent[0]["supplied"] == {"abstract": True, "fulltext": True}
    assert sent[0]["pdf_passages"][0]["window_id"] == "a-w0"


def test_empty_shortlist_is_a_recorded_failure_without_a_call(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    outcome = rank_shortlist(runner, make_endpoint(), IDEA, FACETS, [])
    assert isinstance(outcome, ModelFailure) and outcome.kind == "missing_input"
    assert chat_server.requests == []


def test_fulltext_refinement_only_for_papers_with_passages(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Reply(json.dumps({
        "coverage_level_refined": 3, "role": "main_contribution", "notes": "Same mechanism.",
        "supporting_windows": ["a-w1"]})))
    results = refine_with_fulltext(runner, make_endpoint(), IDEA, FACETS,
                                   [entry("a", True, 2), entry("b", True, 0)])
    assert isinstance(results[0], ModelReply) and results[0].value.coverage_level_refined == 3
    assert results[1] == Unassessed("b", "no full-text passages")


def test_report_may_cite_only_supplied_papers(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    sections = [{"heading": h, "markdown": "Text."} for h in REPORT_HEADINGS["report_related_work"]]
    bad = {"tldr": "Short.", "sections": sections, "cited_paper_ids": ["p1", "ghost"]}
    good = {**bad, "cited_paper_ids": ["p1"]}
    chat_server.script(Reply(json.dumps(bad)), Reply(json.dumps(good)))
    outcome = write_report(runner, make_endpoint(), "report_related_work", {"papers": []}, ["p1"])
    assert isinstance(outcome, ModelReply) and outcome.repaired


def test_each_prompt_goes_to_the_role_its_header_names() -> None:
    models = ModelSettings(
        expert=ModelEndpoint(base_url="http://127.0.0.1:1/v1", model="big"),
        planner=ModelEndpoint(base_url="http://127.0.0.1:2/v1", model="mid"),
    )
    assert endpoint_for_prompt(models, "rank_expert").model == "big"
    assert endpoint_for_prompt(models, "idea_recall_papers").model == "big"
    assert endpoint_for_prompt(models, "idea_facets").model == "mid"
