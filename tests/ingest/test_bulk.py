"""`crase db import`: neo4j-admin bulk import into a second disposable server, which ends
up with the same graph as the incremental load of the same input."""

import json
from pathlib import Path
from typing import Any

import pytest

from crase.api.cli import main
from crase.errors import BulkImportError
from crase.graph import Graph
from crase.ingest.bulk import EdgeProperties, add_edge_properties, check_bulk_allowed
from crase.ingest.corpus import locate_corpus
from crase.ingest.loader import load_corpus
from crase.models.paper_encoders import ENCODER_NAMES
from crase.settings import DatabaseSettings, ModelSettings, Settings
from tests.ingest.conftest import point_cli_at

TRICKY_PAPERS = [
    {"id": "t1", "title": 'Quotes "inside", commas, and a \\ backslash', "abstract": "",
     "year": 2001, "authors": ["O'Brien, P.", "Müller; K."], "categories": ["hep-th"]},
    {"id": "t2", "title": "Two lines", "abstract": "First line.\nSecond line.", "year": 2002,
     "date": "2002-02-02", "journal_ref": "Phys. Rev. D 1 (2002)"},
    {"id": "t3", "title": "Unicode: café, 東京, ∂μ", "abstract": "$\\alpha$-model",
     "doi": "10.1/X", "arxiv_id": "hep-th/0203003", "venue": "arXiv"},
    {"id": "t4", "title": "No year, no authors"},
]
CITATIONS = "citing_id,cited_id\nt2,t1\nt3,t1\nt3,t2\nt3,t2\nt4,t4\nt4,t9\nt4,t3\n"


def tricky_corpus(folder: Path) -> Path:
    folder.mkdir()
    lines = [json.dumps(p, ensure_ascii=False) for p in TRICKY_PAPERS] + ['{"id": "bad"}']
    (folder / "papers.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "citations.csv").write_text(CITATIONS)
    return folder


def graph_content(graph: Graph) -> tuple[list[Any], list[Any]]:
    with graph.driver.session(database=graph.database) as session:
        nodes = session.run("MATCH (p:Paper) RETURN properties(p) AS p ORDER BY p.id").data()
        rels = session.run("MATCH (a)-[r:CITES]->(b) RETURN a.id AS a, b.id AS b "
                           "ORDER BY a, b").data()
    return nodes, rels




def test_an_external_database_is_refused() -> None:
    with pytest.raises(BulkImportError, match="external"):
        check_bulk_allowed(Settings(database=DatabaseSettings(uri="bolt://db.example:7687")))
    with pytest.raises(BulkImportError, match="only one"):
        check_bulk_allowed(Settings(database=DatabaseSettings(database="other")))


@pytest.mark.integration
@pytest.mark.slow
def test_bulk_import_matches_the_incremental_load(
        second_server: DatabaseSettings, graph: Graph, settings: Settings, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tricky_corpus(tmp_path / "tricky")
    incremental = load_corpus(graph, locate_corpus(corpus), settings, show_progress=False)
    expected = graph_content(graph)
    assert len(expected[0]) == 4 and len(expected[1]) == 4

    point_cli_at(second_server, monkeypatch, tmp_path)
    rejects = tmp_path / "bulk.rejects.jsonl"
    assert main(["db", "import", str(corpus), "--rejects", str(rejects), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "Imported tricky" in printed and "missing_title" in printed
    assert "4 papers embedded" in printed and "crase embed" not in printed

    bulk_graph = Graph.connect(second_server)
    try:
        nodes, edges = graph_content(bulk_graph)
        # The import also embedded every paper (the incremental load leaves that to
        # `crase embed`): the same graph besides the vectors.
        vectors = {node["p"]["id"]: (node["p"].pop("embedding"),
                                     node["p"].pop("embedding_model")) for node in nodes}
        assert (nodes, edges) == expected
        with bulk_graph.driver.session() as session:
            indexes = {r["name"]: r["state"] for r in session.run(
                "SHOW INDEXES YIELD name, state")}
            hits = session.run("CALL db.index.fulltext.queryNodes('paper_text', 'line') "
                               "YIELD node RETURN node.id AS id").data()
            nearest = session.run(
                "CALL db.index.vector.queryNodes('paper_embedding', 1, $vector) "
                "YIELD node RETURN node.id AS id", vector=vectors["t2"][0]).data()
    finally:
        bulk_graph.close()
    assert indexes["paper_text"] == "ONLINE" and "paper_id_unique" in indexes
    assert hits == [{"id": "t2"}]
    assert indexes["paper_embedding"] == "ONLINE" and nearest == [{"id": "t2"}]
    assert {len(vector) for vector, _ in vectors.values()} == {384}
    assert {model for _, model in vectors.values()} == {  # the default encoder's
        ENCODER_NAMES[ModelSettings().paper_encoder]}
    written = {json.loads(line)["kind"] for line in rejects.read_text().splitlines()}
    assert written == set(incremental.rejects) == {
        "missing_title", "duplicate_edge", "self_citation", "unknown_paper"}


def test_edge_properties_join_their_edges_row_for_row_or_not_at_all(tmp_path: Path) -> None:
    relationships = tmp_path / "citations.csv"
    plain = ':START_ID,:END_ID\na,b\n"c,1",d\n'
    relationships.write_text(plain)
    columns = [("isinfluential", "isinfluential:boolean"), ("intents", "intents:string[]")]
    rows = [{"citing": "a", "cited": "b", "isinfluential": True,
             "intents": ["methodology", "result"]},
            {"citing": "c,1", "cited": "d", "isinfluential": None, "intents": []}]
    properties = tmp_path / "signals.jsonl"
    properties.write_text("".join(json.dumps(row) + "\n" for row in rows[:1]))
    # One row short: the files do not line up, and the relationship file stays as it was.
    assert not add_edge_properties(relationships, EdgeProperties(properties, columns))
    assert relationships.read_text() == plain
    properties.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert add_edge_properties(relationships, EdgeProperties(properties, columns))
    assert relationships.read_text() == (
        ":START_ID,:END_ID,isinfluential:boolean,intents:string[]\n"
        "a,b,true,methodology\x1fresult\n\"c,1\",d,,\n")
