"""The incremental load: idempotent, resumable, skipped when unchanged, and aware of the
papers already in the graph."""

from pathlib import Path
from typing import Any

import pytest

from crase.bench.generate import generate
from crase.graph import Graph
from crase.ingest.corpus import locate_corpus
from crase.ingest.loader import load_corpus
from crase.ingest.rejects import read_rejects
from crase.settings import Settings
from tests.conftest import clean_graph

pytestmark = pytest.mark.integration
FIXTURES = Path(__file__).parent / "fixtures"


def snapshot(graph: Graph) -> tuple[list[Any], list[Any]]:
    with graph.driver.session(database=graph.database) as session:
        nodes = session.run("MATCH (p) RETURN labels(p) AS l, properties(p) AS p "
                            "ORDER BY p.id").data()
        rels = session.run("MATCH (a)-[r]->(b) RETURN a.id AS a, type(r) AS t, "
                           "properties(r) AS p, b.id AS b ORDER BY a, b").data()
    return nodes, rels


def small_corpus(folder: Path, papers: int = 300, edges: int = 3000) -> Path:
    generate(folder, papers, edges, seed=11)
    return folder


class InterruptedGraph(Graph):
    """The real graph, whose citation writes stop (as Ctrl-C would) after `allowed` batches."""

    def __init__(self, graph: Graph, allowed: int) -> None:
        super().__init__(graph.driver, graph.database)
        self.allowed = allowed

    def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        if name == "merge_citations":
            if self.allowed == 0:
                raise KeyboardInterrupt
            self.allowed -= 1
        return super().write(name, **params)


def test_loading_twice_changes_nothing(graph: Graph, settings: Settings,
                                       tmp_path: Path) -> None:
    files = locate_corpus(small_corpus(tmp_path / "c"))
    first = load_corpus(graph, files, settings, batch_size=700, show_progress=False)
    before = snapshot(graph)
    assert len(before[0]) == 300 and len(before[1]) == 3000
    assert first.graph_after == {"papers": 300, "citations": 3000}
    again = load_corpus(graph, files, settings, batch_size=700, restart=True,
                        show_progress=False)
    assert again.status == "loaded" and again.citations_written == 3000
    assert snapshot(graph) == before


def test_an_unchanged_input_is_skipped_until_the_graph_loses_it(
        graph: Graph, settings: Settings, tmp_path: Path) -> None:
    files = locate_corpus(small_corpus(tmp_path / "c", 50, 200))
    assert load_corpus(graph, files, settings, show_progress=False).status == "loaded"
    skipped = load_corpus(graph, files, settings, show_progress=False)
    assert skipped.status == "unchanged" and skipped.papers_written == 0
    assert skipped.papers.accepted == 50 and skipped.citations.accepted == 200
    clean_graph(graph)
    reloaded = load_corpus(graph, files, settings, show_progress=False)
    assert reloaded.status == "loaded" and reloaded.graph_after["citations"] == 200


def test_an_edited_input_is_loaded_again(graph: Graph, settings: Settings,
                                         tmp_path: Path) -> None:
    folder = small_corpus(tmp_path / "c", 50, 200)
    files = locate_corpus(folder)
    load_corpus(graph, files, settings, show_progress=False)
    with (folder / "papers.jsonl").open("a") as out:
        out.write('{"id": "late", "title": "Added later"}\n')
    report = load_corpus(graph, files, settings, show_progress=False)
    assert report.status == "loaded" and report.graph_after["papers"] == 51


def test_an_interrupted_load_resumes_where_it_stopped(graph: Graph, settings: Settings,
                                                      tmp_path: Path) -> None:
    folder = small_corpus(tmp_path / "c")
    lines = (folder / "citations.csv").read_text().splitlines()
    first_id = lines[1].split(",")[0]
    lines.insert(5, f"{first_id},{first_id}")  # a reject before the interruption ...
    lines.insert(2500, "gen0000001,nowhere")  # ... and one after it
    (folder / "citations.csv").write_text("\n".join(lines) + "\n")
    files = locate_corpus(folder)

    with pytest.raises(KeyboardInterrupt):
        load_corpus(InterruptedGraph(graph, allowed=2), files, settings, batch_size=500,
                    show_progress=False)
    _, rels = snapshot(graph)
    assert len(rels) == 1000  # two batches of 500 edges (a refused row is not in a batch)

    report = load_corpus(graph, files, settings, batch_size=500, show_progress=False)
    assert report.status == "resumed"
    assert report.resumed_from == {"papers.jsonl": 300, "citations.csv": 1002}
    assert report.papers_written == 0 and report.citations_written == 2000
    assert report.citations.accepted == 3000 and report.citations.rejected == 2
    assert len(snapshot(graph)[1]) == 3000
    rejects = read_rejects(report.rejects_path)
    assert [(r.line, r.kind.value) for r in rejects] == [(6, "self_citation"),
                                                        (2501, "unknown_paper")]


def test_edges_may_point_at_papers_already_in_the_graph(graph: Graph, settings: Settings,
                                                        tmp_path: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    (first / "papers.jsonl").write_text('{"id": "a1", "title": "A1"}\n')
    load_corpus(graph, locate_corpus(first), settings, show_progress=False)
    second = tmp_path / "second"
    second.mkdir()
    (second / "papers.jsonl").write_text('{"id": "b1", "title": "B1"}\n')
    (second / "citations.csv").write_text("citing_id,cited_id\nb1,a1\nb1,zz\n")
    report = load_corpus(graph, locate_corpus(second), settings, show_progress=False)
    assert report.citations.accepted == 1 and report.rejects == {"unknown_paper": 1}
    assert snapshot(graph)[1][0]["a"] == "b1" and snapshot(graph)[1][0]["b"] == "a1"


def test_arxiv_snapshot_with_an_edge_list(graph: Graph, settings: Settings) -> None:
    files = locate_corpus(FIXTURES / "arxiv_snapshot.jsonl", "arxiv",
                          FIXTURES / "arxiv_citations.csv")
    report = load_corpus(graph, files, settings, show_progress=False)
    nodes, rels = snapshot(graph)
    assert [n["p"]["id"] for n in nodes] == ["0801.0042", "hep-th/9905123"]
    assert nodes[0]["p"]["authors"] == ["A. Example", "B. Sample", "C. -D. Person"]
    assert nodes[0]["p"]["year"] == 2008 and nodes[0]["p"]["categories"] == ["hep-th", "math-ph"]
    assert [(r["a"], r["b"]) for r in rels] == [("0801.0042", "hep-th/9905123")]
    assert report.rejects == {"missing_title": 1, "unknown_paper": 1}


def test_an_unchanged_input_is_loaded_again_when_a_property_was_removed(
        graph: Graph, settings: Settings, tmp_path: Path) -> None:
    files = locate_corpus(small_corpus(tmp_path / "c", 50, 200))
    assert load_corpus(graph, files, settings, show_progress=False).status == "loaded"
    before = snapshot(graph)
    with graph.driver.session(database=graph.database) as session:
        session.run("MATCH (p:Paper) WITH p ORDER BY p.id LIMIT 1 REMOVE p.title").consume()
    again = load_corpus(graph, files, settings, show_progress=False)
    assert again.status == "loaded"
    assert snapshot(graph) == before
    assert load_corpus(graph, files, settings, show_progress=False).status == "unchanged"
