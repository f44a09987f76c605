"""The Neo4j Browser cookbook (cypher/analyst/*.cypher) holds the promised queries, each
saying how to set its parameters. No server: the queries are run against a real finished
run in tests/api/loaded/test_cookbook.py."""

from crase.cypher.catalog import load_query, query_names


def test_the_cookbook_has_the_promised_queries() -> None:
    assert set(query_names("analyst")) >= {
        "analyst/open_run", "analyst/run_evidence_graph", "analyst/run_results",
        "analyst/pruned_edges", "analyst/cut_seeds", "analyst/papers_by_delta",
        "analyst/paper_claims", "analyst/paper_claim_pairs"}
    for name in query_names("analyst"):
        assert ":param" in load_query(name), f"{name} must say how to set its parameters"
