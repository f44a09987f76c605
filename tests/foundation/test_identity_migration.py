"""`crase db migrate` on a graph loaded before the identity rules: one node per work,
arXiv ids in one spelling, citations and run links kept; a second run changes nothing."""

import pytest

from crase.api.cli import main
from crase.graph import Graph
from crase.identity_migration import migrate_paper_identities

pytestmark = pytest.mark.integration

PAPERS = [
    # One work twice: OpenAlex's node by arXiv id, the S2 dataset's by its arXiv DOI.
    {"id": "2101.01234", "title": "A", "arxiv_id": "arXiv:2101.01234v2", "year": 2021},
    {"id": "doi:10.48550/arxiv.2101.01234", "title": "A", "doi": "10.48550/arxiv.2101.01234",
     "s2_id": "s2a", "abstract": "from S2"},
    # Keyed by its arXiv DOI, with no other node: renamed.
    {"id": "doi:10.48550/arxiv.hep-th/9901001", "title": "B",
     "doi": "10.48550/arxiv.hep-th/9901001"},
    {"id": "9711200", "title": "C", "arxiv_id": "hep-th/9711200v3"},
    {"id": "doi:10.1103/x.1", "title": "D", "doi": "10.1103/x.1"},
]
EDGES = [("doi:10.48550/arxiv.2101.01234", "9711200"), ("9711200", "2101.01234"),
         ("doi:10.1103/x.1", "doi:10.48550/arxiv.2101.01234"),
         ("doi:10.48550/arxiv.hep-th/9901001", "doi:10.1103/x.1")]


def load(graph: Graph) -> None:
    with graph.driver.session(database=graph.database) as session:
        session.run("UNWIND $rows AS r CREATE (p:Paper) SET p = r", rows=PAPERS).consume()
        session.run("UNWIND $edges AS e MATCH (a:Paper {id: e[0]}), (b:Paper {id: e[1]}) "
                    "CREATE (a)-[:CITES {delta: 0.5}]->(b)", edges=EDGES).consume()
        session.run("CREATE (r:Run {id: 'r1'}) WITH r MATCH (p:Paper "
                    "{id: 'doi:10.48550/arxiv.2101.01234'}) CREATE (r)-[:RETURNED {rank: 1}]->(p)"
                    ).consume()


def state(graph: Graph) -> tuple[dict[str, dict[str, object]], set[tuple[str, str]]]:
    with graph.driver.session(database=graph.database) as session:
        papers = {row["p"]["id"]: dict(row["p"]) for row in
                  session.run("MATCH (p:Paper) RETURN p").data()}
        edges = {(row["a"], row["b"]) for row in session.run(
            "MATCH (a:Paper)-[:CITES]->(b:Paper) RETURN a.id AS a, b.id AS b").data()}
    return papers, edges


def test_a_work_known_by_its_arxiv_id_and_its_arxiv_doi_becomes_one_node(graph: Graph) -> None:
    load(graph)
    report = migrate_paper_identities(graph)
    papers, edges = state(graph)
    assert sorted(papers) == ["2101.01234", "9711200", "doi:10.1103/x.1", "hep-th/9901001"]
    merged = papers["2101.01234"]
    assert merged["arxiv_id"] == "2101.01234" and merged["s2_id"] == "s2a"
    assert merged["abstract"] == "from S2" and merged["doi"] == "10.48550/arxiv.2101.01234"
    assert papers["hep-th/9901001"]["arxiv_id"] == "hep-th/9901001"
    assert papers["9711200"]["arxiv_id"] == "hep-th/9711200"
    assert edges == {("2101.01234", "9711200"), ("9711200", "2101.01234"),
                     ("doi:10.1103/x.1", "2101.01234"), ("hep-th/9901001", "doi:10.1103/x.1")}
    returned = graph.driver.execute_query(
        "MATCH (:Run {id: 'r1'})-[x:RETURNED]->(p) RETURN p.id AS id, x.rank AS rank",
        database_=graph.database).records
    assert [(r["id"], r["rank"]) for r in returned] == [("2101.01234", 1)]
    assert (report.rekeyed, report.merged) == (1, 1)

    again = migrate_paper_identities(graph)
    assert (again.arxiv_ids, again.rekeyed, again.merged) == (0, 0, 0)
    assert state(graph) == (papers, edges)


def test_the_command_says_what_it_changed(graph: Graph, cli_env: object,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    load(graph)
    assert main(["db", "migrate"]) == 0
    assert "1 second nodes of a work merged" in capsys.readouterr().out
