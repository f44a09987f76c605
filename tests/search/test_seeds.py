import pytest

from crase.search.seeds import (
    QUERY_ITSELF,
    Seed,
    choose_seeds,
    fixed_seeds,
    restart_distribution,
)
from crase.search.text_ranking import Hit, escape_lucene, fuse


def hits(*years: int) -> list[Hit]:
    return [Hit(f"p{i}", f"title {i}", year, 10.0 - i) for i, year in enumerate(years)]


def test_paper_rule_keeps_hits_high_in_both_rankings() -> None:
    # relevance order p0..p5; recency order p5(2003) p3(2002) p1(2001) p4(2000) p0 p2.
    found = choose_seeds(hits(1990, 2001, 1980, 2002, 2000, 2003), m=2, sub_query_index=1,
                         sub_query="q", rule="relevance-and-recency")
    # worst-of-two ranks: p0 max(1,5)=5, p1 max(2,3)=3, p3 max(4,2)=4, p5 max(6,1)=6
    assert [s.paper_id for s in found] == ["p1", "p3"]
    assert (found[0].relevance_rank, found[0].recency_rank) == (2, 3)


def test_relevance_rule_keeps_the_best_text_hits_whatever_their_age() -> None:
    found = choose_seeds(hits(1990, 2001, 1980, 2002, 2000, 2003), m=3,
                         sub_query_index=QUERY_ITSELF, sub_query="q")
    assert [s.paper_id for s in found] == ["p0", "p1", "p2"]


def test_restart_weight_falls_with_the_square_of_the_text_rank() -> None:
    found = choose_seeds(hits(2000, 2000, 2000, 2000), m=4, sub_query_index=QUERY_ITSELF,
                         sub_query="q")
    assert [s.weight for s in found] == pytest.approx([1.0, 1 / 4, 1 / 9, 1 / 16])
    facets = choose_seeds(hits(2000, 2000), m=2, sub_query_index=2, sub_query="q",
                          search_weight=0.1)
    assert [s.weight for s in facets] == pytest.approx([0.1, 0.025])


def test_restart_distribution_sums_a_paper_over_its_searches() -> None:
    seeds = [Seed("a", 0, "q", 1, 3, 1.0), Seed("b", 0, "q", 2, 1, 0.25),
             Seed("b", 1, "s", 1, 1, 0.1)]
    shares = restart_distribution(seeds, "relevance")
    assert shares == pytest.approx({"a": 1.0 / 1.35, "b": 0.35 / 1.35})
    assert restart_distribution(seeds, "uniform") == {"a": 0.5, "b": 0.5}


def test_fixed_seeds_weigh_the_same_and_skip_excluded_ones() -> None:
    seeds = fixed_seeds(["x", "y", "x", "z"], excluded=["z"])
    assert [s.paper_id for s in seeds] == ["x", "y"]
    assert restart_distribution(seeds, "uniform") == {"x": 0.5, "y": 0.5}


def test_fusion_adds_weighted_reciprocal_ranks() -> None:
    fused = dict(fuse([["a", "b"], ["b", "c"]], [0.5, 1.0]))
    assert fused["b"] == pytest.approx(0.5 / 62 + 1 / 61)
    assert fused["a"] == pytest.approx(0.5 / 61) and fused["c"] == pytest.approx(1 / 62)
    assert [p for p, _ in fuse([["a", "b"], ["b", "c"]], [0.5, 1.0])] == ["b", "c", "a"]


def test_lucene_syntax_is_escaped() -> None:
    assert escape_lucene('N=4 SYM (super-Yang-Mills) "AdS"') == \
        'N=4 SYM \\(super\\-Yang\\-Mills\\) \\"AdS\\"'
