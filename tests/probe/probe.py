"""Adversarial probe against a disposable Neo4j and `crase serve` processes this script
starts itself, on loopback only. From the checkout's root:

    python -m tests.probe.probe [--only round1 2 3 4 5 7 8 9 10 graph stalls] [--searches 50]

It loads the repository's sample corpus and tries each group of cases; a case holds when
the service does what it should, and fails otherwise. Prints one table (cases tried, held,
failed, with a note per failure); exits 1 when any case failed. Needs the jars
(`make jars`) and takes a few minutes.

- round1: the first hardening round: bad rows among good ones (loader), bad bodies and
  parameters (no 5xx), analyst write attempts, concurrent searches, heavy analyst queries.
- 2 to 10: the second round (issue 31), each against the behaviour the issue asks for:
  2 a request's idea params cannot name a URL the server fetches, turn providers on or
  raise a resource cap (a loopback server counts what reaches it); 3 document text
  imports nothing (`pip install this.x`, `pip install venv.__main__.x`), over HTTP and in
  `crase code-extract`; 4 inputs that were slow to parse answer within a bound while
  /health stays fast; 5 inputs that gave a 500; 7 `crase code-extract --execute` contains
  the block it runs (a setsid double-fork, a grandchild holding the output pipe, the
  environment's secrets, writes under var_dir, memory and file-size limits); 8 the web
  session cookie is a signed token, revoked at logout; 9 a second server leaves the live
  runs of the first alone; 10 a burst of searches beyond the queue bound is answered 429
  or 503 with Retry-After.
- graph (issue 45): the connector with no path within max_steps, analyst queries the
  timeout can and cannot stop, the force layout of a 2,492-paper run, and the memory a
  server keeps per cancelled run with a 9 MB request (tests/probe/probe_graph_bounds.py).

- stalls (issue 45): user text that stalled every route (a draft to POST /citation-gaps, a
  document to POST /code-extract), each answered within 30 s while /health stays under
  1 s (tests/probe/probe_user_text.py).

Every case is bounded: the loops are short, each wait has a deadline, and whatever a case
starts (servers, the processes a code block leaves behind) is stopped by its pid.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from crase.bench.api_load import API_KEY, start_server, stop_server, wait_until_healthy
from crase.bench.loopback_http import JsonHandler, LoopbackJsonServer, free_port
from crase.database import Neo4jServer
from crase.errors import CraseError
from crase.graph import Graph
from crase.ingest.corpus import locate_corpus
from crase.ingest.loader import load_corpus
from crase.settings import DatabaseSettings, Settings
from tests.probe import probe_graph_bounds as graph_bounds
from tests.probe import probe_user_text as user_text

GOOD_ROWS = 20
DEEP = 100_000
HEALTH_BUDGET_S = 5.0  # the slowest a /health may be while analyst queries run


@dataclass
class Case:
    area: str
    tried: int = 0
    failed: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def held(self) -> int:
        return self.tried - self.failed

    def check(self, ok: bool, what: str) -> None:
        self.tried += 1
        if not ok:
            self.failed += 1
            self.notes.append(what)


@contextmanager
def disposable_database(home: Path) -> Iterator[DatabaseSettings]:
    settings = DatabaseSettings(home=home, bolt_port=free_port(), http_port=free_port(),
                                password="probe-password", heap="1g", pagecache="256m",
                                start_timeout_s=600)  # a busy machine starts it slowly
    server = Neo4jServer(settings)
    try:  # a start that fails still leaves a process to stop
        server.start()
        yield settings
    finally:
        server.stop()


def good_paper(i: int) -> dict[str, Any]:
    return {"id": f"probe-good-{i}", "title": f"Probe paper {i} on tachyon condensation",
            "abstract": "A good row that must load.", "year": 2001}


def bad_lines() -> list[tuple[str, str]]:
    """(what, line) pairs of papers.jsonl lines that must each become a reject."""
    return [
        ("deep nesting", '{"id": "deep", "title": "x", "extra": ' + "[" * DEEP + "]" * DEEP
         + "}"),
        ("5,000-digit year", '{"id": "digits", "title": "x", "year": 1' + "0" * 5000 + "}"),
        ("20,000-character id", json.dumps({"id": "i" * 20_000, "title": "x"})),
        ("50,000-character doi", json.dumps({"id": "longdoi", "title": "x",
                                             "doi": "10.1/" + "d" * 50_000})),
        ("20,000-character arxiv id", json.dumps({"id": "longarxiv", "title": "x",
                                                  "arxiv_id": "a" * 20_000})),
        ("year not a number", json.dumps({"id": "badyear", "title": "x", "year": "soon"})),
        ("not an object", "[1, 2, 3]"),
        ("not JSON", "{this is not json"),
        ("no title", json.dumps({"id": "notitle"})),
    ]


def probe_loader(graph: Graph, settings: Settings, folder: Path) -> Case:
    case = Case("loader: bad rows among good ones")
    folder.mkdir(parents=True, exist_ok=True)
    bad = bad_lines()
    lines = [json.dumps(good_paper(i)) for i in range(GOOD_ROWS)]
    for position, (_, line) in enumerate(bad):
        lines.insert(2 * position + 1, line)
    (folder / "papers.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "citations.csv").write_text("citing_id,cited_id\nprobe-good-1,probe-good-0\n",
                                          encoding="utf-8")
    try:
        report = load_corpus(graph, locate_corpus(folder), settings, show_progress=False)
    except CraseError as err:
        case.check(False, f"the load failed: {type(err).__name__}: {err}")
        return case
    except Exception as err:  # noqa: BLE001 - a crash is what the probe counts
        case.check(False, f"the load crashed: {type(err).__name__}: {err}")
        return case
    found = count(graph, "MATCH (p:Paper) WHERE p.id STARTS WITH 'probe-good-' "
                  "RETURN count(p) AS n")
    for what, _ in bad:
        case.check(True, what)
    case.check(found == GOOD_ROWS, f"{GOOD_ROWS - found} good rows lost")
    rejected = sum(report.rejects.values())
    case.check(rejected >= len(bad), f"{len(bad) - rejected} bad rows without a reject")
    return case


def count(graph: Graph, query: str) -> int:
    with graph.driver.session(database=graph.database) as session:
        record = session.run(query).single()
    return int(record["n"]) if record else 0


def probe_http_inputs(client: httpx.Client) -> Case:
    case = Case("HTTP: bad bodies and parameters (no 5xx)")
    deep = "[" * DEEP + "]" * DEEP
    huge = "1" + "0" * 5000
    json_type = {"content-type": "application/json"}
    attempts: list[tuple[str, Callable[[], Any]]] = [
        ("deep search body", lambda: client.post("/searches", content=deep, headers=json_type)),
        ("deep batch body", lambda: client.post("/papers/batch", content=deep,
                                                headers=json_type)),
        ("deep idea body", lambda: client.post("/ideas", content=deep, headers=json_type)),
        ("huge k", lambda: client.post("/searches", content='{"query": "tachyon", "params": '
                                       '{"k": ' + huge + "}}", headers=json_type)),
        ("text/plain body", lambda: client.post("/searches", content='{"query": "tachyon"}',
                                                headers={"content-type": "text/plain"})),
        ("empty batch", lambda: client.post("/papers/batch", json={})),
        ("batch with a 20,000-character id", lambda: client.post("/papers/batch", json={
            "papers": [good_paper(900), {"id": "j" * 20_000, "title": "x"}]})),
        ("max_iterations 1e9", lambda: client.post("/searches", json={
            "query": "tachyon condensation", "params": {"max_iterations": 1_000_000_000}})),
        ("k 0", lambda: client.post("/searches", json={"query": "tachyon", "params": {"k": 0}})),
        ("tau 2", lambda: client.post("/searches", json={"query": "tachyon",
                                                          "params": {"tau": 2}})),
    ]

    def papers(q: str) -> Callable[[], Any]:
        return lambda: client.get("/papers", params={"q": q})

    attempts += [(f"papers q={q!r}", papers(q))
                 for q in ("AND", "NOT", "OR", "black OR", "AND NOT x", "/.*/", "*", "\"",
                           "a:b", "(((", "~", "\\")]
    for what, send in attempts:
        try:
            status = send().status_code
        except Exception as err:  # noqa: BLE001 - a client-side crash counts as a failure
            case.check(False, f"{what}: {type(err).__name__}")
            continue
        case.check(status < 500, f"{what}: {status}")
    return case


# Every kind of write and side effect POST /analyst/cypher must refuse: the one list, tried
# here in variants and by tests/api/test_analyst.py as written (which expects a 403 for each
# and a projection named 'g' to exist, so the GDS calls reach a real graph there).
ANALYST_WRITES = [
    "CREATE (p:Paper {id: 'intruder', title: 'x'})",
    "MERGE (p:Paper {id: 'intruder'}) RETURN p",
    "MATCH (p:Paper) SET p.title = 'changed'",
    "MATCH (p:Paper) DELETE p",
    "MATCH (p:Paper) DETACH DELETE p",
    "MATCH (p:Paper) REMOVE p.title",
    "FOREACH (x IN [1] | CREATE (:Intruder))",
    "CALL { CREATE (:Intruder) } RETURN 1",
    "UNWIND [1, 2] AS x CREATE (:Intruder {x: x})",
    "MATCH (p:Paper) CALL (p) { SET p.touched = true } IN TRANSACTIONS OF 10 ROWS",
    "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
    "LOAD CSV WITH HEADERS FROM 'http://127.0.0.1:9/x.csv' AS row RETURN row",
    "CALL gds.graph.project('intruder', 'Paper', 'CITES')",
    "CALL gds.graph.drop('crase-run-anything', false)",
    "MATCH (s:Paper)-[:CITES]->(t:Paper) RETURN gds.graph.project('intruder', s, t)",
    "CALL gds.pageRank.mutate('g', {mutateProperty: 'pr'})",
    "CALL gds.pageRank.write('g', {writeProperty: 'pr'})",
    "CALL db.createLabel('Intruder')",
    "CALL db.createProperty('intruder')",
    "CALL db.clearQueryCaches()",
    "CREATE INDEX intruder IF NOT EXISTS FOR (p:Paper) ON (p.intruder)",
    "CREATE CONSTRAINT intruder IF NOT EXISTS FOR (p:Paper) REQUIRE p.intruder IS UNIQUE",
    "DROP INDEX paper_year IF EXISTS",
    "DROP CONSTRAINT paper_id_unique IF EXISTS",
    "CREATE USER intruder SET PASSWORD 'a-long-password'",
    "SHOW USERS",
    "CALL dbms.listConfig()",
    "CALL dbms.listConnections()",
    "SHOW TRANSACTIONS",
    "TERMINATE TRANSACTIONS 'neo4j-transaction-1'",
]


def analyst_variants() -> list[str]:
    """Each write as written, in lower case, behind a comment, with a trailing space, and
    behind a harmless read (five attempts each), plus one through a parameter."""
    out = []
    for query in ANALYST_WRITES:
        out += [query, query.lower(), f"// a comment\n{query}", f"{query} ",
                f"MATCH (n) WITH count(n) AS c {query}"]
    return [*out, "CREATE (p:Paper {id: $id})"]


def graph_fingerprint(graph: Graph) -> tuple[Any, ...]:
    with graph.driver.session(database=graph.database) as session:
        nodes = session.run("MATCH (n) RETURN count(n) AS n").single()
        labels = session.run("CALL db.labels() YIELD label RETURN collect(label) AS l").single()
        indexes = session.run("SHOW INDEXES YIELD name RETURN collect(name) AS n").single()
        users = session.run("SHOW USERS YIELD user RETURN collect(user) AS u").single()
        titles = session.run("MATCH (p:Paper) RETURN count(p.title) AS n").single()
    return (nodes and nodes["n"], labels and sorted(labels["l"]),
            indexes and sorted(indexes["n"]), users and sorted(users["u"]),
            titles and titles["n"])


def probe_analyst_writes(client: httpx.Client, graph: Graph) -> Case:
    case = Case("analyst: write attempts (none may get through)")
    before = graph_fingerprint(graph)
    for query in analyst_variants():
        response = client.post("/analyst/cypher", json={"query": query,
                                                        "params": {"id": "intruder"}})
        case.check(response.status_code < 500, f"{query[:40]!r}: {response.status_code}")
    after = graph_fingerprint(graph)
    case.tried -= 1  # the fingerprint check below is part of the same attempts
    case.check(before == after, f"the graph changed: {before} -> {after}")
    return case


def probe_concurrent_searches(client: httpx.Client, searches: int) -> Case:
    case = Case(f"{searches} concurrent searches")
    queries = [q["query"][:300] for q in read_queries(Path("data/sample/queries.jsonl"), searches)]

    def one(query: str) -> str:
        response = client.post("/searches", json={"query": query})
        if response.status_code != 202:
            return f"POST {response.status_code}"
        run_id = response.json()["run_id"]
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            status = client.get(f"/runs/{run_id}").json().get("status")
            if status in ("done", "failed", "cancelled"):
                return str(status)
            time.sleep(0.5)
        return "never finished"

    with ThreadPoolExecutor(max_workers=searches) as pool:
        outcomes = list(pool.map(one, queries))
    for outcome in outcomes:
        case.check(outcome == "done", outcome)
    return case


def read_queries(path: Path, limit: int) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [(rows * (limit // len(rows) + 1))[i] for i in range(limit)]


# The report's two, refused before they run, and one the up-front checks cannot see (the
# range's end is a parameter): it runs until the transaction timeout.
HEAVY_ANALYST: list[tuple[str, dict[str, Any]]] = [
    ("RETURN size(reduce(s = '', x IN range(1, 3000000) | s + 'xxxxxxxxxx')) AS n", {}),
    ("RETURN " + " + ".join(["1"] * 400) + " AS n", {}),
    ("UNWIND range(1, $n) AS x RETURN sum(x) AS n", {"n": 10**12}),
]


def probe_analyst_hangs(client: httpx.Client) -> Case:
    case = Case("analyst: heavy queries must not starve other routes")
    results: list[tuple[float, int]] = []

    def heavy(query: str, params: dict[str, Any]) -> None:
        started = time.monotonic()
        status = client.post("/analyst/cypher", json={"query": query, "params": params}
                             ).status_code
        results.append((time.monotonic() - started, status))

    threads = [threading.Thread(target=heavy, args=HEAVY_ANALYST[i % 3]) for i in range(9)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    for route in ("/health", "/papers?q=tachyon", "/health"):
        started = time.monotonic()
        status = client.get(route).status_code
        took = time.monotonic() - started
        case.check(status < 500 and took < HEALTH_BUDGET_S, f"{route}: {status} in {took:.1f}s")
    for thread in threads:
        thread.join(timeout=600)
    for took, status in results:
        case.check(status < 500 or status == 503, f"heavy analyst query: {status}")
        case.check(took < 120, f"a heavy analyst query took {took:.0f}s")
    statuses = sorted({status for _, status in results})
    case.notes.append(f"heavy analyst queries answered within {max(t for t, _ in results):.1f}s"
                      f" with statuses {statuses}" if results else "no heavy query answered")
    return case


# --- round 2 (issue 31) -------------------------------------------------------------------

ENDED = {"done", "partial", "failed", "cancelled"}
RUN_WAIT_S = 300.0
IDEA = "Tachyon condensation on unstable D-branes described by open string field theory"
INTERNAL_PATH = "/internal/admin"
ZEN = "Beautiful is better than ugly"
SLOW_BUDGET_S = 3.0  # the slowest answer to an input that was slow to parse
HEALTH_FAST_S = 1.0  # the slowest /health while such an input is parsed
QUEUE_BOUND = 20  # the server's max_queued_runs in this probe
BLOCK_TIMEOUT_S = 2.0  # --timeout of the executed code blocks


class CountingServer(LoopbackJsonServer):
    """Stands in for an internal host and for the external providers: answers 404 to
    everything and records each path it was asked for."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.lock = threading.Lock()
        super().__init__()

    def handler_class(self) -> type[JsonHandler]:
        server = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                with server.lock:
                    server.paths.append(self.path)
                self.send_json(404, b"{}", {})

            do_HEAD = do_POST = do_GET  # noqa: N815

        return Handler

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def count(self, prefix: str) -> int:
        with self.lock:
            return sum(path.startswith(prefix) for path in self.paths)


@dataclass
class ProbeServer:
    """One `crase serve` of the probe: its process, address, folder and log."""

    process: subprocess.Popen[bytes]
    url: str
    folder: Path

    @property
    def log(self) -> str:
        return (self.folder / "server.log").read_text(encoding="utf-8", errors="replace")


def server_env(database: DatabaseSettings, folder: Path, extra: dict[str, str]) -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1",
            "CRASE_DATABASE__URI": database.bolt_uri(),
            "CRASE_DATABASE__PASSWORD": database.password or "",
            "CRASE_API__API_KEYS": json.dumps([API_KEY]),
            "CRASE_VAR_DIR": str(folder / "var"), **extra}


@contextmanager
def probe_server(database: DatabaseSettings, folder: Path,
                 extra: dict[str, str]) -> Iterator[ProbeServer]:
    """`crase serve` on a free loopback port, started in `folder` (its log there too)."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    command = [sys.executable, "-m", "crase.api.cli", "serve", "--host", "127.0.0.1",
               "--port", str(port), "--log-level", "warning"]
    with (folder / "server.log").open("wb") as log:
        process = subprocess.Popen(command, env=server_env(database, folder, extra),
                                   cwd=folder, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT)
    server = ProbeServer(process, f"http://127.0.0.1:{port}", folder)
    try:
        wait_until_healthy(server.url, process, timeout_s=300)
        yield server
    finally:
        stop_server(process)


def operator_settings(internal: CountingServer) -> dict[str, str]:
    """The operator's choices for the probe's first server: one search worker, a small
    queue, providers configured (on the counting server) but off for idea runs."""
    providers = f"{internal.base}/provider"
    return {"CRASE_API__SEARCH_WORKERS": "1",
            "CRASE_API__MAX_QUEUED_RUNS": str(QUEUE_BOUND),
            "CRASE_IDEA__USE_PROVIDERS": "false",
            "CRASE_PROVIDERS__ENABLED": "true",
            "CRASE_PROVIDERS__MAX_RETRIES": "0",
            "CRASE_PROVIDERS__SEMANTIC_SCHOLAR_URL": f"{providers}/semantic-scholar",
            "CRASE_PROVIDERS__CROSSREF_URL": f"{providers}/crossref",
            "CRASE_PROVIDERS__ARXIV_URL": f"{providers}/arxiv",
            "CRASE_IDEA__ARXIV_PDF_URL": f"{providers}/arxiv-pdf"}


def wait_for_end(client: httpx.Client, run_id: str, seen: Callable[[], bool] = lambda: False,
                 timeout_s: float = RUN_WAIT_S) -> str:
    """The run's final status. Once `seen()` is true (what the case looks for has happened)
    or past the deadline the probe cancels it, and waits until it has stopped, so what
    the next case sees is not this run's doing."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not seen():
        status = str(client.get(f"/runs/{run_id}").json().get("status"))
        if status in ENDED:
            return status
        time.sleep(0.5)
    return cancel_and_wait(client, run_id)


def cancel_and_wait(client: httpx.Client, run_id: str, timeout_s: float = RUN_WAIT_S) -> str:
    client.post(f"/runs/{run_id}/cancel")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = str(client.get(f"/runs/{run_id}").json().get("status"))
        if status in ENDED:
            return f"{status} by the probe"
        time.sleep(0.5)
    return "still running after its cancel"


def more_paths(server: CountingServer, count: int) -> bool:
    """Has the server seen more than `count` requests?"""
    return len(server.paths) > count


def probe_idea_params(client: httpx.Client, internal: CountingServer) -> Case:
    """Item 2: the operator's URLs, switches and caps are not a request's to set."""
    case = Case("2 idea params: no URL, provider switch or cap from a request")
    target = f"{internal.base}{INTERNAL_PATH}?from-crase="
    fetching = {
        "arxiv_pdf_url to a loopback host, providers on": {"arxiv_pdf_url": target,
                                                           "use_providers": True},
        "use_providers true (the server has them off)": {"use_providers": True},
    }
    caps = {"pdf_max_bytes 1 GB": {"pdf_max_bytes": 1_000_000_000},
            "pdf_timeout_s 600": {"pdf_timeout_s": 600}}
    for what, params in {**fetching, **caps}.items():
        before = len(internal.paths)
        response = client.post("/ideas", json={"idea": IDEA, "params": params})
        if response.status_code != 202:
            case.check(response.status_code < 500, f"{what}: {response.status_code}")
            continue
        run_id = response.json()["run_id"]
        if what in caps:
            cancel_and_wait(client, run_id)
            case.check(False, f"{what}: accepted (202), above the server's own cap")
            continue
        status = wait_for_end(client, run_id, partial(more_paths, internal, before))
        with internal.lock:
            reached = internal.paths[before:]
        case.check(not reached, f"{what}: accepted, the run ({status}) sent {len(reached)} "
                                f"requests to the loopback server: {sorted(set(reached))[:4]}")
    return case


def probe_document_imports(client: httpx.Client, server: ProbeServer,
                           database: DatabaseSettings, folder: Path) -> Case:
    """Item 3: a dependency named in a document is looked up without importing it."""
    case = Case("3 document text imports nothing")
    texts = {"this.x": "pip install this.x", "venv.__main__.x": "pip install venv.__main__.x"}
    for text in texts.values():
        response = client.post("/code-extract", json={"filename": "deps.md", "text": text,
                                                      "use_model": False})
        log = server.log
        venvs = list(server.folder.rglob("pyvenv.cfg"))
        case.check(response.status_code < 500 and ZEN not in log and "usage:" not in log
                   and not venvs,
                   f"POST /code-extract {text!r}: {response.status_code}, Zen in the server "
                   f"log: {ZEN in log}, venv usage: {'usage:' in log}, venvs: {len(venvs)}")
    for name, text in texts.items():
        work = folder / f"cli-{name}"
        work.mkdir(parents=True)
        (work / "deps.md").write_text(f"{text}\n", encoding="utf-8")
        done = run_cli(["code-extract", "deps.md", "--no-model", "--json"], work, database,
                       {}, timeout_s=180)
        venvs = list(work.rglob("pyvenv.cfg"))
        case.check(done.returncode == 0 and ZEN not in done.stdout + done.stderr and not venvs,
                   f"crase code-extract {text!r}: exit {done.returncode}, Zen printed: "
                   f"{ZEN in done.stdout + done.stderr}, venvs made: {len(venvs)}")
    return case


def run_cli(args: list[str], folder: Path, database: DatabaseSettings, extra: dict[str, str],
            timeout_s: float) -> subprocess.CompletedProcess[str]:
    """`crase ARGS` in `folder`, against the probe's database, with its own var_dir."""
    env = server_env(database, folder, extra)
    return subprocess.run([sys.executable, "-m", "crase.api.cli", *args], cwd=folder, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout_s, check=False)


def timed_post(url: str, route: str, body: dict[str, Any]) -> tuple[int, float]:
    started = time.monotonic()
    response = httpx.post(f"{url}{route}", json=body, headers={"X-API-Key": API_KEY},
                          timeout=120)
    return response.status_code, time.monotonic() - started


def start_post(url: str, route: str, body: dict[str, Any]
               ) -> tuple[threading.Thread, list[tuple[int, float]]]:
    """A timed POST in a thread of its own; its (status, seconds) land in the list."""
    answer: list[tuple[int, float]] = []
    thread = threading.Thread(target=lambda: answer.append(timed_post(url, route, body)))
    thread.start()
    return thread, answer


def health_while(url: str, busy: threading.Thread) -> float:
    """The slowest /health answer while `busy` runs."""
    slowest = 0.0
    while busy.is_alive():
        started = time.monotonic()
        httpx.get(f"{url}/health", timeout=60)
        slowest = max(slowest, time.monotonic() - started)
        time.sleep(0.1)
    return slowest


def probe_slow_inputs(url: str) -> Case:
    """Item 4: inputs that took seconds to parse answer fast, and hold nothing else up."""
    case = Case(f"4 slow inputs: answer < {SLOW_BUDGET_S:.0f} s, /health < {HEALTH_FAST_S:.0f} s")
    draft = "Tachyon condensation on unstable D-branes."
    # Unmeasured first calls: the routes load their encoder once.
    timed_post(url, "/code-extract", {"filename": "w.txt", "text": "x = 1", "use_model": False})
    timed_post(url, "/citation-gaps", {"draft": draft})
    inputs: dict[str, tuple[str, dict[str, Any]]] = {
        "code line 'int ' + 'a'*32000 + ';b'": (
            "/code-extract", {"filename": "slow.txt", "text": "int " + "a" * 32_000 + ";b",
                              "use_model": False}),
        "BibTeX '@a{k,' + 'b=@a{k,'*2000 (14 KB)": (
            "/citation-gaps", {"draft": draft, "bibtex": "@a{k," + "b=@a{k," * 2000}),
    }
    for what, (route, body) in inputs.items():
        busy, answer = start_post(url, route, body)
        slowest_health = health_while(url, busy)
        busy.join()
        status, took = answer[0] if answer else (0, float("inf"))
        case.check(status < 500 and took < SLOW_BUDGET_S, f"{what}: {status} in {took:.1f} s")
        case.check(slowest_health < HEALTH_FAST_S,
                   f"{what}: /health took {slowest_health:.1f} s meanwhile")
    return case


def probe_input_errors(client: httpx.Client) -> Case:
    """Item 5: the inputs that gave a 500."""
    case = Case("5 inputs that gave a 500")
    paper = {"id": "probe-p1", "title": "T"}
    inputs = {
        "citation-gaps cited_ids ['']": ("/citation-gaps", {"draft": "0", "cited_ids": [""]}),
        "batch citation id with U+2028": ("/papers/batch", {
            "papers": [paper], "citations": [{"citing_id": "probe-p1", "cited_id": "q\u2028x"}]}),
        "batch citation id with U+0085": ("/papers/batch", {
            "papers": [paper], "citations": [{"citing_id": "q\u0085x", "cited_id": "probe-p1"}]}),
    }
    for what, (route, body) in inputs.items():
        status = client.post(route, json=body).status_code
        case.check(status < 500, f"{what}: {status}")
    return case


# Each block names itself in its first line; MARKER is replaced by a word unique to the run,
# which the processes it leaves behind carry on their command line.
RUNNER_BLOCKS = {
    "double fork": """# probe: double fork
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(30)",
                                  "MARKER-fork"])
    os._exit(0)
time.sleep(60)
""",
    "pipe holder": """# probe: pipe holder
import os, sys, time
if os.fork() == 0:
    os.setsid()
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(8)",
                              "MARKER-pipe"])
time.sleep(60)
""",
    "environment": """# probe: environment
import os
print("environment:", sorted(os.environ.items()))
""",
    "var write": """# probe: var write
import os
for folder in (os.environ.get("CRASE_VAR_DIR"), "var", os.path.join("..", "var")):
    if folder:
        try:
            with open(os.path.join(folder, "written-by-a-block"), "w") as out:
                print("x", file=out)
        except OSError:
            pass
""",
    "memory": """# probe: memory
import mmap
try:
    mapped = mmap.mmap(-1, 8 << 30)
    print("mapped 8 GiB")
except (OSError, MemoryError) as err:
    print("refused:", err)
""",
    "file size": """# probe: file size
import signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
written = 0
try:
    with open("big.bin", "wb") as out:
        for _ in range(256):
            out.write(bytes(1 << 20))
            out.flush()
            written += 1
    print("wrote 256 MiB")
except OSError as err:
    print(f"stopped after {written} MiB: {err}")
""",
}


def processes_with(marker: str) -> list[int]:
    """Pids whose command line holds `marker` (what a code block left running)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def stop_leftovers(marker: str) -> list[int]:
    """Kill, by pid, the processes the probe's code blocks left running; their pids."""
    pids = processes_with(marker)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids


def executed_blocks(output: str) -> dict[str, dict[str, Any]]:
    """The execution of each probe block, by the name in its first line."""
    result = json.loads(output)
    found = {}
    for block in result.get("blocks", []):
        first = block.get("text", "").split("\n", 1)[0]
        if first.startswith("# probe: "):
            found[first.removeprefix("# probe: ")] = block.get("execution", {})
    return found


def probe_code_runner(database: DatabaseSettings, folder: Path) -> Case:
    """Item 7: what `crase code-extract --execute` lets a block do."""
    case = Case("7 the code runner contains its block")
    marker = f"crase-probe-{uuid.uuid4().hex[:12]}"
    folder.mkdir(parents=True)
    (folder / "var").mkdir()
    text = "".join(f"```python\n{block.replace('MARKER', marker)}```\n\n"
                   for block in RUNNER_BLOCKS.values())
    (folder / "blocks.md").write_text(text, encoding="utf-8")
    secret = f"probe-secret-{uuid.uuid4().hex}"
    try:
        done = run_cli(["code-extract", "blocks.md", "--execute", "--timeout",
                        str(BLOCK_TIMEOUT_S), "--no-model", "--json"], folder, database,
                       {"CRASE_PROBE_SECRET": secret}, timeout_s=300)
        time.sleep(1.0)  # a grandchild's double fork has long finished by now
        left = {name: processes_with(f"{marker}-{name}") for name in ("fork", "pipe")}
    finally:
        stop_leftovers(marker)
    try:
        runs = executed_blocks(done.stdout)
    except json.JSONDecodeError:
        case.check(False, f"crase code-extract --execute: exit {done.returncode}, "
                          f"{done.stderr.strip()[-300:]}")
        return case
    case.check(not left["fork"], f"setsid double fork: {len(left['fork'])} grandchild(ren) "
                                 "still running after the timeout")
    pipe = runs.get("pipe holder", {})
    seconds = float(pipe.get("seconds", 0.0))
    case.check(seconds < BLOCK_TIMEOUT_S + 1.5,
               f"a grandchild holding the output pipe: the {BLOCK_TIMEOUT_S:.0f} s timeout "
               f"took {seconds:.1f} s")
    environment = runs.get("environment", {})
    printed = str(environment.get("stdout", "")) + str(environment.get("stderr", ""))
    case.check("environment:" in printed and secret not in printed
               and (database.password or secret) not in printed,
               "environment: " + ("the block did not run" if "environment:" not in printed
                                  else "the service's secrets reached the block"))
    written = list(folder.rglob("written-by-a-block"))
    case.check(not written, f"var write: the block wrote {[str(p) for p in written]}")
    memory = str(runs.get("memory", {}).get("stdout", ""))
    case.check("mapped" not in memory, "memory: the block mapped 8 GiB (no memory limit)")
    size = str(runs.get("file size", {}).get("stdout", ""))
    case.check("stopped after" in size,
               f"file size: {size.strip() or runs.get('file size', {}).get('status')}")
    return case


def session_cookie(response: httpx.Response) -> str | None:
    for header in response.headers.get_list("set-cookie"):
        name, _, rest = header.partition("=")
        if name.strip() == "crase_session":
            return rest.split(";", 1)[0].strip('"')
    return None


def page(url: str, path: str, cookie: str) -> httpx.Response:
    return httpx.get(f"{url}{path}", headers={"Cookie": f"crase_session={cookie}"}, timeout=30)


def probe_sessions(url: str) -> Case:
    """Item 8: the login's cookie is a signed, expiring token, revoked at logout."""
    case = Case("8 web sessions: signed token, revoked at logout")
    login = httpx.post(f"{url}/ui/login", data={"key": API_KEY, "next": "/ui/"}, timeout=30)
    cookie = session_cookie(login)
    if login.status_code != 303 or cookie is None:
        case.check(False, f"the login failed: {login.status_code}, cookie {cookie is not None}")
        return case
    set_cookie = " ".join(login.headers.get_list("set-cookie")).lower()
    case.check(API_KEY not in cookie, "the cookie holds the API key itself")
    case.check("max-age" in set_cookie or "expires" in set_cookie, "the cookie has no expiry")
    tampered = cookie[:-2] + ("xx" if not cookie.endswith("xx") else "yy")
    case.check(page(url, "/ui/runs", tampered).status_code != 200, "a tampered token opens pages")
    case.check(httpx.get(f"{url}/runs", headers={"Cookie": f"crase_session={cookie}"},
                         timeout=30).status_code == 401, "the cookie opens an API route")
    opened = page(url, "/ui/runs", cookie)
    token = re.search(r'name="form_token" value="([^"]+)"', opened.text)
    if opened.status_code != 200 or token is None:
        case.check(False, f"the session opens no page ({opened.status_code})")
        return case
    logout = httpx.post(f"{url}/ui/logout", data={"form_token": token.group(1)},
                        headers={"Cookie": f"crase_session={cookie}"}, timeout=30)
    after = page(url, "/ui/runs", cookie)
    case.check(after.status_code != 200,
               f"logout ({logout.status_code}) left the token valid: /ui/runs answers "
               f"{after.status_code} to it")
    return case


def run_statuses(graph: Graph, run_ids: list[str]) -> dict[str, str]:
    with graph.driver.session(database=graph.database) as session:
        rows = session.run("MATCH (r:Run) WHERE r.id IN $ids RETURN r.id AS id, "
                           "r.status AS status", ids=run_ids).data()
    return {row["id"]: str(row["status"]) for row in rows}


def probe_second_server(client: httpx.Client, graph: Graph, database: DatabaseSettings,
                        folder: Path, searches: int = 6) -> Case:
    """Item 9: a second server's start-up closes only runs whose owner is gone. An idea
    run keeps the first server's one worker busy, so the searches behind it stay queued
    while the second server starts."""
    case = Case("9 a second server leaves the first's live runs alone")
    queries = [q["query"][:300] for q in read_queries(Path("data/sample/queries.jsonl"),
                                                       searches)]
    posts = [client.post("/ideas", json={"idea": IDEA})]
    posts += [client.post("/searches", json={"query": query}) for query in queries]
    run_ids = [p.json()["run_id"] for p in posts if p.status_code == 202]
    try:
        live = [i for i in run_ids
                if client.get(f"/runs/{i}").json().get("status") in ("queued", "running")]
        with probe_server(database, folder, {"CRASE_API__SEARCH_WORKERS": "1"}):
            stored = run_statuses(graph, live)
            shown = {i: client.get(f"/runs/{i}").json().get("status") for i in live}
    finally:
        for run_id in run_ids:
            client.post(f"/runs/{run_id}/cancel")
    if not live:
        case.check(False, "no run of the first server was live when the second started")
    for run_id in live:
        case.check("failed" not in (stored.get(run_id), shown.get(run_id)),
                   f"run {run_id} (stored {stored.get(run_id)}, shown {shown.get(run_id)}) "
                   "was closed by the second server")
    return case


def probe_queue_bound(client: httpx.Client, burst: int) -> Case:
    """Item 10: past the queue bound, 429 or 503 with Retry-After."""
    case = Case(f"10 a burst of {burst} searches, queue bound {QUEUE_BOUND}")

    def one(i: int) -> httpx.Response:
        return client.post("/searches", json={"query": f"tachyon condensation {i}"})

    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(one, range(burst)))
    accepted = [a.json()["run_id"] for a in answers if a.status_code == 202]
    refused = [a for a in answers if a.status_code in (429, 503)]
    other = sorted({a.status_code for a in answers} - {202, 429, 503})
    for run_id in accepted:
        client.post(f"/runs/{run_id}/cancel")
    case.check(bool(refused), f"all {len(accepted)} searches of the burst were queued")
    case.check(all("retry-after" in a.headers for a in refused),
               "a refusal without Retry-After")
    case.check(not other, f"other answers: {other}")
    return case


# --- the table and the run ----------------------------------------------------------------


def summarise(cases: list[Case]) -> int:
    print(f"{'case':60} {'tried':>6} {'held':>6} {'failed':>6}")
    for case in cases:
        print(f"{case.area:60} {case.tried:6d} {case.held:6d} {case.failed:6d}")
        for note in case.notes:
            print(f"    {note}")
    tried, failed = sum(c.tried for c in cases), sum(c.failed for c in cases)
    print(f"{'all':60} {tried:6d} {tried - failed:6d} {failed:6d}")
    return 1 if failed else 0


GROUPS = ("round1", "2", "3", "4", "5", "7", "8", "9", "10", "graph", "stalls")


def round_graph(graph: Graph, settings: Settings, database: DatabaseSettings,
                work: Path) -> list[Case]:
    """Issue 45's bounded graph reads, layout and run memory (tests/probe/probe_graph_bounds.py)."""
    connector = Case("graph: connector, no path in 1 step / paths in 6, < 5 s")
    analyst = Case("graph: analyst long queries, no transaction past the timeout")
    layout = Case("graph: force layout of 2,492 papers, < 8 s CPU and < 60 MB")
    memory = Case("graph: memory kept per cancelled run (9 MB exclude) < 64 KB")
    with probe_server(database, work / "server-graph",
                      {"CRASE_API__SEARCH_WORKERS": "1"}) as server:
        graph_bounds.probe_connector(connector, server.url)
        graph_bounds.probe_analyst_timeout(analyst, server.url, graph)
        graph_bounds.probe_layout(layout)
        graph_bounds.probe_run_memory(memory, server.url, server.process.pid, settings)
    return [connector, analyst, layout, memory]


def round_stalls(database: DatabaseSettings, work: Path) -> list[Case]:
    """Issue 45's user text that stalled every route (tests/probe/probe_user_text.py)."""
    stalls = Case(f"stalls: answer < {user_text.ANSWER_BUDGET_S:.0f} s, "
                  f"/health < {user_text.HEALTH_BUDGET_S:.0f} s")
    with probe_server(database, work / "server-stalls", {}) as server:
        user_text.probe_stalls(stalls, server.url)
    return [stalls]


def round_one(graph: Graph, settings: Settings, database: DatabaseSettings, work: Path,
              searches: int) -> list[Case]:
    cases = [probe_loader(graph, settings, work / "bad-corpus")]
    port = free_port()
    server = start_server(argparse.Namespace(database_uri=database.bolt_uri(),
                                             database_password=database.password,
                                             workers=2), port)
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(base_url, server)
        with httpx.Client(base_url=base_url, headers={"X-API-Key": API_KEY},
                          timeout=600) as client:
            cases += [probe_http_inputs(client), probe_analyst_writes(client, graph),
                      probe_concurrent_searches(client, searches),
                      probe_analyst_hangs(client)]
    finally:
        stop_server(server)
    return cases


def round_two(graph: Graph, database: DatabaseSettings, work: Path, only: set[str],
              burst: int) -> list[Case]:
    cases = []
    if "7" in only:
        cases.append(probe_code_runner(database, work / "code-runner"))
    if not only & {"2", "3", "4", "5", "8", "9", "10"}:
        return cases
    with CountingServer().running() as internal, \
            probe_server(database, work / "server-1", operator_settings(internal)) as server, \
            httpx.Client(base_url=server.url, headers={"X-API-Key": API_KEY},
                         timeout=120) as client:
        steps: list[tuple[str, Callable[[], Case]]] = [
            ("2", lambda: probe_idea_params(client, internal)),
            ("3", lambda: probe_document_imports(client, server, database, work / "imports")),
            ("4", lambda: probe_slow_inputs(server.url)),
            ("5", lambda: probe_input_errors(client)),
            ("8", lambda: probe_sessions(server.url)),
            ("9", lambda: probe_second_server(client, graph, database, work / "server-2")),
            ("10", lambda: probe_queue_bound(client, burst)),
        ]
        for group, step in steps:
            if group in only:
                cases.append(step())
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=GROUPS, default=list(GROUPS),
                        help="groups of cases to try (default all)")
    parser.add_argument("--searches", type=int, default=50,
                        help="concurrent searches of round1")
    parser.add_argument("--burst", type=int, default=3 * QUEUE_BOUND,
                        help=f"searches sent at once against a queue of {QUEUE_BOUND} (item 10)")
    args = parser.parse_args(argv)
    only = set(args.only)
    work = Path(tempfile.mkdtemp(prefix="crase-probe-"))
    cases: list[Case] = []
    with disposable_database(work / "neo4j") as database:
        settings = Settings(database=database, var_dir=work / "var")
        graph = Graph.connect(database)
        try:
            graph.apply_schema()
            load_corpus(graph, locate_corpus(Path("data/sample")), settings,
                        show_progress=False)
            if "round1" in only:
                cases += round_one(graph, settings, database, work, args.searches)
            cases += round_two(graph, database, work, only, args.burst)
            if "stalls" in only:
                cases += round_stalls(database, work)
            if "graph" in only:
                cases += round_graph(graph, settings, database, work)
        finally:
            graph.close()
    return summarise(cases)


if __name__ == "__main__":
    sys.exit(main())
