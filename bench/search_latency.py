"""Per-stage time of the evidence-graph search over a query set: a cold pass (whatever is
not yet scored gets claims and Delta now), then a warm pass (every Delta reused).

    python -m crase.bench.search_latency --queries ../shared/data/hepth/queries.jsonl \
        --limit 20 --out var/bench/search-latency.json

Each query excludes its source paper, as in the quality benchmark. Prints, per pass, the
median and 90th percentile of every stage and of the whole search, the graph sizes, and
the entailment throughput of the cold pass (edges scored per second of entailment stage).
"""

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from crase.graph import Graph
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.protocols import SearchBackends
from crase.settings import Settings

STAGES = ["plan", "seeds", "expand", "claims", "entailment", "prune", "rank", "fill",
          "evidence", "record"]


def read_queries(path: Path, limit: int) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle][:limit]


def run_pass(graph: Graph, backends: SearchBackends, settings: Settings,
             queries: list[dict[str, Any]], label: str) -> list[dict[str, Any]]:
    rows = []
    for number, query in enumerate(queries, start=1):
        request = SearchRequest(query=query["query"], params=settings.search,
                                exclude=[query["source_paper_id"]])
        start = time.perf_counter()
        result = run_search(graph, backends, request)
        wall = time.perf_counter() - start
        rows.append({"query_id": query["query_id"], "wall_s": wall, "timings": result.timings,
                     "counts": result.counts})
        print(f"  {label} {number}/{len(queries)}: {wall:6.2f} s  |V|={result.counts['nodes']} "
              f"|E|={result.counts['edges']} scored now {result.counts['edges_scored_now']}",
              flush=True)
    return rows


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    per_stage = {stage: [r["timings"].get(stage, 0.0) for r in rows] for stage in STAGES}
    walls = [r["wall_s"] for r in rows]
    scored = sum(r["counts"]["edges_scored_now"] for r in rows)
    entailment_s = sum(per_stage["entailment"])
    return {
        "queries": len(rows),
        "wall_median_s": statistics.median(walls), "wall_p90_s": percentile(walls, 0.9),
        "stage_median_s": {s: statistics.median(v) for s, v in per_stage.items()},
        "stage_p90_s": {s: percentile(v, 0.9) for s, v in per_stage.items()},
        "nodes_median": statistics.median(r["counts"]["nodes"] for r in rows),
        "edges_median": statistics.median(r["counts"]["edges"] for r in rows),
        "edges_scored": scored,
        "entailment_edges_per_s": scored / entailment_s if entailment_s else None,
    }


def print_summary(label: str, summary: dict[str, Any]) -> None:
    print(f"\n{label}: {summary['queries']} queries, median |V|={summary['nodes_median']:.0f}, "
          f"median |E|={summary['edges_median']:.0f}, edges scored {summary['edges_scored']}")
    print(f"  {'stage':<11}{'median s':>10}{'p90 s':>10}")
    for stage in STAGES:
        print(f"  {stage:<11}{summary['stage_median_s'][stage]:>10.3f}"
              f"{summary['stage_p90_s'][stage]:>10.3f}")
    print(f"  {'end to end':<11}{summary['wall_median_s']:>10.3f}{summary['wall_p90_s']:>10.3f}")
    if summary["entailment_edges_per_s"]:
        print(f"  entailment throughput: {summary['entailment_edges_per_s']:.0f} edges/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=Path, required=True, help="queries.jsonl")
    parser.add_argument("--limit", type=int, default=20, help="queries to run (default 20)")
    parser.add_argument("--warm-only", action="store_true", help="skip the cold pass")
    parser.add_argument("--out", type=Path, help="write every query's figures as JSON here")
    args = parser.parse_args()
    settings = Settings()
    queries = read_queries(args.queries, args.limit)
    backends = build_search_backends(settings)
    graph = Graph.connect(settings.database)
    report: dict[str, Any] = {"database": settings.database.bolt_uri(),
                              "params": settings.search.model_dump()}
    try:
        passes = ["warm"] if args.warm_only else ["cold", "warm"]
        for label in passes:
            rows = run_pass(graph, backends, settings, queries, label)
            report[label] = {"summary": summarise(rows), "queries": rows}
            print_summary(label, report[label]["summary"])
    finally:
        graph.close()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
