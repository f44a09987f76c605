"""The trainer never sees a training query's source paper or its edges: the candidates and
their features with the source hidden are those of the same graph with the source deleted.
And the learned order in a search: each result shows its feature contributions, the Run
records the model."""

import json
from typing import Any

import numpy as np
import pytest

from crase.graph import Graph
from crase.search.candidate_features import TEXT_POOL
from crase.search.order_model import SHIPPED_MODEL
from crase.search.order_training import (
    TrainingQuery,
    query_text,
    read_training_queries,
    training_example,
)
from crase.search.pipeline import (
    THIN_GRAPH_RATIO,
    graph_adds_little,
    learned_order_outside,
    run_search,
)
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.protocols import SearchBackends
from crase.search.text_ranking import query_hits
from crase.settings import SearchSettings, Settings
from tests.search.test_pipeline import load_slice

pytestmark = pytest.mark.integration


def test_trainer_never_sees_the_source_paper_or_its_edges(graph: Graph) -> None:
    load_slice(graph, 600)
    backends = build_search_backends(Settings())
    params = SearchSettings()
    query = max(read_training_queries(graph, before_year=3000, count=40, seed=0,
                                      min_references=3),
                key=lambda q: len(q.answer))
    hidden = training_example(graph, backends, params, query)
    assert query.source_id not in hidden.candidates.ids
    assert hidden.labels.sum() > 0  # its references are found, with the source hidden

    with graph.driver.session() as session:
        session.run("MATCH (p:Paper {id: $id}) DETACH DELETE p", id=query.source_id).consume()
    gone = training_example(graph, backends, params,
                            TrainingQuery("(deleted)", query.text, query.year, query.answer))
    assert gone.candidates.ids == hidden.candidates.ids
    np.testing.assert_array_equal(gone.candidates.values, hidden.candidates.values)


def test_training_queries_respect_the_year_and_the_held_out_set(graph: Graph) -> None:
    rows = load_slice(graph, 600)
    years = {row["id"]: row["year"] for row in rows}
    every = read_training_queries(graph, before_year=3000, count=1000, seed=0,
                                  min_references=3)
    cut = sorted(years[q.source_id] for q in every)[len(every) // 2]
    early = read_training_queries(graph, before_year=cut, count=1000, seed=0,
                                  min_references=3, held_out=frozenset({every[0].source_id}))
    assert early and all(years[q.source_id] < cut for q in early)
    assert every[0].source_id not in {q.source_id for q in early}
    first = next(row for row in rows if row["id"] == every[0].source_id)
    assert every[0].text == query_text(first["title"], first["abstract"])


def well_connected_query(graph: Graph, backends: SearchBackends,
                         rows: list[dict[str, Any]]) -> str:
    """The first sample paper's query whose walk ranks four papers per seed or more (the
    graph adds to the seeds: graph_adds_little is false)."""
    for row in rows[:60]:
        query = query_text(row["title"], row["abstract"])
        walk = run_search(graph, backends, SearchRequest(
            query=query, params=SearchSettings(k=1000, order="walk", fill="none")))
        if len(walk.results) >= 4 * walk.counts["seeds"]:
            return query
    raise AssertionError("no well-connected query among the sample's first 60 papers")


def test_learned_order_shows_its_evidence_and_records_the_model(graph: Graph) -> None:
    rows = load_slice(graph, 400)
    backends = build_search_backends(Settings())
    query = well_connected_query(graph, backends, rows)
    request = SearchRequest(query=query, params=SearchSettings(k=15, order="learned"))
    result = run_search(graph, backends, request)
    assert len(result.results) == 15
    assert all(r.evidence.ranking_features for r in result.results)
    assert result.counts["order"]["order"] == "learned"
    assert result.counts["order"]["model"]["name"] == SHIPPED_MODEL.stem
    assert result.counts["order"]["placed_by"] == "model"
    with graph.driver.session() as session:
        record = session.run("MATCH (r:Run {id: $id})-[x:RETURNED]->() RETURN x.evidence AS e "
                             "ORDER BY x.rank LIMIT 1", id=result.run_id).single()
    assert json.loads(record["e"])["ranking_features"]


def test_a_thin_graph_keeps_the_walks_order_and_the_fill(graph: Graph) -> None:
    rows = load_slice(graph, 400)
    backends = build_search_backends(Settings())
    query = well_connected_query(graph, backends, rows)
    walked = len(run_search(graph, backends, SearchRequest(
        query=query, params=SearchSettings(k=1000, order="walk", fill="none"))).results)
    k = walked + 1  # fewer than k, at least k / 2
    learned = run_search(graph, backends, SearchRequest(
        query=query, params=SearchSettings(k=k, order="learned")))
    walk = run_search(graph, backends, SearchRequest(
        query=query, params=SearchSettings(k=k, order="walk")))
    assert learned.counts["order"]["not_applied"] == (
        f"the walk ranked {walked} papers, fewer than k = {k}: the walk's order and the "
        "text fill")
    assert [r.id for r in learned.results] == [r.id for r in walk.results]
    assert not any(r.evidence.ranking_features for r in learned.results)


def test_a_graph_that_adds_little_beyond_the_seeds_is_ordered_by_the_text(
        graph: Graph) -> None:
    rows = load_slice(graph, 400)
    backends = build_search_backends(Settings())
    query = query_text(rows[3]["title"], rows[3]["abstract"])
    walk = run_search(graph, backends, SearchRequest(
        query=query, params=SearchSettings(k=1000, order="walk", fill="none")))
    walked = {r.id for r in walk.results}
    # As many seeds as a third of the walk's papers, and more: the graph adds little.
    seeds = len(walked) // THIN_GRAPH_RATIO + 1
    params = SearchSettings(k=20, query_seeds=seeds, order="learned")
    walk = run_search(graph, backends, SearchRequest(
        query=query, params=params.model_copy(update={"k": 1000, "order": "walk",
                                                      "fill": "none"})))
    walked = {r.id for r in walk.results}
    assert len(walked) < THIN_GRAPH_RATIO * walk.counts["seeds"]
    learned = run_search(graph, backends, SearchRequest(query=query, params=params))
    assert learned.counts["order"]["not_applied"].endswith("the query's own text ranking")
    assert learned.counts["order"]["placed_by"] == "text"
    # The same papers as the walk's order and its text fill, ordered by the text ranking
    # fused from each list's top TEXT_POOL, with its scores.
    previous = run_search(graph, backends, SearchRequest(
        query=query, params=params.model_copy(update={"order": "walk"})))
    fused = {h.id: h.score for h in query_hits(graph, backends.encoder, query, TEXT_POOL, [])}
    expected = sorted((r.id for r in previous.results), key=lambda p: -fused.get(p, 0.0))
    assert [r.id for r in learned.results] == expected
    assert [r.score for r in learned.results] == pytest.approx(
        [fused.get(p, 0.0) for p in expected])
    assert [r.id for r in learned.results] != [r.id for r in previous.results]
    assert all(r.evidence.text_match == (r.id not in walked) for r in learned.results)
    assert any(not r.evidence.text_match for r in learned.results)


def test_the_text_orders_the_list_below_three_papers_per_seed() -> None:
    assert graph_adds_little(29, 10) and not graph_adds_little(30, 10)
    assert not graph_adds_little(0, 0)


def test_a_keyword_query_keeps_the_walks_list_of_k(graph: Graph) -> None:
    rows = load_slice(graph, 400)
    backends = build_search_backends(Settings())
    learned = run_search(graph, backends, SearchRequest(
        query=rows[3]["title"][:40], params=SearchSettings(k=5, order="learned")))
    walk = run_search(graph, backends, SearchRequest(
        query=rows[3]["title"][:40], params=SearchSettings(k=5, order="walk")))
    assert "a keyword query" in learned.counts["order"]["not_applied"]
    assert [r.id for r in learned.results] == [r.id for r in walk.results]
    assert len(learned.results) == 5


def test_a_keyword_query_keeps_the_walks_order() -> None:
    assert learned_order_outside("Wilson loops", 200, 50) == (
        "a keyword query (2 words, fewer than 12)")
    assert learned_order_outside(" ".join(["word"] * 12), 50, 50) is None
