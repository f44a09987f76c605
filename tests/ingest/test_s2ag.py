"""The Semantic Scholar datasets (papers, abstracts, citations): gzipped shards in the
shapes of AI2's published samples (tests/ingest/fixtures/s2ag: compact JSON, integer
`corpusid` in papers and abstracts, string corpus ids and flat `intents` in citations),
staged and loaded, with the citations' isinfluential and intents on the edges."""

import json
from pathlib import Path
from typing import Any

import pytest

from crase.api.cli import main
from crase.errors import CorpusError
from crase.graph import Graph
from crase.ingest.dataset_filter import DatasetFilter
from crase.ingest.records import DEFAULT_LIMITS
from crase.ingest.s2ag import citation_signals, stage_s2ag
from crase.search.expansion import expand
from crase.settings import DatabaseSettings
from tests.ingest.conftest import point_cli_at
from tests.ingest.test_openalex import graph_papers, rejects_of, staged

SEPSIS_ID = "s2:5e1c2a0b7f3d9e8c6b4a2f1e0d9c8b7a6f5e4d3c"
NMT = {"id": "1409.0473",
       "title": "Neural Machine Translation by Jointly Learning to Align and Translate",
       "year": 2014, "date": "2014-09-01",
       "venue": "International Conference on Learning Representations",
       "authors": ["Dzmitry Bahdanau"], "arxiv_id": "1409.0473",
       "s2_id": "fa72afa9b2cbc8f0d7b05d52548906610ffbb9c5"}
ATTENTION = {"id": "1706.03762", "title": "Attention is All you Need",
             "abstract": "The dominant sequence transduction models are based on complex "
                         "recurrent networks.",
             "year": 2017, "date": "2017-06-12", "venue": "Neural Information Processing Systems",
             "authors": ["Ashish Vaswani", "Noam M. Shazeer"], "arxiv_id": "1706.03762",
             "s2_id": "204e3073870fae3d05bcbc2f6a8e263d9b72e776"}
BERT = {"id": "1810.04805",
        "title": "BERT: Pre-training of Deep Bidirectional Transformers for Language "
                 "Understanding",
        "abstract": "We introduce a new language representation model called BERT.",
        "year": 2019, "date": "2019-06-02",
        "venue": "North American Chapter of the Association for Computational Linguistics",
        "authors": ["Jacob Devlin", "Kristina Toutanova"], "doi": "10.18653/v1/n19-1423",
        "arxiv_id": "1810.04805", "s2_id": "df2b0e26d0599ce3e70df8a9da02e51594e0e992"}
SEPSIS = {"id": SEPSIS_ID, "title": "Early detection of sepsis in adults",
          "abstract": "Sepsis is detected early from routine measurements.", "year": 2010,
          "authors": ["Jane Roe"], "s2_id": SEPSIS_ID.removeprefix("s2:")}
ALL_EDGES = [("1706.03762", "1409.0473"), ("1810.04805", "1409.0473"),
             ("1810.04805", "1706.03762"), (SEPSIS_ID, "1706.03762")]
ALL_REJECTS = [("citations/part-0.gz", 4, "malformed_json"),
               ("citations/part-1.gz", 3, "duplicate_edge"),
               ("papers/part-0.gz", 3, "malformed_json"), ("papers/part-0.gz", 6, "missing_title")]
SIGNALS = {("1706.03762", "1409.0473"): (False, ["background"]),
           ("1810.04805", "1409.0473"): (False, []),
           ("1810.04805", "1706.03762"): (True, ["methodology", "background"]),
           (SEPSIS_ID, "1706.03762"): (False, [])}
# On the edges, an empty list of intents is no property, whichever path wrote it.
GRAPH_SIGNALS = {edge: (influential, intents or None)
                 for edge, (influential, intents) in SIGNALS.items()}


def staged_signals(folder: Path) -> dict[tuple[str, str], tuple[bool, list[str]]]:
    rows = [json.loads(line) for line in
            (folder / "citation_signals.jsonl").read_text().splitlines()]
    return {(r["citing"], r["cited"]): (r["isinfluential"], r["intents"]) for r in rows}


def test_intents_are_kept_once_each_in_order() -> None:
    record = {"isinfluential": True, "intents": [["methodology"], None, ["background",
                                                                         "methodology"]]}
    assert citation_signals(record) == {"isinfluential": True,
                                        "intents": ["methodology", "background"]}
    assert citation_signals({"intents": None}) == {"isinfluential": None, "intents": []}


def test_the_datasets_stage_to_exactly_their_papers_and_in_corpus_edges(
        s2ag_datasets: Path, tmp_path: Path) -> None:
    report = stage_s2ag(s2ag_datasets, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                        1_000_000)
    papers, edges = staged(tmp_path / "staged")
    assert papers == [NMT, ATTENTION, BERT, SEPSIS]
    assert edges == ALL_EDGES
    assert staged_signals(tmp_path / "staged") == SIGNALS
    assert rejects_of(report.rejects_path) == ALL_REJECTS
    assert (report.shards, report.records, report.kept) == (4, 6, 4)
    assert report.edges_outside == 2  # an unresolved reference, a paper not in the shards
    assert sorted(path.name for path in (tmp_path / "staged").iterdir()) == [
        "citation_signals.jsonl", "citations.csv", "notes.jsonl", "papers.jsonl",
        "rejects.jsonl", "staged.json"]  # the spill and the abstracts table are gone


def test_datasets_split_over_several_folders_stage_as_one(
        s2ag_datasets: Path, tmp_path: Path) -> None:
    papers_folder, rest = tmp_path / "papers-download", tmp_path / "the-rest"
    for folder, names in ((papers_folder, ["papers"]), (rest, ["abstracts", "citations"])):
        folder.mkdir()
        for name in names:
            (s2ag_datasets / name).rename(folder / name)
    report = stage_s2ag([papers_folder, rest], tmp_path / "staged", DatasetFilter(),
                        DEFAULT_LIMITS, 1_000_000)
    assert staged(tmp_path / "staged") == ([NMT, ATTENTION, BERT, SEPSIS], ALL_EDGES)
    assert staged_signals(tmp_path / "staged") == SIGNALS
    assert (report.shards, report.records, report.kept) == (4, 6, 4)
    # Rejects name the shard under the folder holding both downloads.
    assert rejects_of(report.rejects_path) == sorted(
        (f"{'papers-download' if file.startswith('papers/') else 'the-rest'}/{file}", line,
         kind) for file, line, kind in ALL_REJECTS)


def test_a_filter_keeps_exactly_its_subset_and_drops_edges_that_leave_it(
        s2ag_datasets: Path, tmp_path: Path) -> None:
    cs_with_abstracts = DatasetFilter.build(fields=["Computer Science"], require_abstract=True)
    report = stage_s2ag(s2ag_datasets, tmp_path / "staged", cs_with_abstracts,
                        DEFAULT_LIMITS, 1_000_000)
    papers, edges = staged(tmp_path / "staged")
    assert [paper["id"] for paper in papers] == ["1706.03762", "1810.04805"]
    assert edges == [("1810.04805", "1706.03762")]
    assert staged_signals(tmp_path / "staged") == {
        ("1810.04805", "1706.03762"): (True, ["methodology", "background"])}
    # Sepsis (field) and the paper without a title (no field) before they are checked,
    # NMT (no abstract) once its abstract is looked for.
    assert report.filtered_out == 3
    assert rejects_of(report.rejects_path) == [
        ("citations/part-0.gz", 4, "malformed_json"), ("citations/part-1.gz", 3, "duplicate_edge"),
        ("papers/part-0.gz", 3, "malformed_json")]


def test_a_folder_without_papers_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="papers/"):
        stage_s2ag(tmp_path, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS, 1_000_000)


def graph_signals(graph: Graph) -> dict[tuple[str, str], tuple[Any, Any]]:
    with graph.driver.session(database=graph.database) as session:
        rows = session.run("MATCH (a:Paper)-[r:CITES]->(b:Paper) RETURN a.id AS a, b.id AS b, "
                           "r.isinfluential AS influential, r.intents AS intents").data()
    return {(r["a"], r["b"]): (r["influential"], r["intents"] and list(r["intents"]))
            for r in rows}


@pytest.mark.integration
def test_crase_load_reads_the_datasets_with_signals(
        s2ag_datasets: Path, graph: Graph, cli_env: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["load", str(s2ag_datasets), "--format", "s2ag", "--quiet"]) == 0
    assert "4 citations with isinfluential and intents" in capsys.readouterr().out
    assert graph_papers(graph) == ([NMT, ATTENTION, BERT, SEPSIS], ALL_EDGES)
    assert graph_signals(graph) == GRAPH_SIGNALS
    # The search's neighbourhood reads the mark, and a walk weighed by it says so.
    papers = [paper["id"] for paper in (NMT, ATTENTION, BERT, SEPSIS)]
    hood = expand(graph, papers, "1.5", [])
    assert hood.influential == {edge: marked for edge, (marked, _) in SIGNALS.items()}
    assert main(["search", "attention translation transformer", "--weighting", "influential",
                 "--influential-weight", "4", "-k", "4", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert main(["show", run["run_id"], "--json"]) == 0
    edges = {(e["citing"], e["cited"]): e
             for result in json.loads(capsys.readouterr().out)["results"]
             for e in result["evidence"]["path"] + result["evidence"]["strongest_edges"]}
    assert edges[("1810.04805", "1706.03762")]["edge"] == "citation marked influential, " \
        "weighed 4"
    assert edges[("1810.04805", "1706.03762")]["weight"] == 4.0
    assert all(e["delta"] is None and (e["weight"] == 4.0) == bool(e["influential"])
               for e in edges.values())


@pytest.mark.integration
@pytest.mark.slow
def test_crase_db_import_reads_the_datasets_with_signals(
        s2ag_datasets: Path, second_server: DatabaseSettings, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    point_cli_at(second_server, monkeypatch, tmp_path)
    assert main(["db", "import", str(s2ag_datasets), "--format", "s2ag", "--quiet",
                 "--no-embed"]) == 0
    # The signals went into neo4j-admin's relationship file, not through Cypher after it.
    assert "imported with the citations" in capsys.readouterr().out
    with Graph.connect(second_server) as graph:
        assert graph_papers(graph) == ([NMT, ATTENTION, BERT, SEPSIS], ALL_EDGES)
        assert graph_signals(graph) == GRAPH_SIGNALS


def test_the_papers_dataset_alone_stages_papers_without_abstracts_or_edges(
        s2ag_datasets: Path, tmp_path: Path) -> None:
    only_papers = tmp_path / "only-papers"
    (only_papers / "papers").mkdir(parents=True)
    for shard in (s2ag_datasets / "papers").iterdir():
        (only_papers / "papers" / shard.name).write_bytes(shard.read_bytes())
    report = stage_s2ag(only_papers, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                        1_000_000)
    papers, edges = staged(tmp_path / "staged")
    assert [paper["id"] for paper in papers] == [NMT["id"], ATTENTION["id"], BERT["id"],
                                                 SEPSIS_ID]
    assert not any("abstract" in paper for paper in papers) and edges == []
    assert report.kept == 4 and not (tmp_path / "staged" / "citation_signals.jsonl").exists()
