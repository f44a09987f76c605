"""Adversarial probe: bad input, analyst writes, concurrency and hangs, against a disposable
Neo4j and a `crase serve` this script starts itself (loopback only).

    python -m crase.bench.probe [--searches 50]

It loads the repository's sample corpus, then tries each case and counts what went wrong:
a 5xx, a good row lost, a bad row without a reject, a write that got through the analyst
endpoint, a search that errored, a route that stopped answering while analyst queries
ran, a cancel that did not stop a run waiting on a silent model. Prints one table; exits 1
when anything went wrong. Needs the jars (`make jars`) and takes a few minutes.
"""

import argparse
import json
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from crase.bench.api_load import API_KEY, start_server, stop_server, wait_until_healthy
from crase.bench.loopback_http import free_port
from crase.database import Neo4jServer
from crase.errors import CraseError
from crase.graph import Graph
from crase.ingest.corpus import locate_corpus
from crase.ingest.loader import load_corpus
from crase.settings import DatabaseSettings, Settings

GOOD_ROWS = 20
DEEP = 100_000
HEALTH_BUDGET_S = 5.0  # the slowest a /health may be while analyst queries run


@dataclass
class Case:
    area: str
    tried: int = 0
    wrong: int = 0
    notes: list[str] = field(default_factory=list)

    def check(self, ok: bool, what: str) -> None:
        self.tried += 1
        if not ok:
            self.wrong += 1
            self.notes.append(what)


@contextmanager
def disposable_database(home: Path) -> Iterator[DatabaseSettings]:
    settings = DatabaseSettings(home=home, bolt_port=free_port(), http_port=free_port(),
                                password="probe-password", heap="1g", pagecache="256m")
    server = Neo4jServer(settings)
    server.start()
    try:
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


ANALYST_WRITES = [
    "CREATE (p:Paper {id: 'intruder', title: 'x'})",
    "MERGE (p:Paper {id: 'intruder'}) RETURN p",
    "MATCH (p:Paper) SET p.title = 'changed'",
    "MATCH (p:Paper) DELETE p",
    "MATCH (p:Paper) DETACH DELETE p",
    "MATCH (p:Paper) REMOVE p.title",
    "FOREACH (x IN [1] | CREATE (:Intruder))",
    "MATCH (p:Paper) CALL (p) { SET p.touched = true } IN TRANSACTIONS OF 10 ROWS",
    "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
    "CALL gds.graph.project('intruder', 'Paper', 'CITES')",
    "CALL gds.graph.drop('crase-run-anything', false)",
    "CALL gds.pageRank.write('probe-graph', {writeProperty: 'pr'})",
    "CALL db.createLabel('Intruder')",
    "CALL db.createProperty('intruder')",
    "CREATE INDEX intruder IF NOT EXISTS FOR (p:Paper) ON (p.intruder)",
    "DROP CONSTRAINT paper_id_unique IF EXISTS",
    "CREATE USER intruder SET PASSWORD 'a-long-password'",
    "MATCH (s:Paper)-[:CITES]->(t:Paper) RETURN gds.graph.project('intruder', s, t)",
    "CALL { CREATE (:Intruder) } RETURN 1",
    "UNWIND [1, 2] AS x CREATE (:Intruder {x: x})",
]


def analyst_variants() -> list[str]:
    """Each write as written, in lower case, behind a comment, with a trailing RETURN, and
    behind a harmless read: 100 attempts, plus one through a parameter."""
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


def summarise(cases: list[Case]) -> int:
    print(f"{'area':58} {'tried':>6} {'wrong':>6}")
    for case in cases:
        print(f"{case.area:58} {case.tried:6d} {case.wrong:6d}")
        for note in case.notes:
            print(f"    {note}")
    return 1 if any(case.wrong for case in cases) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--searches", type=int, default=50, help="concurrent searches")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="crase-probe-"))
    with disposable_database(work / "neo4j") as database:
        settings = Settings(database=database, var_dir=work / "var")
        graph = Graph.connect(database)
        graph.apply_schema()
        load_corpus(graph, locate_corpus(Path("data/sample")), settings, show_progress=False)
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
                          probe_concurrent_searches(client, args.searches),
                          probe_analyst_hangs(client)]
        finally:
            stop_server(server)
            graph.close()
    return summarise(cases)


if __name__ == "__main__":
    sys.exit(main())
