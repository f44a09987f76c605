"""The fill and the text order read the search's one pair of text lists, asked deep enough
for every use: each use takes each list's top, as asking that deep would give."""

import pytest

from crase.search.order.features import TEXT_POOL
from crase.search.stages import text_depth
from crase.search.text_fill import fill_from_text, text_order
from crase.search.text_ranking import Hit, QueryLists, fuse_hits
from crase.settings import SearchSettings


def hits(*ids: str) -> list[Hit]:
    return [Hit(paper, paper, 2000, 10.0 - rank) for rank, paper in enumerate(ids)]


LISTS = QueryLists(hits("a", "b", "c", "d", "e", "f"), hits("f", "e", "x", "a", "y", "z"), 6)


def test_a_use_takes_each_lists_top_and_none_deeper_than_asked() -> None:
    assert LISTS.top(2) == (hits("a", "b"), hits("f", "e"))
    assert LISTS.fused(3) == fuse_hits(hits("a", "b", "c"), hits("f", "e", "x"), 3)
    with pytest.raises(ValueError, match="asked 6 deep, not 7"):
        LISTS.top(7)


def test_the_fill_adds_the_text_rankings_papers_after_the_walks() -> None:
    walked = [("a", 0.5), ("q", 0.4)]
    ranked, added = fill_from_text(walked, 4, LISTS)
    expected = [hit.id for hit in LISTS.fused(6) if hit.id not in {"a", "q"}][:2]
    assert ranked == walked + [(paper, 0.0) for paper in expected]
    assert added == expected
    assert fill_from_text(walked, 2, LISTS) == (walked, [])


def test_the_text_order_orders_the_walks_papers_and_the_fill_by_the_text() -> None:
    walked = [("q", 0.9), ("a", 0.5)]
    ranked, added = text_order(walked, 3, 4, LISTS)
    fused = {hit.id: hit.score for hit in LISTS.fused(4)}
    assert {paper for paper, _ in ranked} == {"q", "a", *added} and len(added) == 1
    assert ranked[-1] == ("q", 0.0)  # outside the text ranking: after the others
    assert [score for _, score in ranked[:2]] == [fused[p] for p, _ in ranked[:2]]


def test_the_lists_are_asked_deep_enough_for_every_use() -> None:
    shipped = SearchSettings()
    assert text_depth(shipped) == TEXT_POOL == 2 * shipped.k
    assert text_depth(SearchSettings(k=300)) == 600  # the fill: k + fewer than k walked
    assert text_depth(SearchSettings(seed_pool=400)) == 400
