"""Abstract assessment: grades with facets and similarities; a missing abstract, an
'insufficient evidence' reply and a failed reply stay unassessed, never zero."""

import json
from typing import Any

import numpy as np

from crase.idea.roles.model import ModelAssessor
from crase.idea.roles.offline_assessor import OfflineAssessor, grade
from crase.models.chat import ModelRunner
from crase.settings import ModelEndpoint
from tests.idea.builders import record, structure
from tests.llm.chat_server import ChatServer, Reply

FACETS: dict[str, list[str]] = {"problem_facets": [], "setting_facets": [], "mechanism_facets": [],
          "assumption_facets": []}


def respond(body: dict[str, Any]) -> Reply:
    paper = body["messages"][1]["content"]
    if '"paper_id": "good"' in paper:
        return Reply(json.dumps({"coverage_level": 2, "covered_facets": ["F1"],
                                 "task_similarity": 0.8, "method_similarity": 0.4,
                                 "notes": "Same task.", "paper_facets": FACETS}))
    if '"paper_id": "null"' in paper:
        return Reply(json.dumps({"coverage_level": None, "covered_facets": [],
                                 "task_similarity": None, "method_similarity": None,
                                 "notes": "Too thin to tell.", "paper_facets": FACETS}))
    # an invented facet label, twice: the reply never passes validation
    return Reply(json.dumps({"coverage_level": 0, "covered_facets": ["F9"],
                             "task_similarity": 0.0, "method_similarity": 0.0,
                             "notes": "No.", "paper_facets": FACETS}))


def test_model_assessments_and_their_unassessed_states() -> None:
    server = ChatServer(respond)
    papers = [record("good"), record("null"), record("bad"), record("empty", abstract="")]
    with server.running():
        endpoint = ModelEndpoint(base_url=server.base_url, model="test/assessor",
                                 max_retries=0, timeout_s=5)
        results = ModelAssessor(endpoint).assess(ModelRunner(), structure(), papers)
    good, null, bad, empty = results
    assert (good.status, good.score, good.covered_facets) == ("assessed", 2, ["F1"])
    assert good.assessor == "model:test/assessor:assess_abstract@2"
    assert (null.status, null.score) == ("insufficient", None)
    assert (bad.status, bad.score) == ("failed", None) and bad.failure is not None
    assert "F9" in bad.note
    assert (empty.status, empty.score) == ("no_abstract", None)
    assert len(server.requests) == 4  # good, null, bad + its repair; nothing for 'empty'


class ScriptedEncoder:
    """Unit vectors whose cosine with the idea (the first text) is given per paper title."""

    name = "scripted"

    def __init__(self, cosines: dict[str, float]) -> None:
        self.cosines = cosines

    def encode(self, texts: list[str]) -> Any:
        rows = [np.array([1.0, 0.0], dtype=np.float32)]
        for text in texts[1:]:
            c = self.cosines[text.split(".")[0]]
            rows.append(np.array([c, (1 - c * c) ** 0.5], dtype=np.float32))
        return np.vstack(rows)


def test_offline_grades_follow_the_documented_thresholds() -> None:
    assert [grade(0.6, 0.5), grade(0.6, 0.2), grade(0.4, 0.5), grade(0.3, 0.0),
            grade(0.1, 0.3), grade(0.1, 0.0)] == [3, 2, 2, 1, 1, 0]
    encoder = ScriptedEncoder({"A": 0.7, "B": 0.1})
    papers = [record("a", "A", "graph neural networks for few-shot image classification"),
              record("b", "B", "rainfall records"), record("c", "C", "")]
    a, b, c = OfflineAssessor(encoder).assess(ModelRunner(), structure(), papers)
    assert (a.status, a.score, a.covered_facets) == ("assessed", 3, ["F1", "F2", "F3"])
    assert a.task_similarity == 0.7 and a.assessor == "offline-minilm-coverage@1"
    assert (b.score, b.covered_facets) == (0, [])
    assert (c.status, c.score) == ("no_abstract", None)
