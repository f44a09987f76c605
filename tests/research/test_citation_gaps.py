"""Citation-gap analysis on the committed hep-th sample, with a draft and a BibTeX list the
tests write: what is cited is never suggested, each suggestion's passage and evidence hold
up, citation links to the references count, the model path grades through a local
OpenAI-compatible server, and the route answers with the same report. The sample is loaded
once for the module; the route tests that need a small corpus of their own are in
test_citation_gap_routes.py."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.api.cli import main
from crase.graph import Graph
from crase.models.minilm import NumpyBertEncoder
from crase.research.citation_gaps import GapRequest, find_citation_gaps
from crase.search.roles.offline_claims import OfflineClaimExtractor, split_sentences
from crase.search.text_ranking import query_hits
from crase.settings import ModelEndpoint, ModelSettings, Settings
from tests.api.conftest import API_KEY, api_settings_for
from tests.conftest import clean_graph
from tests.llm.chat_server import ChatServer, Reply
from tests.sample_slice import load_sample_slice

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def encoder() -> NumpyBertEncoder:
    return NumpyBertEncoder()


def sample_with_arxiv(graph: Graph) -> dict[str, dict[str, Any]]:
    rows = load_sample_slice(graph, 3000)
    with graph.driver.session() as session:
        session.run("UNWIND $rows AS r MATCH (p:Paper {id: r.id}) SET p.arxiv_id = r.arxiv_id",
                    rows=[{"id": r["id"], "arxiv_id": r["arxiv_id"]} for r in rows]).consume()
    return {row["id"]: row for row in rows}


@pytest.fixture(scope="module")
def sample_rows(session_graph: Graph) -> Iterator[dict[str, dict[str, Any]]]:
    """The whole sample, loaded once for the module: its tests only read it and add runs
    (the one that adds a claim removes it again)."""
    clean_graph(session_graph)
    try:
        yield sample_with_arxiv(session_graph)
    finally:
        clean_graph(session_graph)


@pytest.fixture
def graph(session_graph: Graph, sample_rows: dict[str, dict[str, Any]]) -> Graph:
    """Here the module's loaded sample, not an empty graph emptied after each test (as in
    tests/conftest.py): the tests that need one of those are in test_citation_gap_routes.py."""
    return session_graph


def references_of(graph: Graph, paper: str) -> list[str]:
    with graph.driver.session() as session:
        return sorted(r["id"] for r in session.run(
            "MATCH (:Paper {id: $id})-[:CITES]->(v:Paper) RETURN v.id AS id", id=paper))


def neighbours_of(graph: Graph, paper: str) -> set[str]:
    with graph.driver.session() as session:
        return {r["id"] for r in session.run(
            "MATCH (:Paper {id: $id})-[:CITES]-(v:Paper) RETURN v.id AS id", id=paper)}


def pick_target(graph: Graph, rows: dict[str, dict[str, Any]]) -> str:
    """A tachyon paper with three or more references in the sample and a long abstract."""
    for paper_id in sorted(rows):
        row = rows[paper_id]
        if ("tachyon" in row["title"].lower() and len(split_sentences(row["abstract"])) >= 3
                and len(references_of(graph, paper_id)) >= 3):
            return paper_id
    raise AssertionError("the sample has no such paper")


def draft_for(rows: dict[str, dict[str, Any]], target: str) -> str:
    """Two passages: the target's first abstract sentence as the draft restates it, and a
    passage on another subject."""
    first = split_sentences(rows[target]["abstract"])[0][1]
    return (f"Our starting point is the following observation. {first} "
            "Black hole microstates are counted by the degeneracy of BPS states of D-branes. "
            "This reproduces the area law for the entropy.")


def bibtex_for(rows: dict[str, dict[str, Any]], ids: list[str]) -> str:
    """The first reference by title, the second by arXiv id, and one the corpus lacks."""
    first, second = rows[ids[0]], rows[ids[1]]
    return (f"@comment{{written for the test}}\n"
            f"@article{{first, title = {{{first['title']}}}, year = {{{first['year']}}},\n"
            f"  author = {{{' and '.join(first['authors'][:2])}}}}}\n"
            f"@misc{{second, eprint = \"{second['arxiv_id']}\", archivePrefix = {{arXiv}}}}\n"
            "@book{absent, title = {A Treatise on {Gradient Boosting} for Churn}, year = 2020}\n")


def test_gaps_exclude_what_is_cited_and_show_passage_and_evidence(
        graph: Graph, sample_rows: dict[str, dict[str, Any]], encoder: NumpyBertEncoder) -> None:
    rows = sample_rows
    target = pick_target(graph, rows)
    cited = references_of(graph, target)[:2]
    request = GapRequest(draft=draft_for(rows, target), bibtex=bibtex_for(rows, cited),
                         pool=8, limit=100)
    report = find_citation_gaps(graph, encoder, request)
    resolved = {r.reference.key: (r.paper_id, r.matched_by) for r in report.references}
    assert resolved == {"first": (cited[0], "title"), "second": (cited[1], "arxiv_id"),
                        "absent": (None, None)}
    assert len(report.passages) == 2
    suggested = [s.paper_id for s in report.suggestions]
    assert not set(suggested) & set(cited)
    top = report.suggestions[0]
    # The draft restates the target's first sentence: it fits passage 0, with that sentence.
    assert (top.paper_id, top.passage, top.evidence_kind) == (target, 0, "abstract")
    assert top.similarity > 0.9 and "passage 0" in top.why
    for s in report.suggestions:
        assert s.similarity >= request.min_similarity
        assert s.passage_text == report.passages[s.passage].text
        vectors = encoder.encode([s.passage_text, s.evidence])
        assert abs(float(np.dot(vectors[0], vectors[1])) - s.similarity) < 1e-3
        # Links are citations between the suggestion and a resolved reference.
        assert set(s.reference_links) == neighbours_of(graph, s.paper_id) & set(cited)
        if "citation" in s.routes:
            assert len(s.reference_links) >= 2
        expected = s.similarity + 0.05 * min(len(s.reference_links), 3)
        assert abs(s.score - expected) < 1e-3
    assert [s.score for s in report.suggestions] == sorted(
        (s.score for s in report.suggestions), reverse=True)
    assert report.assessment.startswith("offline")
    again = find_citation_gaps(graph, encoder, request.model_copy(
        update={"cited_ids": [target]}))
    assert target not in {s.paper_id for s in again.suggestions}
    with graph.driver.session() as session:
        run = session.run("MATCH (r:Run {id: $id}) RETURN r.kind AS kind, r.status AS status, "
                          "r.report AS report", id=report.run_id).single()
    assert (run["kind"], run["status"]) == ("citation_gaps", "done")
    assert json.loads(run["report"])["suggestions"][0]["paper_id"] == target


def test_the_model_path_grades_each_suggestion_against_its_passage(
        graph: Graph, sample_rows: dict[str, dict[str, Any]], encoder: NumpyBertEncoder) -> None:
    rows = sample_rows
    target = pick_target(graph, rows)

    def grade(request: dict[str, Any]) -> Reply:
        text = request["messages"][1]["content"]
        level = 3 if f'"paper_id": "{target}"' in text else 1
        return Reply(json.dumps({
            "coverage_level": level, "covered_facets": ["F1"] if level else [],
            "task_similarity": 0.9, "method_similarity": 0.8,
            "notes": "The paper states the observation the passage builds on.",
            "paper_facets": {"problem_facets": [], "setting_facets": [],
                             "mechanism_facets": [], "assumption_facets": []}}))

    with ChatServer(grade).running() as server:
        models = ModelSettings(assessor=ModelEndpoint(base_url=server.base_url, model="judge"),
                               cache_enabled=False)
        report = find_citation_gaps(graph, encoder, GapRequest(
            draft=draft_for(rows, target), pool=5), models)
    assert [(s.paper_id, s.grade) for s in report.suggestions] == [(target, 3)]
    assert report.suggestions[0].why.startswith("model grade 3: The paper states")
    assert report.backends["assessment"] == "model:judge"
    assert server.requests and all("untrusted_data" in r["messages"][1]["content"]
                                   for r in server.requests)


def test_the_route_answers_with_the_report_and_refuses_a_draft_without_words(
        graph: Graph, sample_rows: dict[str, dict[str, Any]], settings: Settings) -> None:
    rows = sample_rows
    target = pick_target(graph, rows)
    with client_for(settings, graph) as client:
        response = client.post("/citation-gaps", json={"draft": draft_for(rows, target),
                                                       "cited_ids": [], "pool": 5})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["suggestions"][0]["paper_id"] == target
        assert client.get(f"/runs/{body['run_id']}").json()["status"] == "done"
        refused = client.post("/citation-gaps", json={"draft": "... ;;; ..."})
        assert refused.status_code == 422 and "no sentence with a word" in refused.text
        bad = client.post("/citation-gaps", json={"draft": "x", "limit": 0})
        assert bad.status_code == 400
        schema = client.get("/schema/openapi.json").json()
        assert {"/citation-gaps", "/evolution", "/landscape"} <= set(schema["paths"])
        assert "GapReport" in schema["components"]["schemas"]


@contextmanager
def client_for(settings: Settings, graph: Graph) -> Iterator[TestClient]:
    """A TestClient on the test's graph that sends the API key."""
    with TestClient(create_app(api_settings_for(settings), graph=graph)) as client:
        client.headers["X-API-Key"] = API_KEY
        yield client


def test_the_command_reads_the_draft_and_bibtex_files(
        graph: Graph, sample_rows: dict[str, dict[str, Any]], cli_env: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    rows = sample_rows
    target = pick_target(graph, rows)
    draft, bib = cli_env / "draft.txt", cli_env / "refs.bib"
    draft.write_text(draft_for(rows, target))
    bib.write_text(bibtex_for(rows, references_of(graph, target)[:2]))
    assert main(["citation-gaps", str(draft), "--bib", str(bib), "--limit", "3"]) == 0
    out = capsys.readouterr().out
    assert "2 of 3 references found in the corpus" in out
    assert "reference not in the corpus: absent:" in out and f"1. [{target}]" in out
    assert main(["citation-gaps", str(draft), "--cite", target, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert target not in {s["paper_id"] for s in report["suggestions"]}
    assert main(["citation-gaps", str(cli_env / "none.txt")]) == 2
    assert "is not a file" in capsys.readouterr().err


def test_a_stored_claim_is_evidence_too(graph: Graph, sample_rows: dict[str, dict[str, Any]],
                                        encoder: NumpyBertEncoder) -> None:
    rows = sample_rows
    target = pick_target(graph, rows)
    request = GapRequest(draft=draft_for(rows, target), pool=5, limit=100)
    passage = find_citation_gaps(graph, encoder, request).passages[1].text
    holder = next(h.id for h in query_hits(graph, encoder, passage, 5, []) if h.id != target)
    claim = "Counting BPS states of D-brane bound states reproduces the black hole area law."
    with graph.driver.session() as session:
        session.run("MATCH (p:Paper {id: $id}) CREATE (p)-[:HAS_CLAIM {rank: 0}]->(:Claim "
                    "{extractor: $extractor, text: $text, type: 'result', source_phrase: $text})",
                    id=holder, extractor=OfflineClaimExtractor.name, text=claim).consume()
    try:
        found = {s.paper_id: s for s in find_citation_gaps(graph, encoder, request).suggestions}
    finally:  # the module's sample as it was loaded, for whichever test comes next
        with graph.driver.session() as session:
            session.run("MATCH (:Paper {id: $id})-[:HAS_CLAIM]->(c:Claim {text: $text}) "
                        "DETACH DELETE c", id=holder, text=claim).consume()
    assert (found[holder].evidence, found[holder].evidence_kind) == (claim, "claim")
    assert found[holder].passage == 1
