"""The model roles against a real language model: llama.cpp's OpenAI-compatible server with
the packaged SmolLM2-135M-Instruct, started by the project's own launcher and asked through
the project's own client (plan, claims, entailment, expert).

A 135M model is a plumbing check: these tests do not grade its answers. They hold what a
real model must not break: the launcher starts once and stops by pid; every call either
passes the full validation or ends as a recorded `invalid_reply` failure with the rejected
text (never a transport or protocol error, never a guessed value); the server's token
usage is counted per role; the steering schema gives the shapes it can fix; and a repeated
call is answered from the cache without a request. Time-bounded: a handful of calls.
"""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crase.errors import ModelReplyInvalid
from crase.idea.roles.model_calls import IdeaFacets, IdeaPaper, ShortlistEntry, rank_shortlist
from crase.models.chat import ModelFailure, ModelReply, ModelRunner, Outcome
from crase.models.local_server import (
    LocalModelServer,
    extra_installed,
    local_endpoint,
    packaged_model_path,
)
from crase.models.reply_cache import ReplyCache
from crase.prompts.replies import check_expert_ranking
from crase.scoring.claims import Claim, PaperText
from crase.search.roles.model import (
    ModelClaimExtractor,
    ModelEntailmentScorer,
    ModelPlanner,
    entailment_call,
)
from crase.settings import LocalModelSettings, ModelEndpoint, Settings
from crase.usage import ModelLedger
from tests.conftest import free_port

pytestmark = pytest.mark.skipif(
    not extra_installed() or packaged_model_path() is None,
    reason="the local-llm extra is not installed (make local-llm: llama-cpp-python[server] "
           "and the packaged SmolLM2-135M-Instruct)",
)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "papers.jsonl"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModelServer]:
    settings = Settings(var_dir=tmp_path_factory.mktemp("local-model"),
                        local_model=LocalModelSettings(port=free_port(), context_tokens=4096,
                                                       request_timeout_s=300))
    launcher = LocalModelServer(settings)
    launcher.start()
    try:
        yield launcher
    finally:
        launcher.stop()


@pytest.fixture
def endpoint(server: LocalModelServer) -> ModelEndpoint:
    return local_endpoint(server.local)


@pytest.fixture
def runner(tmp_path: Path) -> ModelRunner:
    return ModelRunner(ModelLedger(), ReplyCache(tmp_path / "cache"))


def sample_papers(count: int) -> list[dict[str, Any]]:
    papers = []
    with SAMPLE.open(encoding="utf-8") as handle:
        for line in handle:
            paper = json.loads(line)
            if 40 <= len((paper.get("abstract") or "").split()) <= 120:
                papers.append(paper)
            if len(papers) == count:
                return papers
    raise AssertionError("the sample has too few papers with a short abstract")


def assert_validated_or_recorded(outcome: Outcome) -> None:
    """A real reply either passed every check or is an invalid_reply failure on record."""
    if isinstance(outcome, ModelFailure):
        assert outcome.kind == "invalid_reply", outcome
        assert outcome.last_reply and outcome.detail
        assert outcome.usage.failed == 1 and outcome.usage.requests == 2  # asked, repaired
    else:
        assert isinstance(outcome, ModelReply) and not outcome.cached


def assert_real_usage(runner: ModelRunner, stage: str, model: str) -> None:
    usage = runner.ledger.stage(stage)
    assert usage.made == usage.calls >= 1
    assert usage.prompt_tokens > 100 and usage.completion_tokens > 0
    assert usage.usage_missing == 0 and usage.models == {model}


def test_the_launcher_starts_once_and_stops_by_its_pid(server: LocalModelServer) -> None:
    state = server.status()
    assert state.running and state.pid is not None
    assert server.start().pid == state.pid  # a second start reports the running one
    assert server.pid_file.read_text().strip() == str(state.pid)
    assert server.log_file.stat().st_size > 0
    assert state.base_url == server.base_url and state.model == server.local.model_name


def test_claims_through_the_client(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    paper = sample_papers(1)[0]
    extractor = ModelClaimExtractor(endpoint, runner)
    text = PaperText(paper["id"], paper["title"], paper["abstract"], "")
    claims = extractor.extract([text])
    usage = runner.ledger.stage("claims")
    if paper["id"] in claims:
        source = f"{paper['title']}\n{paper['abstract']}"
        # The steering schema offers only the paper's own sentences as source phrases.
        assert all(claim.source_phrase in source for claim in claims[paper["id"]])
        assert 4 <= len(claims[paper["id"]]) <= 5
    else:
        [failure] = runner.ledger.to_dict()["failures"]
        assert failure["kind"] == "invalid_reply" and failure["last_reply"]
    assert_real_usage(runner, "claims", endpoint.model)
    # Asked again: a valid reply comes from the cache without a request.
    extractor.extract([text])
    again = runner.ledger.stage("claims").since(usage)
    assert again.calls == 1 and (again.requests == 0) == (paper["id"] in claims)


def test_entailment_matrix_has_the_edge_shape(endpoint: ModelEndpoint,
                                             runner: ModelRunner) -> None:
    citing = [Claim("The paper computes the tachyon potential in string field theory.",
                    "EMPIRICAL", "computes the tachyon potential"),
              Claim("The paper shows that D-branes decay into closed strings.", "THEORETICAL",
                    "D-branes decay into closed strings")]
    cited = [Claim("Level truncation gives the tachyon potential of open string field "
                   "theory.", "METHODOLOGICAL", "level truncation gives"),
             Claim("The method is tested on lattice gauge theory.", "EMPIRICAL",
                   "tested on lattice gauge theory"),
             Claim("Unstable D-branes are described by a tachyon field.", "THEORETICAL",
                   "described by a tachyon field")]
    scorer = ModelEntailmentScorer(endpoint, runner)
    [matrix] = scorer.score([(citing, cited)], ["u->v"])
    outcome_usage = runner.ledger.stage("entailment")
    assert outcome_usage.failed + (matrix is not None) == 1
    if matrix is not None:
        assert matrix.shape == (2, 3) and ((matrix >= 0) & (matrix <= 1)).all()
    # The schema sent to the server fixes the edge's shape; the check still decides.
    rows = entailment_call(scorer.prompt, citing, cited, "u->v").reply_schema()
    rows = rows["properties"]["matrix"]
    assert (rows["minItems"], rows["maxItems"], rows["items"]["maxItems"]) == (2, 2, 3)
    assert_real_usage(runner, "entailment", endpoint.model)


def test_plan_through_the_client(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    planner = ModelPlanner(endpoint, runner)
    try:
        queries = planner.plan("tachyon condensation on unstable D-branes", 3)
    except ModelReplyInvalid:  # a reply that is wrong stays a recorded failure
        assert runner.ledger.stage("plan").failed == 1
    else:
        assert len(queries) == 3
    assert_real_usage(runner, "plan", endpoint.model)


def test_expert_ranks_only_the_shortlist(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    papers = sample_papers(3)
    shortlist = [ShortlistEntry(IdeaPaper(p["id"], p["title"], p["abstract"], p.get("year")),
                                work_id=p["id"], pdf_status="not_attempted") for p in papers]
    outcome = rank_shortlist(runner, endpoint, "Quantum properties of two-dimensional gravity "
                             "models and their black hole solutions",
                             IdeaFacets(["2d dilaton gravity", "quantum renormalisability"]),
                             shortlist)
    assert_validated_or_recorded(outcome)
    if isinstance(outcome, ModelReply):
        supplied = {entry.paper.id: entry.supplied for entry in shortlist}
        assert check_expert_ranking(outcome.value, supplied) == []
        assert [item.rank for item in outcome.value.candidates] == [1, 2, 3]
    assert_real_usage(runner, "idea.expert", endpoint.model)
