"""The query's own text ranking (BM25 and embedding hits fused, search/text_ranking.py)
where the citation graph around the seeds is thin.

Where the walk has fewer than k papers to rank, the empty places are filled with the
text ranking's papers, after every paper the walk ranked, each marked as a text match
without graph evidence (`fill_from_text`). Where the graph adds almost nothing beyond
the seeds, the walk's order is only the seeds' order and the text ranking orders the
whole list (`text_order`, the learned order's gate: search/stages.py). On hep-th the
walk fills k = 50 and nothing changes; on CSFCube, which has almost no citations, the
list comes from here (docs/retrieval-quality.md).
"""

from crase.search.text_ranking import Hit, QueryLists


def fill_from_text(ranked: list[tuple[str, float]], k: int, lists: QueryLists
                   ) -> tuple[list[tuple[str, float]], list[str]]:
    """The walk's ranking plus, while it is shorter than k, the text ranking's hits it lacks
    (fused from each list's top k + len(ranked), with the walk's score for a paper it never
    reached: 0); returns the list and the ids added."""
    if len(ranked) >= k:
        return ranked, []
    return filled(ranked, lists.fused(k + len(ranked)), k)


def filled(ranked: list[tuple[str, float]], hits: list[Hit], k: int
           ) -> tuple[list[tuple[str, float]], list[str]]:
    """`ranked` and, up to k papers, the hits it lacks (score 0), and the ids added."""
    taken = {paper for paper, _ in ranked}
    added = [hit.id for hit in hits if hit.id not in taken][: k - len(ranked)]
    return ranked + [(paper, 0.0) for paper in added], added


def text_order(walked: list[tuple[str, float]], k: int, depth: int, lists: QueryLists
               ) -> tuple[list[tuple[str, float]], list[str]]:
    """The walk's papers and the text fill (the k papers `fill_from_text` gives, and the
    ids it added), ordered by the text ranking fused from each list's top `depth`, with its
    fused scores; a paper outside that ranking keeps its place after the others, score 0.
    The fill's shallower fusion picks the better k on CSFCube, the deeper one orders them
    better (docs/retrieval-quality.md). Both come from the search's one pair of lists."""
    walked = walked[:k]
    members, added = filled(walked, lists.fused(k + len(walked)), k)
    fused = {hit.id: hit.score for hit in lists.fused(max(k, depth))}
    ordered = sorted(members, key=lambda member: -fused.get(member[0], 0.0))
    return [(paper, fused.get(paper, 0.0)) for paper, _ in ordered], added
