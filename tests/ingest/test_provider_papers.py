"""Papers and their neighbours from Semantic Scholar into the graph: new papers created,
known ones matched by arXiv id and only filled in, truncation and null abstracts reported."""

import asyncio
from collections.abc import Iterator

import pytest

from crase.api.cli import main
from crase.graph import Graph
from crase.ingest.provider_papers import ProviderLoadReport, add_papers_from_semantic_scholar
from crase.ingest.semantic_scholar import SemanticScholarClient
from crase.settings import DatabaseSettings, ProviderSettings
from tests.ingest.replay_server import ReplayServer, Reply, fixture

pytestmark = pytest.mark.integration
CENTRE = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer().running() as running:
        yield running


def test_papers_and_neighbours_are_merged(graph: Graph, server: ReplayServer,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with graph.driver.session(database=graph.database) as session:
        session.run("CREATE (:Paper {id: '0101001', arxiv_id: 'hep-th/0101001', "
                    "title: 'Corpus title', abstract: 'Corpus abstract', year: 2001}), "
                    "(:Paper {id: '9501000', arxiv_id: 'hep-th/9501000', title: 'Old one'})"
                    ).consume()
    monkeypatch.setattr("crase.ingest.semantic_scholar.PAGE_SIZE", 4)
    monkeypatch.setattr("crase.ingest.semantic_scholar.NEIGHBOUR_CAP", 10)
    server.add("POST", "paper/batch", Reply.json(fixture("paper_batch.json")))
    server.add("GET", f"paper/{CENTRE}/references",
               Reply(paged=fixture("references.json")["data"]))
    server.add("GET", f"paper/{CENTRE}/citations",
               Reply(paged=fixture("citations.json")["data"], cap=10))
    settings = ProviderSettings(semantic_scholar_url=server.url, requests_per_second=100,
                                max_retries=1, backoff_base_s=0.01)

    async def add() -> ProviderLoadReport:
        async with SemanticScholarClient(settings) as client:
            return await add_papers_from_semantic_scholar(
                graph, client, ["arXiv:hep-th/0101001", "CorpusId:1", "nope"])

    report = asyncio.run(add())
    assert report.not_found == ["nope"]
    assert report.papers_enriched == 2
    assert report.papers_created == 1 + 5 + 10
    assert report.citations_written == 6 + 10
    assert report.truncated == [f"{CENTRE} citations"]
    assert report.unresolved_neighbours == 1
    assert sorted(report.null_abstracts) == ["s2:b2c3d4e5f60718293a4b5c6d7e8f901234567890",
                                             "s2:c000000400000000000000000000000000000000"]

    with graph.driver.session(database=graph.database) as session:
        known = session.run("MATCH (p:Paper {id: '0101001'}) RETURN p").single(strict=True)["p"]
        cited = session.run("MATCH (:Paper {id: '0101001'})-[:CITES]->(q) "
                            "RETURN collect(q.id) AS ids").single(strict=True)["ids"]
        citing = session.run("MATCH (q)-[:CITES]->(:Paper {id: '0101001'}) "
                             "RETURN count(q) AS n").single(strict=True)["n"]
    assert known["title"] == "Corpus title" and known["abstract"] == "Corpus abstract"
    assert known["s2_id"] == CENTRE and known["doi"] == "10.9999/wb.2001.7"
    assert "9501000" in cited and len(cited) == 6 and citing == 10

    # Asking again changes nothing in the graph.
    again = asyncio.run(add())
    assert again.papers_created == 0 and again.papers_enriched == 18


def test_fetch_command(graph: Graph, server: ReplayServer, database_settings: DatabaseSettings,
                       monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CRASE_DATABASE__URI", database_settings.bolt_uri())
    monkeypatch.setenv("CRASE_DATABASE__PASSWORD", database_settings.password or "")
    monkeypatch.setenv("CRASE_PROVIDERS__SEMANTIC_SCHOLAR_URL", server.url)
    monkeypatch.setenv("CRASE_PROVIDERS__REQUESTS_PER_SECOND", "100")
    assert main(["fetch", "CorpusId:1"]) == 2
    assert "CRASE_PROVIDERS__ENABLED" in capsys.readouterr().err

    monkeypatch.setenv("CRASE_PROVIDERS__ENABLED", "true")
    server.add("POST", "paper/batch", Reply.json(fixture("paper_batch.json")[1:]))
    assert main(["fetch", "CorpusId:1", "nope", "--no-neighbours"]) == 0
    out = capsys.readouterr().out
    assert "1 of 2 papers found" in out and "not found  nope" in out
    assert "1 new papers without one" in out
    assert not server.seen("paper/b2c3d4e5f60718293a4b5c6d7e8f901234567890/references")
