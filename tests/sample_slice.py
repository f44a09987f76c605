"""Papers of the committed sample and the citations among them, written into a test's
graph: a small real corpus for pipeline tests."""

import json
from pathlib import Path
from typing import Any

from crase.graph import Graph

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def load_sample_slice(graph: Graph, papers: int, min_abstract_words: int = 0
                      ) -> list[dict[str, Any]]:
    """Create the first `papers` sample papers (those with at least `min_abstract_words`
    words of abstract) and their citations among each other; returns the paper rows."""
    rows = [json.loads(line) for line in (SAMPLE / "papers.jsonl").open()][:papers]
    rows = [row for row in rows if len(row["abstract"].split()) >= min_abstract_words]
    ids = {row["id"] for row in rows}
    edges = [line.strip().split(",") for line in (SAMPLE / "citations.csv").open()][1:]
    create_papers(graph, rows, [edge for edge in edges if edge[0] in ids and edge[1] in ids])
    return rows


def create_papers(graph: Graph, rows: list[dict[str, Any]], edges: list[list[str]]) -> None:
    """Paper nodes for the sample rows and CITES edges for [citing, cited] pairs."""
    with graph.driver.session() as session:
        session.run("UNWIND $rows AS r CREATE (:Paper {id: r.id, title: r.title, "
                    "abstract: r.abstract, year: r.year, authors: r.authors})",
                    rows=rows).consume()
        session.run("UNWIND $edges AS e MATCH (u:Paper {id: e[0]}), (v:Paper {id: e[1]}) "
                    "CREATE (u)-[:CITES]->(v)", edges=edges).consume()
