"""Reply models are strict; the context checks catch what a schema cannot."""

import json
from typing import Any

import pytest
from pydantic import ValidationError

from crase.prompts.replies import (
    AbstractAssessmentReply,
    ClaimsReply,
    EntailmentReply,
    ExpertRankingReply,
    NeighbourScoresReply,
    PlanReply,
    RecalledPapersReply,
    RefinedAssessmentReply,
    ReportReply,
    SearchQueriesReply,
    SuppliedEvidence,
    allowed_source,
    check_assessment,
    check_claims,
    check_entailment,
    check_expert_ranking,
    check_neighbour_scores,
    check_plan,
    check_recalled_papers,
    check_refinement,
    check_report,
    check_search_queries,
    normalise_text,
)

NO_FACETS: dict[str, list[str]] = {
    "problem_facets": [], "setting_facets": [], "mechanism_facets": [], "assumption_facets": []
}


def parse(model: type[Any], data: object) -> Any:
    return model.model_validate_json(json.dumps(data), strict=True)


@pytest.mark.parametrize(
    "matrix",
    [[[1.01]], [[-0.1]], [["0.5"]], [[True]], [[None]], [], [[0.5], "row"]],
)
def test_entailment_values_must_be_numbers_in_the_unit_interval(matrix: object) -> None:
    with pytest.raises(ValidationError):
        parse(EntailmentReply, {"matrix": matrix})


def test_entailment_rejects_nan_and_extra_keys() -> None:
    with pytest.raises(ValidationError):
        EntailmentReply.model_validate_json('{"matrix": [[NaN]]}', strict=True)
    with pytest.raises(ValidationError, match="Extra inputs"):
        parse(EntailmentReply, {"matrix": [[0.5]], "confidence": 0.9})
    assert parse(EntailmentReply, {"matrix": [[0, 1]]}).matrix == [[0.0, 1.0]]  # ints are fine


def test_entailment_shape_must_match_the_request() -> None:
    reply = parse(EntailmentReply, {"matrix": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]})
    assert check_entailment(reply, 3, 2) == []
    assert check_entailment(reply, 2, 2) == ["matrix has 3 rows, expected 2"]
    ragged = parse(EntailmentReply, {"matrix": [[0.1, 0.2], [0.3]]})
    assert check_entailment(ragged, 2, 2) == ["row 2 has 1 values, expected 2"]


def test_grades_are_integers_0_to_3_or_null() -> None:
    def item(score: object) -> dict[str, object]:
        return {"papers": [{"paper_id": "a", "score": score, "reason": "r"}]}

    assert parse(NeighbourScoresReply, item(None)).papers[0].score is None
    assert parse(NeighbourScoresReply, item(3)).papers[0].score == 3
    for bad in (4, -1, 2.5, 2.0, "2", True):
        with pytest.raises(ValidationError):
            parse(NeighbourScoresReply, item(bad))


def test_empty_texts_are_refused() -> None:
    with pytest.raises(ValidationError):
        parse(PlanReply, {"queries": ["ok", "  "]})
    with pytest.raises(ValidationError):
        parse(NeighbourScoresReply, {"papers": [{"paper_id": "a", "score": 1, "reason": ""}]})


def test_plan_needs_the_count_distinct_keyword_queries() -> None:
    reply = parse(PlanReply, {"queries": ["graph neural networks", "Graph Neural Networks"]})
    assert any("appears 2 times" in p for p in check_plan(reply, 2))
    assert any("expected 3" in p for p in check_plan(reply, 3))
    wordy = parse(PlanReply, {"queries": ["what are the best recent methods for learning on "
                                          "graphs with very many nodes in practice"]})
    assert any("more than 12 words" in p for p in check_plan(wordy, 1))


SOURCE = ("We propose “FastGraph”, a sampler for graphs.\nIt cuts training time by 40% "
          "on ogbn-products. Multi-\nagent settings are left open.")


def claims(*phrases: str) -> ClaimsReply:
    return parse(ClaimsReply, {"claims": [
        {"text": f"Claim {i}.", "type": "METHODOLOGICAL", "source_phrase": phrase}
        for i, phrase in enumerate(phrases)]})


def test_source_phrases_must_be_verbatim_up_to_spacing_case_and_quotes() -> None:
    good = claims('We propose "FastGraph", a sampler', "cuts training time by 40%",
                  "40% on OGBN-products.", "Multi-agent settings are left open")
    assert check_claims(good, SOURCE) == []
    bad = claims("We propose FastGraph, a fast sampler", "cuts training time by 40%",
                 "by 40% on ogbn-products", "graphs")
    problems = check_claims(bad, SOURCE)
    assert len(problems) == 2
    assert "claim 1" in problems[0] and "not a verbatim span" in problems[0]
    assert "claim 4: source_phrase must be at least 3 words" in problems[1]


def test_claim_count_and_type_are_checked() -> None:
    three = claims("cuts training time by 40%", "We propose “FastGraph”", "sampler for graphs.")
    assert check_claims(three, SOURCE) == ["claims: expected 4 to 5, got 3"]
    with pytest.raises(ValidationError):
        parse(ClaimsReply, {"claims": [{"text": "t", "type": "RESULT", "source_phrase": "p"}]})


def test_a_repeated_claim_is_refused_with_what_to_write_instead() -> None:
    reply = parse(ClaimsReply, {"claims": [
        {"source_phrase": phrase, "text": "FastGraph cuts training time by 40%.",
         "type": "EMPIRICAL"}
        for phrase in ("cuts training time by 40%", "40% on OGBN-products.",
                       "We propose FastGraph", "Multi-agent settings are left open")]})
    problems = check_claims(reply, SOURCE)
    assert problems[0] == ("claim texts: 'fastgraph cuts training time by 40%.' appears 4 "
                           "times")
    assert problems[1].startswith("write each repeated claim again about a different sentence")

    # Where the distinct claims are enough, dropping the copies is what is asked.
    assert check_claims(reply, SOURCE, min_claims=1)[1] == (
        "keep one copy of each repeated claim and drop the others")

def test_normalise_text() -> None:
    assert normalise_text("  A\u00a0“quoted”\n\ttext — here ") == 'a "quoted" text - here'


def ranked(*rows: tuple[int, str, str]) -> ExpertRankingReply:
    return parse(ExpertRankingReply, {"candidates": [
        {"rank": rank, "paper_id": pid, "expert_reason": "Matches.", "evidence_source": source}
        for rank, pid, source in rows]})


SUPPLIED = {
    "both": SuppliedEvidence(abstract=True, fulltext=True),
    "abs": SuppliedEvidence(abstract=True, fulltext=False),
    "pdf": SuppliedEvidence(abstract=False, fulltext=True),
    "meta": SuppliedEvidence(abstract=False, fulltext=False),
    "abs2": SuppliedEvidence(abstract=True, fulltext=False),
    "abs3": SuppliedEvidence(abstract=True, fulltext=False),
}
VALID = [(1, "both", "abstract_and_fulltext"), (2, "abs", "abstract"), (3, "pdf", "fulltext"),
         (4, "meta", "metadata_only"), (5, "abs2", "abstract")]


def test_a_valid_expert_ranking_passes() -> None:
    assert check_expert_ranking(ranked(*VALID), SUPPLIED) == []


def test_expert_must_return_min_5_and_shortlist_size() -> None:
    assert any("expected 5, got 4" in p for p in check_expert_ranking(ranked(*VALID[:4]), SUPPLIED))
    small = {key: SUPPLIED[key] for key in ("both", "abs", "pdf")}
    assert check_expert_ranking(ranked(*VALID[:3]), small) == []
    assert any("expected 3" in p for p in check_expert_ranking(ranked(*VALID[:2]), small))
    with pytest.raises(ValidationError):  # six is more than any shortlist may get
        ranked(*VALID, (6, "abs3", "abstract"))


def test_expert_ids_must_be_supplied_distinct_and_distinct_works() -> None:
    unknown = ranked(*VALID[:4], (5, "invented", "abstract"))
    assert "paper_id 'invented' is not in the shortlist" in check_expert_ranking(unknown, SUPPLIED)
    repeated = ranked(*VALID[:4], (5, "abs", "abstract"))
    assert "paper_id 'abs' appears 2 times" in check_expert_ranking(repeated, SUPPLIED)
    works = {"abs": "w1", "abs2": "w1"}
    problems = check_expert_ranking(ranked(*VALID), SUPPLIED, works)
    assert problems == ["two candidates are versions of the same work; rank the work once"]


def test_expert_ranks_must_be_consecutive_from_one() -> None:
    gap = ranked(*VALID[:4], (6, "abs2", "abstract"))
    assert any("ranks must be 1..5" in p for p in check_expert_ranking(gap, SUPPLIED))
    swapped = ranked((2, "both", "abstract_and_fulltext"), (1, "abs", "abstract"), *VALID[2:])
    assert any("ranks must be" in p for p in check_expert_ranking(swapped, SUPPLIED))


@pytest.mark.parametrize(
    ("pid", "claimed"),
    [("abs", "fulltext"), ("abs", "abstract_and_fulltext"), ("pdf", "abstract"),
     ("meta", "abstract"), ("both", "abstract"), ("abs", "metadata_only")],
)
def test_expert_evidence_source_must_match_what_was_supplied(pid: str, claimed: str) -> None:
    rows = [(rank, p, claimed if p == pid else source) for rank, p, source in VALID]
    problems = check_expert_ranking(ranked(*rows), SUPPLIED)
    assert problems == [
        f"paper_id {pid!r}: evidence_source must be {allowed_source(SUPPLIED[pid])!r} for what "
        f"was supplied, not {claimed!r}"
    ]


def test_neighbour_scores_cover_exactly_the_supplied_ids() -> None:
    def reply(*ids: str) -> NeighbourScoresReply:
        return parse(NeighbourScoresReply, {"papers": [
            {"paper_id": pid, "score": 1, "reason": "r"} for pid in ids]})

    assert check_neighbour_scores(reply("a", "b"), ["a", "b"]) == []
    assert check_neighbour_scores(reply("a", "x"), ["a", "b"]) == [
        "paper_id 'x' was not supplied", "no entry for supplied paper_id(s) ['b']"]
    assert check_neighbour_scores(reply("a", "a", "b"), ["a", "b"]) == [
        "paper_id 'a' appears 2 times"]


def assessment(**changes: object) -> AbstractAssessmentReply:
    data = {"coverage_level": 2, "covered_facets": ["F1"], "task_similarity": 0.8,
            "method_similarity": 0.3, "notes": "Same task.", "paper_facets": NO_FACETS}
    return parse(AbstractAssessmentReply, {**data, **changes})


def test_assessment_facets_and_null_consistency() -> None:
    labels = ["F1", "F2"]
    assert check_assessment(assessment(), labels) == []
    assert check_assessment(assessment(covered_facets=["F3"]), labels) == [
        "covered_facets: 'F3' is not one of ['F1', 'F2']"]
    unknown = assessment(coverage_level=None, covered_facets=[], task_similarity=None,
                         method_similarity=None)
    assert check_assessment(unknown, labels) == []
    assert check_assessment(assessment(coverage_level=None), labels) != []
    assert check_assessment(assessment(coverage_level=0), labels) == [
        "coverage_level 0 means no overlap: covered_facets must be []"]
    assert check_assessment(assessment(task_similarity=None), labels) == [
        "a graded paper needs task_similarity and method_similarity"]
    with pytest.raises(ValidationError):
        assessment(method_similarity=1.5)


def test_search_queries_follow_the_rules() -> None:
    reply = parse(SearchQueriesReply, {
        "bibliographic": ['"graph sampling" training speed', '"a" "b" c', "sampler 2021"],
        "web": ['fast "graph" sampler', "site:arxiv.org graph sampler"],
    })
    problems = check_search_queries(reply, 5, 5)
    assert "bibliographic query '\"a\" \"b\" c': at most one quoted phrase" in problems
    assert any("no years" in p for p in problems)
    assert any("no quotation marks" in p for p in problems)
    assert any("no site: filters" in p for p in problems)
    assert any("expected 1 to 2" in p for p in check_search_queries(reply, 2, 2))


def test_recalled_papers_identifiers_are_well_formed() -> None:
    def paper(**fields: object) -> dict[str, object]:
        base = {"title": "T", "venue": None, "year": 2020, "doi": None, "arxiv_id": None,
                "url": None}
        return {**base, **fields}

    good = parse(RecalledPapersReply, {"papers": [
        paper(title="A", doi="10.1145/3292500.3330925", arxiv_id="1706.03762v5"),
        paper(title="B", arxiv_id="hep-th/9711200", url="https://example.org/b")]})
    assert check_recalled_papers(good, 5) == []
    bad = parse(RecalledPapersReply, {"papers": [
        paper(title="A", doi="doi:10.1/x", arxiv_id="arXiv 1706"), paper(title="a", url="ftp://x")]})
    problems = check_recalled_papers(bad, 1)
    assert len(problems) == 6  # count, duplicate title and what to do, doi, arxiv id, url
    assert "keep one copy of each repeated paper" in problems[2]
    with pytest.raises(ValidationError):
        parse(RecalledPapersReply, {"papers": [paper(year="2020")]})


def test_refinement_windows_must_be_supplied() -> None:
    reply = parse(RefinedAssessmentReply, {"coverage_level_refined": 1, "role": "irrelevant",
                                           "notes": "n", "supporting_windows": ["w1", "w9"]})
    assert check_refinement(reply, ["w1", "w2"]) == [
        "supporting_windows: 'w9' was not supplied",
        "role irrelevant needs coverage_level_refined 0",
    ]


def test_report_sections_and_citations() -> None:
    reply = parse(ReportReply, {
        "tldr": "t", "cited_paper_ids": ["p1", "p9"],
        "sections": [{"heading": h, "markdown": "m"}
                     for h in ("Landscape", "Adjacent directions", "Most similar work")]})
    problems = check_report(reply, "report_related_work", ["p1", "p2"])
    assert problems == [
        "section headings must be ['Landscape', 'Most similar work', 'Adjacent directions']",
        "cited paper 'p9' was not supplied"]
