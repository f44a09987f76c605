"""The query's own text ranking on a real graph: stored embeddings join BM25 through the
vector index and the fusion; without vectors, or without the index, BM25 alone."""

import pytest

from crase.graph import Graph
from crase.ingest.paper_vectors import load_or_build_index, store_paper_vectors
from crase.models.minilm import MiniLmEncoder
from crase.search.text_ranking import (
    BM25_WEIGHT,
    fuse,
    query_hits,
    search_hits,
    vector_hits,
)
from tests.sample_slice import load_sample_slice

pytestmark = pytest.mark.integration

QUERY = "tachyon condensation on unstable D-branes"


@pytest.fixture(scope="module")
def encoder() -> MiniLmEncoder:
    return MiniLmEncoder()


def test_vectors_join_bm25_through_the_fusion(graph: Graph, encoder: MiniLmEncoder,
                                              tmp_path) -> None:  # type: ignore[no-untyped-def]
    load_sample_slice(graph, 60)
    lexical = query_hits(graph, encoder, QUERY, 20, [])
    assert [h.id for h in lexical] == [h.id for h in search_hits(graph, QUERY, 20, [])]

    index = load_or_build_index(graph, encoder, tmp_path)
    assert store_paper_vectors(graph, index, encoder.name) == 60
    assert store_paper_vectors(graph, index, encoder.name) == 0  # already held one
    graph.read("await_indexes", seconds=60)
    excluded = [lexical[0].id]
    fused = query_hits(graph, encoder, QUERY, 20, excluded)
    dense = vector_hits(graph, encoder, QUERY, 20, excluded)
    # The index returns what the numpy index of the same vectors finds (HNSW may swap
    # near-ties, so compare as sets).
    exact = index.search(encoder.encode([QUERY])[0], 20, excluded)
    assert len({h.id for h in dense} & {paper for paper, _ in exact}) >= 18
    expected = fuse([[h.id for h in search_hits(graph, QUERY, 20, excluded)],
                     [h.id for h in dense]], [BM25_WEIGHT, 1.0])
    assert [h.id for h in fused] == [paper for paper, _ in expected][:20]
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)
    assert lexical[0].id not in {h.id for h in fused}
    assert {h.id for h in fused} - {h.id for h in lexical}, "the dense list adds papers"


def test_a_database_without_the_vector_index_searches_bm25_alone(
        graph: Graph, encoder: MiniLmEncoder) -> None:
    load_sample_slice(graph, 30)
    with graph.driver.session() as session:
        session.run("DROP INDEX paper_embedding IF EXISTS").consume()
    try:
        hits = query_hits(graph, encoder, QUERY, 10, [])
        assert [h.id for h in hits] == [h.id for h in search_hits(graph, QUERY, 10, [])]
    finally:
        graph.apply_schema()
