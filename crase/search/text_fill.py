"""Filling a short result list with full-text hits.

Where the citation graph around the seeds is thin, the walk has fewer than k papers to
rank. Rather than return a short list, the empty places are filled with the query's own
full-text hits (Lucene BM25 over title and abstract, the query's top k), after every
paper the walk ranked, each marked as a text match without graph evidence. On hep-th the
walk fills k = 50 and nothing changes; on CSFCube, which has almost no citations, it turns
two or three papers into BM25's list (docs/benchmarks/report.md, the "backfill" row).
"""

from crase.graph import Graph
from crase.search.seeds import search_hits


def fill_from_text(graph: Graph, query: str, ranked: list[tuple[str, float]], k: int,
                   excluded: list[str]) -> tuple[list[tuple[str, float]], list[str]]:
    """The walk's ranking plus, while it is shorter than k, full-text hits it lacks (with
    the walk's score for a paper it never reached: 0); returns the list and the ids added."""
    if len(ranked) >= k:
        return ranked, []
    taken = {paper for paper, _ in ranked}
    # Lower case, so that words such as AND or NOT in a question stay words.
    hits = search_hits(graph, query.lower(), k, excluded)
    added = [hit.id for hit in hits if hit.id not in taken][: k - len(ranked)]
    return ranked + [(paper, 0.0) for paper in added], added
