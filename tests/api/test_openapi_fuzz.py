"""Property-based run of schemathesis against the app's own OpenAPI schema, through the
ASGI app, with a valid key: for every operation, valid inputs (positive mode) and invalid
ones (negative mode); whatever it sends, no answer may be a 5xx.

(The schema is loaded inside the test: `schemathesis.pytest.from_fixture` of schemathesis
4.32 reads a private pytest attribute that pytest 9 no longer has.)
"""

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from litestar.testing import TestClient
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from crase.api.app import create_app
from crase.graph import Graph
from crase.settings import Settings
from tests.api.conftest import API_KEY

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EXAMPLES_PER_OPERATION = 20
OPERATIONS = {
    "POST /searches", "GET /runs/{run_id}", "GET /runs/{run_id}/graph",
    "POST /runs/{run_id}/cancel", "GET /runs/{run_id}/export", "GET /papers",
    "GET /papers/{paper_id}", "POST /papers/batch", "POST /analyst/cypher", "GET /health",
    "POST /ideas", "GET /ideas/{run_id}/audit",
}


@pytest.fixture
def app_schema(api_settings: Settings, graph: Graph) -> Iterator[schemathesis.BaseSchema]:
    app = create_app(api_settings, graph=graph)
    with TestClient(app):  # runs start-up and shut-down (cancels the searches it started)
        yield schemathesis.openapi.from_asgi("/schema/openapi.json", app)


def operations(schema: schemathesis.BaseSchema) -> list[schemathesis.APIOperation]:
    return [result.ok() for result in schema.get_all_operations()]


def test_the_schema_lists_every_endpoint(app_schema: schemathesis.BaseSchema) -> None:
    found = {f"{op.method.upper()} {op.path}" for op in operations(app_schema)}
    assert found == OPERATIONS


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_request_gets_a_server_error(app_schema: schemathesis.BaseSchema,
                                        mode: GenerationMode) -> None:
    for operation in operations(app_schema):
        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def call(case: schemathesis.Case) -> None:
            case.call_and_validate(headers={"X-API-Key": API_KEY}, checks=[not_a_server_error])

        call()
