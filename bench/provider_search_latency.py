"""Latency of a search through Semantic Scholar at its shared rate limit, next to the same
search on the local index.

    python -m crase.bench.provider_search_latency --corpus ../shared/data/hepth \
        --queries ../shared/data/hepth/queries.jsonl --limit 2 --requests-per-second 1

Runs against its own disposable Neo4j (temporary home, free loopback ports) and the local
stand-in of the Graph API (crase.bench.semantic_scholar_standin) over the same corpus;
nothing leaves the machine. Per query:

1. cold: `source=semantic-scholar` on an empty database (every list fetched);
2. warm: the same search again (seeds and reference lists cached: only the search call);
3. local: the corpus loaded (`crase load`), then `source=local`, twice (the first one
   pays for warming the database and the query encoder).

Prints the external calls (made / planned), their HTTP tries, the seconds spent waiting on
the rate limit and in retry back-off, the whole search's seconds and |V| / |E|. Not a test:
the stand-in answers at once, so the figures are the rate limit's and this machine's.
"""

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from crase.bench.ingest import bench_settings
from crase.bench.semantic_scholar_standin import SemanticScholarStandIn, paper_id_of
from crase.database import Neo4jServer
from crase.graph import Graph
from crase.ingest.corpus import locate_corpus
from crase.ingest.loader import load_corpus
from crase.search.pipeline import SearchResult, run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.settings import ProviderSettings, SearchSettings, Settings


def read_queries(path: Path, limit: int) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle][:limit]


def wipe(graph: Graph) -> None:
    with graph.driver.session(database=graph.database) as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS"
                    ).consume()


def measure(graph: Graph, settings: Settings, query: dict[str, Any], source: str,
            label: str) -> dict[str, Any]:
    backends = build_search_backends(settings)
    source_id = str(query["source_paper_id"])
    request = SearchRequest(query=query["query"],
                            params=settings.search.model_copy(update={"source": source}),
                            exclude=[source_id, f"s2:{paper_id_of(source_id)}"])
    started = time.perf_counter()
    result = run_search(graph, backends, request,
                        notice=lambda line: print(f"    {line}", flush=True))
    total = time.perf_counter() - started
    row = {"query_id": query["query_id"], "run": label, "source": source,
           "seconds": round(total, 2), "nodes": result.counts["nodes"],
           "edges": result.counts["edges"], "status": result.status,
           **provider_figures(result)}
    print(f"  {line_of(row)}", flush=True)
    return row


def provider_figures(result: SearchResult) -> dict[str, Any]:
    if "provider" not in result.counts:
        return {"calls_made": 0, "calls_planned": 0, "tries": 0, "rate_limit_wait_s": 0.0,
                "retry_wait_s": 0.0, "calls_by_stage": {}}
    calls = result.counts["provider"]["calls"]
    total = calls["total"]
    return {"calls_made": total["made"], "calls_planned": total["planned"],
            "tries": total["tries"], "rate_limit_wait_s": total["rate_limit_wait_s"],
            "retry_wait_s": total["retry_wait_s"],
            "calls_by_stage": {name: f"{s['made']}/{s['planned']}"
                               for name, s in calls["stages"].items()}}


def line_of(row: dict[str, Any]) -> str:
    stages = " ".join(f"{k} {v}" for k, v in row["calls_by_stage"].items())
    return (f"{row['run']:<6} {row['source']:<16} calls {row['calls_made']:>3}/"
            f"{row['calls_planned']:<3} tries {row['tries']:>3}  rate-limit wait "
            f"{row['rate_limit_wait_s']:6.1f} s  retry wait {row['retry_wait_s']:4.1f} s  "
            f"total {row['seconds']:6.2f} s  |V| {row['nodes']:>4} |E| {row['edges']:>5}  "
            f"{row['status']}  {stages}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=2, help="queries (default 2)")
    parser.add_argument("--requests-per-second", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="crase-provider-bench-"))
    base = bench_settings(home, heap="1g", pagecache="512m", batch_size=10_000)
    server = Neo4jServer(base.database)
    print(f"Stand-in over {args.corpus} ...", flush=True)
    standin = SemanticScholarStandIn(args.corpus)
    server.start()
    rows: list[dict[str, Any]] = []
    try:
        graph = Graph.connect(base.database)
        graph.apply_schema()
        with standin.running():
            providers = ProviderSettings(enabled=True, semantic_scholar_url=standin.url,
                                         requests_per_second=args.requests_per_second)
            settings = base.model_copy(update={"providers": providers,
                                               "search": SearchSettings()})
            queries = read_queries(args.queries, args.limit)
            for query in queries:
                print(f"query {query['query_id']}: {query['query'][:80]}...", flush=True)
                wipe(graph)
                rows.append(measure(graph, settings, query, "semantic-scholar", "cold"))
                rows.append(measure(graph, settings, query, "semantic-scholar", "warm"))
            wipe(graph)
            load_corpus(graph, locate_corpus(args.corpus), settings, show_progress=False)
            for query in queries:
                print(f"query {query['query_id']} on the loaded corpus", flush=True)
                rows.append(measure(graph, settings, query, "local", "local1"))
                rows.append(measure(graph, settings, query, "local", "local2"))
        graph.close()
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
    print("\nSummary")
    for row in rows:
        print(f"  {row['query_id']}  {line_of(row)}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
