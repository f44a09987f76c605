"""What search/walk.py hands the database, without a database: the projection's
parameters, numbered nodes with the walk's origin as the number after the papers, and
SALSA, which ranks the steps in numpy with no database call, float for float as it did
when it read them back from a GDS projection. The projection itself runs on the real
server in tests/scoring/test_rules_in_cypher.py and tests/search/test_walk_gds.py."""

import re
from typing import Any

import numpy as np
import pytest

from crase.cypher.catalog import load_query
from crase.errors import DatabaseError
from crase.graph import Graph, Row
from crase.scoring.delta import PrunedGraph
from crase.search.walk import (
    WALK_METHODS,
    Walk,
    projection_parameters,
    rank,
    retained_restart,
    weighted_steps,
)
from crase.settings import SearchSettings, choices
from tests.scoring import dense_salsa

DELTA = {("a", "b"): 0.8, ("a", "c"): 0.4, ("b", "c"): 0.6, ("e", "b"): 1.0}
YEARS: dict[str, int | None] = {"a": 2003, "b": 2001, "c": 1999, "e": 2002}


class RecordingGraph(Graph):
    """Answers the rank stage's calls as the server would, and keeps their parameters."""

    def __init__(self) -> None:  # no driver: nothing here reaches a server
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def write(self, name: str, **params: Any) -> list[Row]:
        self.calls.append((name, params))
        return [{"graph": params["graph_name"]}] if name == "project_evidence_graph" else []

    def read(self, name: str, timeout_s: float | None = None, **params: Any) -> list[Row]:
        self.calls.append((name, params))
        return []


def cypher_code(name: str) -> str:
    """The query without its comment lines."""
    return "\n".join(line for line in load_query(name).splitlines()
                     if not line.lstrip().startswith("//"))


def test_the_projection_reads_no_stored_node() -> None:
    # A graph of numbers: no MATCH, no lookup, only the steps handed over.
    for name in ("project_evidence_graph", "rank_pagerank"):
        code = cypher_code(name)
        assert not re.search(r"\b(MATCH|asNode)\b", code), name


def test_the_projection_parameters_are_the_steps_as_numbers() -> None:
    params = projection_parameters("g", [(2, 0, 1.0), (0, 1, 0.5)])
    assert params == {"graph_name": "g", "sources": [2, 0], "targets": [0, 1],
                      "weights": [1.0, 0.5]}


def test_ppr_projects_the_origins_links_to_the_seeds_first() -> None:
    graph = RecordingGraph()
    pruned = PrunedGraph(edges=dict(DELTA), nodes=sorted(YEARS), seeds=["a", "e"],
                         pruned_edges={}, dropped_nodes={})
    walk = Walk("ppr", "both", 2004, 0.5, 0.15, k=5)
    rank(graph, "run-1", pruned, walk, {"a": 0.75, "e": 0.25}, YEARS)
    # Two round trips: the ranking query drops the projection itself.
    assert [name for name, _ in graph.calls] == ["project_evidence_graph", "rank_pagerank"]
    params, ranked = graph.calls[0][1], graph.calls[1][1]
    nodes, origin = ranked["nodes"], ranked["origin"]
    assert nodes == sorted(YEARS) and origin == len(nodes)  # the number after the papers
    links = list(zip(params["sources"], params["targets"], params["weights"], strict=True))
    from_origin = [(nodes[b], w) for a, b, w in links if a == origin]
    assert from_origin == [("a", 0.75), ("e", 0.25)]  # first, as the query's header says
    assert all(a < origin and b < origin for a, b, _ in links[len(from_origin):])


class FailingRank(RecordingGraph):
    """The ranking query fails on the server, after the projection was made."""

    def read(self, name: str, timeout_s: float | None = None, **params: Any) -> list[Row]:
        self.calls.append((name, params))
        raise DatabaseError(f"query {name} failed: Neo.ClientError.Procedure.ProcedureCallFailed")


def test_a_failed_ranking_drops_the_projection_and_is_raised() -> None:
    graph = FailingRank()
    pruned = PrunedGraph(edges=dict(DELTA), nodes=sorted(YEARS), seeds=["a"],
                         pruned_edges={}, dropped_nodes={})
    with pytest.raises(DatabaseError, match="rank_pagerank failed"):
        rank(graph, "run-1", pruned, Walk("ppr", "both", 2004, 0.5, 0.15, k=5), {"a": 1.0},
             YEARS)
    assert [name for name, _ in graph.calls] == [
        "project_evidence_graph", "rank_pagerank", "drop_projection"]
    assert graph.calls[2][1] == {"graph_name": "crase-run-run-1"}


def test_the_projection_skips_gds_row_estimate_and_the_ranking_drops_it() -> None:
    # GDS estimates an aggregation's rows with EXPLAIN + the query's text and no
    # parameters, which Neo4j plans anew on every search; PROFILE makes that EXPLAIN
    # fail at once (cypher/project_evidence_graph.cypher).
    assert cypher_code("project_evidence_graph").lstrip().startswith("PROFILE\n")
    ranking = cypher_code("rank_pagerank")
    assert ranking.index("collect(") < ranking.index("gds.graph.drop($graph_name")


class NoDatabase(Graph):
    """Fails on any call: the SALSA ranking must not reach the database."""

    def __init__(self) -> None:
        pass

    def write(self, name: str, **params: Any) -> list[Row]:
        raise AssertionError(f"SALSA called the database: {name}")

    def read(self, name: str, timeout_s: float | None = None, **params: Any) -> list[Row]:
        raise AssertionError(f"SALSA called the database: {name}")


def streamed_salsa(steps: list[tuple[str, str, float]], restart: dict[str, float],
                   walk: Walk, rng: np.random.Generator) -> list[tuple[str, float]]:
    """The SALSA ranking as it was: the steps projected into GDS, streamed back (paper to
    paper, in the stream's own order, here shuffled) into an n x n matrix, ranked by the
    dense implementation (tests/scoring/dense_salsa.py)."""
    rows = [{"source": a, "target": b, "w": w} for a, b, w in steps]
    rows = [rows[i] for i in rng.permutation(len(rows))]
    ids = sorted({r["source"] for r in rows} | {r["target"] for r in rows})
    index = {paper: i for i, paper in enumerate(ids)}
    weights = np.zeros((len(ids), len(ids)))
    for r in rows:
        weights[index[r["source"]], index[r["target"]]] += r["w"]
    seeds = [s for s in restart if s in index]
    scores = dense_salsa.salsa_scores(weights, [index[s] for s in seeds], walk.alpha,
                                      seed_weights=[restart[s] for s in seeds])
    reached = [i for i in range(len(ids)) if scores[i] > 0]
    order = sorted(reached, key=lambda i: (-scores[i], ids[i]))[:walk.k]
    return [(ids[i], float(scores[i])) for i in order]


def random_evidence_graph(rng: np.random.Generator) -> tuple[PrunedGraph, dict[str, float],
                                                             dict[str, int | None]]:
    """Citations among up to 300 papers (some both ways, some self-citations), Deltas in
    (0, 1], years with gaps, a few seeds (one possibly without a citation) and restart
    weights."""
    n = int(rng.integers(2, 300))
    papers = [f"p{i:03d}" for i in range(n)]
    m = int(rng.integers(1, 4 * n))
    edges = {(papers[a], papers[b]): float(rng.random()) + 1e-3
             for a, b in zip(rng.integers(0, n, m).tolist(), rng.integers(0, n, m).tolist(),
                             strict=True)}
    for (u, v), delta in list(edges.items())[:m // 10]:
        edges[(v, u)] = delta / 2  # cited both ways: the 'both' walk takes a step twice
    years: dict[str, int | None] = {
        p: None if rng.random() < 0.1 else int(rng.integers(1980, 2006)) for p in papers}
    seeds = sorted(set(rng.choice(papers, size=int(rng.integers(1, 6))).tolist()))
    restart = {s: float(rng.random()) for s in seeds}
    pruned = PrunedGraph(edges=edges, nodes=papers, seeds=seeds, pruned_edges={},
                         dropped_nodes={})
    return pruned, restart, years


@pytest.mark.parametrize("orientation", ["references", "citing", "both"])
@pytest.mark.parametrize("seed", range(6))
def test_salsa_ranks_exactly_as_the_streamed_dense_version_did(orientation: str,
                                                               seed: int) -> None:
    rng = np.random.default_rng(seed)
    pruned, restart, years = random_evidence_graph(rng)
    walk = Walk("salsa", orientation, 2004, 0.5, float(rng.choice([0.15, 0.3])), k=50)
    ranked = rank(NoDatabase(), "run-1", pruned, walk, restart, years)
    p = retained_restart(restart, pruned.seeds)
    expected = streamed_salsa(weighted_steps(pruned.edges, years, walk), p, walk, rng)
    assert ranked == expected  # the same papers, the same floats


def test_salsa_with_seeds_outside_the_steps_is_standard_salsa() -> None:
    pruned = PrunedGraph(edges=dict(DELTA), nodes=sorted(YEARS) + ["z"], seeds=["z"],
                         pruned_edges={}, dropped_nodes={})
    walk = Walk("salsa", "references", 2004, 0.5, 0.15, k=5)
    ranked = rank(NoDatabase(), "run-1", pruned, walk, {"z": 1.0}, YEARS)
    expected = streamed_salsa(weighted_steps(DELTA, YEARS, walk), {}, walk,
                              np.random.default_rng(0))
    assert ranked == expected and ranked


def test_every_ranker_choice_has_its_rank_stage() -> None:
    # A choice added to the settings reaches the CLI, the form, the HTTP schema and the
    # benchmark grid by itself; this is where its stage must be written.
    assert set(WALK_METHODS) == set(choices(SearchSettings, "walk"))
