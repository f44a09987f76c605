"""Seed construction: full-text searches whose top hits become the seeds, and how much of
the walk's restart mass each seed gets.

The searches are the query itself (its words, as the researcher wrote them) and, when the
plan has sub-queries, one search per sub-query. From each search the top hits are kept:
`query_seeds` from the query's own search, m from each sub-query's.

Which hits: the most relevant, in the search's own order (BM25 and embeddings fused for
the query itself, search/text_ranking.py; BM25 for a sub-query); or, with
`seed_rule="relevance-and-recency"`, the Crase paper's rule: hits high in both the relevance
and the recency ranking (a hit's seed rank is the worse of its two ranks; taking the first
m by seed rank equals growing a window over both rankings until m papers are inside both).

How much restart mass (the personalization vector of the walk): with
`seed_weights="relevance"` a seed found at relevance rank r of a search weighing w gets
w / r^2 (the query's own search weighs 1, a sub-query `sub_query_weight`), summed over the
searches that found it and normalised; with "uniform" every seed gets the same share, as in
the paper. Relevance weights measured on hep-th: the walk then stays near the best text hits,
so a seed at relevance rank 9 no longer takes a top place by teleport mass alone
(docs/benchmarks/report.md, "seed restart weights").
"""

from dataclasses import dataclass

from crase.graph import Graph
from crase.search.text_ranking import Hit, search_hits

QUERY_ITSELF = 0  # sub_query_index of the query's own search; sub-query l has index l
FIXED = -1  # sub_query_index of the seeds the caller fixes (search/stages.py: fixed_seed_ids)
RANK_EXPONENT = 2  # restart weight of a hit at relevance rank r: 1 / r^2


@dataclass(frozen=True)
class Seed:
    paper_id: str
    sub_query_index: int  # QUERY_ITSELF, a sub-query's 1-based place in the plan, or FIXED
    sub_query: str
    relevance_rank: int
    recency_rank: int
    weight: float = 1.0  # this search's restart weight for the paper (before normalising)


@dataclass(frozen=True)
class SeedRules:
    query_seeds: int  # hits of the query's own search kept (0: that search is not made)
    per_sub_query: int  # m
    pool: int  # hits read per search
    rule: str  # "relevance" | "relevance-and-recency"
    weights: str  # "relevance" | "uniform"
    sub_query_weight: float


def choose_seeds(hits: list[Hit], m: int, sub_query_index: int, sub_query: str,
                 rule: str = "relevance", weights: str = "relevance",
                 search_weight: float = 1.0) -> list[Seed]:
    """Up to m hits of one search (given in relevance order), by `rule`, each with its
    restart weight."""
    relevance_rank = {hit.id: rank for rank, hit in enumerate(hits, start=1)}
    by_recency = sorted(hits, key=lambda h: (-(h.year or 0), relevance_rank[h.id]))
    recency_rank = {hit.id: rank for rank, hit in enumerate(by_recency, start=1)}
    if rule == "relevance-and-recency":
        ordered = sorted(hits, key=lambda h: (max(relevance_rank[h.id], recency_rank[h.id]),
                                              relevance_rank[h.id]))
    else:
        ordered = hits
    chosen = ordered[:m]
    return [Seed(h.id, sub_query_index, sub_query, relevance_rank[h.id], recency_rank[h.id],
                 restart_weight(relevance_rank[h.id], weights, search_weight))
            for h in chosen]


def restart_weight(relevance_rank: int, weights: str, search_weight: float) -> float:
    if weights == "uniform":
        return 1.0
    return search_weight / relevance_rank ** RANK_EXPONENT


def find_seeds(graph: Graph, query: str, own_hits: list[Hit], plan: list[str],
               rules: SeedRules, excluded: list[str]) -> list[Seed]:
    """Every (search, seed) pair; a paper may be brought by several searches. The query's
    own search is `own_hits`, its BM25 and embedding hits fused (search/text_ranking.py,
    asked once per search and read again by the order and the fill: search/stages.py),
    the seed pool long; a sub-query is a BM25 keyword search."""
    seeds = []
    if rules.query_seeds > 0:
        seeds.extend(choose_seeds(own_hits, rules.query_seeds, QUERY_ITSELF, query,
                                  rules.rule, rules.weights))
    for index, sub_query in enumerate(plan, start=1):
        hits = search_hits(graph, sub_query, rules.pool, excluded)
        seeds.extend(choose_seeds(hits, rules.per_sub_query, index, sub_query, rules.rule,
                                  rules.weights, rules.sub_query_weight))
    return seeds


def fixed_seeds(paper_ids: list[str], excluded: list[str]) -> list[Seed]:
    """Seeds the caller fixes (no plan, no search), in the given order, equal weights;
    excluded ids and repeats are dropped."""
    kept = [p for p in dict.fromkeys(paper_ids) if p not in set(excluded)]
    return [Seed(p, FIXED, "(given seeds)", rank, rank) for rank, p in enumerate(kept, start=1)]


def unique_seed_ids(seeds: list[Seed]) -> list[str]:
    return list(dict.fromkeys(seed.paper_id for seed in seeds))


def restart_distribution(seeds: list[Seed], weights: str) -> dict[str, float]:
    """The walk's personalization vector over the unique seeds, summing to 1."""
    if weights == "uniform":
        mass = dict.fromkeys(unique_seed_ids(seeds), 1.0)
    else:
        mass = {}
        for seed in seeds:
            mass[seed.paper_id] = mass.get(seed.paper_id, 0.0) + seed.weight
    total = sum(mass.values())
    return {paper: value / total for paper, value in mass.items()} if total > 0 else {}
