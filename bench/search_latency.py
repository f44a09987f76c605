"""Per-stage time of the evidence-graph search over a query set: a cold pass (whatever is
not yet scored gets claims and Delta now; right after a server start, also the database's
caches), then a warm pass (every Delta reused).

    python -m crase.bench.search_latency --queries ../shared/data/hepth/queries.jsonl \
        --limit 20 --out var/bench/search-latency.json
    python -m crase.bench.search_latency --sample-queries 50      # a corpus without queries

Each query excludes its source paper, as in the quality benchmark, and starts from the
papers its line gives (`seed_ids`, search/query_sets.py), so each query form can be
timed. `--sample-queries N` makes N queries from the graph itself for a corpus that has no
query set (the generated one): the first six title words of papers with citations, each
excluding its paper.
Prints, per pass, the median and 90th percentile of every stage (the pipeline's own list,
search/pipeline.py STAGES), of the time outside every stage (opening the Run and closing
it: the Run node, its links and its status are written there) and of the whole search,
the graph sizes, the entailment throughput of the cold pass (edges scored per second of
entailment stage), the load average before and after the pass, and at the end the corpus
size, the server's heap and page cache settings and the peak memory of server and client.
"""

import argparse
import json
import resource
import statistics
import time
from pathlib import Path
from typing import Any

from crase.bench.machine_state import load_average, peak_memory_mib
from crase.database import Neo4jServer
from crase.graph import Graph
from crase.search.pipeline import STAGES as PIPELINE_STAGES
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.protocols import SearchBackends
from crase.settings import Settings

STAGES = list(PIPELINE_STAGES)
# The time of a search outside every stage: RunLifecycle opens the Run before the first
# stage and closes it (status, counts and the links deferred to close) after the last.
OUTSIDE = "outside stages"


def read_queries(path: Path, limit: int) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle][:limit]


def sample_queries(graph: Graph, count: int, words: int = 6) -> list[dict[str, Any]]:
    """`count` queries from the graph's own titles (see the module docstring)."""
    papers = graph.read("count_papers_and_citations")[0]["papers"]
    modulus = max(1, papers // (count * 4))
    rows = graph.read("sample_query_papers", modulus=modulus, limit=count)
    return [{"query_id": f"sample-{row['id']}", "source_paper_id": row["id"],
             "query": " ".join(row["title"].split()[:words])} for row in rows]


def run_pass(graph: Graph, backends: SearchBackends, settings: Settings,
             queries: list[dict[str, Any]], label: str) -> list[dict[str, Any]]:
    rows = []
    print(f"{label} pass, load average {load_average()}", flush=True)
    for number, query in enumerate(queries, start=1):
        request = SearchRequest(query=query["query"], params=settings.search,
                                exclude=[query["source_paper_id"]],
                                given_papers=query.get("seed_ids") or [])
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


def stage_names(rows: list[dict[str, Any]]) -> list[str]:
    """The pipeline's stages, then any other timing a run recorded (none today)."""
    extra = sorted({name for r in rows for name in r["timings"]} - set(STAGES))
    return STAGES + extra


def outside_stages(row: dict[str, Any]) -> float:
    """A search's wall time less the time of its stages."""
    return max(0.0, row["wall_s"] - sum(row["timings"].values()))


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    per_stage = {stage: [r["timings"].get(stage, 0.0) for r in rows]
                 for stage in stage_names(rows)}
    per_stage[OUTSIDE] = [outside_stages(r) for r in rows]
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
    print(f"  {'stage':<15}{'median s':>10}{'p90 s':>10}")
    for stage in summary["stage_median_s"]:
        print(f"  {stage:<15}{summary['stage_median_s'][stage]:>10.3f}"
              f"{summary['stage_p90_s'][stage]:>10.3f}")
    print(f"  {'end to end':<15}{summary['wall_median_s']:>10.3f}"
          f"{summary['wall_p90_s']:>10.3f}")
    if summary["entailment_edges_per_s"]:
        print(f"  entailment throughput: {summary['entailment_edges_per_s']:.0f} edges/s")
    print(f"  load average after the pass: {load_average()}")


def print_machine(report: dict[str, Any]) -> None:
    corpus, memory = report["corpus"], report["memory"]
    print(f"\ncorpus: {corpus['papers']:,} papers, {corpus['citations']:,} citations; server "
          f"heap {memory['server_heap']}, page cache {memory['server_pagecache']}")
    server = memory["server_peak_mib"]
    print(f"peak memory: server {server:,.0f} MiB" if server else
          "peak memory: server not readable (not started by this machine's crase db start)",
          f"client {memory['client_peak_mib']:,.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=Path, help="queries.jsonl")
    parser.add_argument("--sample-queries", type=int, metavar="N",
                        help="instead of --queries: N queries made from the graph's titles")
    parser.add_argument("--limit", type=int, default=20, help="queries to run (default 20)")
    parser.add_argument("--warm-only", action="store_true", help="skip the cold pass")
    parser.add_argument("--out", type=Path, help="write every query's figures as JSON here")
    args = parser.parse_args()
    if (args.queries is None) == (args.sample_queries is None):
        parser.error("give --queries FILE or --sample-queries N")
    settings = Settings()
    backends = build_search_backends(settings)
    graph = Graph.connect(settings.database)
    report: dict[str, Any] = {"database": settings.database.bolt_uri(),
                              "params": settings.search.model_dump()}
    try:
        queries = (read_queries(args.queries, args.limit) if args.queries else
                   sample_queries(graph, args.sample_queries))
        passes = ["warm"] if args.warm_only else ["cold", "warm"]
        for label in passes:
            rows = run_pass(graph, backends, settings, queries, label)
            report[label] = {"summary": summarise(rows), "queries": rows,
                             "load_average_after": load_average()}
            print_summary(label, report[label]["summary"])
        report["corpus"] = graph.read("count_papers_and_citations")[0]
    finally:
        graph.close()
    report["memory"] = {
        "server_heap": settings.database.heap, "server_pagecache": settings.database.pagecache,
        "server_peak_mib": peak_memory_mib(Neo4jServer(settings.database).status().pid),
        "client_peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    print_machine(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
