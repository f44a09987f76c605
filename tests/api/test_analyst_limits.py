"""POST /analyst/cypher cannot starve the rest of the API.

What Neo4j 5.26 does with hostile analyst texts (found by hand, on the server the tests
start; the thresholds move with the JIT):

- Deeply nested expressions (a list or map nested 200 levels, 180 nested CASEs, a 200-term
  `'a' + 'a' + ...`, 200 chained property lookups, 400 nested parentheses) overflow the
  server's stack while it builds its error message; the server then never answers, and
  the driver waits for the connection's receive timeout (120 s, retried once by a managed
  transaction: the 242 s of the report). Six such queries in flight kept GET /health
  waiting until the driver gave up on them. (`1 + 1 + ...` with 400 terms answered here;
  with 3,000 terms the planning alone ran past a 2 s timeout.) Such texts are refused
  before they are sent.
- `reduce(...)` over a 3,000,000-value `range` is one expression step: the transaction is
  marked timed out, but the step never looks at the mark and keeps a core busy for an
  hour; the server keeps the connection alive meanwhile, so the driver waits as long.
  Literal ranges that large are refused unless UNWIND turns them into rows (a row loop
  does stop at the timeout).
- Nothing stops a query that evades those checks, so at most `api.analyst_max_in_flight`
  analyst queries are in the database at once, a slot stays taken until the database has
  finished, the rest are answered 503 with Retry-After, and the HTTP answer comes after
  at most `api.analyst_timeout_s + api.analyst_grace_s` (504 when the database has not
  answered by then).
"""

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api import analyst
from crase.api.app import create_app
from crase.graph import Graph
from crase.settings import DatabaseSettings, Settings
from tests.api.conftest import API_KEY, api_settings_for
from tests.recording_graph import RecordingGraph

# Interruptible: a row loop that the transaction timeout stops.
LONG_BUT_STOPPABLE = "UNWIND range(1, 2000000000) AS x WITH x WHERE x = -1 RETURN count(x) AS n"


def cypher(client: TestClient, query: str, **params: object) -> tuple[int, dict[str, Any]]:
    response = client.post("/analyst/cypher", json={"query": query, "params": params})
    return response.status_code, response.json()


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


def analyst_transactions(graph: Graph) -> list[str]:
    """Queries other than this one that the database is running now."""
    with graph.driver.session(database=graph.database) as session:
        rows = session.run("SHOW TRANSACTIONS YIELD currentQuery "
                           "WHERE NOT currentQuery STARTS WITH 'SHOW TRANSACTIONS' "
                           "RETURN currentQuery").data()
    return [row["currentQuery"] for row in rows]


def nothing_was_sent(graph: RecordingGraph) -> None:
    """Refused before it could run: no query, and no session (the analyst route opens its
    own) was asked of the graph."""
    assert graph.calls == [] and graph.recording_driver.sessions_asked == 0


# --- refused before anything is sent -------------------------------------------------------

DEEP = {
    "400-term sum": "RETURN 1" + "+1" * 399 + " AS x",
    "200-term string sum": "RETURN 'a'" + " + 'a'" * 199 + " AS x",
    "list nested 180 deep": "RETURN " + "[" * 180 + "1" + "]" * 180 + " AS x",
    "map nested 180 deep": "RETURN " + "{a: " * 180 + "1" + "}" * 180 + " AS x",
    "180 nested CASEs": "RETURN " + "CASE WHEN true THEN " * 180 + "1" + " END" * 180 + " AS x",
    "200 property lookups": "WITH {a: 1} AS m RETURN m" + ".a" * 200 + " AS x",
    "200 missing parameters": "RETURN $p" + " + $p" * 200 + " AS x",
    "parentheses 400 deep": "RETURN " + "(" * 400 + "1" + ")" * 400 + " AS x",
}


@pytest.mark.parametrize("query", list(DEEP.values()), ids=list(DEEP))
def test_deep_expressions_are_refused_at_once(recording_client: TestClient,
                                              recording_graph: RecordingGraph,
                                              query: str) -> None:
    status, body = cypher(recording_client, query)
    assert status == 400, body
    assert body["error"] == "AnalystQueryTooComplex"
    assert "nested" in body["detail"] and "100" in body["detail"]
    assert "\n" not in body["detail"]
    nothing_was_sent(recording_graph)


def test_the_reduce_of_the_report_is_refused_before_it_runs(
        recording_client: TestClient, recording_graph: RecordingGraph) -> None:
    query = "RETURN size(reduce(s='', x IN range(1, 3000000) | s + 'xxxxxxxxxx')) AS n"
    status, body = cypher(recording_client, query)
    assert status == 400, body
    assert body["error"] == "AnalystQueryTooComplex"
    assert "range(1, 3000000)" in body["detail"] and "UNWIND" in body["detail"]
    nothing_was_sent(recording_graph)


@pytest.mark.parametrize("query", [
    "RETURN [x IN range(1, 200000) | x * 2][0] AS x",
    "WITH range(0, 10000000, 10) AS r RETURN size(r) AS n",
    "RETURN any(x IN range(-300000, 0) WHERE x = 1) AS x",
])
def test_large_literal_ranges_inside_expressions_are_refused(recording_client: TestClient,
                                                             recording_graph: RecordingGraph,
                                                             query: str) -> None:
    status, body = cypher(recording_client, query)
    assert status == 400, body
    assert body["error"] == "AnalystQueryTooComplex" and "UNWIND" in body["detail"]
    nothing_was_sent(recording_graph)


@pytest.mark.integration
@pytest.mark.parametrize("query", [
    "RETURN 1" + " + 1" * 40 + " AS x",
    "RETURN " + "[" * 30 + "1" + "]" * 30 + " AS x",
    "UNWIND range(1, 5) AS i WITH i WHERE " + " AND ".join(f"i <> {n}" for n in range(25))
    + " RETURN count(i) AS n",
    "MATCH (a)" + "-[:CITES]->()" * 8 + " RETURN count(a) AS n",
    "RETURN [x IN range(1, 100000) | x][-1] AS last",
    "UNWIND range(1, 3000000) AS x RETURN count(x) AS n",
    "RETURN '((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((' AS s, "
    "// a comment with [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"
    "1 AS one",
    "RETURN [" + ", ".join(["1 + 1 + 1"] * 500) + "][0] AS x",
])
def test_ordinary_queries_stay_within_the_limits(patient: TestClient, query: str) -> None:
    status, body = cypher(patient, query)
    assert status == 200, body


def test_the_length_limit_is_stated(recording_client: TestClient,
                                    recording_graph: RecordingGraph) -> None:
    status, body = cypher(recording_client, "RETURN 1 AS x //" + "x" * 20_000)
    assert status == 400
    assert body["errors"][0]["field"] == "query" and "20000" in body["detail"]
    nothing_was_sent(recording_graph)


@pytest.mark.parametrize(("params", "fragment"), [
    ({"a": 10 ** 30}, "64-bit"),
    ({"a": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]},
     "nested"),
])
def test_parameters_neo4j_cannot_take_are_refused(recording_client: TestClient,
                                                  recording_graph: RecordingGraph,
                                                  params: dict[str, Any], fragment: str) -> None:
    status, body = cypher(recording_client, "RETURN $a AS a", **params)
    assert status == 400, body
    assert body["errors"][0]["field"] == "params" and fragment in body["detail"]
    nothing_was_sent(recording_graph)


def test_a_parameter_nested_past_the_json_limit_is_a_400(recording_client: TestClient,
                                                        recording_graph: RecordingGraph) -> None:
    body = '{"query": "RETURN $a", "params": {"a": ' + "[" * 900 + "]" * 900 + "}}"
    response = recording_client.post("/analyst/cypher", content=body,
                           headers={"Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    nothing_was_sent(recording_graph)


@pytest.mark.integration
def test_a_result_nested_too_deeply_is_refused(patient: TestClient) -> None:
    status, body = cypher(patient, "RETURN reduce(l = [], x IN range(1, 300) | [l]) AS deep")
    assert status == 400, body
    assert body["error"] == "AnalystQueryTooComplex" and "result" in body["detail"]


# --- the database's own errors, as the analyst sees them -----------------------------------

@pytest.mark.integration
def test_a_syntax_error_is_one_line_positioned_in_the_analyst_text(patient: TestClient) -> None:
    status, body = cypher(patient, "MATC (n) RETURN n")
    assert status == 400, body
    detail = body["detail"]
    assert detail.startswith("Neo.ClientError.Statement.SyntaxError: Invalid input 'MATC'")
    assert "(line 1, column 1 (offset: 0))" in detail
    assert "\n" not in detail and "EXPLAIN" not in detail


@pytest.mark.integration
def test_java_class_names_are_left_out(patient: TestClient) -> None:
    status, body = cypher(patient, "CALL db.index.fulltext.queryNodes('no_such_index', 'x')")
    assert status == 400, body
    assert "no_such_index" in body["detail"]
    assert "java." not in body["detail"] and "Exception" not in body["detail"]


# --- bounded concurrency, a deadline, and the other routes ---------------------------------

def limited_client(settings: Settings, graph: Graph, **api: Any) -> Iterator[TestClient]:
    with TestClient(create_app(api_settings_for(settings, **api), graph=graph)) as client:
        client.headers["X-API-Key"] = API_KEY
        yield client


@pytest.fixture(scope="module")
def patient(database_settings: DatabaseSettings, session_graph: Graph,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One app for the module's queries that only read and write nothing (so the graph
    needs no cleaning after them), with a 60 s timeout: what is judged is the complexity
    checks, which let these through; a loaded machine must not turn one into a timeout
    (the 8-hop count took over 2 s under load)."""
    settings = Settings(database=database_settings,
                        var_dir=tmp_path_factory.mktemp("patient") / "var")
    yield from limited_client(settings, session_graph, analyst_timeout_s=60.0)


@pytest.fixture
def one_slot(settings: Settings, graph: Graph) -> Iterator[TestClient]:
    """One analyst slot, a 1 s transaction timeout and a 2 s answer deadline."""
    yield from limited_client(settings, graph, analyst_max_in_flight=1, analyst_timeout_s=1.0,
                              analyst_grace_s=1.0)


@pytest.fixture
def two_slots(settings: Settings, graph: Graph) -> Iterator[TestClient]:
    """Two analyst slots, an 8 s transaction timeout (time enough to ask the other routes
    while two queries run, on a loaded machine too) and an 11 s answer deadline."""
    yield from limited_client(settings, graph, analyst_max_in_flight=2, analyst_timeout_s=8.0,
                              analyst_grace_s=3.0)


@pytest.fixture
def database_that_hangs(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The database plans analyst queries, then hangs on running them (as it does on an
    uninterruptible step) until the event is set."""
    finish = threading.Event()

    def hang(*_: Any, **__: Any) -> tuple[list[str], list[dict[str, Any]]]:
        finish.wait(60.0)
        return ["x"], [{"x": 1}]

    monkeypatch.setattr(analyst, "fetch_rows", hang)
    yield finish
    finish.set()


def in_background(call: Callable[[], Any]) -> Callable[[], Any]:
    """Start `call` in a thread; the returned function waits for and returns its result."""
    results: list[Any] = []
    thread = threading.Thread(target=lambda: results.append(call()), daemon=True)
    thread.start()

    def join() -> Any:
        thread.join(30.0)
        assert results, "the background request did not finish"
        return results[0]
    return join


def wait_for(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


@pytest.mark.integration
def test_a_query_the_database_does_not_finish_gets_504_at_the_deadline_and_keeps_its_slot(
        one_slot: TestClient, database_that_hangs: threading.Event) -> None:
    (status, body), elapsed = timed(lambda: cypher(one_slot, "RETURN 1 AS x"))
    assert status == 504, body
    assert body["error"] == "AnalystQueryUnanswered"
    assert "2 s" in body["detail"] and "slot" in body["detail"]
    assert 1.8 < elapsed < 5.0

    # The database is still busy with it: the one slot is taken.
    busy = one_slot.post("/analyst/cypher", json={"query": "RETURN 2 AS x"})
    assert busy.status_code == 503, busy.text
    assert busy.json()["error"] == "AnalystQueriesBusy"
    assert busy.headers["Retry-After"] == "2"
    assert "1 analyst" in busy.json()["detail"]

    database_that_hangs.set()  # the database finishes; the slot is free again
    wait_for(lambda: cypher(one_slot, "RETURN 3 AS x")[0] == 200)


@pytest.mark.integration
def test_queries_past_the_bound_are_turned_away_while_other_routes_answer(
        two_slots: TestClient, graph: Graph, corpus: dict[str, Any]) -> None:
    client = two_slots
    in_flight = [in_background(lambda: cypher(client, LONG_BUT_STOPPABLE)) for _ in range(2)]
    wait_for(lambda: len(analyst_transactions(graph)) == 2)

    status, body = cypher(client, LONG_BUT_STOPPABLE)
    assert status == 503 and body["error"] == "AnalystQueriesBusy", body
    for path, expected in (("/health", 200), ("/papers?q=tachyon", 200),
                           ("/runs/no-such-run", 404), ("/papers/no-such-paper", 404)):
        response = client.get(path)
        assert response.status_code == expected, (path, response.text)
    # Still in flight all along: the other routes answered beside them, not after them.
    assert len(analyst_transactions(graph)) == 2

    for join in in_flight:
        status, body = join()
        assert status == 408 and body["error"] == "AnalystQueryTimeout", body
    wait_for(lambda: analyst_transactions(graph) == [])
    assert cypher(client, "RETURN 1 AS one")[0] == 200


@pytest.mark.integration
def test_a_hanging_database_does_not_hold_the_other_routes(
        one_slot: TestClient, database_that_hangs: threading.Event,
        corpus: dict[str, Any]) -> None:
    hanging = [in_background(lambda: cypher(one_slot, "RETURN 1 AS x")) for _ in range(6)]
    for path, expected in (("/health", 200), ("/papers?q=tachyon", 200),
                           ("/runs/no-such-run", 404)):
        response, elapsed = timed(lambda: one_slot.get(path))  # noqa: B023 (called at once)
        assert response.status_code == expected, (path, response.text)
        assert elapsed < 5.0, (path, elapsed)  # the hang lasts until the test ends
    statuses = sorted(join()[0] for join in hanging)
    assert statuses == [503, 503, 503, 503, 503, 504]


# --- expression loops the timeout cannot stop: refused before anything runs -----------------
# Measured on the test server with a 1 s transaction timeout: a reduce over range(1, 2e8)
# ran 9.6 s and only then reported TransactionTimedOut; a list comprehension over the same
# range ran 4.0 s; an UNWIND over it was ended at 2.5 s. An expression step never looks at
# the timeout, so such steps are refused unless their size is known and small.
UNSTOPPABLE: dict[str, tuple[str, dict[str, Any]]] = {
    "computed bound": ("RETURN reduce(s = 0, x IN range(1, toInteger(1.5e9)) | s + x) AS n",
                       {}),
    "parameter bound": ("RETURN reduce(s = 0, x IN range(1, $n) | s + x) AS n",
                        {"n": 1_500_000_000}),
    "arithmetic bound": ("RETURN size([x IN range(1, 1500000 * 1000) WHERE x < 0]) AS n", {}),
    "nested ranges": ("RETURN size([a IN range(1, 100000) | "
                      "size([b IN range(1, 100000) WHERE b < 0])]) AS n", {}),
    "WITH of a parameter range": ("WITH range(1, $n) AS r RETURN reduce(s = 0, x IN r | s + x)"
                                  " AS n", {"n": 1_500_000_000}),
}


@pytest.mark.parametrize("case", list(UNSTOPPABLE.values()), ids=list(UNSTOPPABLE))
def test_a_range_of_unknown_or_multiplied_size_in_an_expression_is_refused(
        recording_client: TestClient, recording_graph: RecordingGraph,
        case: tuple[str, dict[str, Any]]) -> None:
    query, params = case
    status, body = cypher(recording_client, query, **params)
    assert status == 400, body
    assert body["error"] == "AnalystQueryTooComplex" and "UNWIND" in body["detail"]
    nothing_was_sent(recording_graph)  # no database core is left busy


@pytest.mark.integration
@pytest.mark.parametrize(("query", "params"), [
    ("UNWIND range(1, $n) AS x RETURN count(x) AS n", {"n": 1000}),
    ("RETURN [i IN range(0, size($xs) - 1) | $xs[i] * 2] AS doubled", {"xs": [1, 2, 3]}),
    ("RETURN [a IN range(1, 100) | size([b IN range(1, 100) WHERE b < a])][-1] AS n", {}),
])
def test_ranges_of_known_small_size_stay_allowed(patient: TestClient, query: str,
                                                 params: dict[str, Any]) -> None:
    status, body = cypher(patient, query, **params)
    assert status == 200, body


@pytest.mark.integration
def test_a_query_past_the_transaction_memory_limit_is_a_named_error_and_others_go_on(
        patient: TestClient) -> None:
    # db.memory.transaction.max (database.transaction_memory, 512m) ends this transaction
    # before the server's heap runs out for every other one.
    status, body = cypher(patient, "UNWIND range(1, 60000000) AS i "
                                   "RETURN size(collect(toString(i))) AS n")
    assert status == 422, body
    assert body["error"] == "QueryMemoryExceeded"
    assert "CRASE_DATABASE__TRANSACTION_MEMORY" in body["detail"]
    assert cypher(patient, "RETURN 1 AS one")[1]["rows"] == [{"one": 1}]


@pytest.mark.integration
def test_a_client_that_goes_away_ends_its_query_and_frees_its_slot(
        settings: Settings, graph: Graph) -> None:
    # The case: a client that gave up at 2 s left its query running to the 10 s
    # timeout, holding a slot. Here the client disconnects after 1 s of a 30 s query.
    app = create_app(api_settings_for(settings, analyst_max_in_flight=1,
                                      analyst_timeout_s=30.0, analyst_grace_s=5.0),
                     graph=graph)
    body = json.dumps({"query": LONG_BUT_STOPPABLE}).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": "/analyst/cypher", "raw_path":
             b"/analyst/cypher", "query_string": b"", "root_path": "",
             "headers": [(b"content-type", b"application/json"),
                         (b"x-api-key", API_KEY.encode()),
                         (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}
    sent: list[dict[str, Any]] = []

    async def scenario() -> float:
        messages = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop(0)
            await asyncio.sleep(1.0)  # the client waits a second, then goes away
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        started = time.monotonic()
        await app(scope, receive, send)  # type: ignore[arg-type]
        return time.monotonic() - started

    with TestClient(app):  # start-up and shutdown of the app around the raw call
        seconds = asyncio.run(scenario())
        assert seconds < 10, f"the request went on {seconds:.1f} s after its client left"
        assert not [q for q in analyst_transactions(graph) if "2000000000" in q]
        # Its slot is free again: the next query is answered, not 503.
        with TestClient(app) as client:
            client.headers["X-API-Key"] = API_KEY
            assert cypher(client, "RETURN 1 AS one")[0] == 200
