"""Bulkheads (api/bulkheads.py): each heavy kind of work has its own bounded number of
requests in progress; one more is answered at once, 429 WorkBusy with Retry-After, while
GET /health and the other kinds answer. Caps per request on what is resolved. On the
recording graph: what is judged is the server's own admission, not the database's work
(the figures under load: `python -m crase.bench.bulkheads`, docs/http-api.md)."""

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.api.bulkheads import Bulkhead
from crase.errors import WorkBusy
from crase.settings import Settings
from tests.api.conftest import API_KEY, HEALTHY, api_settings_for
from tests.recording_graph import RecordingGraph

DOCUMENT = {"filename": "paper.md", "use_model": False,
            "text": "We solve it as follows.\n\n```python\nimport numpy as np\n"
                    "x = np.ones(3)\n```\n"}


def test_a_bulkhead_holds_its_size_and_refuses_one_more_at_once() -> None:
    bulkhead = Bulkhead("text_tools", "text_tools_max_in_flight", 2, 7)
    with bulkhead.slot(), bulkhead.slot():
        assert bulkhead.in_flight == 2
        started = time.monotonic()
        with pytest.raises(WorkBusy, match="2 of 2 requests of this kind") as busy, \
                bulkhead.slot():
            pass
        assert time.monotonic() - started < 0.1  # refused, not queued
        assert busy.value.retry_after_s == 7
        assert "api.text_tools_max_in_flight" in str(busy.value)
    with bulkhead.slot():  # given back on the way out
        assert bulkhead.in_flight == 1


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[TestClient, threading.Event, threading.Event]]:
    """An app with one slot per kind whose code extraction waits, inside its slot, until
    `release` is set (its Run is being opened); `entered` says it is in."""
    entered, release = threading.Event(), threading.Event()

    def open_run(_: dict[str, Any]) -> list[dict[str, Any]]:
        entered.set()
        release.wait(30)
        return []

    graph = RecordingGraph({**HEALTHY, "create_run": open_run})
    settings = api_settings_for(Settings(var_dir=tmp_path / "var"),
                                text_tools_max_in_flight=1, given_papers_max_in_flight=1,
                                busy_retry_after_s=3)
    with TestClient(create_app(settings, graph=graph)) as client:
        client.headers["X-API-Key"] = API_KEY
        yield client, entered, release
        release.set()


def test_a_busy_kind_answers_429_at_once_and_the_rest_of_the_api_answers(
        held: tuple[TestClient, threading.Event, threading.Event]) -> None:
    client, entered, release = held
    first: list[Any] = []
    worker = threading.Thread(target=lambda: first.append(
        client.post("/code-extract", json=DOCUMENT)))
    worker.start()
    assert entered.wait(30)
    started = time.monotonic()
    busy = client.post("/code-extract", json=DOCUMENT)
    assert busy.status_code == 429 and busy.headers["Retry-After"] == "3"
    assert busy.json()["error"] == "WorkBusy"
    assert "api.text_tools_max_in_flight" in busy.json()["detail"]
    assert client.get("/health").status_code == 200
    # Another kind has slots of its own: a search from a paper is resolved meanwhile.
    search = client.post("/searches", json={"query": "", "given_papers": ["Brane New World"]})
    assert search.json()["error"] == "GivenPapersUnknown"  # resolved (no rows), not busy
    assert time.monotonic() - started < 10
    release.set()
    worker.join(30)
    assert first[0].status_code == 200
    assert client.post("/code-extract", json=DOCUMENT).status_code == 200


@pytest.fixture
def app(tmp_path: Path) -> Iterator[TestClient]:
    settings = api_settings_for(Settings(var_dir=tmp_path / "var"),
                                given_papers_max_titles=3, citation_gaps_max_references=4)
    with TestClient(create_app(settings, graph=RecordingGraph(HEALTHY))) as client:
        client.headers["X-API-Key"] = API_KEY
        yield client


def test_a_search_names_at_most_the_cap_of_papers_by_title_alone(app: TestClient) -> None:
    titles = [f"A title of paper number {n}" for n in range(4)]
    refused = app.post("/searches", json={"query": "", "given_papers": titles})
    assert refused.status_code == 400 and refused.json()["error"] == "ParameterAboveServerCap"
    detail = refused.json()["detail"]
    assert "4 of the papers to start from are named by a title alone" in detail
    assert "api.given_papers_max_titles" in detail
    # Identifiers do not count against it.
    named = app.post("/searches", json={"query": "", "given_papers": [
        *titles[:3], "hep-th/0003052", "10.1000/xyz"]})
    assert named.json()["error"] == "GivenPapersUnknown"


def test_citation_gaps_resolve_at_most_the_cap_of_references(app: TestClient) -> None:
    bibtex = "\n".join(f"@misc{{k{n}, title = {{Title number {n}}}}}" for n in range(5))
    refused = app.post("/citation-gaps", json={
        "draft": "Holography relates gravity to a field theory on the boundary.",
        "bibtex": bibtex})
    assert refused.status_code == 400, refused.json()
    assert refused.json()["error"] == "ParameterAboveServerCap"
    assert "5 entries" in refused.json()["detail"]
    assert "api.citation_gaps_max_references" in refused.json()["detail"]
