"""The rank stage in GDS against numpy on the same evidence graphs, call by call.

    python -m crase.bench.rank_stage --queries ../shared/data/hepth/queries.jsonl --limit 30

Runs each query's search as it ships (warm: every Delta it needs is stored) and, for the
rank stage, times each database call it makes (the projection, the PageRank, the drop:
their configuration is in cypher/project_evidence_graph.cypher and rank_pagerank.cypher).
The same graph (the projection's own parameters: steps and their weights, the
restart weights) is then ranked in numpy (crase.bench.pagerank, edge list; the weights built
included), and the two top-k lists are compared. A first pass over the queries warms the
server's caches and is not counted. Prints medians and p90 per call, the ratio of the GDS
stage to numpy, how many top-k lists agree, and the load average before and after.
"""

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from crase.bench.machine_state import load_average
from crase.bench.pagerank import sparse_personalized_pagerank
from crase.bench.search_latency import percentile, read_queries
from crase.graph import Graph, Row
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.search.walk import projection_parameters
from crase.settings import Settings

RANK_CALLS = ("project_evidence_graph", "rank_pagerank", "drop_projection")


class TimedGraph(Graph):
    """A Graph that times the rank stage's calls and keeps their parameters and rows."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: dict[str, list[float]] = {}
        self.last: dict[str, tuple[dict[str, Any], list[Row]]] = {}

    def read(self, name: str, timeout_s: float | None = None, **params: Any) -> list[Row]:
        return self._timed(name, params, lambda: super(TimedGraph, self).read(
            name, timeout_s, **params))

    def write(self, name: str, **params: Any) -> list[Row]:
        return self._timed(name, params, lambda: super(TimedGraph, self).write(name, **params))

    def _timed(self, name: str, params: dict[str, Any], call: Any) -> list[Row]:
        started = time.perf_counter()
        rows: list[Row] = call()
        if name in RANK_CALLS:
            self.calls.setdefault(name, []).append(time.perf_counter() - started)
            self.last[name] = (params, rows)
        return rows


def numpy_top(params: dict[str, Any], nodes: list[str], damping: float, max_iterations: int,
              tolerance: float, k: int) -> list[str]:
    """The projection's graph ranked in numpy: its steps as given (node i is nodes[i], the
    walk's origin is node n), weights and all."""
    n = len(nodes)
    sources = np.array(params["sources"], dtype=np.int64)
    targets = np.array(params["targets"], dtype=np.int64)
    weights = np.array(params["weights"], dtype=float)
    keep = weights > 0  # GDS's PageRank never walks a zero-weight relationship
    teleport = np.zeros(n + 1)
    teleport[n] = 1.0 - damping
    scores = sparse_personalized_pagerank(n + 1, sources[keep], targets[keep], weights[keep],
                                          teleport, damping, max_iterations, tolerance)[:n]
    order = sorted((i for i in range(n) if scores[i] > 0), key=lambda i: (-scores[i], nodes[i]))
    return [nodes[i] for i in order[:k]]


def timed_numpy(params: dict[str, Any], nodes: list[str],
                settings: Settings) -> tuple[list[str], float]:
    """numpy's top k and its time, from the steps and weights the projection was given."""
    p = settings.search
    started = time.perf_counter()
    top = numpy_top(params, nodes, 1.0 - p.alpha, p.max_iterations, p.tolerance, p.k)
    return top, time.perf_counter() - started


def floor(graph: TimedGraph, papers: list[str], settings: Settings,
          repeats: int = 20) -> dict[str, float]:
    """GDS's fixed cost: the same three calls, with the same configuration, on the smallest
    evidence graph there is (two papers, one step, one seed); the median of `repeats`."""
    graph.calls.clear()
    p = settings.search
    for _ in range(repeats):
        name = "crase-floor"
        try:
            graph.write("project_evidence_graph", **projection_parameters(
                name, [(2, 0, 1.0), (0, 1, 1.0)]))
            graph.read("rank_pagerank", graph_name=name, nodes=papers[:2], origin=2,
                       damping=1.0 - p.alpha, max_iterations=p.max_iterations,
                       tolerance=p.tolerance, k=p.k)
        finally:
            graph.write("drop_projection", graph_name=name)
    return {name: statistics.median(graph.calls[name]) for name in RANK_CALLS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=Path, required=True, help="queries.jsonl")
    parser.add_argument("--limit", type=int, default=30, help="queries to run (default 30)")
    args = parser.parse_args()
    settings = Settings()
    backends = build_search_backends(settings)
    queries = read_queries(args.queries, args.limit)
    with TimedGraph.connect(settings.database) as graph:
        assert isinstance(graph, TimedGraph)

        def search(query: dict[str, Any]) -> None:
            run_search(graph, backends, SearchRequest(query=query["query"],
                                                      params=settings.search,
                                                      exclude=[query["source_paper_id"]]))

        for query in queries:  # warm-up pass, not counted
            search(query)
        graph.calls.clear()
        before = load_average()
        stage, numpy_s, agree, sizes = [], [], 0, []
        for query in queries:
            search(query)
            params, _ = graph.last["project_evidence_graph"]
            ranked, gds_rows = graph.last["rank_pagerank"]
            stage.append(sum(graph.calls[name][-1] for name in RANK_CALLS))
            top, seconds = timed_numpy(params, ranked["nodes"], settings)
            numpy_s.append(seconds)
            agree += top == [r["id"] for r in gds_rows]
            sizes.append((len(ranked["nodes"]), len(params["targets"])))
        measured = {name: list(graph.calls[name]) for name in RANK_CALLS}
        fixed = floor(graph, ranked["nodes"], settings)
    after = load_average()
    print(f"{len(queries)} queries; median graph {statistics.median(s[0] for s in sizes):.0f} "
          f"papers, {statistics.median(s[1] for s in sizes):.0f} steps; load average {before} "
          f"before, {after} after")
    print(f"  {'call':<24}{'median ms':>10}{'p90 ms':>10}")
    for name in RANK_CALLS:
        values = measured[name]
        print(f"  {name:<24}{1000 * statistics.median(values):>10.1f}"
              f"{1000 * percentile(values, 0.9):>10.1f}")
    print(f"  {'GDS rank stage':<24}{1000 * statistics.median(stage):>10.1f}"
          f"{1000 * percentile(stage, 0.9):>10.1f}")
    print(f"  {'numpy (weights + PPR)':<24}{1000 * statistics.median(numpy_s):>10.1f}"
          f"{1000 * percentile(numpy_s, 0.9):>10.1f}")
    ratios = [g / n for g, n in zip(stage, numpy_s, strict=True)]
    print("  GDS's floor (two papers, one step; median of 20): " + ", ".join(
        f"{name} {1000 * seconds:.1f} ms" for name, seconds in fixed.items()) +
        f"; {1000 * sum(fixed.values()):.1f} ms in all")
    print(f"GDS / numpy: median {statistics.median(ratios):.1f}x; same top {settings.search.k} "
          f"on {agree} of {len(queries)} queries")


if __name__ == "__main__":
    main()
