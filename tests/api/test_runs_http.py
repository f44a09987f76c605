"""GET /runs (paged, bounded), the run view's fields, and the typed OpenAPI schema of the
run and paper answers."""

from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.api.runs import STALE_RUN
from crase.graph import Graph
from crase.settings import Settings
from tests.api.conftest import API_KEY
from tests.recording_graph import RecordingGraph


def open_run(graph: Graph, run_id: str, kind: str, started: str) -> None:
    graph.write("create_run", id=run_id, kind=kind, query=f"query of {run_id}", params="{}",
                started=started, backends="{}", properties={})


@pytest.mark.integration
def test_get_runs_pages_newest_first_by_kind(client: TestClient, graph: Graph) -> None:
    for day, kind in zip(range(1, 6), ["search", "idea", "search", "search", "idea"],
                         strict=True):
        open_run(graph, f"run-{day}", kind, f"2026-11-0{day}T10:00:00Z")
    first = client.get("/runs", params={"limit": 2}).json()
    assert (first["total"], first["offset"], first["limit"]) == (5, 0, 2)
    assert [run["id"] for run in first["runs"]] == ["run-5", "run-4"]
    assert first["runs"][0] == {"id": "run-5", "kind": "idea", "query": "query of run-5",
                                "status": "running", "started": first["runs"][0]["started"],
                                "finished": None, "error": None, "results": 0}
    assert first["runs"][0]["started"].startswith("2026-11-05T10:00")
    last = client.get("/runs", params={"limit": 2, "offset": 4}).json()
    assert [run["id"] for run in last["runs"]] == ["run-1"]
    ideas = client.get("/runs", params={"kind": "idea"}).json()
    assert (ideas["total"], [run["id"] for run in ideas["runs"]]) == (2, ["run-5", "run-2"])
    assert client.get("/runs").json()["limit"] == 20


@pytest.mark.parametrize(("params", "field"), [
    ({"limit": 0}, "limit"), ({"limit": 101}, "limit"), ({"offset": -1}, "offset"),
    ({"offset": 100_001}, "offset"), ({"kind": "Search!"}, "kind"),
])
def test_get_runs_refuses_what_it_cannot_page(recording_client: TestClient,
                                              recording_graph: RecordingGraph,
                                              params: dict[str, Any], field: str) -> None:
    response = recording_client.get("/runs", params=params)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field
    assert recording_graph.names() == []  # refused before any read


def response_schema(schema: dict[str, Any], path: str) -> dict[str, Any]:
    answer = schema["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]
    return resolve(schema, answer["schema"])


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    if len(node.get("allOf", [])) == 1:  # a reference with a description of its own
        return resolve(schema, node["allOf"][0])
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return resolve(schema, schema["components"]["schemas"][name])
    return node


def property_types(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, set[str]]:
    """Each property with the JSON types it may have (a reference counts as an object)."""
    types = {}
    for name, prop in node["properties"].items():
        options = prop.get("oneOf") or prop.get("anyOf") or [prop]
        types[name] = {resolve(schema, option).get("type", "object") for option in options}
    return types


EXPECTED = {
    "/runs": {"total": "integer", "offset": "integer", "limit": "integer", "runs": "array"},
    "/runs/{run_id}": {"id": "string", "kind": "string", "status": "string",
                       "outcome": "string", "progress": "object", "seeds": "array",
                       "results": "array", "timings": "object", "tracked": "boolean"},
    "/runs/{run_id}/graph": {"run_id": "string", "theta": "number", "tau": "number",
                             "counts": "object", "nodes": "array", "edges": "array"},
    "/papers": {"q": "string", "offset": "integer", "results": "array"},
    "/papers/{paper_id}": {"id": "string", "title": "string", "year": "integer",
                           "authors": "array", "links": "object", "references": "integer",
                           "references_page": "object", "cited_by_page": "object",
                           "claims": "array"},
}


@pytest.mark.parametrize("path", list(EXPECTED))
def test_openapi_names_typed_properties(recording_client: TestClient, path: str) -> None:
    schema = recording_client.get("/schema/openapi.json").json()
    answer = response_schema(schema, path)
    assert answer.get("type") == "object" and answer.get("properties"), answer
    types = property_types(schema, answer)
    for name, kind in EXPECTED[path].items():
        assert kind in types[name], (path, name, types[name])


def test_openapi_types_the_items_of_results_and_pages(recording_client: TestClient) -> None:
    schema = recording_client.get("/schema/openapi.json").json()
    run = response_schema(schema, "/runs/{run_id}")
    result = resolve(schema, run["properties"]["results"]["items"])
    types = property_types(schema, result)
    for name in ("arxiv_id", "doi", "abstract", "venue"):
        assert "string" in types[name]
    assert types["year"] >= {"integer"} and types["authors"] == {"array"}
    assert types["links"] == {"object"}
    listing = resolve(schema, response_schema(schema, "/runs")["properties"]["runs"]["items"])
    assert {"id", "kind", "status", "started", "results"} <= set(listing["properties"])
    paper = response_schema(schema, "/papers/{paper_id}")
    page = resolve(schema, paper["properties"]["cited_by_page"])
    linked = resolve(schema, page["properties"]["papers"]["items"])
    assert set(linked["properties"]) == {"id", "title", "year", "links"}


def leave_run_open(graph: Graph, run_id: str, owner: str | None, beat_age_s: int | None,
                   started_age_s: int = 0) -> None:
    """A Run 'running' as another process left it: its owner and how long ago it last beat
    (None: a Run with no heartbeat at all, as servers before heartbeats wrote them)."""
    beat = "" if beat_age_s is None else \
        ", r.heartbeat = datetime() - duration({seconds: $beat_age})"
    with graph.driver.session(database=graph.database) as session:
        session.run(
            "CREATE (r:Run {id: $id, kind: 'search', query: 'q', params: '{}', "
            "backends: '{}', status: 'running', "
            "started: datetime() - duration({seconds: $started_age})}) "
            "SET r.owner = $owner" + beat,
            id=run_id, owner=owner, beat_age=beat_age_s, started_age=started_age_s).consume()


def run_statuses(graph: Graph) -> dict[str, tuple[str, str | None]]:
    with graph.driver.session(database=graph.database) as session:
        return {row["id"]: (row["status"], row["error"]) for row in session.run(
            "MATCH (r:Run) RETURN r.id AS id, r.status AS status, r.error AS error")}


@pytest.mark.integration
def test_start_up_closes_only_the_runs_whose_owner_is_gone(api_settings: Settings,
                                                           graph: Graph) -> None:
    leave_run_open(graph, "alive-1", "server-a", beat_age_s=5)
    leave_run_open(graph, "alive-2", "server-a", beat_age_s=0)
    leave_run_open(graph, "gone-1", "server-b", beat_age_s=3600)
    leave_run_open(graph, "no-beat", None, beat_age_s=None, started_age_s=7200)
    with TestClient(create_app(api_settings, graph=graph)) as fresh:
        fresh.headers["X-API-Key"] = API_KEY
        statuses = run_statuses(graph)
        assert statuses["alive-1"] == ("running", None), "a live server's run was closed"
        assert statuses["alive-2"] == ("running", None)
        assert statuses["gone-1"] == ("failed", STALE_RUN)
        assert statuses["no-beat"] == ("failed", STALE_RUN)
        assert fresh.get("/runs/alive-1").json()["status"] == "running"
    assert 5 < api_settings.api.stale_run_after_s < 3600  # the bound the test relies on
