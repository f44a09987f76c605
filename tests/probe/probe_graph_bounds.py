"""The probe's group `graph` (issue 45's bounded graph reads, layout and run memory),
against a `crase serve` of the probe on its sample database:

- the connector with no path within max_steps (9711200 to 9802150 in one step, which
  never returned), over HTTP and on the connector page, and the longest search it allows;
- an analyst query the timeout cannot stop (a reduce over a range of unknown size), and
  one it can (an UNWIND of 10^12 rows): each answered, and no transaction of either left
  in the database past the request's timeout;
- the force layout of a 2,492-paper run: CPU time and peak memory of one view;
- the memory a `crase serve` keeps per cancelled run whose request had a 9 MB exclude.

Each function records into the probe's Case (`case`: tests/probe/probe.py holds the class).
"""

import gc
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx

from crase.api.pages.graph_drawing import Layout, draw_evidence_graph
from crase.bench.api_load import API_KEY
from crase.graph import Graph
from crase.settings import Settings

CONNECTOR_BUDGET_S = 5.0  # a connector answer, path or none
ANALYST_TIMEOUT_S = 10.0  # api.analyst_timeout_s, the server's default
MONITOR_S = 3.0  # Neo4j checks transaction timeouts every 2 s
LAYOUT_PAPERS = 2492
LAYOUT_BUDGET_S, LAYOUT_BUDGET_MB = 8.0, 60.0
RUN_MEMORY_BUDGET = 64_000  # bytes a finished run may keep
EXCLUDE_IDS, EXCLUDE_ID_CHARS = 10_000, 900  # the largest exclude the schema takes: 9 MB


def probe_connector(case: Any, url: str) -> None:
    client = httpx.Client(base_url=url, headers={"X-API-Key": API_KEY}, timeout=120)
    for steps in (1, 6):
        started = time.monotonic()
        response = client.get("/connections", params={"source": "9711200",
                                                      "target": "9802150", "max_steps": steps})
        took = time.monotonic() - started
        length = response.json().get("length") if response.status_code == 200 else None
        case.check(response.status_code == 200 and took < CONNECTOR_BUDGET_S,
                   f"GET /connections max_steps={steps}: {response.status_code} in {took:.2f} s "
                   f"(shortest path {length})")
        case.notes.append(f"connector max_steps={steps}: {response.status_code} in {took:.2f} s, "
                          f"shortest path {length}")
    # The session cookie is Secure: sent by hand over the probe's plain loopback HTTP.
    login = httpx.post(f"{url}/ui/login", data={"key": API_KEY, "next": "/ui/"}, timeout=30)
    cookie = next((header.split(";", 1)[0] for header in login.headers.get_list("set-cookie")
                   if header.startswith("crase_session=")), "")
    started = time.monotonic()
    page = httpx.get(f"{url}/ui/connect", params={"source": "9711200", "target": "9802150",
                                                  "max_steps": 1},
                     headers={"Cookie": cookie}, timeout=120)
    took = time.monotonic() - started
    case.check(page.status_code == 200 and "No citation path" in page.text
               and took < CONNECTOR_BUDGET_S,
               f"/ui/connect max_steps=1: {page.status_code} in {took:.2f} s")


def analyst_transactions(graph: Graph) -> int:
    with graph.driver.session(database=graph.database) as session:
        record = session.run("SHOW TRANSACTIONS YIELD currentQuery "
                             "WHERE NOT currentQuery STARTS WITH 'SHOW TRANSACTIONS' "
                             "AND (currentQuery CONTAINS 'reduce' "
                             "OR currentQuery CONTAINS 'UNWIND range') "
                             "RETURN count(*) AS n").single()
    return int(record["n"]) if record else 0


def probe_analyst_timeout(case: Any, url: str, graph: Graph) -> None:
    client = httpx.Client(base_url=url, headers={"X-API-Key": API_KEY}, timeout=120)
    queries = [("RETURN reduce(s = 0, x IN range(1, toInteger(1.5e9)) | s + x) AS n", {}),
               ("RETURN reduce(s = 0, x IN range(1, $n) | s + x) AS n", {"n": 1_500_000_000}),
               ("UNWIND range(1, $n) AS x RETURN sum(x) AS n", {"n": 10**12})]
    for query, params in queries:
        started = time.monotonic()
        status = client.post("/analyst/cypher", json={"query": query, "params": params}
                             ).status_code
        took = time.monotonic() - started
        busy_until = started + ANALYST_TIMEOUT_S + MONITOR_S
        time.sleep(max(0.0, busy_until - time.monotonic()))
        left = analyst_transactions(graph)
        case.check(status in (400, 408) and left == 0,
                   f"{query[:50]!r}: {status} in {took:.1f} s, {left} transactions still "
                   f"running {ANALYST_TIMEOUT_S + MONITOR_S:g} s after it was sent")
        case.notes.append(f"analyst {query[:40]!r}: {status} in {took:.1f} s, "
                          f"{left} left running")


def layout_view(papers: int) -> dict[str, Any]:
    """A run's neighbourhood of `papers` papers, 60 of them returned, each paper citing
    two before it (the shape of tests/web/test_force_layout_bounds.py)."""
    def node(i: int) -> dict[str, Any]:
        return {"id": f"p{i:04d}", "title": f"Paper {i}", "year": 1980 + i % 40,
                "first_author": f"A. Smith-{i}", "seed": i < 5, "kept": i % 5 != 0,
                "reason": None, "rank": i + 1 if i < 60 else None,
                "score": 1 / (i + 1) if i < 60 else None}

    def edge(citing: int, cited: int, retained: bool) -> dict[str, Any]:
        return {"citing": f"p{citing:04d}", "cited": f"p{cited:04d}", "delta": None,
                "retained": retained, "reason": "retained"}

    edges = [edge(i, (i * 7919) % i, i % 3 != 0) for i in range(1, papers)]
    edges += [edge(i, (i * 104729) % i, True) for i in range(2, papers)]
    return {"nodes": [node(i) for i in range(papers)], "edges": edges}


def probe_layout(case: Any) -> None:
    view = layout_view(LAYOUT_PAPERS)
    tracemalloc.start()
    started = time.process_time()
    drawing = draw_evidence_graph(view, Layout.FORCE)
    seconds = time.process_time() - started
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    case.check(seconds < LAYOUT_BUDGET_S and peak < LAYOUT_BUDGET_MB,
               f"force layout of {LAYOUT_PAPERS:,} papers: {seconds:.1f} s CPU, {peak:.0f} MB")
    case.notes.append(f"force layout of {LAYOUT_PAPERS:,} papers: {seconds:.2f} s CPU, peak "
                      f"{peak:.1f} MB; note: {drawing.note}")


def resident_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def heavy_run(client: Any, number: int) -> None:
    """A search with the largest exclude the schema takes, cancelled, waited for."""
    exclude = [f"{number:03d}-{n:05d}-" + "x" * (EXCLUDE_ID_CHARS - 10)
               for n in range(EXCLUDE_IDS)]
    response = client.post("/searches", json={"query": f"tachyon condensation {number}",
                                              "exclude": exclude})
    if response.status_code != 202:
        raise RuntimeError(f"POST /searches: {response.status_code} {response.text[:200]}")
    run_id = response.json()["run_id"]
    client.post(f"/runs/{run_id}/cancel")
    deadline = time.monotonic() + 300
    while client.get(f"/runs/{run_id}").json().get("status") not in (
            "done", "partial", "failed", "cancelled"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"run {run_id} did not stop")
        time.sleep(0.2)


def probe_run_memory(case: Any, url: str, pid: int, settings: Settings, warm_up: int = 2,
                     measured: int = 6) -> None:
    """What a finished run keeps: the Python heap of the app in this process (tracemalloc:
    the objects still reachable), checked against the goal; and, as a note, the RSS of the
    probe's `crase serve` after each such run (which also holds what the allocator keeps
    of freed memory, so it rises in steps and falls back, apart from anything kept)."""
    from litestar.testing import TestClient

    from crase.api.app import create_app

    app_settings = settings.model_copy(update={"api": settings.api.model_copy(
        update={"api_keys": [API_KEY], "search_workers": 1})})
    with TestClient(create_app(app_settings)) as client:
        client.headers["X-API-Key"] = API_KEY
        for number in range(warm_up):
            heavy_run(client, number)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for number in range(warm_up, warm_up + measured):
            heavy_run(client, number)
        gc.collect()
        kept = (tracemalloc.get_traced_memory()[0] - before) / measured
        tracemalloc.stop()
    case.check(kept < RUN_MEMORY_BUDGET,
               f"a cancelled run with a 9 MB exclude keeps {kept / 1000:.0f} KB of Python heap")
    case.notes.append(f"Python heap kept per cancelled run with a 9 MB exclude (runs "
                      f"{warm_up + 1} to {warm_up + measured}): {kept / 1000:.1f} KB")
    served = httpx.Client(base_url=url, headers={"X-API-Key": API_KEY}, timeout=300)
    sizes = [resident_bytes(pid)]
    for number in range(warm_up + measured):
        heavy_run(served, number)
        sizes.append(resident_bytes(pid))
    case.notes.append("crase serve RSS after each such run (MB): "
                      + " ".join(f"{size / 1e6:.0f}" for size in sizes))
