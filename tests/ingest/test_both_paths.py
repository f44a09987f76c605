"""One corpus with a case of each kind of kept, repaired and refused row goes through
`crase load` and `crase db import`: the same graph, the same rejects, the same notes. And a
finished load is redone when its own papers are gone; a missing abstract erases none."""

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from crase.api.cli import main
from crase.graph import Graph
from crase.ingest.batches import ValidatedCorpus
from crase.ingest.bulk import ImportReport, write_import_files
from crase.ingest.corpus import locate_corpus
from crase.ingest.edge_table import write_checked_edges
from crase.ingest.loader import load_corpus, notes_path_for
from crase.ingest.rejects import RejectLog, read_notes, read_rejects
from crase.settings import DatabaseSettings, IngestSettings, Settings
from tests.conftest import clean_graph
from tests.ingest.conftest import point_cli_at

CORPUS = Path(__file__).parent / "fixtures" / "kept_data"
MAX_LINE_BYTES = 2_000  # papers.jsonl line 10 is a huge row under this limit
PAPERS = {"k1", "k2", "k3", "k4", "k5", "k6", "k8", "a,b", 'q"x', "Q3", "Q4", "k15", "k16"}
EDGES = {("k2", "k1"), ("a,b", "k1"), ('q"x', "k1"), ("k3", "k1"), ("k4", "k1"),
         ("Q3", "Q4"), ("k8", "k1"), ("k15", "k2"), ("k16", "k1")}
REJECTS = {("papers.jsonl", 7, "bad_id"), ("papers.jsonl", 9, "missing_title"),
           ("papers.jsonl", 10, "huge_row"), ("citations.csv", 8, "unknown_paper"),
           ("citations.csv", 9, "unknown_paper"), ("citations.csv", 10, "unknown_paper"),
           ("citations.csv", 11, "self_citation"), ("citations.csv", 12, "duplicate_edge")}
NOTES = {("k1", "repaired_authors"), ("k2", "dropped_year"), ("k5", "dropped_year"),
         ("k8", "trimmed_text"), ("k15", "dropped_year"), ("k16", "repaired_authors")}


def ingest_settings() -> IngestSettings:
    return IngestSettings(max_line_bytes=MAX_LINE_BYTES)


def rejects_in(path: Path) -> list[tuple[str, int, str, str]]:
    return sorted((r.file, r.line, r.kind.value, r.reason) for r in read_rejects(path))


def notes_in(path: Path) -> set[tuple[str, str]]:
    return {(note["paper"], note["kind"]) for note in read_notes(path)}


def check_rejects(rejects: list[tuple[str, int, str, str]]) -> None:
    assert {reject[:3] for reject in rejects} == REJECTS
    reasons = {(file, line): reason for file, line, _, reason in rejects}
    assert "3.25" in reasons[("papers.jsonl", 7)]
    assert "'k10'" in reasons[("papers.jsonl", 10)]
    assert reasons[("citations.csv", 8)].startswith("paper k9 was refused (papers.jsonl line 9")
    assert reasons[("citations.csv", 9)].startswith("paper k10 was refused (papers.jsonl line 10")
    assert "neither" in reasons[("citations.csv", 10)]


def test_both_paths_check_the_corpus_alike(tmp_path: Path) -> None:
    """Without a server: the bulk path's files and rejects against the load's reader."""
    files = locate_corpus(CORPUS)
    corpus = ValidatedCorpus(files, RejectLog(tmp_path / "load.jsonl"), ingest_settings(),
                             batch_size=4)
    papers = {paper.id for batch in corpus.paper_batches() for paper in batch.rows}
    edges = {(e.citing, e.cited) for batch in corpus.edge_batches() for e in batch.rows}
    corpus.rejects.close()
    assert (papers, edges) == (PAPERS, EDGES)

    workdir = tmp_path / "work"
    workdir.mkdir()
    report = ImportReport("kept_data", tmp_path / "bulk.jsonl")
    write_import_files(files, workdir, Settings(var_dir=tmp_path / "var",
                                                ingest=ingest_settings()),
                       report.rejects_path, report, show=False)
    assert (report.papers.accepted, report.citations.accepted) == (len(PAPERS), len(EDGES))
    check_rejects(rejects_in(tmp_path / "bulk.jsonl"))
    assert rejects_in(tmp_path / "bulk.jsonl") == rejects_in(tmp_path / "load.jsonl")
    assert notes_in(notes_path_for(tmp_path / "bulk.jsonl")) == NOTES


def test_the_column_path_names_a_refused_paper_as_the_line_reader_does(
        tmp_path: Path) -> None:
    (tmp_path / "papers.jsonl").write_text('{"id": "ok", "title": "T"}\n{"id": "gone"}\n'
                                           '{"id": "b", "title": "B"}\n')
    (tmp_path / "citations.csv").write_text("citing_id,cited_id\nok,gone\nok,nowhere\nb,ok\n")

    def checked_papers(name: str) -> ValidatedCorpus:
        corpus = ValidatedCorpus(locate_corpus(tmp_path), RejectLog(tmp_path / name),
                                 IngestSettings(), batch_size=10)
        list(corpus.paper_batches())
        return corpus

    fast = write_checked_edges(tmp_path / "citations.csv", checked_papers("a.jsonl").papers,
                               io.BytesIO())
    slow = checked_papers("b.jsonl")
    list(slow.edge_batches())
    slow.rejects.close()
    assert fast is not None and fast.accepted == 1
    assert [(r.line, r.kind, r.reason) for r in fast.rejects] == [
        (r.line, r.kind, r.reason) for r in read_rejects(tmp_path / "b.jsonl")
        if r.file == "citations.csv"]


# with a server ------------------------------------------------------------------------
def graph_content(graph: Graph) -> tuple[list[Any], list[Any]]:
    with graph.driver.session(database=graph.database) as session:
        nodes = session.run("MATCH (p:Paper) RETURN properties(p) AS p ORDER BY p.id").data()
        rels = session.run("MATCH (a)-[r:CITES]->(b) RETURN a.id AS a, b.id AS b "
                           "ORDER BY a, b").data()
    return nodes, rels


@pytest.mark.integration
@pytest.mark.slow
def test_load_and_import_give_the_same_graph_rejects_and_notes(
        second_server: DatabaseSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    point_cli_at(second_server, monkeypatch, tmp_path)
    monkeypatch.setenv("CRASE_INGEST__MAX_LINE_BYTES", str(MAX_LINE_BYTES))
    corpus = shutil.copytree(CORPUS, tmp_path / "kept_data")
    loaded, imported = tmp_path / "load.rejects.jsonl", tmp_path / "import.rejects.jsonl"
    assert main(["load", str(corpus), "--rejects", str(loaded), "--quiet"]) == 0
    graph = Graph.connect(second_server)
    try:
        after_load = graph_content(graph)
        # --no-embed: `crase load` stores no vectors; the import's embedding has its own
        # test (tests/ingest/test_bulk.py).
        assert main(["db", "import", str(corpus), "--rejects", str(imported),
                     "--quiet", "--no-embed"]) == 0
    finally:
        graph.close()
    printed = capsys.readouterr().out
    assert "Imported kept_data" in printed and "bad_id" in printed
    graph = Graph.connect(second_server)
    try:
        after_import = graph_content(graph)
    finally:
        graph.close()
    nodes, rels = after_load
    assert {node["p"]["id"] for node in nodes} == PAPERS
    assert {(rel["a"], rel["b"]) for rel in rels} == EDGES
    assert after_import == after_load
    by_id = {node["p"]["id"]: node["p"] for node in nodes}
    assert by_id["k1"]["authors"] == ["Amitabha Lahiri"] and "year" not in by_id["k2"]
    assert by_id["k3"]["year"] == by_id["k4"]["year"] == 1999
    assert by_id["k8"]["title"] == "Padded title" and "abstract" not in by_id["Q4"]
    check_rejects(rejects_in(loaded))
    assert rejects_in(imported) == rejects_in(loaded)
    assert notes_in(notes_path_for(loaded)) == notes_in(notes_path_for(imported)) == NOTES


def write_corpus(folder: Path, papers: list[dict[str, Any]], edges: str = "") -> Path:
    folder.mkdir()
    (folder / "papers.jsonl").write_text("".join(json.dumps(p) + "\n" for p in papers))
    if edges:
        (folder / "citations.csv").write_text("citing_id,cited_id\n" + edges)
    return folder


@pytest.mark.integration
def test_a_finished_load_is_redone_when_its_papers_are_gone(
        graph: Graph, settings: Settings, tmp_path: Path) -> None:
    small = locate_corpus(write_corpus(tmp_path / "a", [
        {"id": "a1", "title": "A1"}, {"id": "a2", "title": "A2"}], "a2,a1\n"))
    big = locate_corpus(write_corpus(tmp_path / "b", [
        {"id": f"b{n}", "title": f"B{n}"} for n in range(5)], "b1,b0\nb2,b0\nb3,b0\n"))
    assert load_corpus(graph, small, settings, show_progress=False).status == "loaded"
    assert load_corpus(graph, small, settings, show_progress=False).status == "unchanged"
    clean_graph(graph)  # as `crase db import` of B would: the database replaced
    load_corpus(graph, big, settings, show_progress=False)
    again = load_corpus(graph, small, settings, show_progress=False)
    assert again.status == "loaded" and again.papers_written == 2
    assert again.graph_after == {"papers": 7, "citations": 4}


@pytest.mark.integration
def test_a_finished_load_is_redone_when_one_of_its_edges_is_gone(
        graph: Graph, settings: Settings, tmp_path: Path) -> None:
    files = locate_corpus(write_corpus(tmp_path / "a", [
        {"id": "a1", "title": "A1"}, {"id": "a2", "title": "A2"}, {"id": "a3", "title": "A3"}],
        "a2,a1\na3,a1\n"))
    load_corpus(graph, files, settings, show_progress=False)
    with graph.driver.session(database=graph.database) as session:
        session.run("MATCH (:Paper {id: 'a3'})-[r:CITES]->() DELETE r").consume()
        session.run("CREATE (:Paper {id: 'other1'})-[:CITES]->(:Paper {id: 'other2'})"
                    ).consume()
    again = load_corpus(graph, files, settings, show_progress=False)
    assert again.status == "loaded" and again.graph_after == {"papers": 5, "citations": 3}


@pytest.mark.integration
def test_a_missing_abstract_erases_no_stored_one(graph: Graph, settings: Settings,
                                                 tmp_path: Path) -> None:
    load_corpus(graph, locate_corpus(write_corpus(tmp_path / "full", [
        {"id": "p1", "title": "T1", "abstract": "Stored."},
        {"id": "p2", "title": "T2", "abstract": "Stored."},
        {"id": "p3", "title": "T3", "abstract": "Stored.", "venue": "V"}])),
        settings, show_progress=False)
    load_corpus(graph, locate_corpus(write_corpus(tmp_path / "partial", [
        {"id": "p1", "title": "T1"}, {"id": "p2", "title": "T2", "abstract": None},
        {"id": "p3", "title": "T3", "abstract": "", "venue": " "}])),
        settings, show_progress=False)
    nodes, _ = graph_content(graph)
    assert [(n["p"]["abstract"], n["p"].get("venue")) for n in nodes] == [
        ("Stored.", None), ("Stored.", None), ("Stored.", "V")]
