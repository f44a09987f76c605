"""Load benchmark of the HTTP API: N searches fired at once at a real `crase serve`.

    python -m crase.bench.api_load --database-uri bolt://127.0.0.1:7687 \
        --database-password "$(cat var/neo4j/password)" \
        --queries ../shared/data/hepth/queries.jsonl --searches 20 --out var/bench/api-load.json

Starts `crase serve` on 127.0.0.1 at a free port against the given database (which must
already hold the corpus, scored by `crase score` so Delta is warm; `--warm-up` instead runs
the same searches once, unmeasured, so every edge they touch is scored), fires the
searches concurrently with httpx (one POST /searches each, each query excluding its
source paper), polls GET /runs/{id} until each finishes, and prints p50 / p95 latency
(POST to observed finish), the errors, and the server-side stage times. Every request goes
to loopback only; the server is stopped at the end.
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from crase.bench.loopback_http import free_port
from crase.bench.machine_state import load_average

API_KEY = "api-load-benchmark-key"
POLL_S = 0.25
POLL_ATTEMPTS = 3
FINISHED = {"done", "failed", "cancelled"}


@dataclass
class Outcome:
    query_id: str
    run_id: str | None
    status: str
    latency_s: float
    server_s: float | None  # sum of the run's stage timings, as the pipeline measured them
    error: str | None = None


def read_queries(path: Path, count: int) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        queries = [json.loads(line) for line in handle][:count]
    if len(queries) < count:
        raise SystemExit(f"{path} has only {len(queries)} queries, {count} asked for")
    return queries


def start_server(args: argparse.Namespace, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ,
           "CRASE_DATABASE__URI": args.database_uri,
           "CRASE_DATABASE__PASSWORD": args.database_password,
           "CRASE_API__API_KEYS": json.dumps([API_KEY]),
           "CRASE_API__SEARCH_WORKERS": str(args.workers)}
    command = [sys.executable, "-m", "crase.api.cli", "serve", "--host", "127.0.0.1",
               "--port", str(port), "--log-level", "warning"]
    return subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL)


def wait_until_healthy(base_url: str, server: subprocess.Popen[bytes],
                       timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"crase serve exited with code {server.returncode}")
        try:
            if httpx.get(f"{base_url}/health", timeout=5.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"the API did not answer /health within {timeout_s:.0f} s")


def stop_server(server: subprocess.Popen[bytes]) -> None:
    # A graceful stop lets running searches finish their stage; past a minute, kill it.
    server.terminate()
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


async def one_search(client: httpx.AsyncClient, query: dict[str, Any],
                     params: dict[str, Any], timeout_s: float) -> Outcome:
    started = time.perf_counter()
    body = {"query": query["query"], "params": params,
            "exclude": [query["source_paper_id"]]}
    try:
        response = await client.post("/searches", json=body)
        if response.status_code != 202:
            return Outcome(query["query_id"], None, "rejected", time.perf_counter() - started,
                           None, f"POST /searches answered {response.status_code}")
        run_id = response.json()["run_id"]
        while time.perf_counter() - started < timeout_s:
            await asyncio.sleep(POLL_S)
            run = await poll_run(client, run_id)
            if run["status"] in FINISHED:
                latency = time.perf_counter() - started
                server_s = round(sum(run["timings"].values()), 3) if run["timings"] else None
                error = None if run["status"] == "done" else run.get("error")
                return Outcome(query["query_id"], run_id, run["status"], latency, server_s,
                               error)
        return Outcome(query["query_id"], run_id, "timeout", time.perf_counter() - started,
                       None, f"not finished after {timeout_s:.0f} s")
    except httpx.HTTPError as err:
        return Outcome(query["query_id"], None, "http_error", time.perf_counter() - started,
                       None, f"{type(err).__name__}: {err}")


async def poll_run(client: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    """GET /runs/{id}, tried again on a dropped connection: a kept-alive connection the
    server closes as the client reuses it is a transport race, not an answer (GET is
    idempotent; a failed POST is never retried)."""
    for attempt in range(POLL_ATTEMPTS):
        try:
            return dict((await client.get(f"/runs/{run_id}")).json())
        except (httpx.RemoteProtocolError, httpx.ReadError):
            if attempt == POLL_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


async def fire(base_url: str, queries: list[dict[str, Any]], params: dict[str, Any],
               timeout_s: float) -> tuple[list[Outcome], float]:
    limits = httpx.Limits(max_connections=len(queries) + 5)
    async with httpx.AsyncClient(base_url=base_url, headers={"X-API-Key": API_KEY},
                                 timeout=60.0, limits=limits) as client:
        started = time.perf_counter()
        outcomes = await asyncio.gather(*(one_search(client, q, params, timeout_s)
                                          for q in queries))
        return list(outcomes), time.perf_counter() - started


def parse_param(text: str) -> tuple[str, Any]:
    name, _, value = text.partition("=")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value  # a word such as ppr or references


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (p95 of 20 values is the 19th smallest)."""
    ordered = sorted(values)
    rank = max(1, int(-(-share * len(ordered) // 1)))
    return ordered[rank - 1]


def summarise(outcomes: list[Outcome], wall_s: float) -> dict[str, Any]:
    done = [o for o in outcomes if o.status == "done"]
    latencies = [o.latency_s for o in done]
    summary: dict[str, Any] = {
        "searches": len(outcomes), "done": len(done), "errors": len(outcomes) - len(done),
        "wall_s": round(wall_s, 2),
        "searches_per_s": round(len(done) / wall_s, 2) if wall_s > 0 else None,
    }
    if latencies:
        summary.update({
            "p50_s": round(percentile(latencies, 0.50), 2),
            "p95_s": round(percentile(latencies, 0.95), 2),
            "mean_s": round(statistics.fmean(latencies), 2),
            "min_s": round(min(latencies), 2), "max_s": round(max(latencies), 2),
            "server_median_s": round(statistics.median(
                [o.server_s for o in done if o.server_s is not None]), 2),
        })
    return summary


def print_summary(label: str, summary: dict[str, Any], outcomes: list[Outcome]) -> None:
    print(f"{label}: {summary['done']}/{summary['searches']} done, {summary['errors']} errors, "
          f"wall {summary['wall_s']} s, {summary['searches_per_s']} searches/s, load average "
          f"{load_average()}")
    if "p50_s" in summary:
        print(f"  latency p50 {summary['p50_s']} s, p95 {summary['p95_s']} s, "
              f"mean {summary['mean_s']} s, min {summary['min_s']} s, max {summary['max_s']} s;"
              f" one search's own stages (median) {summary['server_median_s']} s")
    for outcome in outcomes:
        if outcome.status != "done":
            print(f"  {outcome.query_id}: {outcome.status}: {outcome.error}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-uri", required=True, help="Bolt URI of the loaded graph")
    parser.add_argument("--database-password", required=True, help="its password")
    parser.add_argument("--queries", type=Path, required=True, help="queries.jsonl")
    parser.add_argument("--searches", type=int, default=20, help="searches fired at once")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="a search parameter (k=50, seeds_per_query=10, hops=1.5, ...); "
                             "repeat; default: the server's settings")
    parser.add_argument("--workers", type=int, default=2,
                        help="searches the server runs at once (api.search_workers)")
    parser.add_argument("--warm-up", action="store_true",
                        help="run the same searches once first, unmeasured")
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="seconds one search may take before it counts as an error")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)

    queries = read_queries(args.queries, args.searches)
    params = dict(parse_param(text) for text in args.param)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    server = start_server(args, port)
    try:
        wait_until_healthy(base_url, server)
        if args.warm_up:
            warm, warm_wall = asyncio.run(fire(base_url, queries, params, args.timeout))
            print_summary("warm-up (unmeasured)", summarise(warm, warm_wall), warm)
        outcomes, wall = asyncio.run(fire(base_url, queries, params, args.timeout))
    finally:
        stop_server(server)
    summary = summarise(outcomes, wall)
    summary.update({"params": params, "workers": args.workers, "queries": str(args.queries),
                    "command": " ".join(["python -m crase.bench.api_load", *(
                        argv if argv is not None else sys.argv[1:])]).replace(
                        args.database_password, "***")})
    print_summary("measured", summary, outcomes)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"summary": summary,
                                        "searches": [asdict(o) for o in outcomes]}, indent=2))
    return 0 if summary["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
