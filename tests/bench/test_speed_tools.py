"""The speed benchmarks' own parts: the numpy ranking the rank-stage benchmark compares GDS
with, and the queries the latency benchmark makes from a corpus without a query set."""

import os

import pytest

from crase.bench.machine_state import peak_memory_mib
from crase.bench.rank_stage import TimedGraph, numpy_top
from crase.bench.search_latency import sample_queries
from crase.graph import Graph
from crase.scoring.delta import PrunedGraph
from crase.search.walk import Walk, rank
from tests.sample_slice import load_sample_slice
from tests.search.test_ranking_gds import DELTA, YEARS, make_graph

pytestmark = pytest.mark.integration


def timed(graph: Graph) -> TimedGraph:
    return TimedGraph(graph.driver, graph.database, graph.address, graph.user)


@pytest.mark.parametrize("orientation", ["references", "citing", "both"])
def test_the_benchmarks_numpy_ranking_equals_gds(graph: Graph, orientation: str) -> None:
    make_graph(graph, "run-bench")
    probe = timed(graph)
    pruned = PrunedGraph(edges=dict(DELTA), nodes=sorted(YEARS), seeds=["a", "e"],
                         pruned_edges={}, dropped_nodes={})
    walk = Walk("ppr", orientation, 2004, 0.5, 0.15, k=5, max_iterations=1000,
                tolerance=1e-12)
    ranked = rank(probe, "run-bench", pruned, walk, {"a": 0.7, "e": 0.3}, YEARS)
    params, _ = probe.last["project_evidence_graph"]
    ranked_params, _ = probe.last["rank_pagerank"]
    assert set(probe.calls) == {"project_evidence_graph", "rank_pagerank", "drop_projection"}
    assert numpy_top(params, ranked_params["nodes"], 0.85, 1000, 1e-12, 5) == [
        p for p, _ in ranked]


def test_sampled_queries_come_from_cited_papers_and_exclude_them(graph: Graph) -> None:
    load_sample_slice(graph, 400)
    queries = sample_queries(graph, 10)
    assert queries == sample_queries(graph, 10)  # the same corpus, the same sample
    assert 0 < len(queries) <= 10
    titles = {r["id"]: r["title"] for r in graph.read(
        "read_papers", ids=[q["source_paper_id"] for q in queries])}
    for query in queries:
        assert titles[query["source_paper_id"]].split()[:6] == query["query"].split()
        hood = graph.read("expand_one_hop", seeds=[query["source_paper_id"]], excluded=[])
        assert hood[0]["edges"], query  # the paper has a citation in the corpus


def test_peak_memory_of_this_process_is_read_and_of_no_process_is_none() -> None:
    mine = peak_memory_mib(os.getpid())
    assert mine is not None and mine > 10
    assert peak_memory_mib(None) is None
