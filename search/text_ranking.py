"""The query's own text ranking: Lucene BM25 over title and abstract, the nearest papers by
embedding (the `paper_embedding` vector index), and their reciprocal-rank fusion.

The fusion gives a paper at rank r of a list weight / (RRF_K + r), summed over the lists
(Cormack, Clarke and Buettcher 2009). BM25's list weighs BM25_WEIGHT, the dense list 1:
on CSFCube (expert labels) dense retrieval is far ahead of BM25 (R@50 0.632 against
0.432), on hep-th the two are level, and the fused list beats both on both corpora
(docs/benchmarks/report.md). Without stored embeddings (no `crase embed` yet) the ranking
is BM25's alone.
"""

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from crase.errors import DatabaseError, PaperVectorsMismatch
from crase.graph import Graph
from crase.ingest.paper_vectors import paper_text
from crase.models.paper_encoders import choice_of

# Every character Lucene's query parser reads as syntax (the set its QueryParser.escape
# escapes; & and | one by one, so no && or || survives); a query is searched as plain words.
LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
# The parser's operator words; only upper case is an operator, so lower case is a word.
OPERATORS = frozenset({"AND", "OR", "NOT"})
# Scripts the analyzer splits into one term per character.
IDEOGRAPHS = "\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
# What a query term is, counted generously: a run of letters and digits, an ideograph, or
# any other non-ASCII sign (emoji are terms of their own); punctuation is no term.
TERM = re.compile(rf"[{IDEOGRAPHS}]|[^\W_{IDEOGRAPHS}]+|[^\s\w\x00-\x7f]")
WORD = re.compile(r"[^\W_]")  # a letter or digit: something the analyzer keeps
# Lucene refuses a query of more than 1024 clauses, and each term is one clause per
# indexed field (title, abstract): 256 distinct terms stay well inside the limit. A repeated
# term is a clause again each time (5,000 of one word were refused), so the query also ends
# at MAX_QUERY_OCCURRENCES terms in all.
MAX_QUERY_TERMS = 256
MAX_QUERY_OCCURRENCES = 512
RRF_K = 60
BM25_WEIGHT = 0.5
VECTOR_INDEX = "paper_embedding"  # cypher/schema/09_paper_embedding.cypher


class Encoder(Protocol):
    """What embeds a query: the encoder of the stored paper vectors (`models.paper_encoder`:
    the search's, or the idea workflow's cached one); `name` is the one stored with them."""

    name: str

    def encode(self, texts: list[str]) -> NDArray[np.float32]: ...


@dataclass(frozen=True)
class Hit:
    id: str
    title: str
    year: int | None
    score: float


def has_searchable_word(text: str) -> bool:
    """Whether the text holds a letter or digit: without one, the analyzer leaves no term
    and a full-text search can find nothing."""
    return WORD.search(text) is not None


def escape_lucene(text: str) -> str:
    """Any text as a Lucene query of plain words, the one way user text reaches the index:
    the operator words in lower case (the analyzer lower-cases anyway), every syntax
    character escaped, white space collapsed, and the text cut where it would pass
    MAX_QUERY_TERMS distinct terms or MAX_QUERY_OCCURRENCES terms in all (Lucene would
    refuse the query). Text without a word gives a query that matches nothing; text
    without anything gives ""."""
    words: list[str] = []
    terms = QueryTerms()
    for word in text.split():
        kept = take_terms(word, terms)
        if kept:
            words.append(escape_word(kept))
        if terms.full:
            break
    return " ".join(words)


@dataclass
class QueryTerms:
    """The terms a query has kept so far: which, and how many in all."""

    distinct: set[str] = field(default_factory=set)
    count: int = 0

    @property
    def full(self) -> bool:
        return self.count >= MAX_QUERY_OCCURRENCES

    def admits(self, term: str) -> bool:
        return not self.full and (term in self.distinct or len(self.distinct) < MAX_QUERY_TERMS)


def take_terms(word: str, terms: QueryTerms) -> str:
    """The word, or its beginning up to its first term past MAX_QUERY_TERMS distinct ones or
    MAX_QUERY_OCCURRENCES in all; adds the terms it keeps to `terms`."""
    for match in TERM.finditer(word):
        term = match.group().lower()
        if not terms.admits(term):
            return word[:match.start()]
        terms.distinct.add(term)
        terms.count += 1
    return word


def escape_word(word: str) -> str:
    plain = word.lower() if word.upper() in OPERATORS else word
    return LUCENE_SPECIAL.sub(r"\\\1", plain)


def lucene_text(text: str) -> str:
    """escape_lucene of the text in lower case (the same search; for callers that show or
    compare the query)."""
    return escape_lucene(text.lower())


def search_hits(graph: Graph, text: str, limit: int, excluded: list[str]) -> list[Hit]:
    """BM25 hits, best first; none for text without a word."""
    escaped = escape_lucene(text)
    if not escaped or not has_searchable_word(text):
        return []
    rows = graph.read("search_papers_fulltext", query=escaped, limit=limit, excluded=excluded)
    return [Hit(r["id"], r["title"] or "", r["year"], float(r["score"])) for r in rows]


def vector_hits(graph: Graph, encoder: Encoder, text: str, limit: int,
                excluded: list[str]) -> list[Hit]:
    """Nearest papers by embedding, best first; none when no paper has an embedding, or
    when the database predates the vector index (`crase db init` adds it). A hit whose
    vector another encoder made stops the search (PaperVectorsMismatch)."""
    vector = encoder.encode([paper_text(text, "")])[0]
    try:
        rows = graph.read("search_papers_vector", vector=[float(x) for x in vector],
                          limit=limit, excluded=excluded)
    except DatabaseError as err:
        if VECTOR_INDEX not in str(err):
            raise
        return []
    check_vector_encoder({r["model"] for r in rows}, encoder.name)
    return [Hit(r["id"], r["title"] or "", r["year"], float(r["score"])) for r in rows]


def check_vector_encoder(stored: set[str | None], query_encoder: str) -> None:
    """Refuse hits whose vectors another encoder made: their cosines to the query mean
    nothing. The check reads only the hits, so it costs the search nothing."""
    other = sorted(name or "(unnamed)" for name in stored if name != query_encoder)
    if not other:
        return
    choice = choice_of(other[0])
    setting = (f", or set CRASE_MODELS__PAPER_ENCODER={choice} to embed queries as they were"
               if choice else "")
    raise PaperVectorsMismatch(
        f"the stored paper vectors are of encoder {', '.join(other)} but queries are embedded "
        f"with {query_encoder}; run `crase embed` to re-encode the papers with "
        f"{query_encoder}{setting}")


def fuse(rankings: Sequence[Sequence[str]], weights: Sequence[float] | None = None,
         ) -> list[tuple[str, float]]:
    """Weighted reciprocal-rank fusion, best first, ties by id."""
    scores: dict[str, float] = {}
    for index, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[index]
        for rank, paper in enumerate(dict.fromkeys(ranking), start=1):
            scores[paper] = scores.get(paper, 0.0) + weight / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def query_lists(graph: Graph, encoder: Encoder | None, query: str, limit: int,
                excluded: list[str]) -> tuple[list[Hit], list[Hit]]:
    """The query's BM25 hits and vector hits, `limit` each (no vector hits without an
    encoder or without stored embeddings). Text without a word has none: the nearest
    vectors of punctuation are noise, not seeds."""
    if not has_searchable_word(query):
        return [], []
    # The full-text search runs in the database while this thread embeds the query and
    # asks the vector index: the two waits overlap instead of adding up.
    with ThreadPoolExecutor(max_workers=1) as pool:
        lexical_search = pool.submit(search_hits, graph, query, limit, excluded)
        dense = vector_hits(graph, encoder, query, limit, excluded) if encoder else []
        return lexical_search.result(), dense


def fuse_hits(lexical: Sequence[Hit], dense: Sequence[Hit], limit: int) -> list[Hit]:
    """The fused ranking of the two lists' first `limit` hits each, `limit` long (BM25
    alone without vector hits); each hit's score is its fused score."""
    lexical, dense = lexical[:limit], dense[:limit]
    if not dense:
        return list(lexical)
    known = {hit.id: hit for hit in dense} | {hit.id: hit for hit in lexical}
    fused = fuse([[h.id for h in lexical], [h.id for h in dense]], [BM25_WEIGHT, 1.0])
    return [Hit(paper, known[paper].title, known[paper].year, score)
            for paper, score in fused[:limit]]


@dataclass(frozen=True)
class QueryLists:
    """The query's BM25 and embedding hits, asked once `depth` deep; a shallower use takes
    each list's top, which is what asking that deep gives (BM25 exactly; the vector index
    is approximate, and a deeper ask searches at least as well)."""

    lexical: list[Hit]
    dense: list[Hit]
    depth: int

    def top(self, limit: int) -> tuple[list[Hit], list[Hit]]:
        """Each list's first `limit` hits; a limit past the depth asked is a caller's bug."""
        if limit > self.depth:
            raise ValueError(f"the text lists were asked {self.depth} deep, not {limit}")
        return self.lexical[:limit], self.dense[:limit]

    def fused(self, limit: int) -> list[Hit]:
        """The fused ranking of each list's top `limit` (fuse_hits), `limit` long."""
        return fuse_hits(*self.top(limit), limit)


def ask_query_lists(graph: Graph, encoder: Encoder | None, query: str, depth: int,
                    excluded: list[str]) -> QueryLists:
    """The query's two text lists, `depth` each (query_lists), for every later use."""
    return QueryLists(*query_lists(graph, encoder, query, depth, excluded), depth)


def query_hits(graph: Graph, encoder: Encoder | None, query: str, limit: int,
               excluded: list[str]) -> list[Hit]:
    """The query's own ranking: BM25 and vector hits fused (query_lists, fuse_hits)."""
    return fuse_hits(*query_lists(graph, encoder, query, limit, excluded), limit)
