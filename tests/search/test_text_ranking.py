"""The query's own text ranking on a real graph: stored embeddings join BM25 through the
vector index and the fusion; without vectors, or without the index, BM25 alone."""

import pytest

from crase.errors import PaperVectorsMismatch
from crase.graph import Graph
from crase.ingest.paper_vectors import load_or_build_index, store_paper_vectors
from crase.models.minilm import NumpyBertEncoder
from crase.models.paper_encoders import ENCODER_NAMES
from crase.search.text_ranking import (
    BM25_WEIGHT,
    MAX_QUERY_OCCURRENCES,
    MAX_QUERY_TERMS,
    check_vector_encoder,
    escape_lucene,
    fuse,
    has_searchable_word,
    query_hits,
    search_hits,
    vector_hits,
)
from tests.sample_slice import load_sample_slice

pytestmark = pytest.mark.integration

QUERY = "tachyon condensation on unstable D-branes"


@pytest.fixture(scope="module")
def encoder() -> NumpyBertEncoder:
    return NumpyBertEncoder()


def test_vectors_join_bm25_through_the_fusion(graph: Graph, encoder: NumpyBertEncoder,
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
        graph: Graph, encoder: NumpyBertEncoder) -> None:
    load_sample_slice(graph, 30)
    with graph.driver.session() as session:
        session.run("DROP INDEX paper_embedding IF EXISTS").consume()
    try:
        hits = query_hits(graph, encoder, QUERY, 10, [])
        assert [h.id for h in hits] == [h.id for h in search_hits(graph, QUERY, 10, [])]
    finally:
        graph.apply_schema()


# Lucene's boolean operators, alone or left dangling, failed the whole query (a 500 of
# GET /papers); every input here is searched as plain words.
OPERATOR_QUERIES = ["AND", "NOT", "OR", "black OR", "AND NOT x", "Tachyon AND", "NOT NOT",
                    "and or not", "&&", "||", "a && b", "x ||", "!x", "+tachyon -brane",
                    "OR tachyon AND", "tachyon~2", "title:tachyon", "[a TO b]", "\\"]
NO_WORDS = ["", "   ", "*", "***", "/.*/", "&& ||", "?", "\\", '"" ()', "- + !"]


@pytest.mark.parametrize("text, expected", [
    ("AND", "and"), ("black OR", "black or"), ("AND NOT x", "and not x"),
    ("Or nOt And", "or not and"), ("NOT", "not"),
    ("a && b || c", "a \\&\\& b \\|\\| c"), ("  Tachyon \n D-branes ", "Tachyon D\\-branes"),
])
def test_operators_become_words(text: str, expected: str) -> None:
    assert escape_lucene(text) == expected


@pytest.mark.parametrize("text", NO_WORDS)
def test_text_without_a_word(text: str) -> None:
    assert not has_searchable_word(text)


def test_words_of_every_script_are_searchable() -> None:
    assert all(has_searchable_word(t) for t in ["x", "N=4", "黑洞", "Schrödinger", "42"])


def test_a_long_query_keeps_only_the_terms_lucene_accepts() -> None:
    words = [f"w{i}" for i in range(2000)]
    escaped = escape_lucene(" ".join(words)).split()
    assert escaped == words[:MAX_QUERY_TERMS]
    # A repeat is a clause again: the query ends at MAX_QUERY_OCCURRENCES terms in all.
    assert escape_lucene("brane " * 1000).split() == ["brane"] * MAX_QUERY_OCCURRENCES
    # A word of many terms is cut inside: ideographs and hyphenated parts are terms each.
    ideographs = "".join(chr(0x4E00 + i) for i in range(2000))
    assert escape_lucene("x " + ideographs) == "x " + ideographs[:MAX_QUERY_TERMS - 1]
    parts = escape_lucene("-".join(f"a{i}" for i in range(1000))).split("\\-")
    assert parts[:MAX_QUERY_TERMS] == [f"a{i}" for i in range(MAX_QUERY_TERMS)]
    assert parts[MAX_QUERY_TERMS:] in ([], [""])


def test_operator_queries_search_as_words(graph: Graph) -> None:
    load_sample_slice(graph, 60)
    for text in OPERATOR_QUERIES:
        search_hits(graph, text, 10, [])  # no Lucene parse error
    assert [h.id for h in search_hits(graph, "tachyon AND", 10, [])] == \
        [h.id for h in search_hits(graph, "tachyon and", 10, [])]
    assert search_hits(graph, "Tachyon OR", 10, []), "the word still finds papers"


def test_text_without_words_finds_nothing(graph: Graph, encoder: NumpyBertEncoder,
                                          tmp_path) -> None:  # type: ignore[no-untyped-def]
    load_sample_slice(graph, 30)
    index = load_or_build_index(graph, encoder, tmp_path)
    store_paper_vectors(graph, index, encoder.name)
    graph.read("await_indexes", seconds=60)
    for text in NO_WORDS:
        assert search_hits(graph, text, 10, []) == []
        # Not even the nearest vectors of punctuation: no word, no hits.
        assert query_hits(graph, encoder, text, 10, []) == []


def test_queries_past_the_clause_limit_still_search(graph: Graph) -> None:
    load_sample_slice(graph, 30)
    many = " ".join(f"tachyon{i}" for i in range(2000)) + " tachyon"
    assert search_hits(graph, many, 10, []) == []  # cut at MAX_QUERY_TERMS, no error
    assert search_hits(graph, "tachyon " + many, 10, [])
    search_hits(graph, "".join(chr(0x4E00 + i) for i in range(2000)), 10, [])  # ideographs
    search_hits(graph, "x" + "".join(chr(0x1F300 + i) for i in range(700)), 10, [])  # emoji
    search_hits(graph, "-".join(f"a{i}" for i in range(1500)), 10, [])  # one word, many terms
    # A repeated term is a clause each time: 5,000 of one word was refused (a 500).
    assert search_hits(graph, "tachyon " * 5_000, 10, [])
    search_hits(graph, "\\[ x" * 5_000, 10, [])


def test_vectors_of_another_encoder_are_refused_until_re_embedded(
        graph: Graph, encoder: NumpyBertEncoder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    load_sample_slice(graph, 30)
    index = load_or_build_index(graph, encoder, tmp_path)
    # The same vectors stored under the int8 encoder's name: a query of the numpy encoder
    # must not be compared with them.
    store_paper_vectors(graph, index, ENCODER_NAMES["onnx-int8"])
    graph.read("await_indexes", seconds=60)
    with pytest.raises(PaperVectorsMismatch) as caught:
        query_hits(graph, encoder, QUERY, 10, [])
    message = str(caught.value)
    assert "\n" not in message
    assert ENCODER_NAMES["onnx-int8"] in message and "crase embed" in message
    assert "CRASE_MODELS__PAPER_ENCODER=onnx-int8" in message
    # Re-embedding with the query's encoder replaces every vector of the other one.
    assert store_paper_vectors(graph, index, encoder.name) == 30
    graph.read("await_indexes", seconds=60)
    assert vector_hits(graph, encoder, QUERY, 10, [])


def test_the_encoder_check_names_what_is_stored() -> None:
    check_vector_encoder({"all-MiniLM-L6-v2"}, "all-MiniLM-L6-v2")
    check_vector_encoder(set(), "all-MiniLM-L6-v2")  # no hits, nothing compared
    with pytest.raises(PaperVectorsMismatch, match="PAPER_ENCODER=numpy"):
        check_vector_encoder({"all-MiniLM-L6-v2", ENCODER_NAMES["onnx-int8"]},
                             ENCODER_NAMES["onnx-int8"])
    with pytest.raises(PaperVectorsMismatch, match=r"\(unnamed\)") as caught:
        check_vector_encoder({None}, "all-MiniLM-L6-v2")
    assert "PAPER_ENCODER" not in str(caught.value)  # no setting gives an unnamed encoder
