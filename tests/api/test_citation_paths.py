"""The connector (GET /connections, /ui/connect, `crase connect`) on the whole committed
sample (3,000 papers, 46,339 citations): a breadth-first search from both ends, bounded
by max_steps, that answers "no path" as fast as a path; a paper named by any spelling of
its ids, resolved by crase.paper_identity; every read under a transaction timeout."""

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.citation_paths import connect_papers
from crase.errors import ConnectionSearchTooLarge
from crase.graph import Graph
from tests.sample_slice import SAMPLE

pytestmark = pytest.mark.integration

ANSWER_S = 10.0  # well past what the search takes on a loaded machine, far below "never"


@pytest.fixture(scope="module")
def sample_graph(session_graph: Graph) -> Iterator[Graph]:
    """The whole sample with arXiv ids, and a real DOI on one paper; loaded once."""
    rows = [json.loads(line) for line in (SAMPLE / "papers.jsonl").open()]
    edges = [line.strip().split(",") for line in (SAMPLE / "citations.csv").open()][1:]
    with session_graph.driver.session(database=session_graph.database) as session:
        session.run("UNWIND $rows AS r CREATE (:Paper {id: r.id, title: r.title, "
                    "year: r.year, authors: r.authors, arxiv_id: r.arxiv_id})",
                    rows=rows).consume()
        session.run("UNWIND $edges AS e MATCH (u:Paper {id: e[0]}), (v:Paper {id: e[1]}) "
                    "CREATE (u)-[:CITES]->(v)", edges=edges).consume()
        session.run("MATCH (p:Paper {id: '9711200'}) SET p.doi = '10.1023/a:1026654312961'"
                    ).consume()
    yield session_graph
    from tests.conftest import clean_graph
    clean_graph(session_graph)


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """call()'s answer, or a failure when it has none after `seconds` (the call may
    never return: it runs in a thread of its own)."""
    answer: list[Any] = []
    worker = threading.Thread(target=lambda: answer.append(call()), daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(seconds)
    assert answer, f"no answer within {seconds:g} s"
    print(f"answered in {time.monotonic() - started:.2f} s")
    return answer[0]


@pytest.fixture
def sample_client(api_settings: Any, sample_graph: Graph) -> Iterator[TestClient]:
    from crase.api.app import create_app
    from tests.api.conftest import API_KEY

    # https, so the page's secure session cookie is sent back.
    with TestClient(create_app(api_settings, graph=sample_graph),
                    base_url="https://testserver.local") as client:
        client.post("/ui/login", data={"key": API_KEY, "next": "/ui/"})
        client.headers["X-API-Key"] = API_KEY
        yield client


def test_no_path_within_max_steps_is_answered_fast(sample_client: TestClient) -> None:
    params = {"source": "9711200", "target": "9802150", "max_steps": 1}
    response = within(ANSWER_S, lambda: sample_client.get("/connections", params=params))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["paths"] == [] and answer["length"] is None
    page = within(ANSWER_S, lambda: sample_client.get("/ui/connect", params=params))
    assert page.status_code == 200 and "No citation path" in page.text


def test_the_shortest_paths_are_the_ones_a_full_search_finds(sample_graph: Graph) -> None:
    # Reference: Neo4j's own all-shortest-paths, bounded in the pattern (no post-filter).
    with sample_graph.driver.session(database=sample_graph.database) as session:
        expected = {tuple(row["ids"]) for row in session.run(
            "MATCH (a:Paper {id: '9711200'}), (b:Paper {id: '9802150'}) "
            "MATCH p = allShortestPaths((a)-[:CITES*..6]-(b)) "
            "RETURN [n IN nodes(p) | n.id] AS ids").data()}
    found = within(ANSWER_S, lambda: connect_papers(sample_graph, "9711200", "9802150",
                                                    max_steps=6, limit=1000))
    assert {tuple(path["papers"]) for path in found["paths"]} == expected
    assert found["length"] == len(next(iter(expected))) - 1
    for path in found["paths"]:
        for here, there, step in zip(path["papers"], path["papers"][1:], path["steps"],
                                     strict=False):
            assert {step["citing"], step["cited"]} == {here, there}


@pytest.mark.parametrize("source", [
    "9711200", "hep-th/9711200", "arXiv:hep-th/9711200v2", "https://arxiv.org/abs/hep-th/9711200",
    "https://doi.org/10.1023/A:1026654312961", "10.1023/A:1026654312961",
])
def test_a_paper_is_found_by_every_spelling_of_its_ids(sample_client: TestClient,
                                                       source: str) -> None:
    response = sample_client.get("/connections", params={"source": source,
                                                         "target": "9802150", "max_steps": 2})
    assert response.status_code == 200, response.text
    assert response.json()["source"] == "9711200"


def test_a_search_past_its_bound_says_so(sample_graph: Graph) -> None:
    with pytest.raises(ConnectionSearchTooLarge, match="max_steps"):
        connect_papers(sample_graph, "9711200", "9802150", max_steps=6, max_reached=50)


def test_each_read_of_the_search_carries_the_timeout(sample_graph: Graph) -> None:
    # The database ends a read past its transaction timeout: a budget already spent
    # stops the search at its first read instead of letting it run.
    from crase.errors import QueryTimedOut

    with pytest.raises(QueryTimedOut, match="ran out"):
        connect_papers(sample_graph, "9711200", "9802150", max_steps=6, timeout_s=0.0)


def test_the_database_ends_a_read_at_its_timeout(sample_graph: Graph) -> None:
    """Every Graph.read is a transaction with a timeout (read_timeout_s unless the caller
    gives one): a read of three million index look-ups is ended by the database, which
    checks the timeout between rows (its monitor runs every 2 s)."""
    from crase.errors import QueryTimedOut

    hurried = Graph(sample_graph.driver, sample_graph.database, read_timeout_s=0.5)
    ids = [f"missing-{n}" for n in range(3_000_000)]
    started = time.monotonic()
    with pytest.raises(QueryTimedOut, match="transaction timeout"):
        hurried.read("match_paper_ids", ids=ids)
    print(f"ended after {time.monotonic() - started:.2f} s")


def test_the_server_ends_any_transaction_at_its_configured_timeout(sample_graph: Graph) -> None:
    with sample_graph.driver.session(database=sample_graph.database) as session:
        value = session.run("SHOW SETTINGS YIELD name, value "
                            "WHERE name = 'db.transaction.timeout' RETURN value").single()
    assert value is not None and value["value"] == "15m"
