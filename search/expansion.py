"""The neighbourhood of the seeds, by radius; each radius is one Cypher file.

The expansion also returns what is already stored on each edge (scorer, version, theta,
Delta), so a warm search touches every edge once instead of reading its score again, the
publisher's influential mark where the corpus has one (the `influential` weighting's
weight), and each paper's year, which the walk's age weight needs.
"""

from dataclasses import dataclass, field

from crase.graph import Graph

EXPANSION_QUERIES = {
    "1": "expand_one_hop",
    "1.5": "expand_one_and_half_hop",
    "2": "expand_two_hop",
}

Edge = tuple[str, str]  # (citing id, cited id)


@dataclass(frozen=True)
class StoredScore:
    """The score an edge carries from an earlier run, as written by `set_edge_scores`."""

    scorer: str
    version: str
    theta: float
    delta: float

    def answers(self, scorer: str, version: str, theta: float) -> bool:
        return (self.scorer, self.version, self.theta) == (scorer, version, theta)


@dataclass(frozen=True)
class Neighbourhood:
    seeds: list[str]
    nodes: list[str]
    edges: list[Edge]
    stored: dict[Edge, StoredScore] = field(default_factory=dict)
    years: dict[str, int | None] = field(default_factory=dict)
    # The publisher's mark per edge (Semantic Scholar's isinfluential); edges without one
    # are absent.
    influential: dict[Edge, bool] = field(default_factory=dict)


def expand(graph: Graph, seeds: list[str], hops: str, excluded: list[str]) -> Neighbourhood:
    rows = graph.read(EXPANSION_QUERIES[hops], seeds=seeds, excluded=excluded)
    if not rows:
        return Neighbourhood(seeds=[], nodes=[], edges=[])
    nodes = rows[0]["nodes"]
    present = set(nodes)
    stored = {}
    influential = {}
    for citing, cited, scorer, version, theta, delta, marked in rows[0]["edges"]:
        if None not in (scorer, version, theta, delta):
            stored[(citing, cited)] = StoredScore(scorer, str(version), float(theta),
                                                  float(delta))
        if marked is not None:
            influential[(citing, cited)] = bool(marked)
    edges = sorted({(row[0], row[1]) for row in rows[0]["edges"]})
    years = dict(zip(nodes, rows[0]["years"], strict=True))
    return Neighbourhood([s for s in seeds if s in present], nodes, edges, stored, years,
                         influential)
