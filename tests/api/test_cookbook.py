"""The Neo4j Browser cookbook (cypher/analyst/*.cypher) against a real finished run, sent
through the read-only analyst endpoint: each query is valid, read-only, and answers what
its header promises."""


import pytest

from crase.cypher.catalog import load_query, query_names

pytestmark = pytest.mark.integration


def test_the_cookbook_has_the_promised_queries() -> None:
    assert set(query_names("analyst")) >= {
        "analyst/open_run", "analyst/run_evidence_graph", "analyst/run_results",
        "analyst/pruned_edges", "analyst/cut_seeds", "analyst/papers_by_delta",
        "analyst/paper_claims", "analyst/paper_claim_pairs"}
    for name in query_names("analyst"):
        assert ":param" in load_query(name), f"{name} must say how to set its parameters"

