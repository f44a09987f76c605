"""The benchmark landscape: the rules on sentences written here, exact counts on a small
corpus the test builds, consistency on the committed hep-th sample, the model path through a
local OpenAI-compatible server, and the route."""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from crase.api.cli import main
from crase.graph import Graph
from crase.research.landscape import (
    LABEL,
    LandscapeRequest,
    find_datasets,
    find_method_families,
    find_metrics,
    fold,
    map_landscape,
)
from crase.scoring.tex import plain_text
from crase.settings import ModelEndpoint, ModelSettings, Settings
from tests.llm.chat_server import ChatServer, Reply
from tests.research.test_citation_gaps import client_for
from tests.sample_slice import create_papers, load_sample_slice

pytestmark = pytest.mark.integration

VISION = [
    {"id": "v1", "title": "Deep residual networks for image classification", "year": 2016,
     "authors": ["A. One"], "abstract": "We train a convolutional neural network on the "
     "ImageNet dataset and report top-1 accuracy. The error rate drops on CIFAR-10."},
    {"id": "v2", "title": "Image classification with attention", "year": 2020,
     "authors": ["B. Two"], "abstract": "A transformer model for image classification "
     "reaches a higher top-1 accuracy on ImageNet than convolutional neural networks."},
    {"id": "v3", "title": "Data augmentation for image classification", "year": 2019,
     "authors": ["C. Three"], "abstract": "Augmentation lowers the error rate of image "
     "classification on the CIFAR-10 benchmark and on ImageNet."},
    {"id": "v4", "title": "Gauge theory on a circle", "year": 1999, "authors": ["D. Four"],
     "abstract": "We study a matrix model of the gauge theory."},
]


def test_the_rules_find_names_and_fold_them() -> None:
    text = ("We train on the ImageNet dataset and the CIFAR-10 benchmark with a convolutional "
            "neural network; the top-1 accuracy and the error rate improve over our model.")
    assert find_datasets(text) == ["imagenet", "cifar-10"]
    assert find_metrics(text) == ["top-1 accuracy", "error rate"]
    assert "convolutional neural network" in find_method_families(text)
    assert not [name for name in find_method_families(text) if "model" in name]
    assert fold("The Matrix Models") == "matrix model" and fold("this model") == ""
    assert fold("string field theories") == "string field theory"


def test_counts_and_papers_on_a_corpus_built_here(graph: Graph) -> None:
    create_papers(graph, VISION, [])
    result = map_landscape(graph, None, LandscapeRequest(topic="image classification",
                                                         limit=10))
    assert {p.paper_id for p in result.papers} == {"v1", "v2", "v3"}
    datasets = {e.name: sorted(e.paper_ids) for e in result.datasets}
    assert datasets == {"imagenet": ["v1", "v2", "v3"], "cifar-10": ["v1", "v3"]}
    metrics = {e.name: sorted(e.paper_ids) for e in result.metrics}
    assert metrics["top-1 accuracy"] == ["v1", "v2"] and metrics["error rate"] == ["v1", "v3"]
    families = {e.name: sorted(e.paper_ids) for e in result.method_families}
    assert families["convolutional neural network"] == ["v1", "v2"]
    assert families["transformer"] == families["transformer model"] == ["v2"]
    assert [e.papers for e in result.datasets] == [3, 2]  # most papers first
    assert result.label == LABEL and "Preliminary exploration" in result.label
    assert result.extraction.startswith("rules")
    with graph.driver.session() as session:
        run = session.run("MATCH (r:Run {id: $id}) RETURN r.kind AS kind, r.status AS s, "
                          "r.report AS report", id=result.run_id).single()
    assert (run["kind"], run["s"]) == ("landscape", "done")
    assert json.loads(run["report"])["datasets"][0]["name"] == "imagenet"


def test_on_the_sample_every_count_is_the_papers_that_name_it(graph: Graph) -> None:
    rows = {r["id"]: r for r in load_sample_slice(graph, 3000)}
    result = map_landscape(graph, None, LandscapeRequest(
        topic="tachyon condensation string field theory", limit=40))
    assert result.counts["candidates"] == 40
    ids = {p.paper_id for p in result.papers}
    for kind in ("datasets", "metrics", "method_families"):
        for entry in getattr(result, kind):
            assert entry.papers == len(entry.paper_ids) == len(set(entry.paper_ids))
            assert set(entry.paper_ids) <= ids
    named = {e.name: set(e.paper_ids) for e in result.method_families}
    pattern = re.compile(r"(?<!\w)string field theor(y|ies)\b", re.IGNORECASE)
    expected = {pid for pid in ids
                if pattern.search(plain_text(f"{rows[pid]['title']}. {rows[pid]['abstract']}"))}
    assert expected and named["string field theory"] == expected


def test_the_model_path_reads_each_abstract_with_the_structural_prompt(graph: Graph) -> None:
    create_papers(graph, VISION, [])

    def features(request: dict[str, Any]) -> Reply:
        text = request["messages"][1]["content"]
        datasets = ["ImageNet"] if "ImageNet" in text else []
        return Reply(json.dumps({"datasets": datasets, "metrics": ["Top-1 accuracy"],
                                 "method_families": ["Vision models"]}))

    with ChatServer(features).running() as server:
        models = ModelSettings(planner=ModelEndpoint(base_url=server.base_url, model="reader"),
                               cache_enabled=False)
        result = map_landscape(graph, None, LandscapeRequest(topic="image classification"),
                               models)
    assert len(server.requests) == 3
    assert {p.source for p in result.papers} == {"model"}
    assert [(e.name, e.papers) for e in result.datasets] == [("imagenet", 3)]
    assert [(e.name, e.papers) for e in result.method_families] == [("vision model", 3)]
    assert result.backends["extraction"] == "model:reader"


def test_the_route_answers_and_refuses_a_topic_without_words(graph: Graph,
                                                              settings: Settings) -> None:
    create_papers(graph, VISION, [])
    with client_for(settings, graph) as client:
        response = client.post("/landscape", json={"topic": "image classification"})
        assert response.status_code == 200, response.text
        first = response.json()["datasets"][0]
        assert (first["name"], first["papers"], sorted(first["paper_ids"])) == (
            "imagenet", 3, ["v1", "v2", "v3"])
        refused = client.post("/landscape", json={"topic": "!!!"})
        assert refused.status_code == 422 and "no word to search for" in refused.text
        assert client.post("/landscape", json={"topic": "x", "limit": 0}).status_code == 400


def test_the_command_prints_the_label_and_the_counts(
        graph: Graph, cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    create_papers(graph, VISION, [])
    assert main(["landscape", "image classification", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "Preliminary exploration" in out and "extraction: rules" in out
    assert "  imagenet: 3 papers (" in out and "  cifar-10: 2 papers (" in out
    assert main(["landscape", "image classification", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["candidates"] == 3
    assert main(["landscape", "!!!"]) == 2
    assert "no word to search for" in capsys.readouterr().err
