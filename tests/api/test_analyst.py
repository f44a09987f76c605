"""POST /analyst/cypher reads and refuses every kind of write.

What Neo4j 5.26 + GDS 2.13 does with each statement in a READ transaction (found with these
tests): data writes, schema commands, db.createLabel, GDS write procedures, user
administration and CALL IN TRANSACTIONS are refused by the database itself. Some things run
in read mode anyway, so the endpoint refuses them from the query plan before anything runs:
LOAD CSV (reads files and URLs on the server), TERMINATE and SHOW TRANSACTIONS,
gds.graph.project / gds.graph.drop / *.mutate (they change GDS's in-memory catalog that
running searches use), the gds.graph.project aggregation function, dbms.* procedures and
SHOW USERS (query type 's'), db.clearQueryCaches. APOC is not installed: CALL apoc.* is
an unknown procedure (400).

The statements tried are tests/probe/probe.py's ANALYST_WRITES, the one list of writes the
endpoint must refuse; the adversarial probe tries the same list in variants.
"""

from collections.abc import Iterator

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.graph import Graph
from crase.settings import DatabaseSettings, Settings
from tests.api.conftest import API_KEY, api_settings_for
from tests.conftest import clean_graph
from tests.probe.probe import ANALYST_WRITES
from tests.recording_graph import RecordingGraph


def cypher(client: TestClient, query: str, **params: object) -> tuple[int, dict]:
    response = client.post("/analyst/cypher", json={"query": query, "params": params})
    return response.status_code, response.json()


def graph_state(graph: Graph) -> tuple:
    with graph.driver.session(database=graph.database) as session:
        nodes = session.run("MATCH (n) RETURN count(n) AS n").single()["n"]
        titles = session.run("MATCH (p:Paper) RETURN collect(p.title) AS t").single()["t"]
        indexes = session.run("SHOW INDEXES YIELD name RETURN collect(name) AS n").single()["n"]
        constraints = session.run("SHOW CONSTRAINTS YIELD name RETURN collect(name) AS n"
                                  ).single()["n"]
        projections = session.run("CALL gds.graph.list() YIELD graphName "
                                  "RETURN collect(graphName) AS g").single()["g"]
        labels = session.run("CALL db.labels() YIELD label RETURN collect(label) AS l"
                             ).single()["l"]
        users = session.run("SHOW USERS YIELD user RETURN collect(user) AS u").single()["u"]
    return (nodes, sorted(titles), sorted(indexes), sorted(constraints), projections,
            sorted(labels), sorted(users))


@pytest.fixture(scope="module")
def graph(session_graph: Graph) -> Iterator[Graph]:
    """120 papers, one citation and a GDS projection, written once for the module: every
    test here only reads, and each refusal checks that nothing changed."""
    clean_graph(session_graph)
    with session_graph.driver.session(database=session_graph.database) as session:
        session.run("UNWIND range(1, 120) AS i CREATE (:Paper {id: 'p' + i, title: 'T' + i, "
                    "year: 1990 + i % 10})").consume()
        session.run("MATCH (a:Paper {id: 'p2'}), (b:Paper {id: 'p1'}) "
                    "CREATE (a)-[:CITES {delta: 0.5}]->(b)").consume()
        session.run("CALL gds.graph.project('g', 'Paper', 'CITES')").consume()
    yield session_graph
    clean_graph(session_graph)


@pytest.fixture(scope="module")
def client(graph: Graph, database_settings: DatabaseSettings,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One app on the module's graph."""
    var_dir = tmp_path_factory.mktemp("analyst") / "var"
    settings = api_settings_for(Settings(database=database_settings, var_dir=var_dir))
    with TestClient(create_app(settings, graph=graph)) as test_client:
        test_client.headers["X-API-Key"] = API_KEY
        yield test_client


@pytest.mark.integration
@pytest.mark.parametrize("query", ANALYST_WRITES)
def test_writes_and_side_effects_are_refused(client: TestClient, graph: Graph,
                                             query: str) -> None:
    before = graph_state(graph)
    status, body = cypher(client, query)
    assert status == 403, body
    assert body["error"] == "AnalystQueryRefused"
    assert body["detail"]
    assert graph_state(graph) == before


@pytest.mark.integration
def test_apoc_is_absent_and_says_so(client: TestClient) -> None:
    status, body = cypher(client, "CALL apoc.create.node(['Intruder'], {})")
    assert status == 400
    assert body["error"] == "AnalystQueryInvalid"
    assert "apoc.create.node" in body["detail"]


@pytest.mark.integration
def test_reads_return_rows_nodes_and_relationships(client: TestClient) -> None:
    status, body = cypher(client, "MATCH (u:Paper {id: $id})-[c:CITES]->(v) "
                                  "RETURN u.title AS title, c, v, [1, 2] AS list", id="p2")
    assert status == 200, body
    assert body["columns"] == ["title", "c", "v", "list"]
    row = body["rows"][0]
    assert row["title"] == "T2" and row["list"] == [1, 2]
    assert row["c"]["type"] == "CITES" and row["c"]["properties"] == {"delta": 0.5}
    assert row["v"]["labels"] == ["Paper"] and row["v"]["properties"]["id"] == "p1"
    assert row["c"]["end"] == row["v"]["element_id"]
    assert body["truncated"] is False and body["row_limit"] == 50


@pytest.mark.integration
def test_paths_dates_and_allowed_procedures(client: TestClient) -> None:
    status, body = cypher(client, "MATCH path = (:Paper {id: 'p2'})-[:CITES]->() "
                                  "RETURN path, date('2003-01-02') AS day, gds.version() AS v")
    assert status == 200, body
    row = body["rows"][0]
    assert len(row["path"]["nodes"]) == 2 and len(row["path"]["relationships"]) == 1
    assert row["day"] == "2003-01-02" and row["v"].startswith("2.")
    for query in ("CALL db.labels()", "CALL gds.graph.list() YIELD graphName RETURN graphName",
                  "SHOW INDEXES", "CALL db.schema.visualization()"):
        status, body = cypher(client, query)
        assert status == 200, (query, body)


@pytest.mark.integration
def test_row_limit_truncates_and_says_so(client: TestClient) -> None:
    status, body = cypher(client, "MATCH (p:Paper) RETURN p.id AS id")
    assert status == 200
    assert len(body["rows"]) == 50 and body["truncated"] is True
    status, body = cypher(client, "MATCH (p:Paper) RETURN p.id AS id LIMIT 50")
    assert len(body["rows"]) == 50 and body["truncated"] is False


@pytest.mark.integration
def test_timeout_stops_a_long_query(client: TestClient) -> None:
    status, body = cypher(client, "UNWIND range(1, 2000000000) AS x "
                                  "WITH x WHERE x = -1 RETURN count(x) AS n")
    assert status == 408, body
    assert body["error"] == "AnalystQueryTimeout" and "2 s" in body["detail"]


@pytest.mark.integration
@pytest.mark.parametrize(("query", "fragment"), [
    ("MATC (n) RETURN n", "SyntaxError"),
    ("RETURN $missing", "ParameterMissing"),
    ("RETURN 1 / 0", "ArithmeticError"),
    ("CALL no.such.procedure()", "ProcedureNotFound"),
])
def test_database_errors_are_400_with_the_database_words(client: TestClient, query: str,
                                                         fragment: str) -> None:
    status, body = cypher(client, query)
    assert status == 400, body
    assert body["error"] == "AnalystQueryInvalid" and fragment in body["detail"]


def test_bad_bodies_name_the_field(recording_client: TestClient,
                                   recording_graph: RecordingGraph) -> None:
    client = recording_client
    empty = client.post("/analyst/cypher", json={"query": ""})
    assert empty.status_code == 400 and empty.json()["errors"][0]["field"] == "query"
    missing = client.post("/analyst/cypher", json={"params": {}})
    assert missing.status_code == 400 and "query" in missing.json()["detail"]
    wrong = client.post("/analyst/cypher", json={"query": "RETURN 1", "params": [1]})
    assert wrong.status_code == 400 and wrong.json()["errors"][0]["field"] == "params"
    extra = client.post("/analyst/cypher", json={"query": "RETURN 1", "database": "system"})
    assert extra.status_code == 400 and extra.json()["errors"][0]["field"] == "database"
    assert recording_graph.recording_driver.sessions_asked == 0  # nothing reached Neo4j
