"""Pruning and ranking: keep edges with Delta > tau, project the retained graph into GDS
(weights computed there), rank with personalized PageRank in GDS or SALSA in numpy, and
always drop the projection.

About PageRank scores: GDS gives each seed teleport mass (1 - d) and lets the mass of
dangling nodes leak, while the paper sends dangling mass back to the seed distribution.
With the seeds as the personalization set both vectors are proportional (the dangling
mass re-enters exactly like extra teleport), so the ranking is the same; the scores
reported are GDS's divided by their sum over all nodes, i.e. the paper's distribution.
"""

from dataclasses import dataclass

import numpy as np

from crase.graph import Graph
from crase.scoring.salsa import salsa_scores
from crase.search.expansion import Edge


@dataclass(frozen=True)
class PrunedGraph:
    edges: dict[Edge, float]  # retained edge -> Delta
    nodes: list[str]  # nodes with at least one retained edge
    seeds: list[str]  # seeds that survived pruning
    pruned_edges: dict[Edge, str]  # cut edge -> reason
    dropped_nodes: dict[str, str]  # cut node -> reason


def prune(nodes: list[str], edges: list[Edge], delta: dict[Edge, float], seeds: list[str],
          tau: float) -> PrunedGraph:
    """Drop edges with Delta <= tau (or no Delta), then nodes left with no edge."""
    retained, pruned = {}, {}
    for edge in edges:
        value = delta.get(edge)
        if value is None:
            pruned[edge] = "not scored"
        elif value <= tau:
            pruned[edge] = f"delta {value:.3f} <= tau {tau:g}"
        else:
            retained[edge] = value
    touched = {paper for edge in retained for paper in edge}
    kept = [n for n in nodes if n in touched]
    dropped = {n: "no edge left after pruning" for n in nodes if n not in touched}
    return PrunedGraph(retained, kept, [s for s in seeds if s in touched], pruned, dropped)


def keep_all_edges(nodes: list[str], edges: list[Edge], seeds: list[str]) -> PrunedGraph:
    """The uniform walk's graph: every edge of the neighbourhood kept with weight 1 (Delta
    is not consulted), then, as in `prune`, papers without an edge dropped."""
    return prune(nodes, edges, dict.fromkeys(edges, 1.0), seeds, tau=0.0)


def rank(graph: Graph, projection_name: str, pruned: PrunedGraph, ranker: str,
         orientation: str, reference_year: int, beta: float, alpha: float, k: int,
         max_iterations: int = 100, tolerance: float = 1e-9) -> list[tuple[str, float]]:
    """Top-k (paper id, score) over the retained graph; the projection is always dropped."""
    if not pruned.edges or not pruned.seeds:
        return []
    nodes = sorted({paper for edge in pruned.edges for paper in edge})
    position = {paper: i for i, paper in enumerate(nodes)}
    rows = [{"u": position[u], "v": position[v], "delta": d}
            for (u, v), d in pruned.edges.items()]
    try:
        graph.write("project_evidence_graph", graph_name=projection_name, nodes=nodes, rows=rows,
                    orientation=orientation, reference_year=reference_year, beta=beta)
        if ranker == "salsa":
            return _rank_salsa(graph, projection_name, pruned.seeds, alpha, k)
        return _rank_pagerank(graph, projection_name, pruned.seeds, alpha, k,
                              max_iterations, tolerance)
    finally:
        graph.write("drop_projection", graph_name=projection_name)


def _rank_pagerank(graph: Graph, name: str, seeds: list[str], alpha: float, k: int,
                   max_iterations: int, tolerance: float) -> list[tuple[str, float]]:
    rows = graph.read("rank_pagerank", graph_name=name, seeds=seeds, damping=1.0 - alpha,
                      max_iterations=max_iterations, tolerance=tolerance, k=k)
    return [(r["id"], float(r["score"])) for r in rows]


def _rank_salsa(graph: Graph, name: str, seeds: list[str], alpha: float,
                k: int) -> list[tuple[str, float]]:
    rows = graph.read("stream_projected_weights", graph_name=name)
    ids = sorted({r["source"] for r in rows} | {r["target"] for r in rows})
    index = {paper: i for i, paper in enumerate(ids)}
    weights = np.zeros((len(ids), len(ids)))
    for r in rows:
        weights[index[r["source"]], index[r["target"]]] += r["w"]
    scores = salsa_scores(weights, [index[s] for s in seeds if s in index], alpha)
    reached = [i for i in range(len(ids)) if scores[i] > 0]
    order = sorted(reached, key=lambda i: (-scores[i], ids[i]))[:k]
    return [(ids[i], float(scores[i])) for i in order]
