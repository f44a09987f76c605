"""The OpenAlex works snapshot: gzipped shards written by hand from the Work object's
documented fields (tests/ingest/fixtures/openalex), staged and loaded."""

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from crase.api.cli import main
from crase.graph import Graph
from crase.ingest.dataset_filter import DatasetFilter
from crase.ingest.openalex import map_work, rebuild_abstract, stage_openalex
from crase.ingest.records import DEFAULT_LIMITS
from crase.ingest.rejects import read_rejects
from crase.settings import DatabaseSettings
from tests.ingest.conftest import point_cli_at

SHARD_A = "updated_date=2024-01-01/part_000.gz"
SHARD_B = "updated_date=2024-02-01/part_000.gz"
ATTENTION = {
    "id": "1706.03762", "title": "Attention Is All You Need",
    "abstract": "The dominant sequence transduction models are based on recurrent networks; "
                "simpler models win.",
    "year": 2017, "date": "2017-06-12", "authors": ["Ashish Vaswani", "Noam Shazeer"],
    "doi": "10.48550/arxiv.1706.03762", "arxiv_id": "1706.03762",
    "venue": "arXiv (Cornell University)"}
NMT = {
    "id": "doi:10.1000/nmt.2014",
    "title": "Neural Machine Translation by Jointly Learning to Align and Translate",
    "abstract": "Neural translation aligns and translation", "year": 2014,
    "date": "2014-09-01", "authors": ["Dzmitry Bahdanau"], "doi": "10.1000/nmt.2014",
    "venue": "International Conference on Learning Representations"}
PROTEIN = {"id": "openalex:W1003", "title": "Protein folding at scale", "year": 2012,
           "date": "2012-03-04", "authors": ["Jane Roe"]}
BERT = {
    "id": "1810.04805", "title": "BERT: Pre-training of Deep Bidirectional Transformers",
    "abstract": "We introduce BERT, a new language model.", "year": 2019,
    "date": "2019-06-02", "authors": ["Jacob Devlin", "Kristina Toutanova"],
    "doi": "10.18653/v1/n19-1423", "arxiv_id": "1810.04805",
    "venue": "North American Chapter of the Association for Computational Linguistics"}
ALL_EDGES = [("1706.03762", "doi:10.1000/nmt.2014"), ("1706.03762", "openalex:W1003"),
             ("1810.04805", "1706.03762"), ("1810.04805", "doi:10.1000/nmt.2014"),
             ("openalex:W1003", "doi:10.1000/nmt.2014")]
ALL_REJECTS = [(SHARD_A, 3, "malformed_json"), (SHARD_B, 1, "self_citation"),
               (SHARD_B, 2, "missing_title")]


def staged(folder: Path) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    papers = [json.loads(line) for line in (folder / "papers.jsonl").read_text().splitlines()]
    edges = [tuple(line.split(",")) for line in
             (folder / "citations.csv").read_text().splitlines()[1:]]
    return sorted(papers, key=lambda p: p["id"]), sorted(edges)  # type: ignore[misc]


def rejects_of(path: Path) -> list[tuple[str, int, str]]:
    return sorted((r.file, r.line, r.kind.value) for r in read_rejects(path))


def test_the_abstract_is_rebuilt_word_for_word() -> None:
    index = {"a": [1, 3], "Model": [0], "of": [2], "models.": [4]}
    assert rebuild_abstract(index) == "Model a of a models."
    # Older snapshots wrote the index as a JSON string.
    assert rebuild_abstract(json.dumps(index)) == "Model a of a models."
    assert rebuild_abstract(None) == "" and rebuild_abstract({"x": "not a list"}) == ""


def test_odd_positions_are_placed_or_dropped_and_each_is_noted() -> None:
    index = {"Odd": [-1], "Model": [0], "a": [1, 3.0], "of": [2], "flag": [True],
             "half": [2.5], "text": ["5"], "models.": [4], "alone": 5}
    notes: list[str] = []
    assert rebuild_abstract(index, notes) == "Model a of a models. alone"
    assert notes == [
        "'Odd' at -1: a negative position; dropped",
        "'a' at 3.0: a whole number written with a fraction; placed at 3",
        "'flag' at True: a boolean, no position; dropped",
        "'half' at 2.5: not a whole number; dropped",
        "'text' at '5': a str, no position; dropped",
        "'alone' at 5: a position not in a list; placed at 5"]


def test_the_notes_of_an_abstract_go_to_the_notes_file(tmp_path: Path) -> None:
    (tmp_path / "works").mkdir()
    work = {"id": "https://openalex.org/W5", "title": "Odd index",
            "abstract_inverted_index": {"Kept": [0], "dropped": [-1]}}
    with gzip.open(tmp_path / "works" / "part_000.gz", "wt") as out:
        out.write(json.dumps(work) + "\n")
    report = stage_openalex(tmp_path / "works", tmp_path / "staged", DatasetFilter(),
                            DEFAULT_LIMITS, 1_000_000)
    assert staged(tmp_path / "staged")[0][0]["abstract"] == "Kept"
    notes = [json.loads(line) for line in report.notes_path.read_text().splitlines()]
    assert notes == [{"file": "part_000.gz", "paper": "openalex:W5",
                      "kind": "abstract_positions",
                      "notes": ["'dropped' at -1: a negative position; dropped"]}]
    assert report.repaired == 1


def test_a_work_without_an_id_has_none() -> None:
    assert map_work({"title": "No id"})["id"] is None


def test_the_snapshot_stages_to_exactly_its_papers_and_in_corpus_edges(
        openalex_works: Path, tmp_path: Path) -> None:
    report = stage_openalex(openalex_works, tmp_path / "staged", DatasetFilter(),
                            DEFAULT_LIMITS, 1_000_000)
    papers, edges = staged(tmp_path / "staged")
    assert papers == [ATTENTION, BERT, NMT, PROTEIN]
    assert edges == ALL_EDGES
    assert rejects_of(report.rejects_path) == ALL_REJECTS
    assert (report.shards, report.records, report.kept, report.rejected) == (2, 6, 4, 3)
    assert report.edges_outside == 1  # W9999 is not in the snapshot


def test_several_folders_or_shards_stage_as_the_snapshot_does(
        openalex_works: Path, tmp_path: Path) -> None:
    folders = sorted(openalex_works.iterdir())
    shards = [folder / "part_000.gz" for folder in folders]
    for name, paths in (("folders", folders), ("shards", [*shards, shards[0]])):
        report = stage_openalex(paths, tmp_path / name, DatasetFilter(), DEFAULT_LIMITS,
                                1_000_000)
        assert staged(tmp_path / name) == ([ATTENTION, BERT, NMT, PROTEIN], ALL_EDGES)
        # Named under the folder that holds them all, the two part_000.gz keep apart;
        # a shard given twice is read once.
        assert rejects_of(report.rejects_path) == ALL_REJECTS
        assert report.shards == 2


def test_a_filter_keeps_exactly_its_subset_and_drops_edges_that_leave_it(
        openalex_works: Path, tmp_path: Path) -> None:
    recent_cs = DatasetFilter.build(from_year=2015, fields=["computer science"])
    report = stage_openalex(openalex_works, tmp_path / "staged", recent_cs, DEFAULT_LIMITS,
                            1_000_000)
    papers, edges = staged(tmp_path / "staged")
    assert [paper["id"] for paper in papers] == ["1706.03762", "1810.04805"]
    assert edges == [("1810.04805", "1706.03762")]
    assert report.filtered_out == 3 and report.edges_outside == 4
    # The work without a title has no field either: the filter leaves it out before it is
    # checked, so it is no reject here.
    assert rejects_of(report.rejects_path) == [(SHARD_A, 3, "malformed_json"),
                                               (SHARD_B, 1, "self_citation")]
    with_abstract = DatasetFilter.build(require_abstract=True)
    stage_openalex(openalex_works, tmp_path / "abstracts", with_abstract, DEFAULT_LIMITS,
                   1_000_000)
    assert [p["id"] for p in staged(tmp_path / "abstracts")[0]] == [
        "1706.03762", "1810.04805", "doi:10.1000/nmt.2014"]


def test_an_id_list_keeps_the_works_it_names(openalex_works: Path, tmp_path: Path) -> None:
    listed = tmp_path / "ids.txt"
    listed.write_text("# one id a line\nhttps://openalex.org/W1003\n"
                      "https://doi.org/10.1000/NMT.2014\narXiv:1810.04805v2\n")
    stage_openalex(openalex_works, tmp_path / "staged", DatasetFilter.build(id_list=listed),
                   DEFAULT_LIMITS, 1_000_000)
    papers, edges = staged(tmp_path / "staged")
    assert [p["id"] for p in papers] == ["1810.04805", "doi:10.1000/nmt.2014",
                                         "openalex:W1003"]
    assert edges == [("1810.04805", "doi:10.1000/nmt.2014"),
                     ("openalex:W1003", "doi:10.1000/nmt.2014")]


def test_a_finished_staging_is_reused(openalex_works: Path, tmp_path: Path) -> None:
    first = stage_openalex(openalex_works, tmp_path / "staged", DatasetFilter(),
                           DEFAULT_LIMITS, 1_000_000)
    again = stage_openalex(openalex_works, tmp_path / "staged", DatasetFilter(),
                           DEFAULT_LIMITS, 1_000_000)
    assert not first.reused and again.reused and again.kept == first.kept == 4
    narrower = stage_openalex(openalex_works, tmp_path / "staged",
                              DatasetFilter.build(to_year=2013), DEFAULT_LIMITS, 1_000_000)
    assert not narrower.reused and narrower.kept == 1
    shorter_lines = stage_openalex(openalex_works, tmp_path / "staged",
                                   DatasetFilter.build(to_year=2013), DEFAULT_LIMITS, 3_000)
    assert not shorter_lines.reused and shorter_lines.kept == 1


def graph_papers(graph: Graph) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    with graph.driver.session(database=graph.database) as session:
        nodes = [{key: value for key, value in row["p"].items()
                  if not key.startswith("embedding")}
                 for row in session.run("MATCH (p:Paper) RETURN properties(p) AS p "
                                        "ORDER BY p.id")]
        edges = [(row["a"], row["b"]) for row in session.run(
            "MATCH (a:Paper)-[:CITES]->(b:Paper) RETURN a.id AS a, b.id AS b ORDER BY a, b")]
    return nodes, edges


@pytest.mark.integration
def test_crase_load_reads_the_snapshot(openalex_works: Path, graph: Graph, cli_env: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["load", str(openalex_works), "--format", "openalex", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "Staged openalex from 2 shards" in printed and "1 outside" in printed
    assert graph_papers(graph) == ([ATTENTION, BERT, NMT, PROTEIN], ALL_EDGES)
    rejects = next((cli_env / "var" / "staged").glob("openalex-*")) / "rejects.jsonl"
    assert rejects_of(rejects) == ALL_REJECTS
    assert main(["load", str(openalex_works), "--format", "openalex", "--quiet"]) == 0
    assert "unchanged since its last load" in capsys.readouterr().out


@pytest.mark.integration
@pytest.mark.slow
def test_crase_db_import_reads_the_snapshot_with_filters(
        openalex_works: Path, second_server: DatabaseSettings, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    point_cli_at(second_server, monkeypatch, tmp_path)
    assert main(["db", "import", str(openalex_works), "--format", "openalex", "--quiet",
                 "--no-embed", "--from-year", "2015", "--field", "Computer Science"]) == 0
    with Graph.connect(second_server) as graph:
        assert graph_papers(graph) == ([ATTENTION, BERT], [("1810.04805", "1706.03762")])


def test_bad_lines_in_a_shard_are_rejects_and_a_broken_stream_names_its_shard(
        tmp_path: Path) -> None:
    works = tmp_path / "works"
    works.mkdir()
    good = {"id": "https://openalex.org/W7", "title": "Kept", "publication_year": 2020}
    with gzip.open(works / "part_000.gz", "wb") as out:
        out.write(b"\xff\xfe not UTF-8\n[1, 2]\n\n" + json.dumps(good).encode() + b"\n"
                  + b'{"id": "W8", "title": "' + b"x" * 2000 + b'"}\n')
    report = stage_openalex(works, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                            1_000)
    assert rejects_of(report.rejects_path) == [
        ("part_000.gz", 1, "bad_encoding"), ("part_000.gz", 2, "not_an_object"),
        ("part_000.gz", 5, "huge_row")]
    assert [p["id"] for p in staged(tmp_path / "staged")[0]] == ["openalex:W7"]
    cut = works / "part_000.gz"
    cut.write_bytes(cut.read_bytes()[:-20])  # a download that stopped short
    report = stage_openalex(works, tmp_path / "again", DatasetFilter(), DEFAULT_LIMITS, 1_000)
    assert report.bad_shards == ["part_000.gz"]
    assert ("part_000.gz", 5, "bad_shard") in rejects_of(report.rejects_path)


def test_the_command_line_refuses_filters_and_edge_lists_where_they_do_not_apply(
        openalex_works: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path / "var"))
    assert main(["load", str(tmp_path), "--from-year", "2016"]) == 2
    assert "apply to --format openalex and s2ag" in capsys.readouterr().err
    assert main(["load", str(openalex_works), "--format", "openalex",
                 "--citations", str(tmp_path / "edges.csv")]) == 2
    assert "takes its citations from the dataset" in capsys.readouterr().err
    assert main(["load", str(openalex_works), "--format", "openalex", "--from-year", "2020",
                 "--to-year", "2019"]) == 2
    assert "is empty" in capsys.readouterr().err
    assert main(["load", str(tmp_path), str(openalex_works)]) == 2
    assert "--format normalized reads one PATH" in capsys.readouterr().err


def test_staging_draws_its_progress_over_the_shards_bytes(
        openalex_works: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stage_openalex(openalex_works, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                   1_000_000, show_progress=True)
    drawn = capsys.readouterr().err.splitlines()
    assert drawn[-1].startswith("works") and "100.0%" in drawn[-1] and "6 rows" in drawn[-1]


def test_two_records_of_one_work_are_one_node_that_citations_to_either_reach(
        tmp_path: Path) -> None:
    works = tmp_path / "works"
    works.mkdir()
    arxiv = {"landing_page_url": "https://arxiv.org/abs/1810.04805", "source": None}
    records = [
        {"id": "https://openalex.org/W1", "title": "BERT (preprint)", "locations": [arxiv]},
        {"id": "https://openalex.org/W2", "title": "BERT", "doi": "https://doi.org/10.1/b",
         "locations": [arxiv]},
        {"id": "https://openalex.org/W3", "title": "Citing the published version",
         "referenced_works": ["https://openalex.org/W2"]},
    ]
    with gzip.open(works / "part_000.gz", "wt") as out:
        out.writelines(json.dumps(record) + "\n" for record in records)
    report = stage_openalex(works, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                            1_000_000)
    papers, edges = staged(tmp_path / "staged")
    assert [paper["id"] for paper in papers] == ["1810.04805", "openalex:W3"]
    assert edges == [("openalex:W3", "1810.04805")]
    assert rejects_of(report.rejects_path) == [("part_000.gz", 2, "conflicting_paper")]


def test_has_arxiv_keeps_the_works_with_an_arxiv_id(openalex_works: Path,
                                                     tmp_path: Path) -> None:
    stage_openalex(openalex_works, tmp_path / "staged", DatasetFilter.build(require_arxiv=True),
                   DEFAULT_LIMITS, 1_000_000)
    papers, edges = staged(tmp_path / "staged")
    assert [paper["id"] for paper in papers] == ["1706.03762", "1810.04805"]
    assert edges == [("1810.04805", "1706.03762")]
