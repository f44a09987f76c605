"""GET /health while one heavy kind of work is saturated: the bulkheads' benchmark.

    python -m crase.bench.bulkheads --database-uri bolt://127.0.0.1:7687 \
        --database-password "$(cat var/neo4j/password)" [--kinds code-extract analyst ...] \
        [--concurrent 24] [--seconds 20] [--out var/bench/bulkheads.json]

Starts `crase serve` on a free loopback port against the given database (any corpus; an
empty graph will do: what is measured is admission), then for each kind keeps
`--concurrent` heavy requests of that kind in flight for `--seconds` (each client sends its
next request as soon as the last is answered) while one probe asks GET /health every
PROBE_S, and prints the probe's p50, p99 and worst latency with the heavy requests' status
counts (200/202 answered, 429 refused by the bulkhead, 400/422 refused by a cap or as
unknown papers, 503 with Retry-After for a busy analyst slot, any other 5xx never
expected). Each client honours Retry-After up to RETRY_WAIT_S. The kinds, each built to
be slow:

- code-extract: a document of 990 `from ... import ...` lines (0.33 CPU-s a request);
- search-from-papers: POST /searches starting from 20 papers named by title alone;
- analyst: a row loop of 50,000,000 rows, stopped by its timeout;
- citation-gaps: a draft with 500 title-only BibTeX references.

Every request goes to loopback only; the server is stopped at the end.
"""

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from crase.bench.api_load import start_server, stop_server, wait_until_healthy
from crase.bench.loopback_http import free_port
from crase.bench.machine_state import load_average

API_KEY = "api-load-benchmark-key"  # what bench/api_load.py's start_server configures
PROBE_S = 0.1
RETRY_WAIT_S = 1.0
WORDS = ("brane", "black", "hole", "entropy", "string", "duality", "gauge", "tachyon",
         "holography", "cosmology", "supersymmetry", "anomaly", "soliton", "lattice")


def heavy_request(kind: str, rng: random.Random) -> tuple[str, str, dict[str, Any]]:
    """(method, path, JSON body) of one slow request of `kind`."""
    def title() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(6))
    if kind == "code-extract":
        text = "We import a great deal.\n\n```python\n" + "".join(
            f"from package_{n} import name_{n}\n" for n in range(990)) + "```\n"
        return "POST", "/code-extract", {"filename": "paper.md", "text": text,
                                         "use_model": False}
    if kind == "search-from-papers":
        return "POST", "/searches", {"query": "", "given_papers": [title() for _ in range(20)]}
    if kind == "analyst":
        return "POST", "/analyst/cypher", {
            "query": "UNWIND range(1, 50000000) AS x WITH x WHERE x = -1 RETURN count(x) AS n"}
    if kind == "citation-gaps":
        bibtex = "\n".join(f"@misc{{k{n}, title = {{{title()}}}}}" for n in range(500))
        return "POST", "/citation-gaps", {"draft": "Black hole entropy counts string states "
                                          "on branes. " * 5, "bibtex": bibtex}
    raise SystemExit(f"no kind {kind!r}; choose among {', '.join(KINDS)}")


KINDS = ("code-extract", "search-from-papers", "analyst", "citation-gaps")


async def keep_busy(client: httpx.AsyncClient, kind: str, seed: int, until: float,
                    statuses: Counter[str]) -> None:
    rng = random.Random(seed)
    while time.monotonic() < until:
        method, path, body = heavy_request(kind, rng)
        try:
            response = await client.request(method, path, json=body)
        except httpx.HTTPError as err:
            statuses[type(err).__name__] += 1
            continue
        statuses[str(response.status_code)] += 1
        if "Retry-After" in response.headers:
            # A client that honours Retry-After, up to RETRY_WAIT_S: refused at once, it
            # would otherwise send thousands of requests a second.
            await asyncio.sleep(min(float(response.headers["Retry-After"]), RETRY_WAIT_S))


async def probe_health(client: httpx.AsyncClient, until: float) -> list[float]:
    latencies = []
    while time.monotonic() < until:
        started = time.perf_counter()
        try:
            await client.get("/health")
        except httpx.HTTPError:
            pass
        latencies.append(time.perf_counter() - started)
        await asyncio.sleep(PROBE_S)
    return latencies


async def measure(base_url: str, kind: str, concurrent: int, seconds: float
                  ) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=concurrent + 5)
    statuses: Counter[str] = Counter()
    async with httpx.AsyncClient(base_url=base_url, headers={"X-API-Key": API_KEY},
                                 timeout=120.0, limits=limits) as client, \
            httpx.AsyncClient(base_url=base_url, timeout=120.0) as prober:
        until = time.monotonic() + seconds
        busy = [keep_busy(client, kind, seed, until, statuses) for seed in range(concurrent)]
        _, latencies = await asyncio.gather(asyncio.gather(*busy), probe_health(prober, until))
    cut = sorted(latencies)
    return {"kind": kind, "concurrent": concurrent, "seconds": seconds,
            "health_probes": len(cut),
            "health_p50_s": round(statistics.median(cut), 3),
            "health_p99_s": round(cut[min(len(cut) - 1, int(len(cut) * 0.99))], 3),
            "health_max_s": round(cut[-1], 3),
            "heavy_statuses": dict(sorted(statuses.items())),
            # A busy analyst slot is 503 with Retry-After by design (api/analyst.py); any
            # other 5xx is a failure.
            "server_errors": sum(n for code, n in statuses.items()
                                 if code.startswith("5") and code != "503"),
            "load": load_average()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-uri", required=True)
    parser.add_argument("--database-password", required=True)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--concurrent", type=int, default=24)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=2, help="api.search_workers")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    port = free_port()
    server = start_server(args, port)
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(base_url, server)
        figures = [asyncio.run(measure(base_url, kind, args.concurrent, args.seconds))
                   for kind in args.kinds]
    finally:
        stop_server(server)
    for row in figures:
        print(f"{row['kind']:<19} x{row['concurrent']}: /health p50 {row['health_p50_s']:.3f} s, "
              f"p99 {row['health_p99_s']:.3f} s, max {row['health_max_s']:.3f} s "
              f"({row['health_probes']} probes); heavy {row['heavy_statuses']}; "
              f"5xx {row['server_errors']}; load {row['load']}")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0 if all(row["server_errors"] == 0 for row in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
