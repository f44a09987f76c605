"""External providers against a loopback server: availability recorded apart from routes,
Semantic Scholar search and neighbours, Crossref and arXiv verification of recalled
titles, and every route skipped with its reason when a provider does not answer."""

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crase.graph import Graph
from crase.idea.discovery import RecalledTitle, RecallOutcome, resolve_recalled
from crase.idea.identity import IdentityRegistry
from crase.idea.pipeline import run_idea
from crase.idea.providers import probe_providers
from crase.idea.request import IdeaRequest
from crase.idea.roles.protocols import IdeaBackends
from crase.ingest.provider_http import ProviderClient
from crase.settings import IdeaSettings, ProviderSettings
from tests.idea.corpus import IDEA
from tests.idea.pdfs import make_pdf, paper_pages
from tests.ingest.replay_server import ReplayServer, Reply

pytestmark = pytest.mark.integration

EXTERNAL = {"paperId": "s2-ext", "externalIds": {"ArXiv": "2203.00001"},
            "title": "Hypergraph message passing for few-shot recognition",
            "abstract": "Hypergraph neural network message passing between few labelled "
                        "support images recognises new image categories.", "year": 2022}
PROTO = {"paperId": "s2-proto", "externalIds": {"DOI": "10.5555/PROTO"},
         "title": "Prototypical Networks for Few-shot Learning", "abstract": None,
         "year": 2017}
CITING = {"paperId": "s2-citing", "externalIds": {},
          "title": "Task-specific graph structures for few-shot learning",
          "abstract": "Few-shot image classification with graph neural networks whose graph "
                      "structure adapts to each task.", "year": 2023}
ATOM = b"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <entry><title>Graph Neural Networks for
    Few-Shot Image Classification</title><published>2020-01-05T00:00:00Z</published>
  <summary>Message passing.</summary><author><name>A. Author</name></author></entry>
</feed>"""


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ReplayServer]:
    replay = ReplayServer()
    replay.add("GET", "paper/search", Reply.json({"total": 2, "offset": 0,
                                                  "data": [PROTO, EXTERNAL]}))
    for ref in ("ARXIV:1711.04043", "ARXIV:1905.01436", "ARXIV:2001.01234"):
        replay.add("GET", f"paper/{ref}/references", Reply.json({"offset": 0, "data": []}))
        replay.add("GET", f"paper/{ref}/citations",
                   Reply.json({"offset": 0, "data": [{"citingPaper": CITING}]}))
    replay.add("GET", "crossref/works/10.5555/verified", Reply.json({"message": {
        "title": ["A verified external paper on support graphs"],
        "issued": {"date-parts": [[2021]]}}}))
    replay.add("GET", "arxiv/query", Reply(body=ATOM))
    pdf = make_pdf(tmp_path / "served.pdf", paper_pages()).read_bytes()
    replay.add("GET", "pdf/2203.00001", Reply(body=pdf))
    with replay.running() as running:
        yield running


def provider_settings(base: str) -> ProviderSettings:
    return ProviderSettings(semantic_scholar_url=base, crossref_url=f"{base}/crossref",
                            arxiv_url=f"{base}/arxiv", requests_per_second=200.0,
                            timeout_s=2.0, max_retries=0, backoff_base_s=0.0)


def test_availability_is_probed_and_recorded(server: ReplayServer) -> None:
    up = probe_providers(provider_settings(server.url), 2.0, enabled=True)
    assert all(status.available for status in up.values())
    down = probe_providers(provider_settings(closed_port_url()), 2.0, enabled=True)
    assert not any(status.available for status in down.values())
    assert all("unavailable: ConnectError" in status.detail for status in down.values())
    off = probe_providers(provider_settings(server.url), 2.0, enabled=False)
    assert all(status.detail.startswith("not probed") for status in off.values())


def run_with(graph: Graph, backends: IdeaBackends, settings: ProviderSettings,
             **params: Any) -> Any:
    backends.providers = settings
    request = IdeaRequest(idea=IDEA, exclude=["src"], providers=True,
                          params=IdeaSettings(provider_probe_timeout_s=2.0, **params))
    return run_idea(graph, backends, request)


def test_provider_routes_run_and_resolve_against_the_corpus(
        corpus: Graph, offline_backends: IdeaBackends, server: ReplayServer) -> None:
    result = run_with(corpus, offline_backends, provider_settings(server.url),
                      arxiv_pdf_url=f"{server.url}/pdf")
    audit = result.audit
    routes = {route["route"]: route for route in audit["routes"]}
    assert routes["semantic_scholar_search"]["status"] == "ran"
    assert routes["semantic_scholar_search"]["records"] == 2 * len(audit["queries"])
    works = {c["paper_id"]: c for c in audit["candidates"]}
    # the search hit with the corpus paper's DOI is that paper (case-insensitive DOI)
    assert "semantic_scholar_search" in works["fs4"]["route_names"]
    resolved = [h for h in works["fs4"]["routes"] if h["route"] == "semantic_scholar_search"]
    assert resolved[0]["detail"]["resolved_by"] == "doi"
    # a hit not in the corpus stays external: in the audit, never a Paper node
    external = [c for c in audit["candidates"] if not c["in_corpus"]]
    assert {c["title"] for c in external} >= {EXTERNAL["title"]}
    with corpus.driver.session() as session:
        found = session.run("MATCH (p:Paper) WHERE p.title = $t RETURN count(p) AS n",
                            t=EXTERNAL["title"]).single()
    assert found is not None and found["n"] == 0
    gate = audit["neighbour_gate"]
    assert gate["provider"]["status"] in ("ran", "partial")
    if any(s["paper_id"] in ("fs1", "fs2", "v1") for s in gate["seeds"]):
        assert any(c["title"] == CITING["title"] for c in audit["candidates"])
    assert result.providers["semantic_scholar"]["available"]


def test_recalled_titles_are_resolved_verified_or_left_hypotheses(
        corpus: Graph, server: ReplayServer) -> None:
    settings = provider_settings(server.url)
    statuses = probe_providers(settings, 2.0, enabled=True)
    outcome = RecallOutcome("recalled", "fixture-recaller", [
        RecalledTitle("Some title", doi="10.5555/SUPPORT"),  # cite1, by DOI
        RecalledTitle("EDGE-LABELING graph neural network for few-shot learning", 2019),
        RecalledTitle("A verified external paper on support graphs", 2021,
                      doi="10.5555/verified"),
        RecalledTitle("Graph neural networks for few-shot image classification", 2020,
                      arxiv_id="2001.01234"),
        RecalledTitle("An invented paper nobody wrote", 2020),
    ])
    registry = IdentityRegistry(excluded=frozenset({"src"}))
    client = ProviderClient(settings)
    try:
        report = resolve_recalled(corpus, registry, outcome, ["src"], client, statuses)
    finally:
        client.close()
    details = report.details
    assert details[0]["resolution"] == "resolved in the corpus by doi: cite1"
    assert details[1]["resolution"] == "resolved in the corpus by title: fs2"
    assert details[2]["resolution"] == "not in the corpus; verified by crossref"
    assert details[2]["verification"]["crossref"]["status"] == "verified"
    assert details[3]["verification"]["arxiv"]["status"] == "verified"
    assert details[3]["resolution"].startswith("resolved in the corpus by arxiv_id: v")
    assert details[4]["resolution"].startswith("unresolved")
    assert details[4]["verification"]["crossref"]["status"] == "skipped"
    assert report.records == 4 and len(registry.works) == 4
    assert all(w.route_names == ["recalled"] for w in registry.works)


def test_unreachable_providers_skip_their_routes_with_the_reason(
        corpus: Graph, offline_backends: IdeaBackends) -> None:
    result = run_with(corpus, offline_backends, provider_settings(closed_port_url()))
    routes = {route["route"]: route for route in result.audit["routes"]}
    assert routes["semantic_scholar_search"]["status"] == "skipped"
    assert "unavailable" in routes["semantic_scholar_search"]["reason"]
    assert routes["recalled"]["status"] == "skipped"
    assert "offline backends recall no titles" in routes["recalled"]["reason"]
    assert result.audit["neighbour_gate"]["provider"]["status"] == "skipped"
    assert result.outcome == "partial"
    # One line for the three, not three lines saying the same.
    folded = [note for note in result.incomplete if "provider" in note]
    assert len(folded) == 1 and folded[0].startswith(
        "providers not reachable, searched the corpus only: semantic_scholar, crossref, arxiv")
    assert "--no-providers" in folded[0]
    assert not any(status["available"] for status in result.providers.values())
