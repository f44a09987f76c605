"""Every prompt of both workflows against a real model: llama.cpp's OpenAI-compatible server
with the packaged Qwen2.5-Coder-1.5B-Instruct, started by the project's own launcher and
asked through the project's own client.

Each test asks one prompt once (plan, claims, entailment, the idea's facets, structural
features, high-level facets, queries, recall, abstract assessment, neighbour scoring,
expert ranking, full-text refinement, the related-work report) and holds what a real model
must not break: the reply passed every check of the reply model and the call, or it is a
recorded `invalid_reply` failure with the rejected text (never a transport error, never a
guessed value); the server's tokens are counted per role; shapes fixed by the steering
schema hold (the matrix is n x m, expert ranks are 1..n of the shortlist). The prompts the
1.5B answers validly on these inputs are held to validity (docs/local-model.md has the
per-prompt rates), so a prompt change that breaks them fails here.
"""

import json
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from crase.errors import ModelReplyInvalid
from crase.idea.roles.model_calls import (
    EvidenceWindow,
    IdeaFacets,
    IdeaPaper,
    NeighbourRequest,
    ShortlistEntry,
    assess_abstracts,
    derive_facets,
    derive_high_level_facets,
    extract_structural_features,
    generate_search_queries,
    rank_shortlist,
    recall_papers,
    refine_with_fulltext,
    score_neighbours,
    write_report,
)
from crase.models.chat import ModelFailure, ModelReply, ModelRunner, Outcome
from crase.models.local_server import LocalModelServer, extra_installed, local_endpoint
from crase.models.packaged_models import MODELS
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

MODEL = MODELS["qwen2.5-coder-1.5b"]


def model_installed() -> bool:
    try:
        return all(metadata.distribution(name) for name in MODEL.distributions)
    except metadata.PackageNotFoundError:
        return False


pytestmark = [
    pytest.mark.skipif(
        not extra_installed() or not model_installed(),
        reason="the local-llm extra is not installed (make local-llm: llama-cpp-python[server] "
               "and the packaged Qwen2.5-Coder-1.5B-Instruct)"),
    pytest.mark.slow,
]

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "papers.jsonl"
IDEA = ("Tachyon condensation on unstable D-branes computed in open string field theory by "
        "level truncation, and the decay of the brane into closed strings.")
FACETS = IdeaFacets(["tachyon potential of unstable D-branes",
                     "level truncation in open string field theory",
                     "closed strings left after brane decay"])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModelServer]:
    # The joined model file lives with the checkout's local state (`make local-llm` joined
    # it there); the server's pid file and log are the test's own.
    models_dir = Settings().var_dir / "local-model" / "models"
    settings = Settings(var_dir=tmp_path_factory.mktemp("local-model"),
                        local_model=LocalModelSettings(port=free_port(), context_tokens=8192,
                                                       request_timeout_s=600,
                                                       models_dir=models_dir))
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


def sample_papers(count: int, words: tuple[int, int] = (40, 120)) -> list[dict[str, Any]]:
    papers = []
    with SAMPLE.open(encoding="utf-8") as handle:
        for line in handle:
            paper = json.loads(line)
            if words[0] <= len((paper.get("abstract") or "").split()) <= words[1]:
                papers.append(paper)
            if len(papers) == count:
                return papers
    raise AssertionError("the sample has too few papers with a short abstract")


def idea_papers(count: int) -> list[IdeaPaper]:
    return [IdeaPaper(p["id"], p["title"], p["abstract"], p.get("year"))
            for p in sample_papers(count)]


def assert_valid(outcome: Outcome) -> Any:
    """The reply passed every check (first time or after the one repair request)."""
    assert isinstance(outcome, ModelReply), outcome
    assert not outcome.cached
    return outcome.value


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


def test_the_launcher_serves_the_checked_model_once(server: LocalModelServer) -> None:
    state = server.status()
    assert state.running and state.pid is not None
    assert server.start().pid == state.pid  # a second start reports the running one
    assert server.pid_file.read_text().strip() == str(state.pid)
    assert state.model == MODEL.served_as
    joined = server.model_path()
    assert json.loads(joined.with_name(joined.name + ".check.json").read_text())[
        "header"]["general.size_label"] == "1.5B"


# --- evidence-graph search --------------------------------------------------------------


def test_plan(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    planner = ModelPlanner(endpoint, runner)
    try:
        queries = planner.plan("tachyon condensation on unstable D-branes", 3)
    except ModelReplyInvalid as error:
        pytest.fail(f"the plan stayed invalid after the repair request: {error}")
    assert len(queries) == 3 and len(set(queries)) == 3
    assert_real_usage(runner, "plan", endpoint.model)


def test_claims_are_typed_and_quote_the_paper(endpoint: ModelEndpoint,
                                              runner: ModelRunner) -> None:
    paper = sample_papers(1)[0]
    extractor = ModelClaimExtractor(endpoint, runner)
    text = PaperText(paper["id"], paper["title"], paper["abstract"], "")
    claims = extractor.extract([text])
    usage = runner.ledger.stage("claims")
    if paper["id"] in claims:
        source = f"{paper['title']}\n{paper['abstract']}"
        # The steering schema offers only the paper's own sentences as source phrases.
        assert all(" ".join(claim.source_phrase.split()) in " ".join(source.split())
                   for claim in claims[paper["id"]])
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
    assert matrix is not None, runner.ledger.to_dict()["failures"]
    assert matrix.shape == (2, 3) and ((matrix >= 0) & (matrix <= 1)).all()
    # The claim about level truncation grounds the citing tachyon-potential claim better
    # than the unrelated lattice claim does.
    assert matrix[0, 0] > matrix[0, 1]
    rows = entailment_call(scorer.prompt, citing, cited, "u->v").reply_schema()
    rows = rows["properties"]["matrix"]
    assert (rows["minItems"], rows["maxItems"], rows["items"]["maxItems"]) == (2, 2, 3)
    assert_real_usage(runner, "entailment", endpoint.model)


# --- idea to prior work -----------------------------------------------------------------


def test_idea_facets(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    reply = assert_valid(derive_facets(runner, endpoint, IDEA, 3, 5))
    assert 3 <= len(reply.facets) <= 5
    assert_real_usage(runner, "idea.facets", endpoint.model)


def test_idea_structural_features(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    assert_valid(extract_structural_features(runner, endpoint, IDEA))
    assert_real_usage(runner, "idea.features", endpoint.model)


def test_idea_high_level_facets(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    assert_valid(derive_high_level_facets(runner, endpoint, IDEA))
    assert_real_usage(runner, "idea.high_level_facets", endpoint.model)


def test_idea_search_queries(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    reply = assert_valid(generate_search_queries(runner, endpoint, IDEA, FACETS, 4, 2))
    assert reply.bibliographic and reply.web
    assert_real_usage(runner, "idea.queries", endpoint.model)


def test_idea_recall(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    assert_validated_or_recorded(recall_papers(runner, endpoint, IDEA, 5))
    assert_real_usage(runner, "idea.recall", endpoint.model)


def test_abstract_assessment(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    [outcome] = assess_abstracts(runner, endpoint, IDEA, FACETS, idea_papers(1))
    reply = assert_valid(outcome)  # type: ignore[arg-type]
    assert set(reply.covered_facets) <= set(FACETS.labels())
    assert_real_usage(runner, "idea.assess", endpoint.model)


def test_neighbour_scoring(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    papers = idea_papers(3)
    grades = score_neighbours(runner, endpoint, NeighbourRequest(IDEA, IDEA), papers)
    assert [getattr(grade, "paper_id", None) for grade in grades] == [p.id for p in papers]
    assert not any(isinstance(grade, ModelFailure) for grade in grades), grades
    assert_real_usage(runner, "idea.neighbours", endpoint.model)


def test_expert_ranks_only_the_shortlist(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    shortlist = [ShortlistEntry(paper, work_id=paper.id, pdf_status="not_attempted")
                 for paper in idea_papers(3)]
    outcome = rank_shortlist(runner, endpoint, IDEA, FACETS, shortlist)
    reply = assert_valid(outcome)
    supplied = {entry.paper.id: entry.supplied for entry in shortlist}
    assert check_expert_ranking(reply, supplied) == []
    assert [item.rank for item in reply.candidates] == [1, 2, 3]
    assert_real_usage(runner, "idea.expert", endpoint.model)


def test_fulltext_refinement(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    paper = idea_papers(1)[0]
    window = EvidenceWindow("W1", 1, 0, len(paper.abstract or ""), "0" * 64,
                            paper.abstract or "")
    entry = ShortlistEntry(paper, work_id=paper.id, pdf_status="acquired", windows=(window,))
    [outcome] = refine_with_fulltext(runner, endpoint, IDEA, FACETS, [entry])
    assert_validated_or_recorded(outcome)  # type: ignore[arg-type]
    assert_real_usage(runner, "idea.refine", endpoint.model)


def test_related_work_report(endpoint: ModelEndpoint, runner: ModelRunner) -> None:
    papers = idea_papers(2)
    synthesis = {
        "idea": IDEA, "facets": FACETS.labelled(),
        "retrieval": {"routes": ["local full-text index"], "candidates": 2},
        "papers": {"high": [], "partial": [p.as_data() for p in papers], "adjacent": []},
    }
    outcome = write_report(runner, endpoint, "report_related_work", synthesis,
                           [p.id for p in papers])
    assert_validated_or_recorded(outcome)
    assert_real_usage(runner, "idea.report", endpoint.model)
