"""What the schema fuzz found, kept as fixed cases: each input once got a 5xx, and every run
of the suite sends it again, whatever the fuzz's seeds draw (`make fuzz` explores; what it
finds is added here, with the route and the answer it got).
"""

from typing import Any

import pytest
from litestar.testing import TestClient

pytestmark = [pytest.mark.integration]

# name: (route, body, what it got when found)
FOUND: dict[str, tuple[str, dict[str, Any], str]] = {
    "empty cited id": (
        "/citation-gaps", {"draft": "0", "cited_ids": [""]},
        "500: an empty cited id (issue 31, item 5)"),
    "U+2028 in a citation id": ("/papers/batch", {
        "papers": [{"id": "p1", "title": "T"}],
        "citations": [{"citing_id": "p1", "cited_id": "q\u2028x"}]},
        "500: U+2028 in a citation id split the rejects file (issue 31, item 5)"),
    "U+0085 in a citation id": ("/papers/batch", {
        "papers": [{"id": "p1", "title": "T"}],
        "citations": [{"citing_id": "q\u0085x", "cited_id": "p1"}]},
        "500: U+0085 in a citation id split the rejects file (issue 31, item 5)"),
}


@pytest.mark.parametrize(("route", "body", "found"), list(FOUND.values()), ids=list(FOUND))
def test_a_fuzz_finding_is_no_server_error(client: TestClient, route: str,
                                           body: dict[str, Any], found: str) -> None:
    response = client.post(route, json=body)
    assert response.status_code < 500, (found, response.text[:300])
