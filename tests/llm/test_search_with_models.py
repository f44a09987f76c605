"""`crase search` with model endpoints configured: the pipeline uses the model roles and the
Run records which model and prompt version served each role, and the tokens they spent.
The endpoints are the scripted local server, answering like a cooperative model."""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from crase.graph import Graph
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends, describe_backends
from crase.settings import ModelEndpoint, ModelSettings, SearchSettings, Settings
from tests.llm.chat_server import Action, ChatServer, Reply
from tests.sample_slice import load_sample_slice

pytestmark = pytest.mark.integration



def data_blocks(text: str) -> list[Any]:
    return [json.loads(part.split("</untrusted_data>")[0])
            for part in text.split("<untrusted_data>")[1:]]


def cooperative_model(request: dict[str, Any]) -> Action:
    system, user = (message["content"] for message in request["messages"][:2])
    blocks = data_blocks(user)
    if system.startswith("You write research plans"):
        count = int(re.search(r"exactly (\d+) sub-queries", system).group(1))  # type: ignore[union-attr]
        words = [w for w in re.findall(r"[A-Za-z]{4,}", blocks[0])][: count + 1]
        queries = [" ".join(words[i : i + 2]) for i in range(count)]
        return Reply(json.dumps({"queries": queries}), prompt_tokens=200, completion_tokens=30)
    if system.startswith("You represent a scientific paper"):
        words = blocks[0]["abstract"].split()
        spans = [" ".join(words[i : i + 5]) for i in range(0, 20, 5)]
        claims = [{"text": f"The paper states: {span}.", "type": "EMPIRICAL",
                   "source_phrase": span} for span in spans]
        return Reply(json.dumps({"claims": claims}), prompt_tokens=600, completion_tokens=150)
    citing, cited = blocks
    matrix = [[0.9 if i == j else 0.1 for j in range(len(cited))] for i in range(len(citing))]
    return Reply(json.dumps({"matrix": matrix}), prompt_tokens=300, completion_tokens=40)


def load_slice(graph: Graph, papers: int = 150) -> list[dict[str, Any]]:
    return load_sample_slice(graph, papers, min_abstract_words=20)


def test_search_uses_the_model_roles_and_records_them(graph: Graph, tmp_path: Path) -> None:
    with ChatServer(cooperative_model).running() as server:
        large = ModelEndpoint(base_url=server.base_url, model="test/large-32b",
                              usd_per_1k_prompt=0.1)
        small = ModelEndpoint(base_url=server.base_url, model="test/small-3b")
        settings = Settings(models=ModelSettings(
            planner=large, claims=large, entailment=small, cache_dir=tmp_path / "cache"))
        backends = build_search_backends(settings)
        assert describe_backends(backends) == "model endpoints for every role"

        rows = load_slice(graph)
        # Every model role at work: a plan, claims and Delta (the paper's pipeline).
        params = SearchSettings(k=10, sub_queries=5, weighting="coverage")
        request = SearchRequest(query=rows[0]["title"], params=params)
        result = run_search(graph, backends, request)
        first_requests = len(server.requests)
        again = run_search(graph, backends, request)

    assert result.backends == {
        "planner": "model:test/large-32b:plan_queries@2",
        "claims": "model:test/large-32b:extract_claims@3",
        "entailment": "model:test/small-3b:score_entailment@2",
    }
    assert result.results and result.counts["edges_scored_now"] > 0
    usage = result.usage
    assert usage["claims"]["prompt_tokens"] > 0 and usage["claims"]["models"] == ["test/large-32b"]
    assert usage["entailment"]["failed"] == 0
    assert usage["entailment"]["prompt_tokens"] == 300 * usage["entailment"]["made"]
    with graph.driver.session() as session:
        run = session.run("MATCH (r:Run {id: $id}) RETURN r", id=result.run_id
                          ).single(strict=True)["r"]
        extractors = session.run("MATCH (c:Claim) RETURN collect(DISTINCT c.extractor) AS x"
                                 ).single(strict=True)["x"]
    assert json.loads(run["backends"])["planner"].endswith("plan_queries@2")
    recorded = json.loads(run["usage"])
    assert recorded["planner"]["prompt_tokens"] == 200
    assert recorded["claims"]["cost_usd"] > 0
    assert extractors == ["model:test/large-32b:extract_claims@3"]
    # warm: the plan is cached, claims and edge scores are stored; nothing new is asked
    assert len(server.requests) == first_requests
    assert again.counts["edges_scored_now"] == 0
    assert again.usage["planner"]["made"] == 0
