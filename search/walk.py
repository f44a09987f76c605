"""Ranking of the retained evidence graph (pruned by crase.scoring.delta.prune): the
walk's steps weighted by Delta * age^-beta (crase.scoring.delta.edge_weight), either
projected into GDS and ranked with personalized PageRank there (the projection is always
dropped), or ranked with SALSA in numpy straight from those steps, with no database call.

The personalization vector p (the seeds' restart weights, search/seeds.py) enters
GDS through the walk's origin o, one extra node of the projection that stands for the run:
o links to each seed s with weight p(s) and nothing links back, and the PageRank's only
source node is o. With damping d, o holds (1 - d) and
passes d (1 - d) p(s) to each seed every step, so on the papers the scores solve
pi = d (1 - d) p + d W^T pi: GDS's personalized PageRank with teleport vector p, up to a
constant factor. GDS 2.13 itself restarts uniformly over its source nodes only.

About PageRank scores: GDS lets the mass of dangling nodes leak, while the paper sends
dangling mass back to the seed distribution. Both vectors are proportional (the dangling
mass re-enters exactly like extra teleport), so the ranking is the same; the scores
reported are GDS's divided by their sum over the papers, i.e. the paper's distribution.

The projection is a graph of numbers (paper i of the sorted node list is node i, the origin
is node n), so projecting and ranking read nothing from the database: the walk's graph is
exactly the steps handed over.

Speed (python -m crase.bench.rank_stage; docs/speed.md has the commands and every run): the
stage is two calls, the projection and the PageRank, which drops the projection in the same
query; drop_projection runs only when one of them failed. GDS's Cypher aggregation
estimated its rows with `EXPLAIN` + the projection's text without its parameters, which
Neo4j plans anew on every search (33 ms of server CPU per EXPLAIN against 4.5 ms with the
parameters, load 20); the projection now runs under PROFILE, which that EXPLAIN refuses at
once. Measured on hep-th (20 held-out queries, learned order, five runs each alternating
with the code before, load 8-12; the median of the run medians, then their range): the
projection 46 ms (34-110) to 23 ms (17-25), the stage 104 ms (92-226) to 80 ms (70-106),
the floor (two papers) 26-29 ms to 13 ms; within the whole search, over 240 searches each,
the rank stage 0.122 s to 0.105 s median. Same rows, score for score, on 40 evidence
graphs. Tried on a private server with the same graphs (server CPU per stage, load 15-20):
PROFILE alone 147 to 121 ms; then one transaction for the three calls 110 ms; the three
folded into one query 99 ms (without PROFILE 203 ms: GDS's EXPLAIN then plans the whole
query); projection plus a ranking query that drops 108 ms, kept, as the projection stays
its own query (the rules test holds its weights); logProgress true on the PageRank 116 ms
(more log lines); GDS's uncompressed adjacency lists 90 against 63 ms. What is left is the
PageRank's 80-100 iterations to tolerance 1e-9: a third of its samples decode adjacency
lists, a tenth write GDS's log, four lines per iteration.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from crase.graph import Graph
from crase.scoring.delta import PrunedGraph, edge_weight
from crase.scoring.salsa import edge_list, salsa_scores
from crase.search.expansion import Edge
from crase.settings import Orientation, WalkMethod


@dataclass(frozen=True)
class Walk:
    """How the retained graph is walked."""

    method: WalkMethod
    orientation: Orientation
    reference_year: int
    beta: float
    alpha: float
    k: int
    max_iterations: int = 100
    tolerance: float = 1e-9


def retained_restart(restart: dict[str, float], seeds: list[str]) -> dict[str, float]:
    """The personalization vector over the seeds that survived pruning, summing to 1 (equal
    shares for seeds without a weight)."""
    mass = {s: restart.get(s, 0.0) for s in seeds}
    total = sum(mass.values())
    if total <= 0:
        return {s: 1.0 / len(seeds) for s in seeds} if seeds else {}
    return {s: value / total for s, value in mass.items()}


def walk_steps(edges: Iterable[Edge], orientation: str) -> list[tuple[str, str, Edge]]:
    """The walk's steps (from, to, the citation used) along the given citations:
    'references' follows citing -> cited, 'citing' cited -> citing, 'both' does both."""
    steps = []
    for citing, cited in edges:
        if orientation != "citing":
            steps.append((citing, cited, (citing, cited)))
        if orientation != "references":
            steps.append((cited, citing, (citing, cited)))
    return steps


def weighted_steps(edges: dict[Edge, float], years: Mapping[str, int | None],
                   walk: Walk) -> list[tuple[str, str, float]]:
    """Each step of the walk (from, to, w) with w = Delta * age(to)^-beta."""
    return [(here, there, edge_weight(edges[edge], years.get(there), walk.reference_year,
                                      walk.beta))
            for here, there, edge in walk_steps(edges, walk.orientation)]


def projection_parameters(name: str, links: list[tuple[int, int, float]]) -> dict[str, Any]:
    """The parameters of cypher/project_evidence_graph for the steps `links` (from, to,
    weight), each end a node number: a paper's position in the node list, or the origin's
    number (the list's length)."""
    return {"graph_name": name, "sources": [a for a, _, _ in links],
            "targets": [b for _, b, _ in links], "weights": [w for _, _, w in links]}


def rank(graph: Graph, run_id: str, pruned: PrunedGraph, walk: Walk,
         restart: dict[str, float], years: Mapping[str, int | None]
         ) -> list[tuple[str, float]]:
    """Top-k (paper id, score) over the retained graph, the walk restarting at the seeds in
    proportion to `restart`, each step weighed by the age (from `years`) of the paper it
    leads to. The PageRank's projection is named after the run `run_id` and always
    dropped; SALSA makes no database call."""
    if not pruned.seeds:
        return []
    p = retained_restart(restart, pruned.seeds)
    steps = weighted_steps(pruned.edges, years, walk)
    return WALK_METHODS[walk.method](graph, run_id, pruned, steps, p, walk)


def rank_pagerank(graph: Graph, run_id: str, pruned: PrunedGraph,
                  steps: list[tuple[str, str, float]], p: dict[str, float],
                  walk: Walk) -> list[tuple[str, float]]:
    """Top-k by the personalized PageRank of GDS over the steps, projected with an origin
    node that links to the seeds (see the module's docstring)."""
    nodes = sorted({paper for edge in pruned.edges for paper in edge} | set(pruned.seeds))
    position = {paper: i for i, paper in enumerate(nodes)}
    origin = len(nodes)
    links = [(origin, position[s], w) for s, w in p.items() if s in position] + [
        (position[a], position[b], w) for a, b, w in steps]
    name = f"crase-run-{run_id}"
    ranked = False  # rank_pagerank drops the projection once it has ranked
    try:
        graph.write("project_evidence_graph", **projection_parameters(name, links))
        rows = graph.read("rank_pagerank", graph_name=name, nodes=nodes, origin=origin,
                          damping=1.0 - walk.alpha, max_iterations=walk.max_iterations,
                          tolerance=walk.tolerance, k=walk.k)
        ranked = True
    finally:
        if not ranked:
            graph.write("drop_projection", graph_name=name)
    return [(r["id"], float(r["score"])) for r in rows]


def rank_salsa(steps: list[tuple[str, str, float]], restart: dict[str, float],
               walk: Walk) -> list[tuple[str, float]]:
    """Top-k (paper id, score) by SALSA (crase.scoring.salsa) over the walk's weighted
    steps, restarting at the seeds in proportion to `restart`.

    The papers are those at either end of a step, numbered in id order: a seed without a
    step takes no part, and with no such seed at all the scores are standard SALSA. Adding
    isolated papers would not change the ranking but would change the order of the numpy
    sums, and with it the scores' last bits."""
    ids = sorted({a for a, _, _ in steps} | {b for _, b, _ in steps})
    index = {paper: i for i, paper in enumerate(ids)}
    edges = edge_list(len(ids), [index[a] for a, _, _ in steps],
                      [index[b] for _, b, _ in steps], [w for _, _, w in steps])
    seeds = [s for s in restart if s in index]
    scores = salsa_scores(edges, [index[s] for s in seeds], walk.alpha,
                          seed_weights=[restart[s] for s in seeds])
    reached = [i for i in range(len(ids)) if scores[i] > 0]
    order = sorted(reached, key=lambda i: (-scores[i], ids[i]))[:walk.k]
    return [(ids[i], float(scores[i])) for i in order]


RankStage = Callable[[Graph, str, PrunedGraph, list[tuple[str, str, float]], dict[str, float],
                      Walk], list[tuple[str, float]]]
# One entry per choice of the `walk` setting (a test holds the two equal): a new choice
# without its stage fails there, not by quietly running another walk.
WALK_METHODS: dict[str, RankStage] = {
    "ppr": rank_pagerank,
    "salsa": lambda _graph, _run_id, _pruned, steps, p, walk: rank_salsa(steps, p, walk),
}
