"""run_idea end to end on the real database: the five papers, every gate on record in the
graph and in the audit JSON, ranking failures and cancellation on record."""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from crase.errors import RunCancelled, RunNotFound
from crase.graph import Graph
from crase.idea.audit import export_idea_audit
from crase.idea.pipeline import run_idea
from crase.idea.request import IdeaRequest
from crase.idea.roles.model import ModelExpert
from crase.idea.roles.protocols import IdeaBackends
from crase.run_lifecycle import Callbacks
from crase.settings import ModelEndpoint
from tests.idea.corpus import IDEA
from tests.llm.chat_server import ChatServer, Reply

pytestmark = pytest.mark.integration


def request(pdf_dir: Path | None = None, **overrides: Any) -> IdeaRequest:
    values: dict[str, Any] = {"idea": IDEA, "exclude": ["src"], "year_min": 2015,
                              "providers": False,
                              "pdf_dir": str(pdf_dir) if pdf_dir else None}
    values.update(overrides)
    return IdeaRequest(**values)


def candidates_by_id(audit: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["paper_id"]: c for c in audit["candidates"]}


def graph_rows(graph: Graph, query: str, **params: Any) -> list[dict[str, Any]]:
    with graph.driver.session(database=graph.database) as session:
        return [record.data() for record in session.run(query, params)]


def test_offline_run_returns_five_works_with_a_full_audit(
        corpus: Graph, offline_backends: IdeaBackends, pdf_dir: Path) -> None:
    result = run_idea(corpus, offline_backends, request(pdf_dir))
    assert result.status == "done" and result.outcome == "done", result.incomplete
    assert [p.rank for p in result.papers] == [1, 2, 3, 4, 5]
    assert len({p.work_id for p in result.papers}) == 5
    assert result.ranking["backend"] == "offline-expert-fused@3"
    audit = result.audit
    works = candidates_by_id(audit)
    assert "src" not in works and all("src" not in c["versions"][0]["id"] or False
                                      for c in audit["candidates"])
    # versions of one work merge; the year gate is applied and logged
    merged = [c for c in audit["candidates"] if len(c["versions"]) == 2]
    assert [sorted(v["id"] for v in c["versions"]) for c in merged] == [["v1", "v2"]]
    assert not works["old1"]["eligibility"]["kept"]
    assert "outside 2015-..." in works["old1"]["eligibility"]["reason"]
    assert works["old1"]["shortlist"]["kept"] is False
    # the citation gate ran from the graph and admitted the paper without an abstract
    gate = audit["neighbour_gate"]
    assert gate["status"] == "ran" and 1 <= len(gate["seeds"]) <= 5
    assert "citation_neighbour" in works["noabs"]["route_names"]
    assert works["noabs"]["neighbour_gate"]["kept"] is True
    assert works["noabs"]["assessment"]["status"] == "no_abstract"
    assert works["noabs"]["assessment"]["score"] is None
    # exactly five PDF attempts for the top five of the shortlist, in its order
    attempts = audit["pdf_attempts"]
    assert [a["attempt"] for a in attempts] == [1, 2, 3, 4, 5]
    assert [a["paper_id"] for a in attempts] == audit["shortlist"][:5]
    for paper_id in audit["shortlist"][:5]:
        windows = works[paper_id]["windows_sent"]
        assert 1 <= len(windows) <= 6
        assert all(w["partial"] and len(w["text"]) <= 1800 and len(w["sha256"]) == 64
                   for w in windows)
    assert all(not works[pid]["windows_sent"] for pid in audit["shortlist"][5:])
    for paper in result.papers:
        expected = "abstract_and_fulltext" if works[paper.paper_id]["windows_sent"] else \
            "abstract" if paper.paper_id != "noabs" else "metadata_only"
        assert paper.evidence_source == expected
    json.dumps(result.to_dict())  # everything is JSON-serialisable


def test_the_graph_holds_the_run_its_candidates_and_results(
        corpus: Graph, offline_backends: IdeaBackends, pdf_dir: Path) -> None:
    result = run_idea(corpus, offline_backends, request(pdf_dir))
    run = graph_rows(corpus, "MATCH (r:Run {id: $id}) RETURN r.kind AS kind, r.status AS "
                             "status, r.outcome AS outcome, r.audit AS audit, r.plan AS plan",
                     id=result.run_id)[0]
    assert (run["kind"], run["status"], run["outcome"]) == ("idea", "done", "done")
    assert run["plan"] == result.audit["queries"]
    links = graph_rows(corpus, "MATCH (:Run {id: $id})-[x:IDEA_CANDIDATE]->(p:Paper) "
                               "RETURN p.id AS id, x.final_rank AS rank, x.shortlisted AS s, "
                               "x.selection_reason AS why, x.route_names AS routes, "
                               "x.primary AS primary",
                       id=result.run_id)
    in_corpus = sum(len(c["versions"]) for c in result.audit["candidates"] if c["in_corpus"])
    assert len(links) == in_corpus
    # every version of a work carries the work's rank; the primary one counts once
    assert sorted(r["rank"] for r in links if r["primary"] and r["rank"]) == [1, 2, 3, 4, 5]
    assert all(r["why"] and r["routes"] for r in links)
    returned = graph_rows(corpus, "MATCH (:Run {id: $id})-[x:RETURNED]->(p) RETURN p.id AS id "
                                  "ORDER BY x.rank", id=result.run_id)
    assert [r["id"] for r in returned] == [p.paper_id for p in result.papers]
    stored = json.loads(run["audit"])
    assert stored == export_idea_audit(corpus, result.run_id)
    on_disk = json.loads(Path(result.audit_path or "").read_text())
    assert on_disk == stored and stored["run_id"] == result.run_id
    with pytest.raises(RunNotFound):
        export_idea_audit(corpus, "no-such-run")


def test_full_report_mode_writes_a_report_from_the_saved_evidence(
        corpus: Graph, offline_backends: IdeaBackends, pdf_dir: Path) -> None:
    result = run_idea(corpus, offline_backends, request(pdf_dir, mode="full_report"))
    report = result.report or {}
    assert report["status"] == "written" and report["backend"] == "offline-report-template@1"
    text = Path(report["path"]).read_text()
    assert "## Highly similar work" in text and "## Limitations of this mapping" in text
    assert set(report["cited_paper_ids"]) >= {p.paper_id for p in result.papers}
    retrieval_only = run_idea(corpus, offline_backends, request(pdf_dir))
    assert retrieval_only.report is None and "report" not in retrieval_only.timings


def test_missing_pdfs_are_not_substituted_and_make_the_run_partial(
        corpus: Graph, offline_backends: IdeaBackends, tmp_path: Path) -> None:
    result = run_idea(corpus, offline_backends, request(tmp_path / "empty"))
    attempts = result.audit["pdf_attempts"]
    assert len(attempts) == 5 and all(a["status"] == "unavailable" for a in attempts)
    assert result.outcome == "partial" and result.status == "done"
    assert any("PDF attempts without text" in note for note in result.incomplete)
    assert result.counts["windows_sent"] == 0
    assert all(p.evidence_source in ("abstract", "metadata_only") for p in result.papers)


BAD_REPLIES = {
    "unknown id": lambda ids: [(r, pid) for r, pid in enumerate(ids[:4] + ["nope"], 1)],
    "duplicate id": lambda ids: [(r, pid) for r, pid in enumerate(ids[:4] + ids[:1], 1)],
    "non-consecutive ranks": lambda ids: list(zip([1, 2, 3, 5, 6], ids[:5], strict=True)),
    "wrong count": lambda ids: [(r, pid) for r, pid in enumerate(ids[:4], 1)],
    "inconsistent evidence source": lambda ids: [(r, pid) for r, pid in enumerate(ids[:5], 1)],
}


def bad_expert(case: str) -> ChatServer:
    def respond(body: dict[str, Any]) -> Reply:
        if case == "malformed JSON":
            return Reply('{"candidates": [{"rank": 1,')
        text = body["messages"][1]["content"]
        ids = list(dict.fromkeys(re.findall(r'"paper_id": "([^"]+)"', text)))
        source = "metadata_only" if case == "inconsistent evidence source" else None
        items = []
        for rank, pid in BAD_REPLIES[case](ids):
            supplied = re.search(rf'"paper_id": "{re.escape(pid)}".*?"supplied": \{{\s*'
                                 r'"abstract": (true|false),\s*"fulltext": (true|false)', text,
                                 re.DOTALL)
            abstract, fulltext = (supplied.groups() if supplied else ("true", "false"))
            honest = ("abstract_and_fulltext" if abstract == "true" and fulltext == "true"
                      else "fulltext" if fulltext == "true"
                      else "abstract" if abstract == "true" else "metadata_only")
            items.append({"rank": rank, "paper_id": pid, "expert_reason": "Because.",
                          "evidence_source": source or honest})
        return Reply(json.dumps({"candidates": items}))

    return ChatServer(respond)


@pytest.mark.parametrize("case", [*BAD_REPLIES, "malformed JSON"])
def test_every_expert_validation_failure_is_a_ranking_failure_on_record(
        case: str, corpus: Graph, offline_backends: IdeaBackends, pdf_dir: Path) -> None:
    server = bad_expert(case)
    with server.running():
        endpoint = ModelEndpoint(base_url=server.base_url, model="test/expert",
                                 max_retries=0, timeout_s=10)
        offline_backends.expert = ModelExpert(endpoint)
        result = run_idea(corpus, offline_backends, request(pdf_dir))
    assert len(server.requests) == 2  # the reply and the repair request
    assert result.outcome == "ranking_failed" and result.status == "failed"
    assert result.papers == [] and result.audit["final_ranking"] == []
    failure = result.ranking["failure"]
    assert failure["kind"] == "invalid_reply" and failure["detail"]
    run = graph_rows(corpus, "MATCH (r:Run {id: $id}) RETURN r.status AS status, r.outcome AS "
                             "outcome, r.error AS error", id=result.run_id)[0]
    assert run["status"] == "failed" and run["outcome"] == "ranking_failed"
    assert run["error"].startswith("the expert ranking failed: invalid_reply: ")
    returned = graph_rows(corpus, "MATCH (:Run {id: $id})-[x:RETURNED]->() RETURN count(x) AS "
                                  "n", id=result.run_id)
    assert returned[0]["n"] == 0
    ranks = graph_rows(corpus, "MATCH (:Run {id: $id})-[x:IDEA_CANDIDATE]->() WHERE "
                               "x.shortlisted RETURN count(x) AS n, count(x.final_rank) AS "
                               "ranked", id=result.run_id)[0]
    assert ranks["n"] > 0 and ranks["ranked"] == 0


def test_an_unexpected_error_closes_the_run_as_failed(
        corpus: Graph, offline_backends: IdeaBackends) -> None:
    class Broken:
        name = "broken"

        def structure(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("not a CraseError")

    offline_backends.structurer = Broken()  # type: ignore[assignment]
    with pytest.raises(RuntimeError):
        run_idea(corpus, offline_backends, request(), run_id="broken-run")
    run = graph_rows(corpus, "MATCH (r:Run {id: 'broken-run'}) RETURN r.status AS status, "
                             "r.error AS error")[0]
    assert run["status"] == "failed" and run["error"] == "RuntimeError: not a CraseError"


def test_a_cancelled_run_keeps_what_it_decided(
        corpus: Graph, offline_backends: IdeaBackends) -> None:
    stages: list[str] = []
    with pytest.raises(RunCancelled):
        run_idea(corpus, offline_backends, request(), run_id="cancelled-run",
                 observer=Callbacks(on_stage=stages.append,
                                   should_cancel=lambda: "selection" in stages))
    audit = export_idea_audit(corpus, "cancelled-run")
    assert audit["outcome"] == "cancelled" and audit["candidates"]
    assert "RunCancelled" in audit["error"]
    # cancelled before the assessment stage: selection decided, nothing assessed
    assert all(c["selection"] is not None for c in audit["candidates"])
    assert all(c["assessment"] is None for c in audit["candidates"])
    assert "assessment" not in audit["timings"]
