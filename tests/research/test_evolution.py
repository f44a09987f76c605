"""The evolution map on the committed hep-th sample: the graph is the corpus's own citations
with their direction, grouped by year, key papers by the stated rule, paths, the Mermaid
export, the comparison with a Connected-Papers-style list, and the Run it records. The
sample is loaded once for the module; bad requests, over a graph of their own, are in
test_evolution_requests.py."""

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from crase.api.cli import main
from crase.graph import Graph
from crase.reference_lists import read_reference_list
from crase.research.evolution import (
    NOTE,
    EvolutionMap,
    EvolutionRequest,
    PaperPair,
    map_evolution,
)
from crase.search.text_ranking import query_hits
from tests.conftest import clean_graph
from tests.sample_slice import load_sample_slice

pytestmark = pytest.mark.integration

TOPIC = "tachyon condensation string field theory"


def load_sample(graph: Graph) -> list[dict]:
    """The whole sample, with its arXiv ids (the comparison matches on them)."""
    rows = load_sample_slice(graph, 3000)
    with graph.driver.session() as session:
        session.run("UNWIND $rows AS r MATCH (p:Paper {id: r.id}) SET p.arxiv_id = r.arxiv_id",
                    rows=[{"id": r["id"], "arxiv_id": r["arxiv_id"]} for r in rows]).consume()
    return rows


@pytest.fixture(scope="module")
def sample_rows(session_graph: Graph) -> Iterator[list[dict]]:
    """The whole sample, loaded once for the module: its tests only read it and add runs."""
    clean_graph(session_graph)
    try:
        yield load_sample(session_graph)
    finally:
        clean_graph(session_graph)


@pytest.fixture
def graph(session_graph: Graph, sample_rows: list[dict]) -> Graph:
    """Here the module's loaded sample, not an empty graph emptied after each test (as in
    tests/conftest.py): the test that needs one of those is in test_evolution_requests.py."""
    return session_graph


def cites(graph: Graph) -> set[tuple[str, str]]:
    with graph.driver.session() as session:
        return {(r["u"], r["v"]) for r in session.run(
            "MATCH (u:Paper)-[:CITES]->(v:Paper) RETURN u.id AS u, v.id AS v")}


def test_a_topic_map_keeps_citation_direction_years_and_the_key_rule(graph: Graph) -> None:
    result = map_evolution(graph, None, EvolutionRequest(topic=TOPIC, limit=10,
                                                         max_papers=80))
    seeds = [hit.id for hit in query_hits(graph, None, TOPIC, 10, [])]
    assert [p.id for p in result.papers if p.seed] == sorted(
        seeds, key=lambda s: next((p.year or 0, p.id) for p in result.papers if p.id == s))
    assert len(result.papers) == 80 and result.counts["seeds"] == 10
    edges = {(e.citing, e.cited) for e in result.edges}
    in_map = {p.id for p in result.papers}
    # Exactly the corpus's citations among the map's papers, each in its own direction.
    assert edges == {(u, v) for u, v in cites(graph) if u in in_map and v in in_map}
    by_id = {p.id: p for p in result.papers}
    for edge in result.edges:
        assert (edge.citing_year, edge.cited_year) == (by_id[edge.citing].year,
                                                       by_id[edge.cited].year)
    years = [g.year for g in result.years]
    assert years == sorted(years, key=lambda y: (y is None, y or 0))
    assert sum(len(g.paper_ids) for g in result.years) == 80
    # Key papers: recomputed here from the edges, by the rule the result states.
    counted = {p: sum(1 for _, v in edges if v == p) for p in in_map}
    expected = sorted((p for p in in_map if counted[p] >= 2),
                      key=lambda p: (-counted[p], -(counted[p] + sum(u == p for u, _ in edges)),
                                     by_id[p].year or 0, p))[:10]
    assert [k.id for k in result.key_papers] == expected
    assert all(k.citations_in_map == counted[k.id] for k in result.key_papers)
    assert "cited by at least 2" in result.key_rule and result.note == NOTE
    assert "not proof of influence" in result.note


def test_the_mermaid_export_groups_years_in_order_and_draws_every_edge(graph: Graph) -> None:
    result = map_evolution(graph, None, EvolutionRequest(topic=TOPIC, limit=5, max_papers=40))
    lines = result.mermaid.splitlines()
    assert lines[0] == "flowchart TB"
    assert sum(" --> " in line for line in lines if not line.strip().startswith("%%")) == len(
        result.edges)
    subgraphs = [line.split('["')[1].rstrip('"]') for line in lines
                 if line.strip().startswith("subgraph")]
    assert subgraphs == [str(g.year) if g.year else "year unknown" for g in result.years]
    assert any("citing --> cited" in line for line in lines)
    assert sum(line.strip().startswith("class ") and line.endswith(" key")
               for line in lines) == len(result.key_papers)
    assert '"' not in "".join(line.split('["', 1)[1][:-2] for line in lines if '["' in line)


def test_a_seed_paper_map_finds_paths_both_ways_and_says_when_there_is_none(
        graph: Graph) -> None:
    edges = cites(graph)
    out_degree: dict[str, int] = {}
    for u, _ in edges:
        out_degree[u] = out_degree.get(u, 0) + 1
    seed = max(sorted(out_degree), key=lambda p: out_degree[p])
    cited = sorted(v for u, v in edges if u == seed)[0]
    # A paper citing the seed that does not cite `cited` itself: its chain runs through the seed.
    citing = next(u for u, v in sorted(edges) if v == seed and (u, cited) not in edges)
    pairs = [PaperPair(source=seed, target=cited), PaperPair(source=cited, target=seed),
             PaperPair(source=citing, target=cited), PaperPair(source=seed, target="no-such-id")]
    result = map_evolution(graph, None, EvolutionRequest(seed_paper=seed, paths=pairs,
                                                         max_papers=2000))
    direct, backwards, two_steps, missing = result.paths
    assert direct.kind == "source cites target" and direct.papers == [seed, cited]
    assert [(s.citing, s.cited, s.direction) for s in direct.steps] == [(seed, cited, "cites")]
    assert backwards.kind == "target cites source" and backwards.papers == [seed, cited]
    assert two_steps.kind == "source cites target" and len(two_steps.steps) == 2
    assert all((s.citing, s.cited) in edges for s in two_steps.steps)
    assert two_steps.papers[0] == citing and two_steps.papers[-1] == cited
    assert missing.kind == "none" and "not in this map" in missing.notes[0]
    assert any("not show that one influenced" in n for n in direct.notes)
    assert result.counts["paths_found"] == 3


def test_the_map_compares_with_a_connected_papers_style_list(graph: Graph,
                                                             sample_rows: list[dict],
                                                             tmp_path: Path) -> None:
    rows = {r["id"]: r for r in sample_rows}
    first = map_evolution(graph, None, EvolutionRequest(topic=TOPIC, limit=10,
                                                        max_papers=60))
    in_map = [p.id for p in first.papers][:30]
    outside = [pid for pid in sorted(rows) if pid not in {p.id for p in first.papers}
               and rows[pid]["title"]][:6]
    # 41 rows, as the paper's Connected Papers exports: 30 of the map (10 by arXiv id, 20 by
    # title), 6 corpus papers the map lacks, 5 papers the corpus does not hold.
    listing = tmp_path / "connected_papers.csv"
    with listing.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["Title", "Authors", "Year", "arXiv"])
        for index, pid in enumerate(in_map + outside):
            row = rows[pid]
            arxiv = f"{row['arxiv_id']}v2" if index < 10 else ""
            title = row["title"] if index >= 10 else "a title the list got wrong"
            writer.writerow([title, "; ".join(row["authors"][:2]), row["year"], arxiv])
        for number in range(5):
            writer.writerow([f"Gradient boosting for tabular churn prediction {number}",
                             "A. Nobody", 2021, ""])
    references = read_reference_list(listing.read_text())
    assert len(references) == 41
    result = map_evolution(graph, None, EvolutionRequest(topic=TOPIC, limit=10, max_papers=60,
                                                         reference_list=references))
    comparison = result.comparison
    assert comparison is not None
    assert sorted(r.paper_id for r in comparison.in_map) == sorted(in_map)
    assert sorted(r.paper_id for r in comparison.in_corpus_not_in_map) == sorted(outside)
    assert [r.reference.title for r in comparison.not_in_corpus] == [
        f"Gradient boosting for tabular churn prediction {n}" for n in range(5)]
    assert {r.matched_by for r in comparison.in_map[:10]} == {"arxiv_id"}
    assert (comparison.coverage, comparison.map_share) == (round(30 / 41, 4), 0.5)
    assert comparison.jaccard == round(30 / (60 + 41 - 30), 4)


def test_the_run_is_recorded_with_its_report(graph: Graph) -> None:
    result = map_evolution(graph, None, EvolutionRequest(topic=TOPIC, limit=5, max_papers=30))
    with graph.driver.session() as session:
        run = session.run("MATCH (r:Run {id: $id}) OPTIONAL MATCH (r)-[x:RETURNED]->(p) "
                          "RETURN r.kind AS kind, r.status AS status, r.report AS report, "
                          "collect(p.id) AS returned", id=result.run_id).single()
    assert (run["kind"], run["status"]) == ("evolution", "done")
    assert sorted(run["returned"]) == sorted(k.id for k in result.key_papers)
    stored = EvolutionMap.model_validate(json.loads(run["report"]))
    assert stored.mermaid == result.mermaid and stored.counts == result.counts


def test_the_command_prints_the_map_its_mermaid_and_its_json(
        graph: Graph, cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listing = cli_env / "list.csv"
    listing.write_text("Title,Year\nTachyon condensation in string field theory,1999\n"
                       "A paper nobody wrote,2020\n")
    args = ["evolution", TOPIC, "--limit", "5", "--max-papers", "30"]
    assert main([*args, "--compare", str(listing)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Run ") and "not proof of influence" in out
    assert "Key papers (key paper: cited by at least 2" in out
    assert "Reference list: 2 papers" in out and "A paper nobody wrote (not in the corpus)" in out
    assert main([*args, "--format", "mermaid"]) == 0
    assert capsys.readouterr().out.startswith("flowchart TB\n")
    assert main([*args, "--format", "json"]) == 0
    assert EvolutionMap.model_validate_json(capsys.readouterr().out).counts["papers"] == 30
    assert main([*args, "--compare", str(cli_env / "missing.csv")]) == 2
    assert "is not a file" in capsys.readouterr().err
    assert main(["evolution", "--seed-paper", "no-such-paper"]) == 2
    assert "give the id of a loaded paper" in capsys.readouterr().err
