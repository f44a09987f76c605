"""The offline keyphrase planner: deterministic, Lucene-safe sub-queries that keep the
query's technical terms, checked against a real full-text index too."""

import json
import re
from pathlib import Path

import pytest

from crase.graph import Graph
from crase.search.roles.offline_planner import OfflinePlanner, key_phrases

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
LUCENE_SPECIAL = re.compile(r'[+\-!(){}\[\]^"~*?:\\/&|]')
HOSTILE = 'The $\\sigma$-model: "AND" OR NOT (a+b) [x]^2 ~ fuzzy* ? \\ / && || D-brane N=4'


def test_sub_queries_keep_the_main_phrase_and_vary_the_facet() -> None:
    plan = OfflinePlanner().plan(
        "D-brane dynamics and tachyon condensation in open string field theory", 5)
    assert plan == [
        "open string field theory brane dynamics tachyon condensation",
        "open string field theory brane dynamics",
        "open string field theory tachyon condensation",
        "open string field theory",
        "brane dynamics",
    ]


def test_key_phrases_drop_stopwords_and_academic_filler() -> None:
    phrases = key_phrases("In this paper we study the entropy of extremal black holes. "
                          "We show new results on extremal black holes.")
    assert [" ".join(p.words) for p in phrases] == ["extremal black holes", "entropy"]


def test_tex_is_stripped_and_output_is_lucene_safe() -> None:
    plan = OfflinePlanner().plan(HOSTILE, 5)
    assert plan
    for sub_query in plan:
        assert re.fullmatch(r"[a-z0-9]+( [a-z0-9]+)*", sub_query), sub_query
        assert not LUCENE_SPECIAL.search(sub_query)
        assert not {"and", "or", "not"} & set(sub_query.split())
    assert "sigma" in plan[0] and "brane" in plan[0]


def test_count_is_respected_and_short_queries_do_not_repeat() -> None:
    planner = OfflinePlanner()
    assert len(planner.plan("supersymmetric gauge theories with adjoint matter, Seiberg "
                            "duality and matrix models in four dimensions", 3)) == 3
    assert planner.plan("tachyon", 5) == ["tachyon"]
    assert planner.plan("the of and", 5) == ["the of and"]
    assert planner.plan("", 5) == []
    assert planner.plan("tachyon", 0) == []
    assert planner.usage.made == 5 and planner.usage.models == {"offline-keyphrase-v1"}


def test_every_sub_query_keeps_a_technical_term_of_the_query() -> None:
    queries = [json.loads(line)["query"] for line in (SAMPLE / "queries.jsonl").open()]
    planner = OfflinePlanner()
    for query in queries:
        plan = planner.plan(query, 5)
        assert plan == planner.plan(query, 5)  # deterministic
        assert 1 <= len(plan) <= 5 and len(set(plan)) == len(plan)
        top = set(key_phrases(query)[0].words)
        assert all(top & set(sub_query.split()) for sub_query in plan[:2])
        assert all(len(sub_query.split()) <= 10 for sub_query in plan)


@pytest.mark.integration
def test_sub_queries_run_on_the_full_text_index(graph: Graph) -> None:
    rows = [json.loads(line) for line in (SAMPLE / "papers.jsonl").open()][:400]
    with graph.driver.session() as session:
        session.run("UNWIND $rows AS r CREATE (:Paper {id: r.id, title: r.title, "
                    "abstract: r.abstract, year: r.year})", rows=rows).consume()
        session.run("CALL db.awaitIndexes(60)").consume()
    planner = OfflinePlanner()
    hits_per_query = []
    for row in rows[:15]:
        query = f"{row['title']}. {row['abstract'][:300]}"
        for sub_query in [*planner.plan(query, 5), *planner.plan(HOSTILE, 5)]:
            hits = graph.read("search_papers_fulltext", query=sub_query, limit=10, excluded=[])
            hits_per_query.append(len(hits))
        # The paper the query came from is found by the first (whole-query) sub-query.
        first = graph.read("search_papers_fulltext", query=planner.plan(query, 5)[0],
                           limit=10, excluded=[])
        assert row["id"] in {hit["id"] for hit in first}
    assert sum(h > 0 for h in hits_per_query) > 0.8 * len(hits_per_query)
