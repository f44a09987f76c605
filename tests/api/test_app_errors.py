"""The app-wide error mapping: bodies that cannot be parsed are 400s with the reason (and
logged), bodies that are not JSON are 415s, and anything unexpected is a 500 with a
generic reason, its detail only in the server log."""

import json
import logging

import pytest
from litestar.testing import TestClient

from tests.recording_graph import RecordingGraph

# Every POST route, with a body it accepts (for the content type checks).
POST_ROUTES = [
    ("/searches", {"query": "tachyon condensation"}),
    ("/papers/batch", {"papers": [{"id": "p1", "title": "T"}]}),
    ("/analyst/cypher", {"query": "RETURN 1 AS one"}),
    ("/ideas", {"idea": "Tachyon condensation on unstable D-branes"}),
    ("/runs/no-such-run/cancel", None),
]
JSON = {"Content-Type": "application/json"}


# The routes that read a body (POST /runs/{id}/cancel reads none, and answers 404 here).
BODY_ROUTES = [path for path, body in POST_ROUTES if body is not None]


@pytest.mark.parametrize("path", BODY_ROUTES)
@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_a_body_nested_100000_deep_is_a_logged_400(recording_client: TestClient, path: str,
                                                   opener: str,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    client = recording_client
    closer = "]" if opener == "[" else "}"
    body = opener * 100_000 + closer * 100_000
    with caplog.at_level(logging.WARNING):
        response = client.post(path, content=body, headers=JSON)
    assert response.status_code == 400, response.text[:300]
    answer = response.json()
    assert answer["error"] == "ValidationFailed"
    assert "nested too deeply" in answer["detail"] and "\n" not in answer["detail"]
    assert any("nested too deeply" in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("path", BODY_ROUTES)
def test_malformed_json_is_a_400_that_says_so(recording_client: TestClient, path: str) -> None:
    response = recording_client.post(path, content='{"query": ', headers=JSON)
    assert response.status_code == 400, response.text
    assert "JSON" in response.json()["detail"]


@pytest.mark.parametrize(("path", "body"), [(p, b) for p, b in POST_ROUTES if b is not None])
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          None])
def test_a_body_that_is_not_declared_json_is_a_415(recording_client: TestClient,
                                                   recording_graph: RecordingGraph, path: str,
                                                   body: dict,
                                                   content_type: str | None) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    response = recording_client.post(path, content=json.dumps(body), headers=headers)
    assert response.status_code == 415, response.text
    answer = response.json()
    assert answer["error"] == "UnsupportedMediaType"
    assert "application/json" in answer["detail"]
    assert recording_graph.calls == []  # refused before the route ran


@pytest.mark.integration
@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8",
                                          "APPLICATION/JSON"])
def test_json_with_or_without_a_charset_is_accepted(client: TestClient,
                                                    content_type: str) -> None:
    response = client.post("/analyst/cypher", content='{"query": "RETURN 1 AS one"}',
                           headers={"Content-Type": content_type})
    assert response.status_code == 200, response.text


def test_a_post_without_a_body_needs_no_content_type(recording_client: TestClient,
                                                     recording_graph: RecordingGraph) -> None:
    response = recording_client.post("/runs/no-such-run/cancel")
    assert response.status_code == 404
    assert recording_graph.sent("read_run") == [{"id": "no-such-run"}]  # the route ran


def test_an_unexpected_exception_is_a_generic_500_logged_with_its_detail(
        recording_client: TestClient, recording_graph: RecordingGraph,
        caplog: pytest.LogCaptureFixture) -> None:
    recording_graph.answers["read_paper"] = KeyError("internal-detail-7f3a")
    with caplog.at_level(logging.ERROR):
        response = recording_client.get("/papers/some-id")
    assert response.status_code == 500
    body = response.json()
    assert body["error"] == "InternalServerError"
    assert "internal-detail-7f3a" not in response.text and "KeyError" not in response.text
    assert "server log" in body["detail"]
    assert "internal-detail-7f3a" in caplog.text and "Traceback" in caplog.text
