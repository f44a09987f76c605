"""The literature routes (POST /evolution, /citation-gaps, /landscape) against poisoned
bodies and hostile input, each over a small slice of the sample of its own (the tests over
the whole sample, loaded once, are in test_citation_gaps.py)."""

import json
from typing import Any

import pytest

from crase import bibtex
from crase.graph import Graph
from crase.settings import Settings
from tests.api.test_openapi_fuzz import POISONS, poisoned, post, post_bodies, schema_paths
from tests.research.test_citation_gaps import client_for
from tests.sample_slice import load_sample_slice

pytestmark = pytest.mark.integration


# A body each literature route accepts; the fuzz test's poisons go into each of its fields.
LITERATURE_BODIES: dict[str, dict[str, Any]] = {
    "/evolution": {"topic": "tachyon condensation", "max_papers": 10,
                   "paths": [{"source": "a", "target": "b"}],
                   "reference_list": [{"title": "Tachyon condensation", "year": 2000}]},
    "/citation-gaps": {"draft": "Tachyon condensation on unstable D-branes.",
                       "bibtex": "@article{k, title = {Tachyons}}", "cited_ids": ["x"],
                       "pool": 3},
    "/landscape": {"topic": "tachyon condensation", "limit": 5},
}


def test_the_literature_routes_give_no_server_error_for_poisoned_bodies(
        graph: Graph, settings: Settings) -> None:
    load_sample_slice(graph, 40)
    with client_for(settings, graph) as client:
        bodies = post_bodies(client)
        failures = []
        for route, body in LITERATURE_BODIES.items():
            assert post(client, route, json.dumps(body))[0] == 200, route
            refused = client.post(route, json=body, headers={"X-API-Key": "not-a-key"})
            assert refused.status_code == 401, route
            for path in schema_paths(bodies[route]):
                for name, poison in POISONS.items():
                    status, text = post(client, route, poisoned(body, path, poison))
                    if status >= 500 or (not path and status != 400):
                        failures.append((route, path, name, status, text))
    assert failures == []


def test_the_route_refuses_bad_cited_ids_and_hostile_bibtex_with_4xx(
        graph: Graph, settings: Settings) -> None:
    load_sample_slice(graph, 10)
    draft = "Tachyon condensation on unstable D-branes."
    with client_for(settings, graph) as client:
        for ids in ([""], ["x" * 1001]):
            response = client.post("/citation-gaps", json={"draft": draft, "cited_ids": ids})
            assert response.status_code in (400, 422), (ids, response.text)
            assert "cited_ids" in response.text
        hostile = "@article{k, title = {" + "x" * bibtex.MAX_LINE_CHARS + "}}"
        response = client.post("/citation-gaps", json={"draft": draft, "bibtex": hostile})
        assert response.status_code == 422, response.text
        assert "line 1 of the BibTeX" in response.json()["detail"]
