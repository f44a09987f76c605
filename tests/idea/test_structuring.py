"""Idea structuring: the idea verbatim, 3-7 facets, structural and high-level facets,
queries; offline keyphrases, and the planner endpoint with a recorded fallback."""

import json
from typing import Any

from crase.idea.roles.model import ModelStructurer
from crase.idea.roles.offline_structure import choose_facets, structure_offline
from crase.idea.terms import keyphrases, stem
from crase.models.chat import ModelRunner
from crase.paper_identity import normalise_title
from crase.settings import IdeaSettings, ModelEndpoint
from tests.llm.chat_server import ChatServer, Reply

IDEA = ("Could we infer a neighbourhood's fuzzy edges from residents' contributed locations "
        "using kernel density estimation on the OpenStreetMap dataset, rather than force a "
        "single official boundary, and evaluate with accuracy against survey maps?")


def test_offline_structure_keeps_the_idea_and_gives_three_to_seven_facets() -> None:
    structure = structure_offline(IDEA, IdeaSettings())
    assert structure.idea == IDEA
    assert 3 <= len(structure.facets) <= 7
    assert structure.facet_labels == [f"F{n}" for n in range(1, len(structure.facets) + 1)]
    assert structure.structural["metrics"] == ["accuracy"]
    assert structure.structural["method_families"] == ["kernel"]
    assert "OpenStreetMap" in structure.structural["datasets"]
    assert structure.high_level["problem_facets"]
    assert any("kernel density estimation" in m for m in structure.high_level["mechanism_facets"])
    assert 1 <= len(structure.queries) <= 8
    assert all(source.startswith("offline-keyphrases") for source in structure.sources.values())
    assert set(structure.idea_terms()) >= {"fuzzy", "kernel", "boundary"}


def test_a_short_idea_still_gets_three_facets_when_it_has_three_words() -> None:
    assert len(choose_facets("graph coloring heuristics", 3, 7)) == 3
    assert choose_facets("graphs", 3, 7) == ["graphs"]  # cannot invent more than it says


def test_keyphrases_and_stems() -> None:
    assert keyphrases("fast graph coloring for sparse graphs")[0] == "fast graph coloring"
    assert stem("networks") == "network" and stem("learning") == "learn"
    assert normalise_title("Deep  Sets!") == "deep sets"


def planner_server(features_ok: bool) -> ChatServer:
    def respond(body: dict[str, Any]) -> Reply:
        system = body["messages"][0]["content"]
        if "technical facets" in system:
            return Reply(json.dumps({"facets": ["fuzzy neighbourhood boundaries",
                                                "contributed locations", "density estimate"]}))
        if "structural features" in system:
            return Reply(json.dumps({"datasets": ["OpenStreetMap"], "metrics": [],
                                     "method_families": ["kernel density estimation"]})
                         if features_ok else "not json")
        if "higher level" in system:
            return Reply(json.dumps({"problem_facets": ["vague regions"],
                                     "setting_facets": [], "mechanism_facets": [],
                                     "assumption_facets": []}))
        return Reply(json.dumps({"bibliographic": ["vague neighbourhood boundaries"],
                                 "web": ["fuzzy neighbourhood map"]}))

    return ChatServer(respond)


def test_the_planner_endpoint_writes_each_part_and_a_failure_falls_back_on_record() -> None:
    server = planner_server(features_ok=False)
    with server.running():
        endpoint = ModelEndpoint(base_url=server.base_url, model="test/planner",
                                 max_retries=0, timeout_s=5)
        structure = ModelStructurer(endpoint).structure(ModelRunner(), IDEA, IdeaSettings())
    assert structure.idea == IDEA
    assert structure.facets[0] == "fuzzy neighbourhood boundaries"
    assert structure.sources["facets"] == "model:test/planner:idea_facets@1"
    assert structure.queries == ["vague neighbourhood boundaries"]
    assert structure.web_queries == ["fuzzy neighbourhood map"]
    assert structure.sources["structural"].startswith("offline-keyphrases (after invalid_reply")
    assert structure.structural["metrics"] == ["accuracy"]  # the offline part, named as such
    assert [f["part"] for f in structure.failures] == ["structural"]
