"""`crase grow` from a reference file against the OpenAlex stand-in: wall time, calls, cost,
duplicates, and a search from the same file afterwards; then the same grow at the API's
limit (100 requests/s, a 429 storm, a 500 burst, a page cut short) interrupted by a storm
that outlasts the retries and resumed.

    python -m crase.bench.openalex_grow --corpus ../shared/data/hepth --entries 20 \
        --max-papers 5000 --preload 5000

Runs against its own disposable Neo4j (temporary home, free loopback ports) and the
stand-in (crase.bench.openalex_standin) over the corpus; nothing leaves the machine. Each
`crase` command runs as its own process, as a user runs it, with this benchmark's settings
in its environment; its wall time includes the interpreter's start. The
.bib holds the corpus's `--entries` most-cited papers (three in four with an arXiv eprint,
the rest by title alone), the first `--preload` corpus papers are loaded beforehand (as
`crase load` would have: their own ids and arXiv ids), so that merging is exercised. Not
a test: the stand-in answers at once, so the figures are this machine's.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from crase.bench.cli_timing import crase_command
from crase.bench.ingest import bench_settings
from crase.bench.machine_state import load_average
from crase.bench.openalex_standin import OpenAlexStandIn
from crase.database import Neo4jServer
from crase.graph import Graph
from crase.ingest.request_cache import request_key
from crase.settings import ProviderSettings, Settings

KEY = "bench-key"


def most_cited(corpus: Path, count: int) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (corpus / "papers.jsonl").open(encoding="utf-8")]
    with (corpus / "citations.csv").open(encoding="utf-8") as handle:
        next(handle)
        cited = Counter(line.strip().split(",")[1] for line in handle)
    return sorted(rows, key=lambda row: (-cited[row["id"]], row["id"]))[:count]


def write_bib(rows: list[dict[str, Any]], path: Path) -> None:
    entries = []
    for n, row in enumerate(rows):
        fields = [f"  title = {{{row['title']}}}", f"  year = {{{row.get('year')}}}"]
        if n % 4 != 3 and row.get("arxiv_id"):
            fields += [f"  eprint = {{{row['arxiv_id']}}}", "  archivePrefix = {arXiv}"]
        entries.append(f"@article{{entry{n},\n" + ",\n".join(fields) + "\n}\n")
    path.write_text("\n".join(entries), encoding="utf-8")


def preload(graph: Graph, corpus: Path, count: int) -> None:
    with (corpus / "papers.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for _, line in zip(range(count), handle, strict=False)]
    for start in range(0, len(rows), 5_000):
        graph.write("merge_papers", rows=[
            {"id": row["id"], "props": {"title": row["title"], "arxiv_id": row.get("arxiv_id"),
                                        "year": row.get("year")}}
            for row in rows[start:start + 5_000]])


def wipe(graph: Graph) -> None:
    with graph.driver.session(database=graph.database) as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS"
                    ).consume()


def duplicates(graph: Graph) -> int:
    with graph.driver.session(database=graph.database) as session:
        return sum(int(session.run(
            f"MATCH (p:Paper) WHERE p.{key} IS NOT NULL WITH p.{key} AS v, count(*) AS n "
            "WHERE n > 1 RETURN count(*) AS c").single(strict=True)["c"])
            for key in ("arxiv_id", "doi", "openalex_id"))


def command_environment(settings: Settings) -> dict[str, str]:
    """What this benchmark sets, as the environment a `crase` process reads its settings
    from: the disposable database, var_dir, the loader's batch and the stand-in."""
    database, providers = settings.database, settings.providers
    return {**os.environ,
            "CRASE_DATABASE__URI": database.bolt_uri(),
            "CRASE_DATABASE__PASSWORD": database.password or "",
            "CRASE_VAR_DIR": str(settings.var_dir),
            "CRASE_INGEST__BATCH_SIZE": str(settings.ingest.batch_size),
            "CRASE_PROVIDERS__ENABLED": json.dumps(providers.enabled),
            "CRASE_PROVIDERS__OPENALEX_URL": providers.openalex_url,
            "CRASE_PROVIDERS__OPENALEX_API_KEY": KEY,
            "CRASE_PROVIDERS__OPENALEX_REQUESTS_PER_SECOND":
                str(providers.openalex_requests_per_second),
            "CRASE_PROVIDERS__OPENALEX_DIR": str(providers.openalex_dir),
            "CRASE_PROVIDERS__BACKOFF_BASE_S": str(providers.backoff_base_s),
            "CRASE_PROVIDERS__BACKOFF_MAX_S": str(providers.backoff_max_s)}


def run_command(argv: list[str], settings: Settings) -> tuple[int, str, float]:
    """A `crase` command in a process of its own: (exit status, its stdout and its one-line
    `crase: ...` messages, as the report shows them, seconds). The rest of its stderr, the
    progress, goes on to this one."""
    started = time.perf_counter()
    done = subprocess.run([*crase_command(), *argv], env=command_environment(settings),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          check=False)
    seconds = time.perf_counter() - started
    lines = done.stderr.splitlines(keepends=True)
    sys.stderr.writelines(line for line in lines if not line.startswith("crase: "))
    said = "".join(line for line in lines if line.startswith("crase: "))
    return done.returncode, done.stdout + said, seconds


def answered(standin: OpenAlexStandIn) -> list[str]:
    return [request_key(a.path, {k: v for k, v in a.params.items() if k != "api_key"})
            for a in standin.seen() if a.status in (200, 301, 404)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--entries", type=int, default=20)
    parser.add_argument("--max-papers", type=int, default=5000)
    parser.add_argument("--preload", type=int, default=0)
    parser.add_argument("--no-embed", action="store_true")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="crase-openalex-bench-"))
    base = bench_settings(home, heap="1g", pagecache="512m", batch_size=10_000)
    server = Neo4jServer(base.database)
    print(f"load average at the start: {load_average()}", flush=True)
    standin = OpenAlexStandIn(args.corpus, api_key=KEY)
    bib = home / "refs.bib"
    write_bib(most_cited(args.corpus, args.entries), bib)
    grow = ["grow", "--from-file", str(bib), "--citers", "--max-papers", str(args.max_papers),
            *(["--no-embed"] if args.no_embed else [])]
    server.start()
    try:
        graph = Graph.connect(base.database)
        graph.apply_schema()
        with standin.running():
            providers = ProviderSettings(enabled=True, openalex_url=standin.url,
                                         openalex_api_key=SecretStr(KEY),
                                         openalex_requests_per_second=100,
                                         openalex_dir=home / "var" / "openalex",
                                         backoff_base_s=0.05, backoff_max_s=1.0)
            settings = base.model_copy(update={"providers": providers})
            preload(graph, args.corpus, args.preload)
            if not args.no_embed:  # a loaded corpus is embedded already: only new papers count
                run_command(["embed", "--quiet"], settings)
            code, out, seconds = run_command(grow, settings)
            print(f"\n== grow ({args.entries} entries, references and citers, cap "
                  f"{args.max_papers:,}): exit {code}, {seconds:.1f} s wall\n{out}", flush=True)
            lists = sum(1 for a in standin.seen("works") if "filter" in a.params)
            print(f"list calls {lists}, stand-in charged ${standin.charged_usd:.4f}, "
                  f"duplicates by arXiv id, DOI or OpenAlex id: {duplicates(graph)}")
            before = len(standin.seen())
            code, out, seconds = run_command(["search", "--from-file", str(bib), "-k", "10"],
                                             settings)
            print(f"\n== search --from-file: exit {code}, {seconds:.1f} s, "
                  f"{len(standin.seen()) - before} calls to OpenAlex", flush=True)
            at_the_limit(graph, standin, settings, grow + ["--no-embed"] * (not args.no_embed),
                         home, args)
        graph.close()
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
    print(f"\nload average at the end: {load_average()}")


def at_the_limit(graph: Graph, standin: OpenAlexStandIn, settings: Settings, grow: list[str],
                 home: Path, args: argparse.Namespace) -> None:
    """The same grow from an empty var_dir at 100 requests/s, with storms and a burst, cut
    by a storm that outlasts the retries, then resumed; compared with the clean grow."""
    clean_papers = graph.read("count_papers_and_citations")[0]
    wipe(graph)
    preload(graph, args.corpus, args.preload)
    standin.reset()
    standin.max_per_second = 100
    providers = settings.providers.model_copy(
        update={"openalex_dir": home / "var-at-limit" / "openalex"})
    settings = settings.model_copy(update={"var_dir": home / "var-at-limit",
                                           "providers": providers})
    standin.fault(r"filter=openalex_id:", status=500, times=3)
    standin.fault(r"filter=doi:", status=429, retry_after="1", times=2)
    standin.fault(r"filter=cites:", status=429, times=3)
    standin.fault(r"filter=cites:", truncate=True, times=1)
    standin.fault(r"filter=cites:.*cursor=[^*]", status=429, times=None)  # outlasts retries
    code, out, seconds = run_command(grow, settings)
    print(f"\n== at the limit, interrupted: exit {code}, {seconds:.1f} s\n{out}", flush=True)
    first = answered(standin)
    standin.reset()
    standin.max_per_second = 100
    standin.fault(r"filter=cites:", status=403, retry_after="0", times=2)
    code, out, seconds = run_command(grow, settings)
    second = answered(standin)
    print(f"== resumed: exit {code}, {seconds:.1f} s\n{out}", flush=True)
    after = graph.read("count_papers_and_citations")[0]
    print(f"requests answered before the interruption and asked again: "
          f"{len(set(first) & set(second))}; graph {after['papers']:,} papers, "
          f"{after['citations']:,} citations (the clean grow: {clean_papers['papers']:,}, "
          f"{clean_papers['citations']:,}); 429s served for the rate: "
          f"{sum(1 for a in standin.seen() if a.status == 429)}")


if __name__ == "__main__":
    main()
