"""The rules on the hot path's database side give what their Python homes in
crase.scoring.delta give on the same inputs, on the session's real Neo4j + GDS:

- `read_edge_scores` (Delta at a run's theta from the matrix stored on the edge) against
  `coverage_affinity`, at thetas on and between the matrices' entries (ties: >=);
- the weights of the GDS projection (the ranking's steps projected by
  `project_evidence_graph`, read back through GDS's property stream) against
  `edge_weight` step by step, for each orientation and several reference years and betas,
  with papers without a year and papers after the reference.
"""

from typing import Any

import numpy as np
import pytest

from crase.graph import Graph
from crase.scoring.delta import coverage_affinity, edge_weight, stored_coverage_affinity
from crase.search.walk import Walk, projection_parameters, weighted_steps

pytestmark = pytest.mark.integration

SCORER, VERSION = "reference-scorer", "3"
STORED_THETA = 0.5
# Entries are multiples of 0.1, so most of these thetas tie with some entry.
THETAS = [0.0, 0.1, 0.25, 0.3, STORED_THETA, 0.55, 0.7, 0.9, 1.0, 1.1]
SHAPES = [(1, 1), (1, 4), (4, 1), (3, 5), (6, 2), (5, 5), (2, 7), (8, 3)]


def matrices(seed: int = 11) -> dict[tuple[str, str], np.ndarray]:
    """One matrix per edge (citing c<i>, cited v<i>), entries in {0.0, 0.1, ..., 1.0}."""
    rng = np.random.default_rng(seed)
    return {(f"c{i}", f"v{i}"): rng.integers(0, 11, size=shape) / 10
            for i, shape in enumerate(SHAPES)}


def create_edges(graph: Graph, edges: list[tuple[str, str]]) -> None:
    with graph.driver.session(database=graph.database) as session:
        session.run("UNWIND $edges AS e MERGE (u:Paper {id: e[0]}) MERGE (v:Paper {id: e[1]}) "
                    "CREATE (u)-[:CITES]->(v)", edges=[list(e) for e in edges]).consume()


def store_scores(graph: Graph, scored: dict[tuple[str, str], np.ndarray], scorer: str,
                 version: str) -> None:
    """Write the scores the way search/grounding.py does (Delta at the stored theta)."""
    rows = [{"citing": u, "cited": v, "delta": coverage_affinity(m, STORED_THETA),
             "matrix": [round(float(x), 6) for x in m.ravel()],
             "rows": int(m.shape[0]), "cols": int(m.shape[1])} for (u, v), m in scored.items()]
    graph.write("set_edge_scores", rows=rows, theta=STORED_THETA, scorer=scorer,
                version=version, scored_at="2024-01-01T00:00:00+00:00")


def cypher_deltas(graph: Graph, edges: list[tuple[str, str]],
                  theta: float) -> dict[tuple[str, str], float | None]:
    rows = graph.read("read_edge_scores", edges=[list(e) for e in edges], scorer=SCORER,
                      version=VERSION, theta=theta)
    return {(r["citing"], r["cited"]): r["delta"] for r in rows}


def test_delta_in_cypher_equals_coverage_affinity_at_every_theta(graph: Graph) -> None:
    scored = matrices()
    create_edges(graph, list(scored))
    store_scores(graph, scored, SCORER, VERSION)
    for theta in THETAS:
        got = cypher_deltas(graph, list(scored), theta)
        # Exact: a Delta that ties with tau must be cut on both sides alike.
        assert got == {edge: coverage_affinity(m, theta) for edge, m in scored.items()}, theta


def test_delta_from_the_stored_matrix_read_back_equals_cypher(graph: Graph) -> None:
    # The evidence-graph view recomputes Delta in Python from the matrix it reads back.
    scored = matrices(seed=5)
    create_edges(graph, list(scored))
    store_scores(graph, scored, SCORER, VERSION)
    stored = graph.read("read_edge_matrices", edges=[list(e) for e in scored], scorer=SCORER,
                        version=VERSION)
    assert len(stored) == len(scored)
    for theta in THETAS:
        got = cypher_deltas(graph, list(scored), theta)
        for row in stored:
            python = stored_coverage_affinity(row["matrix"], row["rows"], row["cols"], theta)
            assert got[(row["citing"], row["cited"])] == python, theta


def test_an_edge_another_scorer_scored_has_no_delta_for_this_one(graph: Graph) -> None:
    scored = matrices()
    ours, theirs, old_version = ("c0", "v0"), ("c1", "v1"), ("c2", "v2")
    unscored = ("c3", "v3")
    create_edges(graph, [ours, theirs, old_version, unscored])
    store_scores(graph, {ours: scored[ours]}, SCORER, VERSION)
    store_scores(graph, {theirs: scored[theirs]}, "another-scorer", VERSION)
    store_scores(graph, {old_version: scored[old_version]}, SCORER, "2")
    for theta in (STORED_THETA, 0.3):
        got = cypher_deltas(graph, [ours, theirs, old_version, unscored], theta)
        assert got == {ours: coverage_affinity(scored[ours], theta), theirs: None,
                       old_version: None, unscored: None}


def test_an_edge_missing_from_the_graph_comes_back_as_no_row(graph: Graph) -> None:
    create_edges(graph, [("c0", "v0")])
    store_scores(graph, {("c0", "v0"): np.ones((2, 2))}, SCORER, VERSION)
    assert set(cypher_deltas(graph, [("c0", "v0"), ("v0", "c0")], 0.3)) == {("c0", "v0")}


def test_a_corpus_wide_read_of_one_scorers_edges_gives_their_delta(graph: Graph) -> None:
    # The Delta-as-features benchmark reads a whole corpus's scored edges at once
    # (read_scored_edges) and computes Delta from each matrix itself.
    from crase.bench.delta_features import edge_row

    scored = matrices(seed=3)
    ours = dict(list(scored.items())[:5])
    create_edges(graph, list(scored))
    store_scores(graph, ours, SCORER, VERSION)
    store_scores(graph, dict(list(scored.items())[5:6]), SCORER, "2")
    rows = graph.read("read_scored_edges", scorer=SCORER, version=VERSION)
    assert {(r["citing"], r["cited"]) for r in rows} == set(ours)
    for theta in (0.3, STORED_THETA):
        got = cypher_deltas(graph, list(ours), theta)
        for row in rows:
            delta, _ = edge_row(row["matrix"], row["rows"], row["cols"], theta)
            assert delta == got[(row["citing"], row["cited"])], theta


# A small evidence graph: f has no year; h is from after every reference year below.
YEARS: dict[str, int | None] = {"a": 2003, "b": 2001, "c": 1999, "d": 1980, "e": 2002,
                                "f": None, "h": 2030}
DELTA = {("a", "b"): 0.8, ("a", "c"): 0.4, ("b", "c"): 0.6, ("e", "b"): 1.0,
         ("c", "d"): 0.2, ("e", "f"): 0.5, ("f", "d"): 0.25, ("a", "h"): 0.7, ("h", "c"): 0.3}
STEPS = {"references": lambda u, v: [(u, v)], "citing": lambda u, v: [(v, u)],
         "both": lambda u, v: [(u, v), (v, u)]}


def python_weights(orientation: str, reference_year: int,
                   beta: float) -> dict[tuple[str, str], float]:
    """Each step of the walk weighed by the age of the paper it leads to."""
    return {(source, target): edge_weight(delta, YEARS[target], reference_year, beta)
            for (u, v), delta in DELTA.items() for source, target in STEPS[orientation](u, v)}


# The projected steps as GDS holds them, node numbers turned back into paper ids; the
# origin's links to the seeds are left out.
STREAM_PROJECTED_WEIGHTS = """
CALL gds.graph.relationshipProperty.stream($graph_name, 'w')
YIELD sourceNodeId, targetNodeId, propertyValue
WITH sourceNodeId, targetNodeId, propertyValue AS w WHERE sourceNodeId <> size($nodes)
RETURN $nodes[sourceNodeId] AS source, $nodes[targetNodeId] AS target, w
"""


def projected_weights(graph: Graph, orientation: str, reference_year: int,
                      beta: float) -> list[dict[str, Any]]:
    """The weights the projection holds after the ranking built the walk's steps."""
    nodes = sorted(YEARS)
    position = {paper: i for i, paper in enumerate(nodes)}
    walk = Walk("ppr", orientation, reference_year, beta, 0.15, k=10)
    steps = weighted_steps(DELTA, YEARS, walk)
    name = f"rules-{orientation}-{reference_year}-{beta}"
    try:
        links = [(len(nodes), position["a"], 1.0)] + [
            (position[a], position[b], w) for a, b, w in steps]
        projected = graph.write("project_evidence_graph", **projection_parameters(name, links))
        # The origin is a node of its own (the number after the papers) and every step,
        # its link to the seed included, is a relationship.
        assert projected[0]["nodes"] == len(nodes) + 1
        assert projected[0]["relationships"] == len(links)
        with graph.driver.session(database=graph.database) as session:
            return [record.data() for record in
                    session.run(STREAM_PROJECTED_WEIGHTS, graph_name=name, nodes=nodes)]
    finally:
        graph.write("drop_projection", graph_name=name)


def create_papers(graph: Graph) -> None:
    with graph.driver.session(database=graph.database) as session:
        session.run("UNWIND $rows AS r CREATE (p:Paper {id: r[0]}) SET p.year = r[1]",
                    rows=[[p, y] for p, y in YEARS.items()]).consume()
        session.run("UNWIND $edges AS e MATCH (u:Paper {id: e[0]}), (v:Paper {id: e[1]}) "
                    "CREATE (u)-[:CITES]->(v)", edges=[list(e) for e in DELTA]).consume()


@pytest.mark.parametrize("orientation", ["references", "citing", "both"])
@pytest.mark.parametrize(("reference_year", "beta"), [
    (2004, 0.5), (2004, 0.0), (2010, 1.3), (1995, 0.8),  # 1995: most papers clamp to age 1
])
def test_projected_weights_equal_the_age_weight(graph: Graph, orientation: str,
                                                reference_year: int, beta: float) -> None:
    create_papers(graph)
    streamed = projected_weights(graph, orientation, reference_year, beta)
    got = {(r["source"], r["target"]): r["w"] for r in streamed}
    assert len(got) == len(streamed)  # no step projected twice
    expected = python_weights(orientation, reference_year, beta)
    assert got.keys() == expected.keys()
    for step, weight in expected.items():
        assert got[step] == pytest.approx(weight, rel=1e-12, abs=1e-15), step
