"""What search/ranking.py hands the database, without a database: the projection's
parameters, and the one number (ORIGIN) that stands for the Run among the steps' sources.
The projection itself runs on the real server in tests/scoring/test_rules_in_cypher.py and
tests/search/test_ranking_gds.py."""

import re
from typing import Any

from crase.cypher.catalog import load_query
from crase.graph import Graph, Row
from crase.scoring.delta import PrunedGraph
from crase.search.ranking import ORIGIN, Walk, projection_parameters, rank

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


def test_the_projection_reads_the_origin_marker_from_its_parameter() -> None:
    code = cypher_code("project_evidence_graph")
    assert "$sources[j] = $origin_position THEN origin" in code
    # No number of its own stands for the Run: no negative literal, no sign test.
    assert not re.search(r"[=<>(\[,]\s*-\s*\d|<\s*0|>=\s*0", code)


def test_the_projection_parameters_carry_the_one_origin_constant() -> None:
    params = projection_parameters("g", "run-1", ["a", "b"], [(ORIGIN, 0, 1.0), (0, 1, 0.5)])
    assert params == {"graph_name": "g", "origin": "run-1", "origin_position": ORIGIN,
                      "nodes": ["a", "b"], "sources": [ORIGIN, 0], "targets": [0, 1],
                      "weights": [1.0, 0.5]}
    # ORIGIN can never be mistaken for a paper's position.
    assert ORIGIN < 0


def test_ppr_projects_the_runs_links_to_the_seeds_from_origin() -> None:
    graph = RecordingGraph()
    pruned = PrunedGraph(edges=dict(DELTA), nodes=sorted(YEARS), seeds=["a", "e"],
                         pruned_edges={}, dropped_nodes={})
    walk = Walk("ppr", "both", 2004, 0.5, 0.15, k=5)
    rank(graph, "run-1", pruned, walk, {"a": 0.75, "e": 0.25}, YEARS)
    assert [name for name, _ in graph.calls] == [
        "project_evidence_graph", "rank_pagerank", "drop_projection"]
    params = graph.calls[0][1]
    assert params["origin_position"] == ORIGIN and params["origin"] == "run-1"
    links = list(zip(params["sources"], params["targets"], params["weights"], strict=True))
    nodes = params["nodes"]
    from_origin = [(nodes[b], w) for a, b, w in links if a == ORIGIN]
    assert from_origin == [("a", 0.75), ("e", 0.25)]  # first, as the query's header says
    assert all(a >= 0 for a, _, _ in links[len(from_origin):])
