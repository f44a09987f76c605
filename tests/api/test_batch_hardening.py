"""POST /papers/batch with hostile rows: every answer is a 200 with the bad rows listed as
rejects (and the good rows loaded), or a 400 that says what to send instead; never a 500."""

from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.batch_loads import load_batch
from crase.graph import Graph
from crase.settings import Settings
from tests.recording_graph import RecordingGraph

GOOD = [{"id": "g1", "title": "Good one"}, {"id": "g2", "title": "Good two"},
        {"id": "g3", "title": "Good three"}]


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def with_bad_row(bad: Any) -> dict[str, Any]:
    """Three good papers with `bad` at papers[3], and an edge between two good ones."""
    return {"papers": [*GOOD, bad, {"id": "g4", "title": "Good four"}],
            "citations": [{"citing_id": "g2", "cited_id": "g1"}]}


def rejects_of(answer: dict[str, Any]) -> dict[str, str]:
    return {reject["item"]: reject["kind"] for reject in answer["rejects"]}


@pytest.mark.integration
@pytest.mark.parametrize(("bad", "kind"), [
    ({"id": "x" * 20_000, "title": "Long id"}, "id_too_long"),
    ({"id": "d1", "title": "Long doi", "doi": "10." + "9" * 50_000}, "id_too_long"),
    ({"id": "a1", "title": "Long arXiv id", "arxiv_id": "a" * 5_000}, "id_too_long"),
    ({"id": "s1", "title": "Long S2 id", "s2_id": "f" * 5_000}, "id_too_long"),
    ({"id": "y1", "title": "Long year", "year": "1" + "0" * 5_000}, None),  # year left out
    ({"id": "n1", "title": "Deep", "extra": nested(200)}, None),  # ignored field: loads
])
def test_a_bad_paper_is_a_reject_and_the_rest_loads(client: TestClient, bad: dict[str, Any],
                                                    kind: str | None) -> None:
    response = client.post("/papers/batch", json=with_bad_row(bad))
    assert response.status_code == 200, response.text[:500]
    answer = response.json()
    if kind is None:
        assert answer["papers"]["accepted"] == 5 and answer["rejects"] == []
        return
    assert rejects_of(answer) == {"papers[3]": kind}
    assert answer["rejects"][0]["reason"] and len(answer["rejects"][0]["reason"]) < 300
    assert answer["papers"] == {"received": 5, "accepted": 4, "rejected": 1, "written": 4}
    assert answer["citations"]["accepted"] == 1
    assert answer["graph"] == {"papers": 4, "citations": 1}


@pytest.mark.integration
def test_a_citation_with_a_long_id_is_a_reject(client: TestClient) -> None:
    body = {"papers": GOOD, "citations": [{"citing_id": "g2", "cited_id": "g1"},
                                          {"citing_id": "g3", "cited_id": "z" * 20_000}]}
    response = client.post("/papers/batch", json=body)
    assert response.status_code == 200, response.text[:500]
    answer = response.json()
    assert rejects_of(answer) == {"citations[1]": "id_too_long"}
    assert answer["graph"] == {"papers": 3, "citations": 1}


@pytest.mark.integration
def test_a_paper_too_deep_to_write_is_a_reject(graph: Graph, settings: Settings) -> None:
    # The framework parses somewhat deeper than json.dumps writes; a value past that
    # (built here directly, as no body can carry one) is refused at its place.
    papers = [*GOOD, {"id": "n", "title": "Deep", "x": nested(5_000)},
              {"id": "big", "title": "Huge number", "year": 10 ** 5_000},
              {"id": "g4", "title": "Good four"}]
    answer = load_batch(graph, settings, papers, [("g2", "g1")]).as_json()
    assert rejects_of(answer) == {"papers[3]": "too_deep", "papers[4]": "huge_number"}
    assert answer["papers"] == {"received": 6, "accepted": 4, "rejected": 2, "written": 4}
    assert answer["graph"] == {"papers": 4, "citations": 1}


def test_a_body_too_deep_to_parse_is_a_400(recording_client: TestClient,
                                           recording_graph: RecordingGraph) -> None:
    body = '{"papers": [' + "[" * 5_000 + "]" * 5_000 + "]}"
    response = recording_client.post("/papers/batch", content=body,
                           headers={"Content-Type": "application/json"})
    assert response.status_code == 400, response.text[:500]
    assert "nested" in response.json()["detail"]
    assert recording_graph.calls == []


def test_a_body_with_a_huge_number_is_a_400(recording_client: TestClient,
                                            recording_graph: RecordingGraph) -> None:
    body = '{"papers": [{"id": "h", "title": "Huge", "year": 1' + "0" * 5_000 + "}]}"
    response = recording_client.post("/papers/batch", content=body,
                           headers={"Content-Type": "application/json"})
    assert response.status_code == 400, response.text[:500]
    assert len(response.text) < 1_000
    assert recording_graph.calls == []


@pytest.mark.parametrize("body", [{}, {"papers": [], "citations": []}])
def test_an_empty_batch_is_a_400_that_says_so(recording_client: TestClient,
                                              recording_graph: RecordingGraph,
                                              body: dict[str, Any]) -> None:
    response = recording_client.post("/papers/batch", json=body)
    assert response.status_code == 400, response.text
    assert "at least one paper or citation" in response.json()["detail"]
    assert recording_graph.calls == []


@pytest.mark.integration
def test_a_batch_of_citations_only_counts_no_paper_reject(client: TestClient) -> None:
    client.post("/papers/batch", json={"papers": GOOD})
    answer = client.post("/papers/batch", json={
        "citations": [{"citing_id": "g2", "cited_id": "g1"}]}).json()
    assert answer["papers"] == {"received": 0, "accepted": 0, "rejected": 0, "written": 0}
    assert answer["rejects"] == [] and answer["citations"]["accepted"] == 1


@pytest.mark.integration
# Items the route hands to load_batch as they came; called directly, so these tests do not
# depend on the rest of the application starting.
def test_a_junk_author_name_costs_no_paper(graph: Graph, settings: Settings) -> None:
    # hep-th 9302046 lists "10" among its authors; the paper and its citations must load.
    papers = [*GOOD, {"id": "9302046", "title": "Two-Form", "year": "1993.0",
                      "authors": ["Amitabha Lahiri", "10"]},
              {"id": "y", "title": "Year 801", "year": 801, "categories": None}]
    answer = load_batch(graph, settings, papers, [("g1", "9302046")]).as_json()
    assert answer["rejects"] == [], answer["rejects"]
    assert answer["papers"]["accepted"] == 5 and answer["citations"]["accepted"] == 1


@pytest.mark.integration
@pytest.mark.parametrize("separator", ["\u2028", "\u0085", "\u2029"])
def test_a_citation_id_with_a_unicode_line_break_is_no_500(graph: Graph, settings: Settings,
                                                           separator: str) -> None:
    answer = load_batch(graph, settings, GOOD,
                        [("g2", "g1"), ("g3", f"x{separator}y")]).as_json()
    assert rejects_of(answer) == {"citations[1]": "unknown_paper"}
    assert separator in answer["rejects"][0]["reason"]


@pytest.mark.integration
def test_citation_ids_with_commas_and_quotes_are_kept(graph: Graph, settings: Settings) -> None:
    papers = [{"id": "a,b", "title": "Comma"}, {"id": 'q"x', "title": "Quote"}]
    answer = load_batch(graph, settings, papers, [("a,b", 'q"x')]).as_json()
    assert answer["rejects"] == [] and answer["graph"] == {"papers": 2, "citations": 1}


@pytest.mark.integration
def test_a_citation_id_with_a_line_break_is_a_reject(graph: Graph, settings: Settings) -> None:
    answer = load_batch(graph, settings, GOOD, [("g2", "g1\nx"), ("g3", "g1")]).as_json()
    assert rejects_of(answer) == {"citations[0]": "malformed_edge"}
    assert answer["citations"]["accepted"] == 1 and answer["graph"]["citations"] == 1
