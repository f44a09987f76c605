"""The quality benchmark end to end on a small real corpus: every system, the ablations and
the corruption test on two queries, the report, and resuming without rerunning anything;
query lines with given papers (seed_ids) and without text."""

import csv
import json
from pathlib import Path

import pytest

from crase.bench.evaluation import Scored, evaluate
from crase.bench.quality import DatasetSpec, Options, resolve_queries, run_quality
from crase.bench.systems import BenchQuery, bm25_system, search_request
from crase.errors import EvaluationError
from crase.graph import Graph
from crase.search.request import SearchRequest
from crase.settings import SearchSettings, Settings
from tests.sample_slice import SAMPLE, create_papers

pytestmark = pytest.mark.integration


def load_fixture(graph: Graph, query_count: int = 2, cap: int = 140) -> list[dict]:
    """The first sample queries' source papers, their references and then neighbours,
    breadth-first, up to `cap` papers, with every citation among them."""
    papers = {r["id"]: r for r in map(json.loads, (SAMPLE / "papers.jsonl").open())}
    with (SAMPLE / "citations.csv").open() as handle:
        edges = [(row["citing_id"], row["cited_id"]) for row in csv.DictReader(handle)]
    queries = [json.loads(line) for line in (SAMPLE / "queries.jsonl").open()][:query_count]
    keep = [p for p in dict.fromkeys([q["source_paper_id"] for q in queries]
                                     + [r for q in queries for r in q["relevant_ids"]])
            if p in papers]
    neighbours: dict[str, list[str]] = {}
    for u, v in edges:
        neighbours.setdefault(u, []).append(v)
        neighbours.setdefault(v, []).append(u)
    for paper in list(keep):
        keep += [n for n in neighbours.get(paper, []) if n not in keep and n in papers]
        if len(keep) >= cap:
            break
    chosen = set(keep[:cap])
    rows = [papers[p] for p in sorted(chosen)]
    inside = [list(e) for e in edges if e[0] in chosen and e[1] in chosen]
    create_papers(graph, rows, inside)
    return queries


def write_queries(queries: list[dict], folder: Path) -> Path:
    folder.mkdir(parents=True)
    path = folder / "queries.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    return path


def test_runner_writes_the_report_and_resumes(graph: Graph, settings: Settings,
                                              tmp_path: Path) -> None:
    queries = load_fixture(graph)
    path = write_queries(queries, tmp_path / "fixture")
    spec = DatasetSpec("fixture", path, settings.database)
    out = tmp_path / "report"
    options = Options(ablations=("weighting", "seed_weights", "hops", "tau", "beta",
                                  "orientation"), corruption=True, subset=1)

    report = run_quality(settings, [spec], out, options, command="crase bench quality ...")

    results = json.loads((out / "results.json").read_text())
    data = results["datasets"]["fixture"]
    assert data["queries"] == 2 and data["subset"] == 1
    assert "queries_with_seed_ids" not in data  # plain text queries report as before
    systems = [entry["system"] for entry in data["main"]]
    assert systems == ["bm25", "dense", "ppr-unweighted", "paper-default",
                       "previous-default", "learned-order", "shipped", "crase-ppr",
                       "uniform-edges", "crase-salsa", "recency", "hybrid"]
    for entry in data["main"]:
        metrics = entry["metrics"]
        assert metrics["failed"] == 0 and metrics["missing"] == 0, entry["system"]
        recalls = [metrics["recall"][str(k)] for k in (5, 10, 20, 30, 40, 50)]
        assert recalls == sorted(recalls) and 0 <= recalls[-1] <= 1
    # Citations are the ground truth here, so the walks must find some of them.
    crase = next(e for e in data["main"] if e["system"] == "crase-ppr")
    assert crase["metrics"]["recall"]["50"] > 0
    assert crase["cost"]["cold_calls_mean"] > crase["cost"]["nodes_mean"]
    unweighted = next(e for e in data["main"] if e["system"] == "ppr-unweighted")
    assert unweighted["cost"]["cold_calls_mean"] == 1  # the plan; no claims, no Delta
    shipped = next(e for e in data["main"] if e["system"] == "shipped")
    assert shipped["cost"]["cold_calls_mean"] == 0  # no plan, no claims, no Delta
    assert shipped["metrics"]["recall"]["50"] > 0
    assert "vs_shipped" in crase

    assert set(data["ablations"]) >= {"edge weights (Delta or uniform)", "hop radius", "tau",
                                      "beta", "orientation", "seed restart weights"}
    weights = {row["value"]: row for row in data["ablations"]["edge weights (Delta or uniform)"]}
    assert weights["uniform"]["shipped"] and weights["coverage"]["vs_shipped"] is not None
    # tau only acts on Delta: its reference row is the Delta walk at tau 0.
    taus = {row["value"]: row for row in data["ablations"]["tau"]}
    assert taus[0.0]["shipped"] and "-th0.4-tau0-" in taus[0.0]["key"]
    hops = {row["value"]: row for row in data["ablations"]["hop radius"]}
    assert hops["1.5"]["shipped"] and hops["1.5"]["relative_cost"] == pytest.approx(1.0)
    # Same nodes for 1 and 1.5 hops; 1.5 adds the edges among the neighbours.
    assert hops["1"]["cost"]["nodes_median"] == hops["1.5"]["cost"]["nodes_median"]
    assert hops["1"]["cost"]["edges_median"] <= hops["1.5"]["cost"]["edges_median"]
    assert hops["2"]["cost"]["nodes_median"] >= hops["1.5"]["cost"]["nodes_median"]
    seeds = {row["seeds"]: row for row in data["corruption"]}
    assert set(seeds) == {"clean seeds", "lexically similar distractors", "random papers"}

    text = report.read_text()
    assert "| **Shipped** (crase search as it runs by default) |" in text
    assert "#### hop radius" in text and "Seed corruption" in text
    assert (out / "curves_fixture.png").stat().st_size > 1000
    assert (out / "corruption_fixture.png").is_file()
    per_query = list(csv.DictReader((out / "per_query_fixture.csv").open()))
    assert {row["system"] for row in per_query} >= {"bm25", "shipped", "crase-ppr", "hybrid"}

    # Corrupted runs used as many seeds as the clean run (the shipped walk's own list),
    # none of them relevant.
    uniform = next(e for e in data["main"] if e["system"] == "uniform-edges")
    clean = [json.loads(x) for x in (out / "runs" / "fixture" /
                                     f"{uniform['key']}.jsonl").open()]
    distractor_file = next((out / "runs" / "fixture").glob("*seeds_distractor.jsonl"))
    distractor = json.loads(distractor_file.read_text().splitlines()[0])
    relevant = set(queries[0]["relevant_ids"])
    assert len(distractor["seeds"]) == len(clean[0]["seeds"])
    assert not set(distractor["seeds"]) & relevant
    assert distractor["plan"] == []

    # Resuming: nothing left to run, so no output file grows.
    sizes = {p: p.stat().st_size for p in (out / "runs").rglob("*.jsonl")}
    run_quality(settings, [spec], out, options, command="crase bench quality ...")
    assert {p: p.stat().st_size for p in (out / "runs").rglob("*.jsonl")} == sizes


def test_bm25_never_returns_the_source_paper(graph: Graph) -> None:
    queries = load_fixture(graph, query_count=1)
    source = queries[0]["source_paper_id"]
    title = graph.read("read_papers", ids=[source])[0]["title"]
    query = BenchQuery("q", title + " AND (OR) NOT: ~*", frozenset({"x"}), source, 2003)
    ranking = bm25_system(graph, 50)(query).ranking
    assert ranking and source not in ranking


# --- query forms: empty queries and given papers ---------------------------------------


def test_given_papers_are_never_counted_as_found() -> None:
    query = BenchQuery("q", "", frozenset({"r1", "r2"}), "s", 2003, seed_ids=("g1", "g2"))
    plain = BenchQuery("p", "text", frozenset({"r1", "g1"}), "s", 2003)
    records = {"q": {"query_id": "q", "ranking": ["g1", "r1", "g2", "x", "r2"]},
               "p": {"query_id": "p", "ranking": ["g1", "r1", "g2", "x", "r2"]}}
    scored = Scored.from_records(records, [query, plain])
    assert scored.rankings == [["r1", "x", "r2"], ["g1", "r1", "g2", "x", "r2"]]
    metrics = evaluate(Scored.from_records(records, [query]))
    assert metrics["recall"][5] == 1.0 and metrics["map"][5] == pytest.approx((1 + 2 / 3) / 2)
    # Each system asks for k more papers per given one, so k places are left.
    assert query.depth(50) == 52 and plain.depth(50) == 50


def test_a_plain_query_makes_the_request_it_always_made() -> None:
    params = SearchSettings(k=50)
    query = BenchQuery("q", "Strings on pp-waves", frozenset({"r"}), "s", 2003)
    assert search_request(query, params, None, None) == SearchRequest(
        query="Strings on pp-waves", params=params, exclude=["s"])
    seeded = BenchQuery("q", "Strings on pp-waves", frozenset({"r"}), "s", 2003, ("g",))
    assert search_request(seeded, params, 2003, None).given_papers == ["g"]
    empty = BenchQuery("q", "", frozenset({"r"}), "s", 2003, ("g",))
    request = search_request(empty, params, None, None)
    assert (request.query, request.given_papers, request.seed_override) == ("", ["g"], None)
    # The corruption test's replacement seeds are still an override.
    assert search_request(query, params, None, ["x"]).seed_override == ["x"]
    nothing = BenchQuery("q", "", frozenset({"r"}), "s", 2003)
    with pytest.raises(EvaluationError, match="q: the search refuses the request: query"):
        search_request(nothing, params, None, None)


def test_resolving_keeps_given_papers_out_of_the_relevant_set(graph: Graph) -> None:
    rows = load_fixture(graph, query_count=1)
    row = rows[0]
    relevant = sorted(resolve_queries(graph, [row])[0][0].relevant)
    given = relevant[:2]
    seeded = {**row, "query_id": "q-seeds", "query": "", "seed_ids": [*given, "not-a-paper"]}
    outside = {**row, "query_id": "q-outside", "query": "", "seed_ids": ["not-a-paper"]}
    queries, dropped, _ = resolve_queries(graph, [row, seeded, outside])
    assert [q.id for q in queries] == [row["query_id"], "q-seeds"]
    assert queries[0] == BenchQuery(row["query_id"], row["query"], frozenset(relevant),
                                    row["source_paper_id"], queries[0].year)
    assert queries[1].seed_ids == tuple(given) and not queries[1].has_text
    assert queries[1].relevant == frozenset(relevant) - set(given)
    assert dropped["no query text and no given paper in the graph"] == 1
    assert bm25_system(graph, 50)(queries[1]).ranking == []


def test_a_seeded_search_starts_from_the_given_papers(graph: Graph, settings: Settings,
                                                      tmp_path: Path) -> None:
    row = load_fixture(graph, query_count=1)[0]
    relevant = sorted(resolve_queries(graph, [row])[0][0].relevant)
    given = relevant[:3]
    title = row["query"].split(". ")[0]
    forms = [{**row, "query_id": "q-title-seeds", "query": title, "seed_ids": given},
             {**row, "query_id": "q-seeds", "query": "", "seed_ids": given}]
    path = write_queries(forms, tmp_path / "forms")
    out = tmp_path / "report"
    run_quality(settings, [DatasetSpec("forms", path, settings.database)], out,
                Options(systems=("bm25", "shipped")), command="crase bench quality ...")

    data = json.loads((out / "results.json").read_text())["datasets"]["forms"]
    assert data["queries_with_seed_ids"] == 2 and data["queries_without_text"] == 1
    assert data["relevant_mean"] == len(relevant) - 3
    shipped = next(e for e in data["main"] if e["system"] == "shipped")
    runs = {r["query_id"]: r for r in map(json.loads, (out / "runs" / "forms" /
                                                       f"{shipped['key']}.jsonl").open())}
    # Title and given papers: the walk starts from the given papers, no plan.
    assert runs["q-title-seeds"]["seeds"] == given and runs["q-title-seeds"]["plan"] == []
    assert len(runs["q-title-seeds"]["ranking"]) > 3
    # No text: the walk starts from the given papers too, its text lists from their titles.
    assert runs["q-seeds"]["seeds"] == given and runs["q-seeds"]["plan"] == []
    assert len(runs["q-seeds"]["ranking"]) > 3
    assert shipped["metrics"]["failed"] == 0
    bm25 = {r["query_id"]: r for r in map(json.loads,
                                          (out / "runs" / "forms" / "bm25.jsonl").open())}
    assert bm25["q-seeds"]["ranking"] == [] and bm25["q-title-seeds"]["ranking"]
    per_query = list(csv.DictReader((out / "per_query_forms.csv").open()))
    assert {int(r["relevant"]) for r in per_query} == {len(relevant) - 3}
    queries = resolve_queries(graph, forms)[0]
    scored = Scored.from_records(runs, queries)
    assert not set(given) & {p for ranking in scored.rankings for p in ranking}
