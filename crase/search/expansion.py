"""The neighbourhood of the seeds, by radius; each radius is one Cypher file."""

from dataclasses import dataclass

from crase.graph import Graph

EXPANSION_QUERIES = {
    "1": "expand_one_hop",
    "1.5": "expand_one_and_half_hop",
    "2": "expand_two_hop",
}

Edge = tuple[str, str]  # (citing id, cited id)


@dataclass(frozen=True)
class Neighbourhood:
    seeds: list[str]
    nodes: list[str]
    edges: list[Edge]


def expand(graph: Graph, seeds: list[str], hops: str, excluded: list[str]) -> Neighbourhood:
    rows = graph.read(EXPANSION_QUERIES[hops], seeds=seeds, excluded=excluded)
    if not rows:
        return Neighbourhood(seeds=[], nodes=[], edges=[])
    nodes = rows[0]["nodes"]
    present = set(nodes)
    edges = sorted({(a, b) for a, b in rows[0]["edges"]})
    return Neighbourhood([s for s in seeds if s in present], nodes, edges)
