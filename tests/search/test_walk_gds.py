"""The GDS ranking of the pipeline equals a numpy PPR on the same weighted subgraph, with
the weights computed in the projection (delta * age^-beta, crase.scoring.delta.edge_weight)
for each orientation, and with the seeds' restart weights entering through the run's origin
node."""

import numpy as np
import pytest

from crase.bench.pagerank import personalized_pagerank
from crase.errors import DatabaseError
from crase.graph import Graph
from crase.scoring.delta import PrunedGraph, edge_weight
from crase.search.pipeline import read_result_papers
from crase.search.walk import Walk, rank

pytestmark = pytest.mark.integration

YEARS = {"a": 2003, "b": 2001, "c": 1999, "d": 1995, "e": 2002, "f": 1998, "g": 2000}
DELTA = {("a", "b"): 0.8, ("a", "c"): 0.4, ("b", "c"): 0.6, ("e", "b"): 1.0, ("c", "d"): 0.2,
         ("e", "f"): 0.5, ("f", "d"): 0.25}


def numpy_ranking(orientation: str, restart: dict[str, float], reference_year: int,
                  beta: float) -> dict[str, float]:
    ids = sorted(YEARS)
    index = {p: i for i, p in enumerate(ids)}
    weights = np.zeros((len(ids), len(ids)))
    for (u, v), delta in DELTA.items():
        steps = {"references": [(u, v)], "citing": [(v, u)], "both": [(u, v), (v, u)]}
        for source, target in steps[orientation]:
            weights[index[source], index[target]] += edge_weight(delta, YEARS[target],
                                                                 reference_year, beta)
    seeds = sorted(restart)
    scores = personalized_pagerank(weights, [index[s] for s in seeds], 0.85, 1000, 1e-14,
                                   source_weights=[restart[s] for s in seeds])
    scores = scores / scores.sum()
    return {p: scores[index[p]] for p in ids}


def make_graph(graph: Graph, run_id: str) -> None:
    with graph.driver.session() as session:
        session.run("UNWIND $rows AS r CREATE (:Paper {id: r[0], year: r[1]})",
                    rows=[[p, y] for p, y in YEARS.items()]).consume()
        session.run("UNWIND $edges AS e MATCH (u:Paper {id: e[0]}), (v:Paper {id: e[1]}) "
                    "CREATE (u)-[:CITES]->(v)", edges=[list(e) for e in DELTA]).consume()
        session.run("CREATE (:Run {id: $id})", id=run_id).consume()


def check(graph: Graph, run_id: str, orientation: str, restart: dict[str, float],
          seeds: list[str]) -> list[tuple[str, float]]:
    pruned = PrunedGraph(edges=dict(DELTA), nodes=sorted(YEARS), seeds=seeds,
                         pruned_edges={}, dropped_nodes={})
    walk = Walk("ppr", orientation, 2004, 0.5, 0.15, k=10, max_iterations=1000,
                tolerance=1e-14)
    ranked = rank(graph, run_id, pruned, walk, restart, YEARS)
    expected = numpy_ranking(orientation, {s: restart.get(s, 0.0) for s in seeds}, 2004, 0.5)
    for paper, score in ranked:
        assert score == pytest.approx(expected[paper], abs=1e-4)
    assert [p for p, _ in ranked] == sorted(
        [p for p in expected if expected[p] > 0], key=lambda p: (-expected[p], p))
    return ranked


@pytest.mark.parametrize("orientation", ["references", "citing", "both"])
def test_gds_ranking_equals_numpy(graph: Graph, orientation: str) -> None:
    make_graph(graph, "run-equal")
    check(graph, "run-equal", orientation, {"a": 0.5, "e": 0.5}, ["a", "e"])


@pytest.mark.parametrize("orientation", ["references", "both"])
def test_weighted_restart_equals_numpy(graph: Graph, orientation: str) -> None:
    make_graph(graph, "run-weighted")
    ranked = check(graph, "run-weighted", orientation, {"a": 0.8, "e": 0.2}, ["a", "e"])
    # More restart mass on a: a outranks e, and so does a's reference b over e's f.
    order = [p for p, _ in ranked]
    assert order.index("a") < order.index("e") and order.index("b") < order.index("f")


def test_a_seed_without_citations_keeps_its_own_restart_mass(graph: Graph) -> None:
    # g has no citation edge: the walk still ranks it, by its teleport share alone.
    make_graph(graph, "run-isolated")
    ranked = dict(check(graph, "run-isolated", "both", {"a": 0.5, "g": 0.5}, ["a", "g"]))
    assert "g" in ranked and ranked["a"] > ranked["g"]


def test_a_ranked_paper_gone_from_the_database_is_a_named_error(graph: Graph) -> None:
    # The walk ranks numbered nodes and reads no paper, so a paper deleted while a search
    # runs still ranks; reading the results' papers names it.
    make_graph(graph, "run-gone")
    pruned = PrunedGraph(edges={("a", "zz"): 1.0}, nodes=["a", "zz"], seeds=["a"],
                         pruned_edges={}, dropped_nodes={})
    ranked = rank(graph, "run-gone", pruned, Walk("ppr", "both", 2004, 0.5, 0.15, k=5),
                  {"a": 1.0}, {})
    assert sorted(paper for paper, _ in ranked) == ["a", "zz"]
    assert graph.read("drop_projection", graph_name="crase-run-run-gone") == []
    with pytest.raises(DatabaseError, match="zz left the database.*run the search again"):
        read_result_papers(graph, [paper for paper, _ in ranked])


def test_no_projection_outlives_its_ranking_whether_it_ranks_or_fails(graph: Graph) -> None:
    # rank_pagerank drops the projection in the query that ranks; when GDS refuses the
    # ranking (here: no iteration allowed), walk.py drops it and the error is raised.
    make_graph(graph, "run-drop")
    pruned = PrunedGraph(edges=dict(DELTA), nodes=sorted(YEARS), seeds=["a"],
                         pruned_edges={}, dropped_nodes={})
    walk = Walk("ppr", "both", 2004, 0.5, 0.15, k=5)
    assert rank(graph, "run-drop", pruned, walk, {"a": 1.0}, YEARS)
    assert graph.read("drop_projection", graph_name="crase-run-run-drop") == []
    refused = Walk("ppr", "both", 2004, 0.5, 0.15, k=5, max_iterations=0)
    with pytest.raises(DatabaseError, match="rank_pagerank failed.*maxIterations"):
        rank(graph, "run-drop", pruned, refused, {"a": 1.0}, YEARS)
    assert graph.read("drop_projection", graph_name="crase-run-run-drop") == []
