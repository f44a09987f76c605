"""GDS personalized PageRank equals the numpy reference (same dangling-node rule)."""

import numpy as np
import pytest

from crase.bench.pagerank import personalized_pagerank, sparse_personalized_pagerank
from crase.graph import Graph

# A small weighted graph with a dangling node (4) and an isolated one (5).
EDGES = [(0, 1, 1.0), (0, 2, 3.0), (1, 2, 1.0), (2, 0, 0.5), (3, 2, 2.0), (2, 4, 1.0)]


def numpy_scores(sources: list[int]) -> np.ndarray:
    weights = np.zeros((6, 6))
    for a, b, w in EDGES:
        weights[a, b] = w
    return personalized_pagerank(weights, sources, damping=0.85, max_iterations=500)


def test_reference_leaks_dangling_mass() -> None:
    scores = numpy_scores([0])
    assert scores[3] == 0 and scores[5] == 0
    assert scores.sum() < 1.0


@pytest.mark.parametrize("sources", [[0], [0, 3], [1, 3, 5]])
def test_the_edge_list_version_equals_the_dense_one(sources: list[int]) -> None:
    teleport = np.zeros(6)
    teleport[sources] = 0.15
    edges = np.array(EDGES)
    sparse = sparse_personalized_pagerank(6, edges[:, 0].astype(np.int64),
                                          edges[:, 1].astype(np.int64), edges[:, 2],
                                          teleport, damping=0.85, max_iterations=500)
    assert sparse == pytest.approx(numpy_scores(sources), abs=1e-12)


@pytest.mark.integration
@pytest.mark.parametrize("sources", [[0], [0, 3], [1, 3, 5]])
def test_gds_pagerank_matches_numpy(graph: Graph, sources: list[int]) -> None:
    with graph.driver.session() as session:
        session.run("UNWIND range(0, 5) AS i CREATE (:Paper {id: toString(i)})").consume()
        session.run("UNWIND $edges AS e MATCH (a:Paper {id: toString(e[0])}), "
                    "(b:Paper {id: toString(e[1])}) CREATE (a)-[:CITES {w: e[2]}]->(b)",
                    edges=EDGES).consume()
        # The Cypher aggregation form of projection, with a relationship property.
        projected = session.run(
            "MATCH (a:Paper) OPTIONAL MATCH (a)-[r:CITES]->(b:Paper) "
            "WITH gds.graph.project('ppr_check', a, b, {relationshipProperties: r {.w}}) AS g "
            "RETURN g.nodeCount AS nodes, g.relationshipCount AS rels").single()
        assert (projected["nodes"], projected["rels"]) == (6, 6)
        rows = session.run(
            "MATCH (p:Paper) WHERE toInteger(p.id) IN $sources WITH collect(p) AS src "
            "CALL gds.pageRank.stream('ppr_check', {sourceNodes: src, dampingFactor: 0.85, "
            "relationshipWeightProperty: 'w', maxIterations: 500, tolerance: 1e-12}) "
            "YIELD nodeId, score RETURN toInteger(gds.util.asNode(nodeId).id) AS i, score",
            sources=sources).data()
    gds_scores = np.zeros(6)
    for row in rows:
        gds_scores[row["i"]] = row["score"]
    np.testing.assert_allclose(gds_scores, numpy_scores(sources), atol=1e-4)
