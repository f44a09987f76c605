"""Each expansion file returns exactly the expected nodes and edges on a fixture graph."""

import pytest

from crase.graph import Graph
from crase.search.expansion import expand

pytestmark = pytest.mark.integration

# seed a; a's neighbours b, c (and x, excluded); b-c is a neighbour-neighbour edge;
# d is two hops out, e three; f is isolated.
EDGES = [("a", "b"), ("c", "a"), ("b", "c"), ("b", "d"), ("d", "e"), ("x", "a"), ("x", "b")]


@pytest.fixture
def fixture_graph(graph: Graph) -> Graph:
    with graph.driver.session() as session:
        session.run("UNWIND $ids AS id CREATE (:Paper {id: id, title: id})",
                    ids=list("abcdefx")).consume()
        session.run("UNWIND $edges AS e MATCH (u:Paper {id: e[0]}), (v:Paper {id: e[1]}) "
                    "CREATE (u)-[:CITES]->(v)", edges=EDGES).consume()
    return graph


def test_one_hop(fixture_graph: Graph) -> None:
    hood = expand(fixture_graph, ["a"], "1", excluded=["x"])
    assert sorted(hood.nodes) == ["a", "b", "c"]
    assert hood.edges == [("a", "b"), ("c", "a")]


def test_one_and_half_hop_keeps_edges_among_neighbours(fixture_graph: Graph) -> None:
    hood = expand(fixture_graph, ["a"], "1.5", excluded=["x"])
    assert sorted(hood.nodes) == ["a", "b", "c"]
    assert hood.edges == [("a", "b"), ("b", "c"), ("c", "a")]


def test_two_hop(fixture_graph: Graph) -> None:
    hood = expand(fixture_graph, ["a"], "2", excluded=["x"])
    assert sorted(hood.nodes) == ["a", "b", "c", "d"]
    assert hood.edges == [("a", "b"), ("b", "c"), ("b", "d"), ("c", "a")]


def test_excluded_paper_and_its_edges_are_left_out(fixture_graph: Graph) -> None:
    with_x = expand(fixture_graph, ["a"], "1.5", excluded=[])
    assert "x" in with_x.nodes and ("x", "b") in with_x.edges
    assert expand(fixture_graph, ["x"], "1.5", excluded=["x"]).nodes == []


def test_unknown_seed_gives_empty_neighbourhood(fixture_graph: Graph) -> None:
    hood = expand(fixture_graph, ["nope"], "1.5", excluded=[])
    assert (hood.nodes, hood.edges, hood.seeds) == ([], [], [])


def test_several_seeds_and_isolated_seed(fixture_graph: Graph) -> None:
    hood = expand(fixture_graph, ["a", "f"], "1", excluded=["x"])
    assert sorted(hood.nodes) == ["a", "b", "c", "f"]
    assert hood.seeds == ["a", "f"]


@pytest.mark.parametrize("hops", ["1", "1.5", "2"])
def test_expansion_carries_the_scores_stored_on_edges(fixture_graph: Graph, hops: str) -> None:
    with fixture_graph.driver.session() as session:
        session.run("MATCH (:Paper {id: 'a'})-[r:CITES]->(:Paper {id: 'b'}) "
                    "SET r.scorer = 's', r.scorer_version = '1', r.theta = 0.4, "
                    "r.delta = 0.75").consume()
    hood = expand(fixture_graph, ["a"], hops, excluded=["x"])
    assert set(hood.stored) == {("a", "b")}
    stored = hood.stored[("a", "b")]
    assert stored.delta == 0.75
    assert stored.answers("s", "1", 0.4)
    assert not stored.answers("s", "1", 0.5) and not stored.answers("s", "2", 0.4)
