"""The trainer never sees a training query's source paper or its edges: the candidates and
their features with the source hidden are those of the same graph with the source deleted;
and they are the features the search itself orders by (one path: search/stages.py).
And the learned order in a search: each result shows its feature contributions, the Run
records the model, the same search gets the same order whatever its k."""

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from crase.graph import Graph
from crase.search.order.features import TEXT_POOL, WALK_POOL
from crase.search.order.model import (
    SHIPPED_MODEL,
    OrderModels,
    model_at,
    order_candidates,
    save_models,
)
from crase.search.order.training import (
    TrainingQuery,
    hidden_as_of,
    query_text,
    read_training_queries,
    training_example,
)
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.protocols import SearchBackends
from crase.search.stages import (
    THIN_GRAPH_RATIO,
    graph_adds_little,
    walk_depth,
)
from crase.search.text_ranking import Encoder, query_hits
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
    assert hidden is not None
    assert query.source_id not in hidden.candidates.ids
    assert hidden.labels.sum() > 0  # its references are found, with the source hidden

    with graph.driver.session() as session:
        session.run("MATCH (p:Paper {id: $id}) DETACH DELETE p", id=query.source_id).consume()
    gone = training_example(graph, backends, params,
                            TrainingQuery("(deleted)", query.text, query.year, query.answer))
    assert gone is not None
    assert gone.candidates.ids == hidden.candidates.ids
    np.testing.assert_array_equal(gone.candidates.values, hidden.candidates.values)


def test_a_model_trained_as_of_a_year_never_sees_a_later_paper(graph: Graph) -> None:
    """Training as of a year hides every paper from that year on with its edges: the
    features are those of the graph without them (the corpus-wide links and counts too)."""
    rows = load_slice(graph, 600)
    backends = build_search_backends(Settings())
    params = SearchSettings()
    cut = sorted(row["year"] for row in rows)[len(rows) * 3 // 4]
    later = hidden_as_of(graph, cut)
    assert later == sorted(row["id"] for row in rows if row["year"] >= cut)
    query = max(read_training_queries(graph, before_year=cut, count=40, seed=0,
                                      min_references=3), key=lambda q: len(q.answer))
    hidden = training_example(graph, backends, params, query, later)
    assert hidden is not None and not set(later) & set(hidden.candidates.ids)
    with graph.driver.session() as session:
        session.run("MATCH (p:Paper) WHERE p.id IN $ids DETACH DELETE p", ids=later).consume()
    gone = training_example(graph, backends, params, query)
    assert gone is not None
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
    assert result.counts["order"]["model"]["name"] == SHIPPED_MODEL.name
    assert result.counts["order"]["placed_by"] == "model"
    with graph.driver.session() as session:
        record = session.run("MATCH (r:Run {id: $id})-[x:RETURNED]->() RETURN x.evidence AS e "
                             "ORDER BY x.rank LIMIT 1", id=result.run_id).single()
    assert json.loads(record["e"])["ranking_features"]


def test_the_same_search_gets_the_same_order_whatever_its_k(graph: Graph) -> None:
    rows = load_slice(graph, 400)
    backends = build_search_backends(Settings())
    query = well_connected_query(graph, backends, rows)
    walked = len(run_search(graph, backends, SearchRequest(
        query=query, params=SearchSettings(k=1000, order="walk", fill="none"))).results)

    def learned(k: int) -> list[str]:
        result = run_search(graph, backends, SearchRequest(
            query=query, params=SearchSettings(k=k, order="learned")))
        assert result.counts["order"]["placed_by"] == "model", k
        return [r.id for r in result.results]

    first = learned(10)
    assert len(first) == 10
    assert learned(50)[:10] == first
    # Past the walk's papers the model still orders the list (no gate counts against k),
    # and the text fills what the candidates leave empty.
    assert learned(walked + 1)[:10] == first


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


def test_the_walk_ranks_enough_to_tell_a_thin_graph_whatever_k() -> None:
    assert walk_depth(SearchSettings(k=10), seeds=100) == THIN_GRAPH_RATIO * 100
    assert walk_depth(SearchSettings(k=10), seeds=10) == WALK_POOL
    assert walk_depth(SearchSettings(k=500), seeds=10) == 500
    assert walk_depth(SearchSettings(k=10, order="walk"), seeds=100) == 10


def test_a_keyword_query_is_ordered_by_the_words_model(graph: Graph, tmp_path: Path) -> None:
    """The shipped file's `words` model orders a short query; a file without one (any
    file written before query forms) leaves it in the walk's list of k."""
    rows = load_slice(graph, 400)
    backends = build_search_backends(Settings())
    query = rows[3]["title"][:40]
    learned = run_search(graph, backends, SearchRequest(
        query=query, params=SearchSettings(k=5, order="learned")))
    assert learned.counts["order"]["placed_by"] == "model"
    assert learned.counts["order"]["model"]["form"] == "words"

    shipped = model_at(SHIPPED_MODEL)
    save_models(OrderModels(shipped.name, {"text": shipped.forms["text"]}),
                tmp_path / "text-only")
    text_only = replace(backends, order_model=tmp_path / "text-only")
    fallback = run_search(graph, text_only, SearchRequest(
        query=query, params=SearchSettings(k=5, order="learned")))
    walk = run_search(graph, backends, SearchRequest(
        query=query, params=SearchSettings(k=5, order="walk")))
    assert fallback.counts["order"]["not_applied"].startswith(
        "a query of fewer than 12 words, for which the order model has no weights")
    assert [r.id for r in fallback.results] == [r.id for r in walk.results]
    assert len(fallback.results) == 5


def mark_influential_citations(graph: Graph) -> None:
    """Every other citation marked influential: the influential walk then differs from
    the uniform one."""
    with graph.driver.session() as session:
        rows = session.run("MATCH (a:Paper)-[:CITES]->(b:Paper) RETURN a.id AS citing, "
                           "b.id AS cited ORDER BY citing, cited").data()
    graph.write("set_citation_signals", rows=[
        {**row, "isinfluential": index % 2 == 0, "intents": None}
        for index, row in enumerate(rows)])


def test_training_features_are_the_features_the_search_orders_by(graph: Graph) -> None:
    load_slice(graph, 600)
    mark_influential_citations(graph)
    backends = build_search_backends(Settings())
    # The influential walk's weights (walk_weights), which a copy of the search once left
    # out of training.
    params = SearchSettings(k=20, weighting="influential")
    query = max(read_training_queries(graph, before_year=3000, count=40, seed=0,
                                      min_references=3),
                key=lambda q: len(q.answer))
    example = training_example(graph, backends, params, query)
    assert example is not None and example.labels.sum() > 0
    uniform = training_example(graph, backends, params.model_copy(
        update={"weighting": "uniform"}), query)
    assert uniform is not None
    assert not np.array_equal(uniform.candidates.values, example.candidates.values)

    result = run_search(graph, backends, SearchRequest(
        query=query.text, params=params, exclude=[query.source_id]))
    assert result.counts["order"]["placed_by"] == "model"
    model = model_at(None).for_form("text")
    assert model is not None
    expected = order_candidates(model, example.candidates, params.k)
    assert [r.id for r in result.results] == [p.id for p in expected]
    assert [r.score for r in result.results] == [round(p.score, 8) for p in expected]
    assert [r.evidence.ranking_features for r in result.results] == [
        p.contributions for p in expected]


@dataclass
class CountingEncoder:
    """The search's own encoder, counting the texts it embeds."""

    inner: Encoder
    texts: int = 0

    @property
    def name(self) -> str:
        return self.inner.name

    def encode(self, texts: list[str]) -> Any:
        self.texts += len(texts)
        return self.inner.encode(texts)


def test_a_search_embeds_its_query_once(graph: Graph) -> None:
    rows = load_slice(graph, 400)
    backends = build_search_backends(Settings())
    assert backends.encoder is not None
    query = well_connected_query(graph, backends, rows)
    for params in (SearchSettings(k=20), SearchSettings(k=500, order="walk"),
                   SearchSettings(k=20, query_seeds=40)):
        counting = CountingEncoder(backends.encoder)
        result = run_search(graph, replace(backends, encoder=counting),
                            SearchRequest(query=query, params=params))
        assert result.results and counting.texts == 1, params
