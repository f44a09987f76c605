"""Dataset import benchmark: an OpenAlex works snapshot or the Semantic Scholar datasets,
filtered, staged and bulk-imported into a disposable server, then searched.

    python -m crase.bench.generate_openalex /tmp/openalex-1m --works 1000000
    python -m crase.bench.dataset_import /tmp/openalex-1m/works --format openalex \
        --from-year 2016 --field "Computer Science" --sample-queries 20
    python -m crase.bench.generate_s2ag /tmp/s2ag-1m --works 1000000
    python -m crase.bench.dataset_import /tmp/s2ag-1m --format s2ag --sample-queries 20

The figures: wall time, rows/s per phase (staging: records read and kept,
references resolved; validation and CSV; neo4j-admin; server restart, schema and index;
for s2ag, the citation signals set on the edges), peak memory (this process: the staging,
the CSV writing and the signals; neo4j-admin's own peak as it reports it; the server is
apart), and the search latency on the result (`crase.bench.search_latency
--sample-queries N`, run as its own process against the disposable server). The import
stores no paper vectors (`--no-embed`): embedding takes far longer than the import and has
its own figures (`crase.bench.embedding_rate`); searches seed from BM25. The load average
before and after is printed beside the figures, as other work on a shared machine moves
all of them. Never touches the development server.
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

from crase.bench.ingest import bench_settings
from crase.bench.machine_state import load_average
from crase.database import Neo4jServer
from crase.graph import Graph
from crase.ingest.bulk import EdgeProperties, import_corpus
from crase.ingest.corpus import locate_corpus
from crase.ingest.dataset_filter import DatasetFilter
from crase.ingest.openalex import stage_openalex
from crase.ingest.records import Limits
from crase.ingest.s2ag import SIGNAL_COLUMNS, stage_s2ag, store_citation_signals
from crase.ingest.staging import SIGNALS_FILE
from crase.settings import Settings


def run_import(settings: Settings, dataset: Path, corpus_format: str,
               dataset_filter: DatasetFilter, folder: Path) -> dict[str, Any]:
    started = time.monotonic()
    stage = stage_openalex if corpus_format == "openalex" else stage_s2ag
    staged = stage(dataset, folder, dataset_filter, Limits.from_settings(settings.ingest),
                   settings.ingest.max_line_bytes)
    stage_s = time.monotonic() - started
    signals = folder / SIGNALS_FILE
    report = import_corpus(settings, locate_corpus(folder), show_progress=False,
                           edge_properties=EdgeProperties(signals, SIGNAL_COLUMNS)
                           if signals.exists() else None)
    phases = {"stage": stage_s, **report.seconds}
    if signals.exists() and not report.edge_properties_written:
        signals_started = time.monotonic()
        with Graph.connect(settings.database) as graph:
            store_citation_signals(graph, folder / SIGNALS_FILE)
        phases["signals"] = time.monotonic() - signals_started
    return {
        "format": corpus_format, "works_read": staged.records, "papers": report.papers.accepted,
        "filtered_out": staged.filtered_out, "edges": report.citations.accepted,
        "references_outside": staged.edges_outside,
        "rejects": staged.rejected + sum(report.rejects.values()),
        "phases_s": phases,
        "rows_per_s": {
            "stage_works": staged.records / stage_s if stage_s else 0.0,
            "validate_and_write_csv_papers": report.papers.accepted
            / report.seconds["validate_and_write_csv"],
            "import_edges": report.citations.accepted / report.seconds["import"],
            **({"signals_edges": report.citations.accepted / phases["signals"]}
               if "signals" in phases else {})},
        "signals_with_edges": report.edge_properties_written,
        "wall_s": time.monotonic() - started,
        "import_tool_peak": report.import_tool_peak_memory,
        "staged_mb": sum(p.stat().st_size for p in folder.iterdir()) / 1e6,
    }


def run_search_latency(settings: Settings, queries: int) -> str:
    """The search benchmark's own output, run against the disposable server."""
    database = settings.database
    environment = {**os.environ, "CRASE_VAR_DIR": str(settings.var_dir)}
    for name, value in {"HOME": database.home, "BOLT_PORT": database.bolt_port,
                        "HTTP_PORT": database.http_port, "PASSWORD": database.password,
                        "HEAP": database.heap, "PAGECACHE": database.pagecache}.items():
        environment[f"CRASE_DATABASE__{name}"] = str(value)
    command = [sys.executable, "-m", "crase.bench.search_latency", "--sample-queries",
               str(queries), "--limit", str(queries)]
    process = subprocess.run(command, env=environment, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, check=False)
    return process.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path, help="openalex: the works folder (or one "
                        "shard); s2ag: the folder of papers/, abstracts/, citations/")
    parser.add_argument("--format", choices=["openalex", "s2ag"], default="openalex",
                        dest="corpus_format", help="default openalex")
    parser.add_argument("--from-year", type=int, default=2016, help="default 2016")
    parser.add_argument("--to-year", type=int)
    parser.add_argument("--field", action="append", default=None,
                        help='default "Computer Science"; repeat for several')
    parser.add_argument("--sample-queries", type=int, default=20,
                        help="searches on the result (default 20; 0: none)")
    parser.add_argument("--heap", default="4g", help="server heap (default 4g)")
    parser.add_argument("--pagecache", default="2g", help="server page cache (default 2g)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()),
                        help="where the disposable server and the staging live")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    dataset_filter = DatasetFilter.build(args.from_year, args.to_year,
                                         args.field or ["Computer Science"])
    args.workdir.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix=f"crase-bench-{args.corpus_format}-", dir=args.workdir))
    settings = bench_settings(home, args.heap, args.pagecache, 10_000)
    result: dict[str, Any] = {"filter": dataset_filter.describe(),
                              "load_average_before": load_average()}
    try:
        result.update(run_import(settings, args.dataset, args.corpus_format, dataset_filter,
                                 home / "staged"))
        result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        result["load_average_after_import"] = load_average()
        if args.sample_queries:
            result["search_latency"] = run_search_latency(settings, args.sample_queries)
    finally:
        Neo4jServer(settings.database).stop()
        shutil.rmtree(home, ignore_errors=True)
    latency = result.pop("search_latency", "")
    print(json.dumps(result, indent=1))
    print(latency[-3000:])
    if args.json:
        args.json.write_text(json.dumps({**result, "search_latency": latency}, indent=1))


if __name__ == "__main__":
    main()
