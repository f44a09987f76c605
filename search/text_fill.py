"""The query's own text ranking (BM25 and embedding hits fused, search/text_ranking.py)
where the citation graph around the seeds is thin.

Where the walk has fewer than k papers to rank, the empty places are filled with the
text ranking's papers, after every paper the walk ranked, each marked as a text match
without graph evidence (`fill_from_text`). Where the graph adds almost nothing beyond
the seeds, the walk's order is only the seeds' order and the text ranking orders the
whole list (`text_order`, the learned order's search: search/pipeline.py). On hep-th the
walk fills k = 50 and nothing changes; on CSFCube, which has almost no citations, the
list comes from here (docs/retrieval-quality.md).
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


def text_order(graph: Graph, encoder: Encoder | None, query: str,
               walked: list[tuple[str, float]], k: int, depth: int,
               excluded: list[str]) -> tuple[list[tuple[str, float]], list[str]]:
    """The top k of the text ranking fused from each list's top `depth` (at least k), with
    its fused scores, and the ids among them the walk did not rank (text matches without
    graph evidence); where the text ranking has fewer than k papers, the walk's others
    follow it."""
    hits = query_hits(graph, encoder, query, max(k, depth), excluded)[:k]
    ranked = [(hit.id, hit.score) for hit in hits]
    reached = {paper for paper, _ in walked}
    taken = {paper for paper, _ in ranked}
    rest = [(paper, 0.0) for paper, _ in walked if paper not in taken]
    return (ranked + rest)[:k], [paper for paper, _ in ranked if paper not in reached]
