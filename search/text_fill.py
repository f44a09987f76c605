"""Filling a short result list with the query's own text hits.

Where the citation graph around the seeds is thin, the walk has fewer than k papers to
rank. Rather than return a short list, the empty places are filled with the query's own
text ranking (BM25 and embedding hits fused, search/text_ranking.py), after every
paper the walk ranked, each marked as a text match without graph evidence. On hep-th the
walk fills k = 50 and nothing changes; on CSFCube, which has almost no citations, most of
the list comes from here (docs/benchmarks/report.md).
"""

from crase.graph import Graph
from crase.search.text_ranking import Encoder, query_hits


def fill_from_text(graph: Graph, encoder: Encoder | None, query: str,
                   ranked: list[tuple[str, float]], k: int,
                   excluded: list[str]) -> tuple[list[tuple[str, float]], list[str]]:
    """The walk's ranking plus, while it is shorter than k, full-text hits it lacks (with
    the walk's score for a paper it never reached: 0); returns the list and the ids added."""
    if len(ranked) >= k:
        return ranked, []
    taken = {paper for paper, _ in ranked}
    hits = query_hits(graph, encoder, query, k + len(ranked), excluded)
    added = [hit.id for hit in hits if hit.id not in taken][: k - len(ranked)]
    return ranked + [(paper, 0.0) for paper in added], added
