"""Papers: by id with its claims, batch loads with rejects, and the requests refused
before any read (on the recording graph). Paper pages and the full-text search read the
shared corpus in tests/api/loaded/test_paper_reads.py."""

from typing import Any

import pytest
from litestar.testing import TestClient

from crase.graph import Graph
from crase.settings import Settings
from tests.api.conftest import API_KEY, api_settings_for
from tests.recording_graph import RecordingGraph


@pytest.mark.integration
def test_paper_by_id_with_counts(client: TestClient, corpus: dict[str, Any]) -> None:
    response = client.get("/papers/tachyon-03")
    assert response.status_code == 200
    paper = response.json()
    assert paper["title"] == "Tachyon condensation on unstable D-branes, part 4"
    assert paper["year"] == 1997 and paper["authors"][1] == "A. N. Other"
    assert paper["references"] == 2 and paper["cited_by"] == 2
    assert paper["claims"] == []


@pytest.mark.integration
def test_paper_claims_appear_once_extracted(client: TestClient, graph: Graph,
                                            corpus: dict[str, Any]) -> None:
    with graph.driver.session(database=graph.database) as session:
        session.run("MATCH (p:Paper {id: 'entropy-01'}) CREATE (p)-[:HAS_CLAIM {rank: 1}]->"
                    "(:Claim {id: 'c1', text: 'A claim.', type: 'EMPIRICAL', "
                    "source_phrase: 'A claim.', extractor: 'test'})").consume()
    claims = client.get("/papers/entropy-01").json()["claims"]
    assert claims == [{"extractor": "test", "rank": 1, "text": "A claim.", "type": "EMPIRICAL",
                       "source_phrase": "A claim."}]


@pytest.mark.integration
def test_ids_with_slashes_are_found(client: TestClient) -> None:
    client.post("/papers/batch", json={"papers": [{"id": "hep-th/9901001", "title": "Old id"}]})
    response = client.get("/papers/hep-th/9901001")
    assert response.status_code == 200 and response.json()["title"] == "Old id"


def test_unknown_paper_is_404(recording_client: TestClient,
                             recording_graph: RecordingGraph) -> None:
    response = recording_client.get("/papers/no-such-paper")
    assert response.status_code == 404
    assert response.json()["error"] == "PaperNotFound"
    assert "no-such-paper" in response.json()["detail"]
    assert [params["id"] for params in recording_graph.sent("read_paper")] == ["no-such-paper"]


def test_search_requests_that_cannot_work(recording_client: TestClient,
                                          recording_graph: RecordingGraph) -> None:
    client = recording_client
    only_syntax = client.get("/papers", params={"q": "  "})
    assert only_syntax.status_code == 422
    assert only_syntax.json()["detail"] == "q: no searchable words"
    missing = client.get("/papers")
    assert missing.status_code == 400 and missing.json()["errors"][0]["field"] == "q"
    too_many = client.get("/papers", params={"q": "brane", "limit": 1000})
    assert too_many.status_code == 400 and too_many.json()["errors"][0]["field"] == "limit"
    not_a_number = client.get("/papers", params={"q": "brane", "offset": "ten"})
    assert not_a_number.status_code == 400
    assert not_a_number.json()["errors"][0]["field"] == "offset"
    assert recording_graph.calls == []  # each refused before any search was sent


@pytest.mark.integration
def test_batch_load_reports_counts_and_every_reject(client: TestClient) -> None:
    batch = {
        "papers": [
            {"id": "a", "title": "Paper A", "year": 1999, "abstract": "About A."},
            {"id": "b", "title": "Paper B", "year": "2001"},
            {"id": "c"},
            {"id": "d", "title": "Paper D", "year": 3050},
            "not a paper",
            {"id": "a", "title": "Paper A", "year": 1999, "abstract": "About A."},
            {"id": "a", "title": "Another A"},
        ],
        "citations": [
            {"citing_id": "b", "cited_id": "a"},
            {"citing_id": "a", "cited_id": "a"},
            {"citing_id": "a", "cited_id": "zzz"},
            {"citing_id": "b", "cited_id": "a"},
            {"citing_id": "", "cited_id": "a"},
        ],
    }
    response = client.post("/papers/batch", json=batch)
    assert response.status_code == 200, response.text
    answer = response.json()
    # Paper d's impossible year is a missing year: the paper is kept without it (noted).
    assert answer["papers"] == {"received": 7, "accepted": 3, "rejected": 4, "written": 3}
    assert answer["citations"] == {"received": 5, "accepted": 1, "rejected": 4, "written": 1}
    assert answer["graph"] == {"papers": 3, "citations": 1}
    kinds = {reject["item"]: reject["kind"] for reject in answer["rejects"]}
    assert kinds == {
        "papers[2]": "missing_title", "papers[4]": "not_an_object",
        "papers[5]": "duplicate_paper", "papers[6]": "conflicting_paper",
        "citations[1]": "self_citation", "citations[2]": "unknown_paper",
        "citations[3]": "duplicate_edge", "citations[4]": "malformed_edge",
    }
    assert all(reject["reason"] for reject in answer["rejects"])


@pytest.mark.integration
def test_batch_load_is_idempotent_and_links_to_papers_already_there(
        client: TestClient) -> None:
    papers = [{"id": "x", "title": "X"}, {"id": "y", "title": "Y"}]
    client.post("/papers/batch", json={"papers": papers})
    again = client.post("/papers/batch", json={"papers": papers}).json()
    assert again["graph"]["papers"] == 2
    edges_only = client.post("/papers/batch", json={
        "citations": [{"citing_id": "y", "cited_id": "x"}]}).json()
    assert edges_only["citations"]["accepted"] == 1 and edges_only["rejects"] == []
    assert edges_only["graph"] == {"papers": 2, "citations": 1}
    assert client.get("/papers/y").json()["references"] == 1


@pytest.mark.parametrize(("body", "field"), [
    ({"papers": {"id": "a"}}, "papers"),
    ({"citations": [{"citing_id": "a"}]}, "citations.0.cited_id"),
    ({"citations": [{"citing_id": "a,b", "cited_id": "c"}]}, "citations.0.citing_id"),
    ({"citations": [{"citing_id": "a", "cited_id": "c\nd"}]}, "citations.0.cited_id"),
    ({"papers": [], "edges": []}, "edges"),
])
def test_bad_batches_name_the_field(recording_client: TestClient,
                                    recording_graph: RecordingGraph, body: dict[str, Any],
                                    field: str) -> None:
    response = recording_client.post("/papers/batch", json=body)
    assert response.status_code == 400, response.text
    assert field in [e["field"] for e in response.json()["errors"]]
    assert recording_graph.calls == []


def test_batch_row_limit(offline_settings: Settings) -> None:
    from crase.api.app import create_app

    limited = api_settings_for(offline_settings, ingest_max_rows=3)
    graph = RecordingGraph()
    with TestClient(create_app(limited, graph=graph)) as client:
        client.headers["X-API-Key"] = API_KEY
        papers = [{"id": str(i), "title": f"T{i}"} for i in range(4)]
        response = client.post("/papers/batch", json={"papers": papers})
    assert response.status_code == 422
    assert "4 rows, more than the 3" in response.json()["detail"]
    assert graph.names() == ["close_stale_runs"]  # start-up's only: no paper was written
