"""Every kind of bad row is counted and written to the rejects file with its line number,
the load goes on, and every good row is in the graph."""

import json
from collections import Counter
from pathlib import Path

import pytest

from crase.graph import Graph
from crase.ingest.corpus import locate_corpus
from crase.ingest.loader import load_corpus
from crase.ingest.rejects import read_rejects
from crase.settings import IngestSettings, Settings

pytestmark = pytest.mark.integration

LIMITS = IngestSettings(max_line_bytes=100_000, max_field_chars=20_000)


def jsonl(record: object) -> bytes:
    return json.dumps(record).encode() + b"\n"


def bad_corpus(folder: Path) -> Path:
    """Papers and citations with one row of every bad kind among good ones."""
    folder.mkdir()
    papers = b"".join([
        b"\xef\xbb\xbf" + jsonl({"id": "p1", "title": "First", "year": 2001,
                                 "authors": ["A. One"]}),                             # 1 good
        jsonl({"id": "p2", "title": "Second", "abstract": "About two.", "year": 2002}),  # 2 good
        b'{"id": "p9", "title": \n',                                                # 3 malformed
        jsonl({"title": "No id here"}),                                             # 4 no id
        jsonl({"id": "p8", "abstract": "no title"}),                                # 5 no title
        jsonl({"id": "p10", "title": "Year typo", "year": "19x5"}),     # 6 kept, year left out
        jsonl({"id": "p11", "title": "From the future", "year": 3021}),  # 7 kept, year left out
        jsonl({"id": "p1", "title": "First, but different", "year": 2001}),         # 8 conflict
        jsonl({"id": "p2", "title": "Second", "abstract": "About two.", "year": 2002}),  # 9 repeat
        '{"id": "p12", "title": "Café"}\n'.encode("latin-1"),                       # 10 encoding
        jsonl({"id": "p13", "title": "Long", "abstract": "x" * 30_000}),           # 11 huge field
        jsonl({"id": "p14", "title": "Longer", "abstract": "y" * 150_000}),        # 12 huge row
        jsonl([1, 2, 3]),                                                           # 13 not object
        b"\n",                                                                      # 14 blank
        jsonl({"id": "p3", "title": "Third", "year": "2003"}),                      # 15 good
        jsonl({"id": 42, "title": "Numeric id", "year": 1999}),                     # 16 good
    ])
    (folder / "papers.jsonl").write_bytes(papers)
    citations = b"".join([
        b"citing_id,cited_id\n",
        b"p1,p2\n",            # 2 good
        b"p2,p3\n",            # 3 good
        b"p1,p2\n",            # 4 duplicate
        b"p1,p1\n",            # 5 self-citation
        b"p1,nowhere\n",       # 6 unknown paper
        b"p1\n",               # 7 malformed
        b"p3,p1\n",            # 8 good
        "p3,caf\xe9\n".encode("latin-1"),  # 9 encoding
        b"p1,p8\n",            # 10 cites a rejected paper: unknown
        b"p3,42\n",            # 11 good
        b"p2,p1,p3\n",         # 12 malformed (three fields)
    ])
    (folder / "citations.csv").write_bytes(citations)
    return folder


def paper_ids(graph: Graph) -> set[str]:
    with graph.driver.session(database=graph.database) as session:
        return {r["id"] for r in session.run("MATCH (p:Paper) RETURN p.id AS id")}


def edges(graph: Graph) -> set[tuple[str, str]]:
    with graph.driver.session(database=graph.database) as session:
        return {(r["a"], r["b"]) for r in session.run(
            "MATCH (a:Paper)-[:CITES]->(b:Paper) RETURN a.id AS a, b.id AS b")}


def test_every_bad_kind_is_counted_and_every_good_row_loaded(graph: Graph, settings: Settings,
                                                             tmp_path: Path) -> None:
    settings = settings.model_copy(update={"ingest": LIMITS})
    files = locate_corpus(bad_corpus(tmp_path / "bad"))
    report = load_corpus(graph, files, settings, show_progress=False)

    assert paper_ids(graph) == {"p1", "p2", "p3", "42", "p10", "p11"}
    assert edges(graph) == {("p1", "p2"), ("p2", "p3"), ("p3", "p1"), ("p3", "42")}
    with graph.driver.session(database=graph.database) as session:
        first = session.run("MATCH (p:Paper {id: 'p1'}) RETURN p.title AS t").single()
    assert first is not None and first["t"] == "First"  # the first of conflicting rows wins

    expected = {
        ("papers.jsonl", 3, "malformed_json"), ("papers.jsonl", 4, "missing_id"),
        ("papers.jsonl", 5, "missing_title"), ("papers.jsonl", 8, "conflicting_paper"),
        ("papers.jsonl", 9, "duplicate_paper"), ("papers.jsonl", 10, "bad_encoding"),
        ("papers.jsonl", 11, "huge_field"), ("papers.jsonl", 12, "huge_row"),
        ("papers.jsonl", 13, "not_an_object"),
        ("citations.csv", 4, "duplicate_edge"), ("citations.csv", 5, "self_citation"),
        ("citations.csv", 6, "unknown_paper"), ("citations.csv", 7, "malformed_edge"),
        ("citations.csv", 9, "bad_encoding"), ("citations.csv", 10, "unknown_paper"),
        ("citations.csv", 12, "malformed_edge"),
    }
    written = read_rejects(report.rejects_path)
    assert {(r.file, r.line, r.kind.value) for r in written} == expected
    assert len(written) == len(expected)
    assert all(r.reason for r in written)
    assert report.rejects == dict(Counter(kind for _, _, kind in expected))
    assert (report.papers.accepted, report.papers.rejected) == (6, 9)
    assert "p8 was refused (papers.jsonl line 5, missing_title)" in {
        r.line: r.reason for r in written if r.file == "citations.csv"}[10]
    assert (report.citations.accepted, report.citations.rejected) == (4, 7)


def test_empty_files_are_reported_and_the_load_goes_on(graph: Graph, settings: Settings,
                                                       tmp_path: Path) -> None:
    (tmp_path / "papers.jsonl").write_bytes(b"")
    (tmp_path / "citations.csv").write_bytes(b"")
    report = load_corpus(graph, locate_corpus(tmp_path), settings, show_progress=False)
    assert report.rejects == {"empty_file": 2}
    assert {(r.file, r.line) for r in read_rejects(report.rejects_path)} == {
        ("papers.jsonl", 0), ("citations.csv", 0)}
    assert paper_ids(graph) == set()
