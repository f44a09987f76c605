"""Idea to prior work over HTTP: start (202), follow the run, read the five papers and the
audit; bad requests. Offline backends, providers off, on the fixture corpus."""

from typing import Any

import pytest
from litestar.testing import TestClient

from tests.api.conftest import wait_for_run

pytestmark = pytest.mark.integration

IDEA = ("Use level truncation of cubic open string field theory to show that the tachyon "
        "on an unstable D-brane condenses to the closed string vacuum.")


def test_an_idea_run_ends_with_papers_and_an_audit(client: TestClient,
                                                   corpus: dict[str, Any]) -> None:
    response = client.post("/ideas", json={"idea": IDEA})
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert accepted["audit_url"] == f"/ideas/{accepted['run_id']}/audit"
    run = wait_for_run(client, accepted["run_id"], timeout_s=300)
    assert run["kind"] == "idea" and run["query"] == IDEA
    assert run["status"] == "done" and run["error"] is None, run
    # Progress follows the stages as the workflow names them, in its order.
    stages = run["progress"]["stages"]
    assert list(stages)[0] == "structure" and list(stages)[-1] == "record"
    assert set(stages) == set(run["timings"])
    assert all(stage["state"] == "done" for stage in stages.values())
    assert 0 < len(run["results"]) <= 5
    assert [r["rank"] for r in run["results"]] == list(range(1, len(run["results"]) + 1))
    assert all(r["evidence"]["reason"] and r["score"] is None for r in run["results"])
    assert run["results"][0]["id"].startswith(("tachyon", "orphan"))
    bibtex = client.get(f"/runs/{run['id']}/export", params={"format": "bibtex"})
    assert bibtex.status_code == 200 and "rank 1}" in bibtex.text

    audit = client.get(accepted["audit_url"])
    assert audit.status_code == 200
    assert audit.json()["run_id"] == run["id"]
    assert audit.json()["idea"] == IDEA

    graph = client.get(f"/runs/{run['id']}/graph")
    assert graph.status_code == 422 and "/audit" in graph.json()["detail"]


def test_unknown_idea_audit_is_404(client: TestClient) -> None:
    response = client.get("/ideas/nope/audit")
    assert response.status_code == 404 and response.json()["error"] == "RunNotFound"


@pytest.mark.parametrize(("body", "status", "field"), [
    ({"idea": "ab"}, 400, "idea"),
    ({"idea": IDEA, "mode": "poem"}, 400, "mode"),
    ({"idea": IDEA, "pdf_dir": "/etc"}, 400, "pdf_dir"),
    ({"idea": IDEA, "providers": True}, 400, "providers"),
    ({"idea": IDEA, "params": {"max_facets": 9}}, 400, "params.max_facets"),
    ({"idea": IDEA, "year_min": 2003, "year_max": 1999}, 422, "year_min"),
])
def test_bad_idea_requests_name_the_field(client: TestClient, body: dict[str, Any],
                                          status: int, field: str) -> None:
    response = client.post("/ideas", json=body)
    assert response.status_code == status, response.text
    assert field in response.json()["detail"]
