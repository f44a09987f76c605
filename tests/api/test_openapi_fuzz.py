"""Property-based run of schemathesis against the app's own OpenAPI schema, through the
ASGI app, with a valid key: for every operation, valid inputs (positive mode) and invalid
ones (negative mode); whatever it sends, no answer may be a 5xx.

And what a schema-driven generator never sends: JSON nested 10,000 deep and integers of
5,000 digits (past what Python, msgspec and Neo4j take), as the whole body of every POST
route and in place of each field the schema names (explicit cases), and in place of any
value of a schema-valid body (a hypothesis strategy). The poisons are spliced into the
JSON text, since Python cannot write them itself.

The generated requests (marker `fuzz`) run only under `make fuzz`, which sets
CRASE_FUZZ_EXAMPLES: fresh seeds and that many examples per route and mode (2,000 by
default); what it finds becomes a fixed case in test_fuzz_regressions.py. Without the
variable they are deselected (tests/conftest.py); CRASE_FUZZ_EXAMPLES=0 runs them
derandomised, 20 examples per route and mode. `make test` keeps the fixed cases: the
schema's list of routes, and the poisons in every field the schema names.

(The schema is loaded inside the test: `schemathesis.pytest.from_fixture` of schemathesis
4.32 reads a private pytest attribute that pytest 9 no longer has.)
"""

import copy
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from crase.api.app import create_app
from crase.graph import Graph
from crase.settings import Settings
from tests.api.conftest import API_KEY

# Exploration (`make fuzz`) when set: fresh seeds and this many examples per route.
EXPLORE_EXAMPLES = int(os.environ.get("CRASE_FUZZ_EXAMPLES") or 0)
EXAMPLES_PER_OPERATION = EXPLORE_EXAMPLES or 20
# A first call may load the sentence encoder on a busy machine; slowness is not what this
# test judges, a 5xx is.
REQUEST_TIMEOUT_S = 120.0
OPERATIONS = {
    "POST /searches", "GET /runs/{run_id}", "GET /runs/{run_id}/graph",
    "POST /runs/{run_id}/cancel", "GET /runs/{run_id}/export", "GET /papers",
    "GET /papers/{paper_id}", "POST /papers/batch", "POST /analyst/cypher", "GET /health",
    "POST /ideas", "GET /ideas/{run_id}/audit", "GET /runs",
    "POST /evolution", "POST /citation-gaps", "POST /landscape",
    "POST /code-extract", "POST /validation/exports", "POST /validation/{export_id}/labels",
    "POST /validation/{export_id}/report", "POST /entailment-data", "GET /connections",
}


@pytest.fixture
def app_client(api_settings: Settings, graph: Graph) -> Iterator[TestClient]:
    # The client runs start-up and shut-down (which cancels the searches the fuzz started).
    with TestClient(create_app(api_settings, graph=graph)) as client:
        client.headers["X-API-Key"] = API_KEY
        yield client


@pytest.fixture
def app_schema(app_client: TestClient) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_asgi("/schema/openapi.json", app_client.app)


def operations(schema: schemathesis.BaseSchema) -> list[schemathesis.APIOperation]:
    return [result.ok() for result in schema.get_all_operations()]


def test_the_schema_lists_every_endpoint(recording_client: TestClient) -> None:
    schema = schemathesis.openapi.from_asgi("/schema/openapi.json", recording_client.app)
    assert {label(op) for op in operations(schema)} == OPERATIONS


def fuzz_settings() -> settings:
    """Derandomised under `make test`; fresh seeds when exploring."""
    return settings(max_examples=EXAMPLES_PER_OPERATION, derandomize=not EXPLORE_EXAMPLES,
                    deadline=None, database=None, suppress_health_check=list(HealthCheck))


def label(operation: schemathesis.APIOperation) -> str:
    return f"{operation.method.upper()} {operation.path}"


def operation_named(schema: schemathesis.BaseSchema, name: str) -> schemathesis.APIOperation:
    return next(op for op in operations(schema) if label(op) == name)


def report_examples(capsys: pytest.CaptureFixture[str], test: str, count: int) -> None:
    """When exploring, how many examples a route ran (the closing count of `make fuzz`)."""
    if EXPLORE_EXAMPLES:
        with capsys.disabled():
            print(f"\nfuzz: {test}: {count} examples")


def cancel_started_run(client: TestClient, response: Any) -> None:
    """A run the fuzz started is cancelled at once: its answer is all this test judges, and
    a queue of thousands of searches would only slow the next calls."""
    if response.status_code == 202:
        run_id = response.json().get("run_id")
        if isinstance(run_id, str):
            client.post(f"/runs/{run_id}/cancel")


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.fuzz
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_no_request_gets_a_server_error(app_client: TestClient,
                                        app_schema: schemathesis.BaseSchema, name: str,
                                        mode: GenerationMode,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    calls = []

    @given(case=operation_named(app_schema, name).as_strategy(generation_mode=mode))
    @fuzz_settings()
    def call(case: schemathesis.Case) -> None:
        calls.append(1)
        response = case.call_and_validate(headers={"X-API-Key": API_KEY},
                                          checks=[not_a_server_error],
                                          timeout=REQUEST_TIMEOUT_S)
        cancel_started_run(app_client, response)

    call()
    report_examples(capsys, f"{name} ({mode.value})", len(calls))


# --- deep nesting and huge numbers ----------------------------------------------------------

POISONS = {
    "10,000-deep array": "[" * 10_000 + "]" * 10_000,
    "10,000-deep object": '{"a":' * 10_000 + "null" + "}" * 10_000,
    "5,000-digit integer": "1" + "0" * 4_999,
    "negative 5,000-digit integer": "-" + "9" * 5_000,
    "31-digit integer": "1" + "0" * 30,  # decodes, but is past 64 bits
    "1e400": "1e400",
}
MARK = "__poison__"
# A body each POST route accepts, which the poison is put into (a new POST route must be
# listed here, or the test below fails).
VALID_BODIES: dict[str, dict[str, Any]] = {
    "/searches": {"query": "tachyon condensation", "params": {"k": 5}},
    "/papers/batch": {"papers": [{"id": "p1", "title": "T"}],
                      "citations": [{"citing_id": "p1", "cited_id": "p1"}]},
    "/analyst/cypher": {"query": "RETURN $x AS x", "params": {"x": 1}},
    "/ideas": {"idea": "Tachyon condensation on unstable D-branes"},
    "/evolution": {"topic": "tachyon condensation", "max_papers": 10},
    "/citation-gaps": {"draft": "Tachyon condensation on unstable D-branes."},
    "/landscape": {"topic": "tachyon condensation", "limit": 5},
    "/code-extract": {"filename": "m.md", "text": "```python\nx = 1\n```"},
    "/validation/exports": {"source": "corpus", "edges": 2},
    "/validation/{export_id}/labels": {"annotator": "A", "labels": {"E01": "retain"}},
    "/entailment-data": {"pairs": [{"sentence1": "a", "sentence2": "b",
                                    "label": "entailment"}]},
}
Path = tuple[str | int, ...]


def post_bodies(client: TestClient) -> dict[str, dict[str, Any]]:
    """Each POST route that takes a body, with its request schema (references resolved)."""
    spec = client.get("/schema/openapi.json").json()
    bodies = {}
    for route, operations in spec["paths"].items():
        body = operations.get("post", {}).get("requestBody")
        if body:
            bodies[route] = resolve(body["content"]["application/json"]["schema"], spec)
    return bodies


def resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        return resolve(spec["components"]["schemas"][schema["$ref"].split("/")[-1]], spec)
    for alternative in schema.get("oneOf", []):
        if alternative.get("type") != "null":
            return {**resolve(alternative, spec), "description": schema.get("description")}
    return {**schema, **({"properties": {name: resolve(sub, spec) for name, sub in
                                         schema["properties"].items()}}
                         if "properties" in schema else {}),
            **({"items": resolve(schema["items"], spec)} if "items" in schema else {})}


def schema_paths(schema: dict[str, Any], prefix: Path = (), depth: int = 2) -> list[Path]:
    """The whole body, each property (two levels down), each array's first item and a
    free-form object's key `x`."""
    found = [prefix]
    if depth == 0:
        return found
    for name, sub in schema.get("properties", {}).items():
        found += schema_paths(sub, (*prefix, name), depth - 1)
    if "items" in schema:
        found += schema_paths(schema["items"], (*prefix, 0), depth - 1)
    if schema.get("additionalProperties") is not None and not schema.get("properties"):
        found.append((*prefix, "x"))
    return found


def value_paths(value: Any, prefix: Path = ()) -> list[Path]:
    """Every position in a JSON value."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += value_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += value_paths(item, (*prefix, index))
    return found


def poisoned(body: Any, path: Path, poison: str) -> str:
    """The JSON text of `body` with the value at `path` replaced by the poison's text."""
    if not path:
        return poison
    copied = copy.deepcopy(body)
    holder = copied
    for step in path[:-1]:
        holder = holder.setdefault(step, {}) if isinstance(holder, dict) else holder[step]
    last = path[-1]
    if isinstance(holder, list) and isinstance(last, int) and last >= len(holder):
        holder.append(MARK)
    else:
        holder[last] = MARK
    return json.dumps(copied).replace(json.dumps(MARK), poison)


def post(client: TestClient, route: str, text: str) -> tuple[int, str]:
    response = client.post(route, content=text, headers={"Content-Type": "application/json"})
    return response.status_code, response.text[:300]


def test_every_post_route_has_a_valid_body_to_poison(recording_client: TestClient) -> None:
    assert set(post_bodies(recording_client)) == set(VALID_BODIES)


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("poison", list(POISONS), ids=list(POISONS))
def test_deep_nesting_and_huge_numbers_in_every_field_are_no_server_error(
        app_client: TestClient, poison: str) -> None:
    failures = []
    for route, schema in post_bodies(app_client).items():
        for path in schema_paths(schema):
            status, text = post(app_client, route, poisoned(VALID_BODIES[route], path,
                                                            POISONS[poison]))
            if status >= 500 or (not path and status != 400):
                failures.append((route, path, status, text))
    assert failures == []


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.fuzz
@pytest.mark.parametrize("route", sorted(VALID_BODIES))
def test_poison_anywhere_in_a_schema_valid_body_is_no_server_error(
        app_client: TestClient, app_schema: schemathesis.BaseSchema, route: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    calls = []

    @given(case=operation_named(app_schema, f"POST {route}").as_strategy(
               generation_mode=GenerationMode.POSITIVE),
           choice=st.integers(min_value=0), poison=st.sampled_from(list(POISONS.values())))
    @fuzz_settings()
    def call(case: schemathesis.Case, choice: int, poison: str) -> None:
        calls.append(1)
        paths = value_paths(case.body)
        path = paths[choice % len(paths)]
        response = app_client.post(case.formatted_path, content=poisoned(case.body, path, poison),
                                   headers={"Content-Type": "application/json"})
        assert response.status_code < 500, (case.formatted_path, path, response.text[:300])
        cancel_started_run(app_client, response)

    call()
    report_examples(capsys, f"POST {route} (poison anywhere)", len(calls))
