"""The candidates' features: which papers become candidates, and what each feature counts."""

import math
from dataclasses import replace

import pytest

from crase.search.order.features import (
    FEATURE_GROUPS,
    FEATURES,
    AnchorLinks,
    CorpusFacts,
    SearchEvidence,
    author_key,
    candidate_features,
    candidate_ids,
    features_of,
    recent_from,
)
from crase.search.text_ranking import Hit
from tests.recording_graph import RecordingGraph


def hit(paper: str, score: float, year: int | None = 2000) -> Hit:
    return Hit(paper, paper, year, score)


def evidence() -> SearchEvidence:
    # Seeds s (mass 0.8) and t (0.2); x cites s and a; y cites s and t; a cites b.
    edges = [("x", "s"), ("x", "a"), ("y", "s"), ("y", "t"), ("a", "b"), ("s", "b")]
    return SearchEvidence(
        walk=[("s", 0.4), ("t", 0.2), ("a", 0.1), ("x", 0.05)],
        lexical=[hit("t", 10.0), hit("q", 5.0)],
        dense=[hit("q", 0.9), hit("r", 0.8, None)],
        edges=edges, restart={"s": 0.8, "t": 0.2},
        years={"s": 2000, "t": 1998, "a": 1990, "x": 2002, "y": 2001, "b": 1980},
        # The fused text ranking is q, r, t: q and r cite b and c, t cites c.
        hit_references={"q": ["b", "c"], "t": ["c"], "r": ["b", "c"]},
        reference_years={"b": 1980, "c": 1985})


def test_candidates_are_the_walk_then_each_text_list_then_the_hits_references() -> None:
    assert candidate_ids(evidence()) == ["s", "t", "a", "x", "q", "r", "c", "b"]


def test_groups_hold_every_feature_once() -> None:
    names = [name for group in FEATURE_GROUPS.values() for name in group]
    assert tuple(names) == FEATURES and len(set(names)) == len(names)


def test_features_count_links_cocitation_and_ages() -> None:
    found = candidate_features(evidence(), CorpusFacts(cited_by={"a": 12, "q": 3}))
    row = {paper: dict(zip(FEATURES, found.values[i], strict=True))
           for i, paper in enumerate(found.ids)}
    # a: reached third by the walk, cited with s by x (co-citation weighed 0.8 * 2 seeds),
    # coupled with s through b, cited 12 times in the corpus, ten years before the seeds.
    assert row["a"]["walk_log_rank"] == pytest.approx(math.log(3))
    assert row["a"]["walk_log_score"] == pytest.approx(math.log(0.1 / 0.4))
    assert row["a"]["cocited_with_seeds"] == pytest.approx(math.log1p(1.6))
    assert row["a"]["coupled_with_seeds"] == pytest.approx(math.log1p(1.6))
    assert row["a"]["corpus_cited_by"] == pytest.approx(math.log1p(12))
    assert row["a"]["years_before_seeds"] == pytest.approx(0.8 * 2000 + 0.2 * 1998 - 1990)
    # x cites the seed s: its restart mass, times the two seeds.
    assert row["x"]["cites_seeds"] == pytest.approx(math.log1p(1.6))
    assert row["x"]["newer_than_seeds"] == 1.0
    # q: no walk, second in BM25 at half the top score, first in the dense list.
    assert row["q"]["walk_reached"] == 0.0 and row["q"]["dense_log_rank"] == 0.0
    assert row["q"]["bm25_relative_score"] == pytest.approx(0.5)
    assert row["s"]["is_seed"] == 1.0 and row["s"]["seed_restart"] == pytest.approx(0.8 ** 0.5)
    # c is cited by all three text hits (ranks 1, 2, 3), b by the first two.
    assert row["c"]["cited_by_text_hits"] == pytest.approx(math.log1p(3))
    assert row["c"]["text_hit_votes"] == pytest.approx(math.log1p(10 * (1 + 1 / 2 + 1 / 3)))
    assert row["b"]["text_hit_votes"] == pytest.approx(math.log1p(10 * (1 + 1 / 2)))
    assert row["c"]["years_before_seeds"] == pytest.approx(0.8 * 2000 + 0.2 * 1998 - 1985)
    # r has no year: it sits at the seeds' year.
    assert row["r"]["years_before_seeds"] == 0.0


def test_a_search_from_papers_adds_the_papers_most_linked_to_them() -> None:
    linked = replace(evidence(), linked=[("z", 4.0), ("a", 2.0)])
    assert candidate_ids(linked) == ["s", "t", "a", "x", "q", "r", "c", "b", "z"]
    found = candidate_features(linked, CorpusFacts())
    row = {paper: dict(zip(FEATURES, found.values[i], strict=True))
           for i, paper in enumerate(found.ids)}
    assert row["z"]["linked_log_rank"] == 0.0 and row["z"]["linked_score"] == math.log(5.0)
    assert row["a"]["linked_log_rank"] == pytest.approx(math.log(2))
    # A paper outside the list sits just past its end, with no links.
    assert row["s"]["linked_log_rank"] == pytest.approx(math.log(3))
    assert row["s"]["linked_score"] == 0.0
    # Without given papers the list is empty and every candidate alike.
    plain = candidate_features(evidence(), CorpusFacts())
    assert set(plain.column("linked_score")) == {0.0}


def rows_of(found) -> dict[str, dict[str, float]]:
    return {paper: dict(zip(FEATURES, found.values[i], strict=True))
            for i, paper in enumerate(found.ids)}


def test_corpus_wide_links_with_the_anchors() -> None:
    """The seeds s (mass 0.8) and t (0.2) are the anchors: a is co-cited with s 3 times
    across the corpus and coupled with t twice; q is co-cited once with each."""
    facts = CorpusFacts(
        cited_by={"a": 9, "s": 4, "t": 1, "q": 0}, references={"a": 4, "t": 9},
        anchors=["s", "t"],
        links={("s", "a"): AnchorLinks(cocited=3, cocited_aa=1.5),
               ("t", "a"): AnchorLinks(coupled=2, coupled_aa=0.7),
               ("s", "q"): AnchorLinks(cocited=1, cocited_aa=0.4),
               ("t", "q"): AnchorLinks(cocited=1, cocited_aa=0.9)})
    row = rows_of(candidate_features(evidence(), facts))
    # Each anchor weighs its restart mass times the two anchors.
    assert row["a"]["cocited_corpus"] == pytest.approx(math.log1p(1.6 * 3))
    assert row["a"]["coupled_corpus"] == pytest.approx(math.log1p(0.4 * 2))
    assert row["a"]["cocited_adamic_adar"] == pytest.approx(math.log1p(1.6 * 1.5))
    assert row["a"]["coupled_adamic_adar"] == pytest.approx(math.log1p(0.4 * 0.7))
    # Normalised by the two papers' citations (references): the best anchor's.
    assert row["a"]["cocited_cosine"] == pytest.approx(3 / math.sqrt(9 * 4))
    assert row["a"]["coupled_cosine"] == pytest.approx(2 / math.sqrt(4 * 9))
    assert row["q"]["cocited_corpus"] == pytest.approx(math.log1p(1.6 + 0.4))
    # A paper with no citations counts as cited once (no division by zero).
    assert row["q"]["cocited_cosine"] == pytest.approx(max(1 / math.sqrt(4), 1 / 1))
    assert row["x"]["cocited_corpus"] == row["x"]["coupled_cosine"] == 0.0


def test_the_corpus_wide_sums_do_not_follow_the_order_the_database_returns() -> None:
    """Three anchors' weighted Adamic-Adar terms whose float sum moves its last bit with
    the order of the terms: the rows come back in either order, the feature is the same
    (a trained model's bytes hang on it)."""
    three = replace(evidence(), restart={"s": 0.5, "t": 0.3, "y": 0.2})
    links = [(("s", "a"), AnchorLinks(cocited=1, cocited_aa=0.028)),
             (("t", "a"), AnchorLinks(cocited=1, cocited_aa=0.836)),
             (("y", "a"), AnchorLinks(cocited=1, cocited_aa=0.433))]
    forward, backward = (rows_of(candidate_features(three, CorpusFacts(
        anchors=["s", "t", "y"], links=dict(order))))["a"]["cocited_adamic_adar"]
        for order in (links, links[::-1]))
    assert forward == backward


def test_closeness_to_the_anchors_vectors() -> None:
    facts = CorpusFacts(anchors=["s", "t"],
                        similarities={"a": [0.9, 0.6], "q": [None, 0.8]})
    row = rows_of(candidate_features(evidence(), facts))
    assert row["a"]["anchor_similarity_max"] == pytest.approx(0.9)
    assert row["a"]["anchor_similarity_mean"] == pytest.approx(0.8 * 0.9 + 0.2 * 0.6)
    # A missing vector is orthogonal (0.5 on the [0, 1] scale); so is a paper not read.
    assert row["q"]["anchor_similarity_mean"] == pytest.approx(0.8 * 0.5 + 0.2 * 0.8)
    assert row["x"]["anchor_similarity_max"] == 0.5


def test_shared_authors_with_the_anchors() -> None:
    assert author_key("J.-B. Zuber") == author_key("Jean-Bernard Zuber") == "j zuber"
    assert author_key("A.Candiello") == "a candiello" and author_key("  ") == ""
    facts = CorpusFacts(authors={"s": ["E. Witten", "N. Seiberg"], "t": ["J. Polchinski"],
                                 "a": ["Edward Witten"], "q": ["Nathan Seiberg",
                                                              "Joseph Polchinski"],
                                 "x": ["M. Witten"]})
    row = rows_of(candidate_features(evidence(), facts))
    assert row["a"]["anchors_sharing_authors"] == pytest.approx(math.log1p(1))
    assert row["a"]["anchor_author_mass"] == pytest.approx(0.8)
    assert row["q"]["anchors_sharing_authors"] == pytest.approx(math.log1p(2))
    assert row["q"]["anchor_author_mass"] == pytest.approx(1.0)
    assert row["x"]["anchor_author_mass"] == 0.0  # another Witten
    # An anchor does not share authors with itself.
    assert row["s"]["anchor_author_mass"] == 0.0


def test_citations_per_year_and_their_recent_share() -> None:
    # The newest seed is of 2000: citations from 1999 on are recent.
    assert recent_from(evidence()) == 1999
    facts = CorpusFacts(cited_by={"a": 22, "b": 0}, recent_cited_by={"a": 11})
    row = rows_of(candidate_features(evidence(), facts))
    # a is of 1990: 22 citations over the 11 years to 2000.
    assert row["a"]["citations_per_year"] == pytest.approx(math.log1p(2.0))
    assert row["a"]["recent_citation_share"] == pytest.approx(0.5)
    assert row["b"]["recent_citation_share"] == 0.0


def test_the_corpus_wide_facts_are_read_only_for_a_model_that_uses_them() -> None:
    graph = RecordingGraph({"read_cited_by_counts": [{"id": "a", "cited_by": 7}]})
    linear = features_of(graph, evidence(), ["hidden"], FEATURE_GROUPS["degree"])
    assert [c.name for c in graph.calls] == ["read_cited_by_counts"]
    assert graph.calls[0].params["excluded"] == ["hidden"]
    assert linear.column("corpus_cited_by")[linear.ids.index("a")] == math.log1p(7)
    graph.calls.clear()
    features_of(graph, evidence(), ["hidden"], ("corpus_cited_by", "cocited_cosine"))
    assert [c.name for c in graph.calls] == ["read_candidate_signals", "read_anchor_links"]
    assert graph.calls[1].params["anchors"] == ["s", "t"]
