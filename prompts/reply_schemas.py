"""JSON schemas that steer a server's constrained decoding toward the reply one call needs.

A reply model's own schema (prompts/replies.py) knows the types; one call also knows the
matrix's exact shape, how many items are asked for, which ids were supplied and what text
a source phrase may quote. Where an endpoint asks the server to enforce a schema
(`response_format` json_schema or json_object_schema), the call sends its narrowed schema,
so a small model cannot emit a 3 x 2 matrix for a 2 x 3 edge, an id nobody supplied or a
score of 7. The schema only steers generation: every reply is still validated against the
strict reply model and the call's check, and a wrong one stays a recorded failure.

What a steering schema does beyond the reply model's own:
- free text is capped at STEER_MAX_CHARS (a grammar spells out every allowed length, and a
  model that rambles should close the string rather than run into max_tokens) and holds
  no quote, backslash or control character (PLAIN_CHAR);
- problem_facets name at least one problem, as check_high_level_facets requires;
- a score in [0, 1] is one of UNIT_STEPS (0, 0.05, ..., 1) and a grade one of 0..3, because
  llama.cpp's schema grammar ignores minimum and maximum;
- lists of known size are exact, ids are the supplied ones, one per position where the
  check wants each exactly once, and a source phrase is one of the paper's own sentences.
"""

from collections.abc import Sequence
from copy import deepcopy
from typing import Any

from pydantic import BaseModel

from crase.prompts.replies import (
    AbstractAssessmentReply,
    ClaimsReply,
    EntailmentReply,
    FacetsReply,
    NeighbourScoresReply,
    PlanReply,
    SearchQueriesReply,
)

Schema = dict[str, Any]
STEER_MAX_CHARS = 400
UNIT_STEPS = [round(step * 0.05, 2) for step in range(21)]
SMALL_INT_RANGE = 10  # integer ranges up to this wide become an enum
# A character of free text: no quote, backslash or control character. llama-cpp-python's
# grammar lets a string hold raw newlines, which no JSON parser accepts ("control character
# found while parsing a string": every assess_abstract reply of a first run failed so).
PLAIN_CHAR = r'[^"\\\x00-\x1F]'
# A search query: plain characters, digits in runs of at most three, so no year (a year
# range is applied separately, and check_search_queries refuses one).
QUERY_CHAR = r'[^"\\\x00-\x1F0-9]'
QUERY_WITHOUT_YEAR = rf"^({QUERY_CHAR}|[0-9]{{1,3}}{QUERY_CHAR}){{1,100}}[0-9]{{0,3}}$"



def steering_schema(model: type[BaseModel]) -> Schema:
    """The reply model's schema with long strings capped and bounded numbers enumerated."""
    schema = deepcopy(model.model_json_schema())
    _steer(schema)
    return schema


def plan_schema(count: int) -> Schema:
    schema = steering_schema(PlanReply)
    _exactly(schema["properties"]["queries"], count)
    return schema


def claims_schema(min_claims: int, max_claims: int, phrases: Sequence[str]) -> Schema:
    """min..max claims, each source_phrase one of `phrases` (verbatim spans of the paper)
    when there are any."""
    schema = steering_schema(ClaimsReply)
    schema["properties"]["claims"].update(minItems=min_claims, maxItems=max_claims)
    if phrases:
        item = schema["$defs"]["ClaimItem"]["properties"]
        item["source_phrase"] = {"enum": list(dict.fromkeys(phrases)), "type": "string"}
    return schema


def entailment_schema(n_citing: int, n_cited: int) -> Schema:
    """Exactly n_citing rows of exactly n_cited scores."""
    schema = steering_schema(EntailmentReply)
    rows = schema["properties"]["matrix"]
    _exactly(rows, n_citing)
    _exactly(rows["items"], n_cited)
    return schema


def facets_schema(min_facets: int, max_facets: int) -> Schema:
    schema = steering_schema(FacetsReply)
    schema["properties"]["facets"].update(minItems=min_facets, maxItems=max_facets)
    return schema


def search_queries_schema(max_bibliographic: int, max_web: int) -> Schema:
    """1..max queries of each kind, as check_search_queries wants them, none with a year:
    without the bounds Qwen2.5-1.5B wrote three bibliographic queries where two were asked
    for, and it copied "Ford et al. (1997)" from an idea into a query, also when asked
    again without the year."""
    schema = steering_schema(SearchQueriesReply)
    for kind, most in (("bibliographic", max_bibliographic), ("web", max_web)):
        schema["properties"][kind].update(minItems=1, maxItems=most)
        schema["properties"][kind]["items"]["pattern"] = QUERY_WITHOUT_YEAR
    return schema


def assessment_schema(facet_labels: Sequence[str]) -> Schema:
    """One of three shapes, as check_assessment wants them: a grade 1-3 covering only the
    supplied facet labels, a grade 0 covering none, each with both similarities; or no
    grade (null) with no facets and null similarities. With the similarities merely
    nullable, Qwen2.5-1.5B graded a paper 0 and left both null."""
    schema = steering_schema(AbstractAssessmentReply)
    defs = schema.pop("$defs", {})
    props = schema["properties"]
    unit = next(option for option in props["task_similarity"]["anyOf"]
                if option.get("type") != "null")
    covered = props["covered_facets"]
    if facet_labels:
        covered["items"] = {"enum": list(facet_labels), "type": "string"}
    covered["maxItems"] = len(facet_labels)
    none: Schema = {**covered, "maxItems": 0}
    shapes = [
        ({"enum": [1, 2, 3], "type": "integer"}, covered, unit),
        ({"enum": [0], "type": "integer"}, none, unit),
        ({"type": "null"}, none, {"type": "null"}),
    ]
    variants = []
    for grade, facets, similarity in shapes:
        variant = deepcopy(schema)
        variant["properties"].update(coverage_level=grade, covered_facets=facets,
                                     task_similarity=similarity,
                                     method_similarity=similarity)
        variants.append(variant)
    return {"$defs": defs, "anyOf": variants}


def neighbour_schema(paper_ids: Sequence[str]) -> Schema:
    """One entry per supplied id, in the order supplied."""
    schema = steering_schema(NeighbourScoresReply)
    entry = schema.pop("$defs")["NeighbourScore"]
    positions = [_with_consts(entry, paper_id=pid) for pid in paper_ids]
    schema["properties"]["papers"] = _tuple_of(positions)
    return schema


def expert_schema(supplied: Sequence[tuple[str, str]], count: int) -> Schema:
    """Ranks 1..count in order; at each rank one shortlisted (paper_id, evidence_source)
    pair, the source being the one its supplied material allows."""
    reason = {"type": "string", "pattern": f"^{PLAIN_CHAR}{{1,{STEER_MAX_CHARS}}}$"}
    fields = ["rank", "paper_id", "expert_reason", "evidence_source"]

    def at(rank: int) -> Schema:
        return {"anyOf": [
            {"type": "object", "additionalProperties": False, "required": fields,
             "properties": {"rank": {"const": rank}, "paper_id": {"const": pid},
                            "expert_reason": {"$ref": "#/$defs/Reason"},
                            "evidence_source": {"const": source}}}
            for pid, source in supplied
        ]}

    return {
        "type": "object", "additionalProperties": False, "required": ["candidates"],
        "properties": {"candidates": _tuple_of([at(rank) for rank in range(1, count + 1)])},
        "$defs": {"Reason": reason},
    }


def _exactly(array: Schema, count: int) -> None:
    array["minItems"] = array["maxItems"] = count


def _tuple_of(positions: list[Schema]) -> Schema:
    return {"type": "array", "prefixItems": positions, "items": False,
            "minItems": len(positions), "maxItems": len(positions)}


def _with_consts(entry: Schema, **values: str) -> Schema:
    fixed = deepcopy(entry)
    for name, value in values.items():
        fixed["properties"][name] = {"const": value}
    return fixed


def _steer(node: Any) -> None:
    if isinstance(node, list):
        for value in node:
            _steer(value)
        return
    if not isinstance(node, dict):
        return
    kind, low, high = node.get("type"), node.get("minimum"), node.get("maximum")
    if kind == "string" and "enum" not in node:
        longest = min(node.pop("maxLength", STEER_MAX_CHARS), STEER_MAX_CHARS)
        node["pattern"] = f"^{PLAIN_CHAR}{{{node.pop('minLength', 0)},{longest}}}$"
    elif kind == "number" and (low, high) == (0.0, 1.0):
        node.clear()
        node.update(enum=UNIT_STEPS, type="number")
    elif kind == "integer" and low is not None and high is not None \
            and high - low <= SMALL_INT_RANGE:
        node.clear()
        node.update(enum=list(range(low, high + 1)), type="integer")
    if "problem_facets" in node.get("properties", {}):
        node["properties"]["problem_facets"]["minItems"] = 1  # check_high_level_facets
    for value in list(node.values()):
        _steer(value)
