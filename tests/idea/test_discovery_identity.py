"""Idea discovery resolves a record's DOI and arXiv id through crase.paper_identity: one
key per identifier, so any spelling finds the corpus paper, and an arXiv DOI finds the
paper stored under its arXiv id."""

import pytest

from crase.graph import Graph
from crase.idea.discovery import find_by_identifier

pytestmark = pytest.mark.integration


@pytest.fixture
def corpus(graph: Graph) -> Graph:
    with graph.driver.session(database=graph.database) as session:
        session.run("CREATE (:Paper {id: '2101.01234', title: 'A', arxiv_id: '2101.01234'}), "
                    "(:Paper {id: '9711200', title: 'B', arxiv_id: 'hep-th/9711200', "
                    "doi: '10.1023/a:1026654312961'})").consume()
    return graph


@pytest.mark.parametrize(("doi", "arxiv_id", "found", "matched_by"), [
    ("https://doi.org/10.48550/arXiv.2101.01234", None, "2101.01234", "arxiv_id"),
    ("10.48550/ARXIV.2101.01234v2", None, "2101.01234", "arxiv_id"),
    (None, "arXiv:2101.01234v3", "2101.01234", "arxiv_id"),
    (None, "arXiv:hep-th/9711200v2", "9711200", "arxiv_id"),
    ("https://doi.org/10.1023/A:1026654312961", None, "9711200", "doi"),
])
def test_any_spelling_finds_the_corpus_paper(corpus: Graph, doi: str | None,
                                             arxiv_id: str | None, found: str,
                                             matched_by: str) -> None:
    result = find_by_identifier(corpus, doi, arxiv_id, excluded=[])
    assert result is not None
    record, how = result
    assert (record.id, how) == (found, matched_by)


def test_no_identifier_asks_nothing(corpus: Graph) -> None:
    assert find_by_identifier(corpus, None, None, excluded=[]) is None
    assert find_by_identifier(corpus, "10.1103/x.1", None, excluded=[]) is None
