"""The steering schemas: narrower than the reply models, never wider, and only a hint to
the server: the reply is still validated by the strict model and the call's check."""

import re
from typing import Any

import pytest

from crase.prompts.replies import (
    REPLY_MODELS,
    ClaimsReply,
    EntailmentReply,
    ExpertRankingReply,
    HighLevelFacets,
    check_claims,
    check_entailment,
)
from crase.prompts.reply_schemas import (
    PLAIN_CHAR,
    STEER_MAX_CHARS,
    UNIT_STEPS,
    assessment_schema,
    claims_schema,
    entailment_schema,
    expert_schema,
    neighbour_schema,
    plan_schema,
    search_queries_schema,
    steering_schema,
)
from crase.search.roles.model import source_spans


def strings(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [s for value in node for s in strings(value)]
    if not isinstance(node, dict):
        return []
    found = [node] if node.get("type") == "string" and "enum" not in node else []
    return found + [s for value in node.values() for s in strings(value)]


@pytest.mark.parametrize("name", sorted(REPLY_MODELS))
def test_every_reply_model_has_a_steering_schema_with_capped_text(name: str) -> None:
    schema = steering_schema(REPLY_MODELS[name])
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    for node in strings(schema):
        low, high = re.fullmatch(rf"\^{re.escape(PLAIN_CHAR)}\{{(\d+),(\d+)\}}\$",
                                 node["pattern"]).groups()  # type: ignore[union-attr]
        assert int(low) <= 1 and 0 < int(high) <= STEER_MAX_CHARS


def test_free_text_holds_no_quote_backslash_or_control_character() -> None:
    plain = re.compile(PLAIN_CHAR)
    assert plain.match("a") and plain.match("é")
    assert not any(plain.match(char) for char in ['"', "\\", "\n", "\t", "\x00"])


def test_unit_scores_and_grades_become_enumerations() -> None:
    matrix = entailment_schema(2, 3)["properties"]["matrix"]
    assert (matrix["minItems"], matrix["maxItems"]) == (2, 2)
    row = matrix["items"]
    assert (row["minItems"], row["maxItems"]) == (3, 3)
    assert row["items"] == {"enum": UNIT_STEPS, "type": "number"}
    assert UNIT_STEPS[0] == 0.0 and UNIT_STEPS[-1] == 1.0 and len(UNIT_STEPS) == 21
    # Every enumerated score is one the strict model accepts, and the check still rules.
    reply = EntailmentReply.model_validate({"matrix": [UNIT_STEPS[:3], UNIT_STEPS[-3:]]})
    assert check_entailment(reply, 2, 3) == []
    grades = [v["properties"]["coverage_level"] for v in assessment_schema(["F1"])["anyOf"]]
    assert grades == [{"enum": [1, 2, 3], "type": "integer"},
                      {"enum": [0], "type": "integer"}, {"type": "null"}]


def test_claims_quote_only_the_papers_sentences() -> None:
    abstract = ("We compute the tachyon potential in level truncation. The potential has a "
                "minimum. It agrees with Sen's conjecture to within one percent.")
    spans = source_spans(["Tachyon condensation in string field theory", abstract])
    assert spans == ["Tachyon condensation in string field theory",
                     "We compute the tachyon potential in level truncation.",
                     "The potential has a minimum.",
                     "It agrees with Sen's conjecture to within one percent."]
    schema = claims_schema(4, 5, spans)
    assert (schema["properties"]["claims"]["minItems"],
            schema["properties"]["claims"]["maxItems"]) == (4, 5)
    item = schema["$defs"]["ClaimItem"]["properties"]
    assert item["source_phrase"]["enum"] == spans
    # The model is steered to quote first and then say what the quote claims.
    assert list(item) == ["source_phrase", "text", "type"]
    # A reply built from those spans passes the verbatim check; the check is unchanged.
    claims = ClaimsReply.model_validate({"claims": [
        {"text": f"Claim {n}.", "type": "EMPIRICAL", "source_phrase": span}
        for n, span in enumerate(spans)]})
    assert check_claims(claims, "\n".join(["Tachyon condensation in string field theory",
                                           abstract])) == []


def test_spans_leave_out_what_a_grammar_literal_cannot_hold() -> None:
    # llama.cpp's schema converter does not escape quotes and backslashes in an enum
    # literal, and the server fails on the grammar: spans are split there instead.
    text = 'We use a ``split" Weyl symmetry here. With $\\Phi$ the adjoint\nfield we go on.'
    spans = source_spans([text])
    assert spans == ["We use a ``split", "Weyl symmetry here.",
                     "Phi$ the adjoint field we go on."]
    assert not any('"' in span or "\\" in span or "\n" in span for span in spans)


def test_long_sentences_are_cut_at_a_word() -> None:
    sentence = "word " * 100 + "end."
    [span] = source_spans([sentence])
    assert len(span) <= 300 and sentence.startswith(span) and not span.endswith(" ")


def test_neighbours_and_expert_positions_name_the_supplied_ids() -> None:
    papers = neighbour_schema(["a", "b"])["properties"]["papers"]
    assert [p["properties"]["paper_id"] for p in papers["prefixItems"]] == [
        {"const": "a"}, {"const": "b"}]
    assert (papers["minItems"], papers["maxItems"], papers["items"]) == (2, 2, False)

    schema = expert_schema([("p1", "abstract"), ("p2", "metadata_only")], 2)
    positions = schema["properties"]["candidates"]["prefixItems"]
    assert len(positions) == 2
    for rank, position in enumerate(positions, start=1):
        choices = [(c["properties"]["rank"]["const"], c["properties"]["paper_id"]["const"],
                    c["properties"]["evidence_source"]["const"]) for c in position["anyOf"]]
        assert choices == [(rank, "p1", "abstract"), (rank, "p2", "metadata_only")]
    assert schema["$defs"]["Reason"]["pattern"] == f"^{PLAIN_CHAR}{{1,{STEER_MAX_CHARS}}}$"
    # The schema's field names are the reply model's own.
    item = positions[0]["anyOf"][0]
    assert set(item["required"]) == set(
        ExpertRankingReply.model_json_schema()["$defs"]["RankedCandidate"]["required"])


def test_plan_asks_for_exactly_the_count() -> None:
    queries = plan_schema(3)["properties"]["queries"]
    assert (queries["minItems"], queries["maxItems"]) == (3, 3)


def test_search_queries_are_bounded_as_the_check_bounds_them() -> None:
    schema = search_queries_schema(2, 3)["properties"]
    assert (schema["bibliographic"]["minItems"], schema["bibliographic"]["maxItems"]) == (1, 2)
    assert (schema["web"]["minItems"], schema["web"]["maxItems"]) == (1, 3)


@pytest.mark.parametrize("query, allowed", [
    ("Whole Word Morphology", True), ("COVID-19 vaccines", True), ("GPT 2", True),
    ("top 100 results", True), ("Ford et al. (1997)", False), ("morphology 2003", False),
    ('"exact phrase" learner', False)])
def test_a_query_cannot_hold_a_year(query: str, allowed: bool) -> None:
    for kind in ("bibliographic", "web"):
        pattern = search_queries_schema(2, 3)["properties"][kind]["items"]["pattern"]
        assert bool(re.fullmatch(pattern, query)) is allowed


def test_covered_facets_without_facets_must_be_empty() -> None:
    for variant in assessment_schema([])["anyOf"]:
        assert variant["properties"]["covered_facets"]["maxItems"] == 0
    graded, zero, ungraded = assessment_schema(["F1", "F2"])["anyOf"]
    labelled = graded["properties"]["covered_facets"]
    assert labelled["items"] == {"enum": ["F1", "F2"], "type": "string"}
    assert zero["properties"]["covered_facets"]["maxItems"] == 0


def test_an_assessment_is_graded_with_both_similarities_or_has_neither() -> None:
    """Qwen2.5-1.5B graded a paper 0 and left both similarities null; the steering schema
    now offers only the shapes check_assessment accepts."""
    graded, zero, ungraded = assessment_schema(["F1"])["anyOf"]
    for variant in (graded, zero):
        for name in ("task_similarity", "method_similarity"):
            assert variant["properties"][name] == {"enum": UNIT_STEPS, "type": "number"}
    for name in ("task_similarity", "method_similarity"):
        assert ungraded["properties"][name] == {"type": "null"}
    assert ungraded["properties"]["covered_facets"]["maxItems"] == 0


def test_problem_facets_need_one_problem_wherever_they_appear() -> None:
    high_level = steering_schema(HighLevelFacets)
    assert high_level["properties"]["problem_facets"]["minItems"] == 1
    nested = assessment_schema(["F1"])["$defs"]["HighLevelFacets"]  # shared by the shapes
    assert nested["properties"]["problem_facets"]["minItems"] == 1
