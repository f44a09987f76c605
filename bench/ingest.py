"""Load benchmark: papers/s, edges/s and peak memory of both load paths on real corpora.

    python -m crase.bench.ingest /work/shared/data/hepth /tmp/crase-gen-500k

Each (corpus, path) runs in its own process against its own disposable Neo4j server
(temporary home, free loopback ports), so the figures do not depend on what an earlier
run left behind and `ru_maxrss` is the peak of that load alone. Never touches the
development server.

- bulk: validation + CSV writing + `neo4j-admin database import full`; the server stop,
  start, schema and full-text index population are reported separately.
- incremental: an empty database with the schema; the `crase load` code path.

Not a test: the figures depend on the machine and on whatever else runs on it.
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from crase.bench.loopback_http import free_port
from crase.database import Neo4jServer
from crase.graph import Graph
from crase.ingest.bulk import import_corpus
from crase.ingest.corpus import CITATIONS_FILE, PAPERS_FILE, locate_corpus
from crase.ingest.loader import load_corpus
from crase.settings import DatabaseSettings, IngestSettings, Settings

PATHS = ("bulk", "incremental")


def bench_settings(home: Path, heap: str, pagecache: str, batch_size: int) -> Settings:
    database = DatabaseSettings(home=home, bolt_port=free_port(), http_port=free_port(),
                                password="crase-bench-password", heap=heap,
                                pagecache=pagecache, start_timeout_s=300)
    return Settings(database=database, var_dir=home / "var",
                    ingest=IngestSettings(batch_size=batch_size))


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_bulk(settings: Settings, corpus: Path) -> dict[str, Any]:
    report = import_corpus(settings, locate_corpus(corpus), show_progress=True)
    return {
        "papers": report.papers.accepted, "edges": report.citations.accepted,
        "rejects": sum(report.rejects.values()), "seconds": report.load_seconds,
        "papers_per_s": report.papers_per_s, "edges_per_s": report.citations_per_s,
        "phases_s": report.seconds, "import_tool_peak": report.import_tool_peak_memory,
        "import_tool_edges_per_s": report.citations.accepted / report.seconds["import"]
        if report.seconds.get("import") else 0.0,
    }


def run_incremental(settings: Settings, corpus: Path) -> dict[str, Any]:
    server = Neo4jServer(settings.database)
    server.start()
    graph = Graph.connect(settings.database)
    try:
        report = load_corpus(graph, locate_corpus(corpus), settings, show_progress=True)
    finally:
        graph.close()
    return {
        "papers": report.papers_written, "edges": report.citations_written,
        "rejects": sum(report.rejects.values()),
        "seconds": report.papers_seconds + report.citations_seconds,
        "papers_per_s": report.papers_per_s, "edges_per_s": report.citations_per_s,
        "phases_s": {"papers": report.papers_seconds, "citations": report.citations_seconds},
    }


def run_one(args: argparse.Namespace) -> None:
    """One (corpus, path) in this process; prints one JSON line for the parent."""
    home = Path(tempfile.mkdtemp(prefix=f"crase-bench-{args.path}-", dir=args.workdir))
    settings = bench_settings(home, args.heap, args.pagecache, args.batch_size)
    try:
        started = time.monotonic()
        load_before = os.getloadavg()[0]
        runner = run_bulk if args.path == "bulk" else run_incremental
        result = runner(settings, args.corpus)
        result["total_s"] = time.monotonic() - started
        result["loader_peak_rss_mb"] = peak_rss_mb()
        # Other people's work on the same two cores slows every figure; say how busy it was.
        result["load_average"] = [round(load_before, 1), round(os.getloadavg()[0], 1)]
    finally:
        Neo4jServer(settings.database).stop()
        shutil.rmtree(home, ignore_errors=True)
    print("RESULT " + json.dumps(result), flush=True)


def slice_corpus(corpus: Path, edges: int, workdir: Path) -> Path:
    """The corpus with only its first `edges` citations (all papers), for a shorter run."""
    target = Path(tempfile.mkdtemp(prefix="crase-bench-slice-", dir=workdir))
    (target / PAPERS_FILE).symlink_to((corpus / PAPERS_FILE).resolve())
    with (corpus / CITATIONS_FILE).open("rb") as source, \
            (target / CITATIONS_FILE).open("wb") as out:
        for number, line in enumerate(source):
            if number > edges:
                break
            out.write(line)
    return target


def run_child(corpus: Path, path: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, "-m", "crase.bench.ingest", str(corpus), "--run-one", path,
               "--heap", args.heap, "--pagecache", args.pagecache,
               "--batch-size", str(args.batch_size), "--workdir", str(args.workdir)]
    process = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    for line in process.stdout.splitlines():
        if line.startswith("RESULT "):
            return dict(json.loads(line.removeprefix("RESULT ")))
    return {"error": f"exit code {process.returncode}", "output": process.stdout[-2000:]}


def print_table(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    print(f"\nserver heap {args.heap}, page cache {args.pagecache}, batch size "
          f"{args.batch_size}, {os.cpu_count()} CPUs; bulk 'load s' = validation + CSV + "
          "neo4j-admin import, incremental 'load s' = papers + citations")
    print(f"{'corpus':<16} {'path':<12} {'papers':>9} {'edges':>11} {'load s':>8} "
          f"{'papers/s':>9} {'edges/s':>9} {'loader RSS':>11}  other phases")
    for result in results:
        if "error" in result:
            print(f"{result['corpus']:<16} {result['path']:<12} failed: {result['error']}")
            continue
        phases = ", ".join(f"{name} {seconds:.1f}s" for name, seconds
                           in result["phases_s"].items())
        extra = (f"; neo4j-admin alone {result['import_tool_edges_per_s']:,.0f} edges/s, "
                 f"peak {result['import_tool_peak']}") if result.get("import_tool_peak") else ""
        extra += f"; load average {result['load_average'][0]} -> {result['load_average'][1]}"
        print(f"{result['corpus']:<16} {result['path']:<12} {result['papers']:>9,} "
              f"{result['edges']:>11,} {result['seconds']:>8.1f} {result['papers_per_s']:>9,.0f} "
              f"{result['edges_per_s']:>9,.0f} {result['loader_peak_rss_mb']:>8,.0f} MB  "
              f"{phases}{extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", type=Path, nargs="+", help="normalized corpus folders")
    parser.add_argument("--paths", default="bulk,incremental",
                        help="which load paths to run (default bulk,incremental)")
    parser.add_argument("--incremental-edges", type=int, default=None,
                        help="load only the first N citations incrementally (all papers)")
    parser.add_argument("--heap", default="4g", help="server heap (default 4g)")
    parser.add_argument("--pagecache", default="2g", help="server page cache (default 2g)")
    parser.add_argument("--batch-size", type=int, default=10_000, help="incremental batch")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()),
                        help="where the disposable servers live (default the temp folder)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--run-one", choices=PATHS, dest="path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.path:
        args.corpus = args.corpora[0]
        run_one(args)
        return
    results = []
    for corpus in args.corpora:
        for path in args.paths.split(","):
            source = corpus
            if path == "incremental" and args.incremental_edges:
                source = slice_corpus(corpus, args.incremental_edges, args.workdir)
            print(f"== {corpus.name}: {path}", file=sys.stderr, flush=True)
            result = run_child(source, path, args)
            result.update(corpus=corpus.name, path=path)
            results.append(result)
            if source != corpus:
                shutil.rmtree(source, ignore_errors=True)
    print_table(results, args)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
