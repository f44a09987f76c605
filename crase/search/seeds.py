"""Seed construction: one full-text search per sub-query, ranked by relevance and by
recency; keep up to m papers that sit high in both rankings.

"High in both" is made exact this way: a hit's seed rank is the worse (larger) of its two
ranks, so taking the first m by seed rank equals growing a window t over both rankings
until the papers inside both top-t lists number m. Ties go to relevance.
"""

import re
from dataclasses import dataclass

from crase.graph import Graph

# Lucene's query syntax characters; a sub-query is searched as plain words.
LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')


@dataclass(frozen=True)
class Hit:
    id: str
    title: str
    year: int | None
    score: float


@dataclass(frozen=True)
class Seed:
    paper_id: str
    sub_query_index: int
    sub_query: str
    relevance_rank: int
    recency_rank: int


def escape_lucene(text: str) -> str:
    return LUCENE_SPECIAL.sub(r"\\\1", text).strip()


def search_hits(graph: Graph, sub_query: str, limit: int, excluded: list[str]) -> list[Hit]:
    text = escape_lucene(sub_query)
    if not text:
        return []
    rows = graph.read("search_papers_fulltext", query=text, limit=limit, excluded=excluded)
    return [Hit(r["id"], r["title"] or "", r["year"], float(r["score"])) for r in rows]


def choose_seeds(hits: list[Hit], m: int, sub_query_index: int, sub_query: str) -> list[Seed]:
    """Up to m hits that rank high by relevance (given order) and by recency (year)."""
    relevance_rank = {hit.id: rank for rank, hit in enumerate(hits, start=1)}
    by_recency = sorted(hits, key=lambda h: (-(h.year or 0), relevance_rank[h.id]))
    recency_rank = {hit.id: rank for rank, hit in enumerate(by_recency, start=1)}
    ordered = sorted(hits, key=lambda h: (max(relevance_rank[h.id], recency_rank[h.id]),
                                          relevance_rank[h.id]))
    return [Seed(h.id, sub_query_index, sub_query, relevance_rank[h.id], recency_rank[h.id])
            for h in ordered[:m]]


def find_seeds(graph: Graph, plan: list[str], m: int, pool: int,
               excluded: list[str]) -> list[Seed]:
    """Every (sub-query, seed) pair; a paper may be brought by several sub-queries."""
    seeds = []
    for index, sub_query in enumerate(plan):
        hits = search_hits(graph, sub_query, pool, excluded)
        seeds.extend(choose_seeds(hits, m, index, sub_query))
    return seeds


def given_seeds(paper_ids: list[str], excluded: list[str]) -> list[Seed]:
    """Seeds named by the caller (no plan, no search), in the given order; excluded ids and
    repeats are dropped. Sub-query index -1 marks them on the Run."""
    kept = [p for p in dict.fromkeys(paper_ids) if p not in set(excluded)]
    return [Seed(p, -1, "(given seeds)", rank, rank) for rank, p in enumerate(kept, start=1)]


def unique_seed_ids(seeds: list[Seed]) -> list[str]:
    return list(dict.fromkeys(seed.paper_id for seed in seeds))
