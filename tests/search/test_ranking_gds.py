"""The GDS ranking of the pipeline equals a numpy PPR on the same weighted subgraph, with
the weights computed in the projection (delta * age^-beta) for each orientation."""

import numpy as np
import pytest

from crase.graph import Graph
from crase.scoring.pagerank import personalized_pagerank
from crase.search.ranking import PrunedGraph, rank

pytestmark = pytest.mark.integration

YEARS = {"a": 2003, "b": 2001, "c": 1999, "d": 1995, "e": 2002, "f": 1998}
DELTA = {("a", "b"): 0.8, ("a", "c"): 0.4, ("b", "c"): 0.6, ("e", "b"): 1.0, ("c", "d"): 0.2,
         ("e", "f"): 0.5, ("f", "d"): 0.25}


def numpy_ranking(orientation: str, seeds: list[str], reference_year: int,
                  beta: float) -> dict[str, float]:
    ids = sorted(YEARS)
    index = {p: i for i, p in enumerate(ids)}
    weights = np.zeros((len(ids), len(ids)))
    for (u, v), delta in DELTA.items():
        steps = {"references": [(u, v)], "citing": [(v, u)], "both": [(u, v), (v, u)]}
        for source, target in steps[orientation]:
            age = max(1, reference_year - YEARS[target] + 1)
            weights[index[source], index[target]] += delta * age ** -beta
    scores = personalized_pagerank(weights, [index[s] for s in seeds], 0.85, 1000, 1e-14)
    scores = scores / scores.sum()
    return {p: scores[index[p]] for p in ids}


@pytest.mark.parametrize("orientation", ["references", "citing", "both"])
def test_gds_ranking_equals_numpy(graph: Graph, orientation: str) -> None:
    with graph.driver.session() as session:
        session.run("UNWIND $rows AS r CREATE (:Paper {id: r[0], year: r[1]})",
                    rows=[[p, y] for p, y in YEARS.items()]).consume()
        session.run("UNWIND $edges AS e MATCH (u:Paper {id: e[0]}), (v:Paper {id: e[1]}) "
                    "CREATE (u)-[:CITES]->(v)", edges=[list(e) for e in DELTA]).consume()
    pruned = PrunedGraph(edges=dict(DELTA), nodes=sorted(YEARS), seeds=["a", "e"],
                         pruned_edges={}, dropped_nodes={})
    ranked = rank(graph, f"test-{orientation}", pruned, "ppr", orientation, 2004, 0.5, 0.15,
                  k=10, max_iterations=1000, tolerance=1e-14)
    expected = numpy_ranking(orientation, ["a", "e"], 2004, 0.5)
    for paper, score in ranked:
        assert score == pytest.approx(expected[paper], abs=1e-4)
    assert [p for p, _ in ranked] == sorted(
        [p for p in expected if expected[p] > 0], key=lambda p: (-expected[p], p))
