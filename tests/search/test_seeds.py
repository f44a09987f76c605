from crase.search.seeds import Hit, choose_seeds, escape_lucene


def hits(*years: int) -> list[Hit]:
    return [Hit(f"p{i}", f"title {i}", year, 10.0 - i) for i, year in enumerate(years)]


def test_seeds_are_high_in_both_rankings() -> None:
    # relevance order p0..p5; recency order p5(2003) p3(2002) p1(2001) p4(2000) p0 p2.
    found = choose_seeds(hits(1990, 2001, 1980, 2002, 2000, 2003), m=2, sub_query_index=0,
                         sub_query="q")
    # worst-of-two ranks: p0 max(1,5)=5, p1 max(2,3)=3, p3 max(4,2)=4, p5 max(6,1)=6
    assert [s.paper_id for s in found] == ["p1", "p3"]
    assert (found[0].relevance_rank, found[0].recency_rank) == (2, 3)


def test_fewer_hits_than_m_keeps_them_all() -> None:
    assert len(choose_seeds(hits(2000, 2001), m=10, sub_query_index=1, sub_query="q")) == 2


def test_lucene_syntax_is_escaped() -> None:
    assert escape_lucene('N=4 SYM (super-Yang-Mills) "AdS"') == \
        'N=4 SYM \\(super\\-Yang\\-Mills\\) \\"AdS\\"'
