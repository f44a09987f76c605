"""A Run keeps its parameters twice: the JSON string (everything) and plain properties
(`r.tau`, `r.k`, `r.mode`), so that Neo4j Browser can filter and show them."""

import pytest

from crase.graph import Graph
from crase.run_lifecycle import RunLifecycle, browser_query, plain_properties

SEARCH_PARAMS = {"query": "tachyon", "params": {"k": 20, "tau": 0.2, "walk": "ppr",
                                                "nested": {"k": 3}},
                 "reference_year": None, "exclude": ["a", "b"], "seed_override": None,
                 "mixed": [1, "x"], "rows": [{"a": 1}]}


def test_nested_parameters_are_flattened_to_their_own_names() -> None:
    assert plain_properties(SEARCH_PARAMS) == {
        "k": 20, "tau": 0.2, "walk": "ppr", "params_nested_k": 3, "exclude": ["a", "b"]}


def test_a_parameter_never_replaces_a_property_of_the_run() -> None:
    props = plain_properties({"status": "x", "params": {"id": "y", "kind": "z", "tau": 1.0}})
    assert props == {"params_id": "y", "params_kind": "z", "tau": 1.0}


def test_the_open_run_query_shows_returned_and_seed_papers_only() -> None:
    assert browser_query("r1") == ("MATCH (r:Run {id: 'r1'})-[x:RETURNED|SEEDED]->(p:Paper) "
                                   "RETURN r, x, p")
    assert browser_query("r1", "") == "MATCH (r:Run {id: 'r1'})-[x]->(p:Paper) RETURN r, x, p"


@pytest.mark.integration
def test_the_run_node_holds_the_plain_parameters(graph: Graph) -> None:
    with RunLifecycle.open(graph, "plain-1", "search", "tachyon", SEARCH_PARAMS, {}, ("a",)):
        pass
    with graph.driver.session(database=graph.database) as session:
        row = session.run("MATCH (r:Run {id: 'plain-1'}) RETURN r.tau AS tau, r.k AS k, "
                          "r.exclude AS exclude, r.query AS query, r.status AS status, "
                          "r.params AS params").single()
    assert row is not None
    assert (row["tau"], row["k"], row["exclude"]) == (0.2, 20, ["a", "b"])
    assert (row["query"], row["status"]) == ("tachyon", "done")
    assert '"seed_override": null' in row["params"]  # the JSON string keeps everything
