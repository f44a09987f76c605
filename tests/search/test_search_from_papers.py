"""A search that starts from papers the user already knows (`given_papers`): the given papers
are the walk's seeds, never a result, and a search from papers alone asks its text lists
with the given papers' titles. Unknown given papers are refused before any Run exists,
each one named."""

from collections.abc import Iterator

import pytest

from crase.errors import GivenPapersUnknown
from crase.graph import Graph
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.protocols import SearchBackends
from crase.settings import SearchSettings, Settings
from tests.conftest import clean_graph
from tests.sample_slice import load_sample_slice


@pytest.fixture(scope="module")
def sample(session_graph: Graph) -> Iterator[tuple[Graph, list[str]]]:
    """The 600-paper slice, and its three most cited papers: papers a user would know."""
    load_sample_slice(session_graph, 600)
    yield session_graph, [row["id"] for row in cypher(
        session_graph, "MATCH (:Paper)-[:CITES]->(p:Paper) "
                       "RETURN p.id AS id, count(*) AS n ORDER BY n DESC, id LIMIT 3")]
    clean_graph(session_graph)


@pytest.fixture(scope="module")
def backends() -> SearchBackends:
    return build_search_backends(Settings())


@pytest.mark.integration
@pytest.mark.parametrize("order", ["walk", "learned"])
@pytest.mark.parametrize("query", ["", "string theory"])
def test_given_papers_seed_the_walk_and_are_never_results(
        sample: tuple[Graph, list[str]], backends: SearchBackends, order: str,
        query: str) -> None:
    graph, given = sample
    request = SearchRequest(query=query, given_papers=given,
                            params=SearchSettings(k=10, order=order, weighting="uniform"))
    result = run_search(graph, backends, request)

    assert result.plan == []
    assert [seed.paper_id for seed in result.seeds] == given
    ids = [paper.id for paper in result.results]
    assert len(ids) == 10 and len(set(ids)) == 10
    assert not set(ids) & set(given)
    # Each paper the walk reached names the given paper it was reached from.
    reached = [paper.evidence.reached_from for paper in result.results
               if not paper.evidence.text_match]
    assert reached and set(reached) <= set(given)


@pytest.mark.integration
def test_a_search_from_papers_alone_asks_its_text_with_their_titles(
        sample: tuple[Graph, list[str]], backends: SearchBackends) -> None:
    graph, given = sample
    # k past what the walk reaches, so that the text fill places the last papers.
    params = SearchSettings(k=500, order="walk", weighting="uniform", fill="text")
    alone = run_search(graph, backends, SearchRequest(query="", given_papers=given, params=params))
    titles = " ".join(row["title"] for row in graph.read("read_papers", ids=given))
    worded = run_search(graph, backends,
                        SearchRequest(query=titles, given_papers=given, params=params))

    assert any(paper.evidence.text_match for paper in alone.results)
    assert [p.id for p in alone.results] == [p.id for p in worded.results]


@pytest.mark.integration
def test_unknown_given_papers_are_named_and_no_run_is_opened(
        sample: tuple[Graph, list[str]], backends: SearchBackends) -> None:
    graph, given = sample
    runs_before = cypher(graph, "MATCH (r:Run) RETURN count(r) AS n")[0]["n"]
    request = SearchRequest(query="", given_papers=[given[0], "no-such-1", "no-such-2"])
    with pytest.raises(GivenPapersUnknown) as raised:
        run_search(graph, backends, request)

    assert raised.value.unknown == ["no-such-1", "no-such-2"]
    assert '"no-such-1", "no-such-2"' in str(raised.value)
    assert cypher(graph, "MATCH (r:Run) RETURN count(r) AS n")[0]["n"] == runs_before


def test_a_request_needs_text_or_papers() -> None:
    with pytest.raises(ValueError, match="give at least 3 characters, or given_papers"):
        SearchRequest(query="  ")
    assert SearchRequest(query="", given_papers=["b", "a", "b"]).given_papers == ["b", "a"]


def cypher(graph: Graph, text: str) -> list[dict]:
    with graph.driver.session(database=graph.database) as session:
        return [record.data() for record in session.run(text)]


@pytest.mark.integration
def test_papers_most_linked_to_the_given_ones_by_cocitation_and_coupling(
        graph: Graph) -> None:
    """g1 and g2 are given. c1 and c2 cite g1 and p, and c2 also g2: p is co-cited three
    times (twice with g1, once with g2); c1 also cites q (once); r shares g2's reference x
    (coupled once); the excluded s cites g1 and t, which must not count; the given papers
    are never ranked."""
    edges = [("c1", "g1"), ("c1", "p"), ("c1", "q"), ("c2", "g1"), ("c2", "p"),
             ("g2", "x"), ("r", "x"), ("c2", "g2"), ("s", "g1"), ("s", "t")]
    papers = sorted({paper for edge in edges for paper in edge})
    with graph.driver.session(database=graph.database) as session:
        session.run("UNWIND $ids AS id CREATE (:Paper {id: id, title: id, year: 2000})",
                    ids=papers).consume()
        session.run("UNWIND $edges AS e MATCH (u:Paper {id: e[0]}), (v:Paper {id: e[1]}) "
                    "CREATE (u)-[:CITES]->(v)", edges=edges).consume()
    rows = graph.read("rank_cocited_and_coupled", ids=["g1", "g2"], excluded=["s"], limit=10)

    assert [(row["id"], row["score"]) for row in rows] == [("p", 3), ("q", 1), ("r", 1)]
    assert all(row["year"] == 2000 for row in rows)
