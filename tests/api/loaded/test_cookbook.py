"""The Neo4j Browser cookbook (cypher/analyst/*.cypher) against the shared finished run, sent
through the read-only analyst endpoint: each query is valid, read-only, and answers what
its header promises."""

from typing import Any

import pytest
from litestar.testing import TestClient

from crase.cypher.catalog import load_query
from tests.api.conftest import SEARCH_PARAMS
from tests.api.corpus import ORPHAN

pytestmark = pytest.mark.integration


def run_cookbook(client: TestClient, name: str, **params: Any) -> list[dict[str, Any]]:
    response = client.post("/analyst/cypher",
                           json={"query": load_query(f"analyst/{name}"), "params": params})
    assert response.status_code == 200, (name, response.json())
    assert response.json()["truncated"] is False
    return list(response.json()["rows"])


def test_cookbook_follows_a_run(client: TestClient, finished_run: dict[str, Any]) -> None:
    run_id, tau = finished_run["id"], SEARCH_PARAMS["tau"]
    counts = finished_run["counts"]

    opened = run_cookbook(client, "open_run", run_id=run_id)
    kinds = [row["x"]["type"] for row in opened]
    assert set(kinds) == {"SEEDED", "RETURNED"}  # light enough to draw: no CONSIDERED
    assert kinds.count("RETURNED") == counts["results"]
    assert kinds.count("SEEDED") == len(finished_run["seeds"])

    evidence = run_cookbook(client, "run_evidence_graph", run_id=run_id, tau=tau)
    assert len(evidence) == counts["retained_edges"]
    assert all(row["c"]["properties"]["delta"] > tau for row in evidence)

    results = run_cookbook(client, "run_results", run_id=run_id)
    assert [row["id"] for row in results] == [r["id"] for r in finished_run["results"]]

    pruned = run_cookbook(client, "pruned_edges", run_id=run_id, tau=tau)
    assert len(pruned) == counts["edges_pruned"]
    assert {(row["citing"], row["reason"]) for row in pruned} >= {
        (ORPHAN["id"], "delta 0.0 <= tau 0.2")}

    cut = run_cookbook(client, "cut_seeds", run_id=run_id)
    assert [row["id"] for row in cut] == [ORPHAN["id"]]
    assert cut[0]["reason"] == "no edge left after pruning" and cut[0]["sub_queries"]

    ranked = run_cookbook(client, "papers_by_delta", run_id=run_id, min_citations=1)
    totals = [row["total_delta"] for row in ranked]
    assert ranked and totals == sorted(totals, reverse=True)
    whole_corpus = run_cookbook(client, "papers_by_delta", run_id=None, min_citations=1)
    assert len(whole_corpus) >= len(ranked)


def test_cookbook_explains_a_paper(client: TestClient, finished_run: dict[str, Any]) -> None:
    extractor = finished_run["backends"]["claims"]
    graph = client.get(f"/runs/{finished_run['id']}/graph").json()
    edge = next(e for e in graph["edges"] if e["retained"])

    claims = run_cookbook(client, "paper_claims", paper_id=edge["citing"])
    assert claims and {row["extractor"] for row in claims} == {extractor}
    assert [row["rank"] for row in claims] == list(range(1, len(claims) + 1))

    pairs = run_cookbook(client, "paper_claim_pairs", paper_id=edge["citing"],
                         extractor=extractor)
    grounding = [row for row in pairs if row["cited"] == edge["cited"]]
    assert grounding, "a retained edge has at least one claim pair at its threshold"
    citing_claims = {row["text"] for row in claims}
    assert all(row["citing_claim"] in citing_claims for row in grounding)
    assert all(row["support"] >= finished_run["params"]["params"]["theta"] for row in grounding)
