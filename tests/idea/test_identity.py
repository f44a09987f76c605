"""Identity resolution: versions merge, follow-ups and conflicts do not, years are logged."""

from crase.idea.candidates import RouteHit
from crase.idea.identity import IdentityRegistry, apply_eligibility
from crase.ingest.records import PaperRecord
from crase.paper_identity import normalise_arxiv_id
from tests.idea.builders import fulltext_hit, record

HIT = fulltext_hit(1)


def external(title: str, year: int | None = 2020, **ids: str) -> PaperRecord:
    return PaperRecord(id=None, title=title, year=year, source="semantic_scholar",
                       **ids)  # type: ignore[arg-type]


def test_same_doi_in_another_form_is_one_work() -> None:
    registry = IdentityRegistry()
    a = registry.add(record("p1", "Graph Attention Networks", doi="10.1000/ABC"), HIT)
    b = registry.add(external("Graph attention networks.", doi="https://doi.org/10.1000/abc"),
                     RouteHit("semantic_scholar_search", {"rank": 1}))
    assert a is not None and a is b and len(registry.works) == 1
    assert len(a.records) == 2 and a.work_id == "p1"
    assert a.route_names == ["fulltext", "semantic_scholar_search"]


def test_arxiv_versions_merge_and_versions_are_logged() -> None:
    registry = IdentityRegistry()
    registry.add(record("p1", "Deep Sets", arxiv_id="1703.06114v1"), HIT)
    registry.add(external("Deep Sets", arxiv_id="arXiv:1703.06114v3", year=2017), HIT)
    assert len(registry.works) == 1
    assert [event["event"] for event in registry.log] == ["merged"]
    assert normalise_arxiv_id("hep-th/9901001v2") == "hep-th/9901001"


def test_same_title_one_year_apart_is_a_version_two_years_apart_is_not() -> None:
    registry = IdentityRegistry()
    registry.add(record("p1", "Neural Machine Translation by Jointly Learning to Align",
                        year=2014), HIT)
    registry.add(record("p2", "Neural machine translation by jointly learning to align!",
                        year=2015), HIT)
    registry.add(record("p3", "Neural Machine Translation by Jointly Learning to Align",
                        year=2019), HIT)
    assert len(registry.works) == 2
    assert registry.works[0].corpus_ids == ["p1", "p2"]
    assert any("apart" in note for note in registry.works[0].identity_notes)


def test_a_follow_up_with_a_similar_title_stays_a_distinct_work() -> None:
    registry = IdentityRegistry()
    registry.add(record("p1", "Learning to rank with partially labeled graph data"), HIT)
    follow = registry.add(record("p2", "Learning to rank with partially labeled graph data "
                                       "revisited"), HIT)
    assert len(registry.works) == 2
    assert follow is not None and "follow-up" in follow.identity_notes[0]


def test_an_identifier_shared_by_different_titles_is_a_conflict() -> None:
    registry = IdentityRegistry()
    work = registry.add(record("p1", "Attention is all you need", doi="10.1/x"), HIT)
    other = registry.add(external("A survey of protein folding", doi="10.1/x"), HIT)
    assert work is not None and other is not None and work is not other
    assert work.identity_conflict and other.identity_conflict
    assert len(work.records) == 1 and [e["event"] for e in registry.log] == ["conflict"]


def test_an_identifier_that_bridges_two_works_merges_them() -> None:
    registry = IdentityRegistry()
    registry.add(record("p1", "Spectral graph convolutions", doi="10.5/spec"), HIT)
    registry.add(external("Spectral graph convolutions on manifolds", arxiv_id="2001.00001"),
                 HIT)
    assert len(registry.works) == 2
    registry.add(external("Spectral graph convolutions", doi="10.5/spec",
                          arxiv_id="2001.00001"), HIT)
    assert len(registry.works) == 1 and len(registry.works[0].records) == 3


def test_excluded_papers_never_enter() -> None:
    registry = IdentityRegistry(excluded=frozenset({"p9"}))
    assert registry.add(record("p9"), HIT) is None
    assert registry.works == []


def test_year_eligibility_in_range_out_of_range_and_unknown() -> None:
    registry = IdentityRegistry()
    inside = registry.add(record("p1", "A", year=2016), HIT)
    outside = registry.add(record("p2", "B", year=2012), HIT)
    unknown = registry.add(record("p3", "C", year=None), HIT)
    preprint = registry.add(record("p4", "D", year=2014), HIT)
    registry.add(external("D", year=2015), HIT)  # its published version is in range
    for work in (inside, outside, unknown, preprint):
        assert work is not None
        apply_eligibility(work, 2015, 2025)
    assert inside.eligibility.kept and preprint.eligibility.kept  # type: ignore[union-attr]
    assert not outside.eligibility.kept  # type: ignore[union-attr]
    assert "outside 2015-2025" in outside.eligibility.reason  # type: ignore[union-attr]
    assert unknown.eligibility.kept  # type: ignore[union-attr]
    assert "cannot be checked" in unknown.eligibility.reason  # type: ignore[union-attr]
