"""Add papers from Semantic Scholar to the graph on demand, with their neighbours.

For each requested paper: its details (batch endpoint), its references and its citing
papers (paginated, capped by the API at ~10,000). Every record becomes a validated
`Paper`; one that is already in the graph (same S2 id, arXiv id or DOI) keeps its id and
only gains the properties it lacks, so a corpus's own title and abstract are never
overwritten. New papers get the id `s2:<paperId>`. Edges go in with the same MERGE as the
corpus load.
"""

from dataclasses import dataclass, field
from typing import Any

from crase.graph import Graph
from crase.ingest.records import Citation, Paper
from crase.ingest.semantic_scholar import (
    NeighbourList,
    S2Paper,
    SemanticScholarClient,
    paper_from_s2,
)

WRITE_CHUNK = 5_000


@dataclass
class ProviderLoadReport:
    requested: list[str]
    not_found: list[str] = field(default_factory=list)
    papers_created: int = 0
    papers_enriched: int = 0  # already in the graph; missing properties filled in
    citations_written: int = 0
    null_abstracts: list[str] = field(default_factory=list)  # ids of papers without one
    truncated: list[str] = field(default_factory=list)  # "<id> references|citations"
    unresolved_neighbours: int = 0  # listed by S2 without a record behind them
    skipped_records: int = 0  # records without an id or a title


async def add_papers_from_semantic_scholar(graph: Graph, client: SemanticScholarClient,
                                           paper_ids: list[str],
                                           neighbours: bool = True) -> ProviderLoadReport:
    """Fetch `paper_ids` (any id S2 accepts: its own, `arXiv:...`, `DOI:...`) and, with
    `neighbours`, their references and citations; MERGE them all into the graph."""
    report = ProviderLoadReport(requested=list(paper_ids))
    details = await client.papers(paper_ids)
    centres = [record for record in details if record is not None and record.paperId]
    report.not_found = [asked for asked, record in zip(paper_ids, details, strict=True)
                        if record is None]
    lists: list[NeighbourList] = []
    if neighbours:
        for record in centres:
            lists.append(await client.references(record.paperId or ""))
            lists.append(await client.citations(record.paperId or ""))
    records = {record.paperId: record for record in centres if record.paperId}
    for neighbour_list in lists:
        report.unresolved_neighbours += neighbour_list.unresolved
        if neighbour_list.truncated:
            report.truncated.append(f"{neighbour_list.paper_id} {neighbour_list.direction}")
        for record in neighbour_list.papers:
            records.setdefault(record.paperId or "", record)
    graph_ids = merge_records(graph, list(records.values()), report)
    write_edges(graph, edges_of(lists, graph_ids), report)
    return report


def merge_records(graph: Graph, records: list[S2Paper],
                  report: ProviderLoadReport) -> dict[str, str]:
    """MERGE the records; returns S2 paperId -> graph paper id."""
    papers: dict[str, Paper] = {}
    for record in records:
        paper = paper_from_s2(record)
        if paper is None or paper.s2_id is None:
            report.skipped_records += 1
            continue
        papers[paper.s2_id] = paper
    existing = match_existing(graph, list(papers.values()))
    rows, graph_ids = [], {}
    for s2_id, paper in papers.items():
        found = existing.get(s2_id)
        properties = paper.graph_properties()
        if found is None:
            graph_ids[s2_id] = paper.id
            report.papers_created += 1
            if not paper.abstract:
                report.null_abstracts.append(paper.id)
        else:
            graph_ids[s2_id], filled = found
            properties = {k: v for k, v in properties.items() if k not in filled}
            report.papers_enriched += 1
        rows.append({"id": graph_ids[s2_id], "props": properties})
    for start in range(0, len(rows), WRITE_CHUNK):
        graph.write("merge_papers", rows=rows[start:start + WRITE_CHUNK])
    return graph_ids


def match_existing(graph: Graph, papers: list[Paper]) -> dict[str, tuple[str, set[str]]]:
    """S2 id -> (graph id, properties the graph paper already has) for known papers."""
    found: dict[str, tuple[str, set[str]]] = {}
    for start in range(0, len(papers), WRITE_CHUNK):
        rows = [{"key": p.s2_id, "s2_id": p.s2_id, "arxiv_id": p.arxiv_id, "doi": p.doi}
                for p in papers[start:start + WRITE_CHUNK]]
        for row in graph.read("match_papers_by_external_ids", rows=rows):
            if row["id"] is not None:
                found[row["key"]] = (row["id"], set(row["filled"]))
    return found


def edges_of(lists: list[NeighbourList], graph_ids: dict[str, str]) -> list[Citation]:
    edges: dict[tuple[str, str], Citation] = {}
    for neighbour_list in lists:
        centre = graph_ids.get(neighbour_list.paper_id)
        if centre is None:
            continue
        for record in neighbour_list.papers:
            other = graph_ids.get(record.paperId or "")
            if other is None or other == centre:
                continue  # a record that could not be a node, or a self-citation
            pair = (centre, other) if neighbour_list.direction == "references" \
                else (other, centre)
            edges[pair] = Citation(citing_id=pair[0], cited_id=pair[1])
    return list(edges.values())


def write_edges(graph: Graph, edges: list[Citation], report: ProviderLoadReport) -> None:
    grouped: dict[str, list[str]] = {}
    for edge in edges:
        grouped.setdefault(edge.citing_id, []).append(edge.cited_id)
    rows: list[dict[str, Any]] = [{"citing": k, "cited": v} for k, v in grouped.items()]
    for start in range(0, len(rows), WRITE_CHUNK):
        written = graph.write("merge_citations", rows=rows[start:start + WRITE_CHUNK])
        report.citations_written += int(written[0]["written"]) if written else 0
