"""The rank stage in GDS against numpy on the same evidence graphs, call by call.

    python -m crase.bench.rank_stage --queries ../shared/data/hepth/queries.jsonl --limit 30

Runs each query's search as it ships (warm: every Delta it needs is stored) and, for the
rank stage, times each database call it makes (the projection, then the PageRank, which
drops the projection in the same query: their configuration is in
cypher/project_evidence_graph.cypher and rank_pagerank.cypher; cypher/drop_projection.cypher
runs only after a failure, and the benchmark counts such calls).
The same graph (the projection's own parameters: steps and their weights, the
restart weights) is then ranked in numpy (crase.bench.pagerank, edge list; the weights built
included), and the two lists are compared at the length the walk was asked for (k, or the
learned order's deeper pool, order/features.py WALK_POOL) and on their first
`search.k`. Papers whose scores agree to 12 significant digits count as tied, and tied
papers are ordered by id on both sides: exact ties (papers the walk cannot tell apart) come
out of GDS and numpy a last bit apart. A first pass over the queries warms the server's
caches and is not counted. Prints medians and p90 per call, the ratio of the GDS stage to
numpy, how many lists agree, and the load average before and after.
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
from crase.scoring.delta import PrunedGraph
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.search.walk import Walk, rank
from crase.settings import Settings

RANK_CALLS = ("project_evidence_graph", "rank_pagerank")
# Run only when projecting or ranking failed; counted, not timed.
CLEANUP_CALL = "drop_projection"
# Scores that agree to this many significant digits are one tie (see the docstring).
TIE_DIGITS = 12


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
        if name == CLEANUP_CALL:
            self.calls.setdefault(name, []).append(time.perf_counter() - started)
        if name in RANK_CALLS:
            self.calls.setdefault(name, []).append(time.perf_counter() - started)
            self.last[name] = (params, rows)
        return rows


def tie_order(scored: list[tuple[str, float]]) -> list[str]:
    """Paper ids best first, scores rounded to TIE_DIGITS significant digits, ties by id."""
    return [paper for paper, _ in sorted(
        scored, key=lambda item: (-float(f"{item[1]:.{TIE_DIGITS}g}"), item[0]))]


def numpy_scores(params: dict[str, Any], nodes: list[str], damping: float,
                 max_iterations: int, tolerance: float) -> list[tuple[str, float]]:
    """The projection's graph ranked in numpy: its steps as given (node i is nodes[i], the
    walk's origin is node n), weights and all; (paper, score) for every paper the walk
    reaches, scores divided by their sum as the ranking query does."""
    n = len(nodes)
    sources = np.array(params["sources"], dtype=np.int64)
    targets = np.array(params["targets"], dtype=np.int64)
    weights = np.array(params["weights"], dtype=float)
    keep = weights > 0  # GDS's PageRank never walks a zero-weight relationship
    teleport = np.zeros(n + 1)
    teleport[n] = 1.0 - damping
    scores = sparse_personalized_pagerank(n + 1, sources[keep], targets[keep], weights[keep],
                                          teleport, damping, max_iterations, tolerance)[:n]
    total = scores.sum()
    return [(nodes[i], float(scores[i] / total)) for i in range(n) if scores[i] > 0]


def numpy_top(params: dict[str, Any], nodes: list[str], damping: float, max_iterations: int,
              tolerance: float, k: int) -> list[str]:
    """numpy's top k, ties by id, as the ranking query orders GDS's scores."""
    scored = numpy_scores(params, nodes, damping, max_iterations, tolerance)
    return [paper for paper, _ in sorted(scored, key=lambda item: (-item[1], item[0]))[:k]]


def timed_numpy(params: dict[str, Any], ranked: dict[str, Any]
                ) -> tuple[list[tuple[str, float]], float]:
    """numpy's scores over the graph the projection was given, and its time."""
    started = time.perf_counter()
    scored = numpy_scores(params, ranked["nodes"], ranked["damping"],
                          ranked["max_iterations"], ranked["tolerance"])
    return scored, time.perf_counter() - started


def agreement(gds_rows: list[Row], numpy_scored: list[tuple[str, float]], asked: int,
              shown: int) -> tuple[bool, bool]:
    """Whether GDS and numpy give the same list of the length the walk was asked for
    (`asked`), and the same first `shown`, tied papers ordered by id on both sides."""
    gds = tie_order([(r["id"], float(r["score"])) for r in gds_rows])
    reference = tie_order(numpy_scored)[:asked]
    return gds == reference, gds[:shown] == reference[:shown]


def floor(graph: TimedGraph, settings: Settings, repeats: int = 20) -> dict[str, float]:
    """GDS's fixed cost: the rank stage as the search runs it (search/walk.py) on the
    smallest evidence graph there is (two papers, one citation walked one way, one seed:
    the walk ends at the cited paper, so the PageRank stops after a few iterations; both
    ways it would circle for ~90); the median of `repeats` per call."""
    graph.calls.clear()
    p = settings.search
    pruned = PrunedGraph(edges={("floor-a", "floor-b"): 1.0}, nodes=["floor-a", "floor-b"],
                         seeds=["floor-a"], pruned_edges={}, dropped_nodes={})
    walk = Walk(p.walk, "references", 2026, 0.0, p.alpha, p.k, p.max_iterations,
                p.tolerance)
    for _ in range(repeats):
        rank(graph, "floor", pruned, walk, {"floor-a": 1.0}, {})
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
        stage, numpy_s, agree_asked, agree_shown, sizes, asked = [], [], 0, 0, [], set()
        for query in queries:
            search(query)
            params, _ = graph.last["project_evidence_graph"]
            ranked, gds_rows = graph.last["rank_pagerank"]
            stage.append(sum(graph.calls[name][-1] for name in RANK_CALLS))
            scored, seconds = timed_numpy(params, ranked)
            numpy_s.append(seconds)
            same_asked, same_shown = agreement(gds_rows, scored, ranked["k"],
                                               settings.search.k)
            agree_asked += same_asked
            agree_shown += same_shown
            sizes.append((len(ranked["nodes"]), len(params["targets"])))
            asked.add(ranked["k"])
        measured = {name: list(graph.calls[name]) for name in RANK_CALLS}
        cleanups = len(graph.calls.get(CLEANUP_CALL, []))
        fixed = floor(graph, settings)
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
    print(f"  {'numpy (PPR)':<24}{1000 * statistics.median(numpy_s):>10.1f}"
          f"{1000 * percentile(numpy_s, 0.9):>10.1f}")
    ratios = [g / n for g, n in zip(stage, numpy_s, strict=True)]
    print("  GDS's floor (two papers, one step; median of 20): " + ", ".join(
        f"{name} {1000 * seconds:.1f} ms" for name, seconds in fixed.items()) +
        f"; {1000 * sum(fixed.values()):.1f} ms in all")
    print(f"  projections dropped after a failure: {cleanups}")
    print(f"GDS / numpy: median {statistics.median(ratios):.1f}x; the walk asked for "
          f"{'/'.join(map(str, sorted(asked)))} papers: same list on {agree_asked} of "
          f"{len(queries)} queries, same top {settings.search.k} on {agree_shown} of "
          f"{len(queries)} (tied papers by id)")


if __name__ == "__main__":
    main()
