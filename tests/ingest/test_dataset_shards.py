"""Shards of a bulk dataset as they arrive: a shard that cannot be read to its end costs only
itself, the newest `updated_date=` copy of a work wins, and the summary counts every line."""

import gzip
import json
import shutil
from pathlib import Path

import pytest

from crase.api.cli import main
from crase.api.commands.ingest import print_staging_report
from crase.graph import Graph
from crase.ingest.bulk import ImportReport, write_import_files
from crase.ingest.corpus import locate_corpus
from crase.ingest.dataset_filter import DatasetFilter
from crase.ingest.openalex import stage_openalex
from crase.ingest.records import DEFAULT_LIMITS
from crase.ingest.rejects import read_rejects
from crase.ingest.s2ag import stage_s2ag
from crase.settings import Settings
from tests.ingest.conftest import FIXTURES, gzip_shards
from tests.ingest.test_openalex import (
    ALL_EDGES,
    ATTENTION,
    BERT,
    NMT,
    PROTEIN,
    rejects_of,
    staged,
)

GOOD_REJECTS = [("updated_date=2024-01-01/part_000.gz", 3, "malformed_json"),
                ("updated_date=2024-02-01/part_000.gz", 1, "self_citation"),
                ("updated_date=2024-02-01/part_000.gz", 2, "missing_title")]


def work(number: int, title: str, references: list[int]) -> str:
    return json.dumps({"id": f"https://openalex.org/W{number}", "title": title,
                       "publication_year": 2020, "authorships": [],
                       "referenced_works": [f"https://openalex.org/W{r}" for r in references]})


def gzipped(lines: list[str]) -> bytes:
    return gzip.compress("".join(line + "\n" for line in lines).encode())


def add_bad_shards(works: Path) -> None:
    """Three shards that cannot be read to their end, each beside the good ones: a
    download cut off, a shard that is no gzip at all, and one with bytes overwritten."""
    whole = gzipped([work(2000 + n, f"Cut off shard, work {n}", []) for n in range(100)])
    folder = works / "updated_date=2024-03-01"
    folder.mkdir()
    (folder / "part_000.gz").write_bytes(whole[:len(whole) * 2 // 3])
    (folder / "part_001.gz").write_text(work(2999, "Plain JSON named .gz", []) + "\n")
    corrupt = bytearray(gzipped([work(3000 + n, f"Work {n}", []) for n in range(200)]))
    corrupt[len(corrupt) // 2:len(corrupt) // 2 + 40] = b"\xff" * 40
    (folder / "part_002.gz").write_bytes(bytes(corrupt))


def test_a_bad_shard_is_one_reject_and_every_other_shard_loads(
        openalex_works: Path, tmp_path: Path) -> None:
    add_bad_shards(openalex_works)
    report = stage_openalex(openalex_works, tmp_path / "staged", DatasetFilter(),
                            DEFAULT_LIMITS, 1_000_000)
    papers, edges = staged(tmp_path / "staged")
    good = [paper for paper in papers if not paper["id"].startswith(("openalex:W2",
                                                                      "openalex:W3"))]
    assert good == [ATTENTION, BERT, NMT, PROTEIN] and edges == ALL_EDGES
    bad = {reject.file: reject for reject in read_rejects(report.rejects_path)
           if reject.kind.value == "bad_shard"}
    assert sorted(bad) == [f"updated_date=2024-03-01/part_00{n}.gz" for n in range(3)]
    assert report.bad_shards == sorted(bad)
    assert report.partial
    cut = bad["updated_date=2024-03-01/part_000.gz"]
    assert "byte" in cut.reason and "download the shard again" in cut.reason
    assert bad["updated_date=2024-03-01/part_001.gz"].line == 1  # nothing of it was read
    assert "not a gzip" in bad["updated_date=2024-03-01/part_001.gz"].reason.lower()
    # The rows read before the break are kept: the shard's lines up to it are whole.
    assert all(reject.kind.value == "bad_shard" or reject.file in {
        "updated_date=2024-01-01/part_000.gz", "updated_date=2024-02-01/part_000.gz"}
        for reject in read_rejects(report.rejects_path))


def test_a_bad_citations_shard_leaves_the_other_citations(
        s2ag_datasets: Path, tmp_path: Path) -> None:
    shard = s2ag_datasets / "citations" / "part-1.gz"
    shard.write_bytes(shard.read_bytes()[:20])
    report = stage_s2ag(s2ag_datasets, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                        1_000_000)
    # part-0's two in-corpus citations are kept; part-1 is one reject.
    assert staged(tmp_path / "staged")[1] == [("1706.03762", "1409.0473"),
                                              ("1810.04805", "1706.03762")]
    assert report.bad_shards == ["citations/part-1.gz"]
    assert ("citations/part-1.gz", 1, "bad_shard") in rejects_of(report.rejects_path)


@pytest.mark.integration
def test_crase_load_of_a_dataset_with_a_bad_shard_says_partial(
        openalex_works: Path, graph: Graph, cli_env: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    add_bad_shards(openalex_works)
    assert main(["load", str(openalex_works), "--format", "openalex", "--quiet"]) == 3
    out = capsys.readouterr().out
    assert "partial: 3 shards could not be read to their end" in out
    assert "updated_date=2024-03-01/part_001.gz" in out
    shutil.rmtree(openalex_works / "updated_date=2024-03-01")
    assert main(["load", str(openalex_works), "--format", "openalex", "--quiet"]) == 0


def write_partition(works: Path, date: str, lines: list[str]) -> None:
    folder = works / f"updated_date={date}"
    folder.mkdir(parents=True)
    (folder / "part_000.gz").write_bytes(gzipped(lines))


def test_the_newest_updated_date_copy_of_a_work_wins(tmp_path: Path) -> None:
    works = tmp_path / "works"
    arxiv = {"landing_page_url": "https://arxiv.org/abs/2101.00001"}
    newer = json.dumps({**json.loads(work(1, "Title as corrected", [2])),
                        "primary_location": arxiv})
    # Older copies: another title and references, and (W3) the very same record.
    write_partition(works, "2023-01-01", [work(1, "Title as first published", [3]),
                                          work(2, "Cited work", []), work(3, "Third", [])])
    write_partition(works, "2024-06-01", [newer, work(3, "Third", [])])
    report = stage_openalex(works, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                            1_000_000)
    papers, edges = staged(tmp_path / "staged")
    assert [(paper["id"], paper["title"]) for paper in papers] == [
        ("2101.00001", "Title as corrected"), ("openalex:W2", "Cited work"),
        ("openalex:W3", "Third")]
    assert edges == [("2101.00001", "openalex:W2")]  # the newest copy's references
    rejects = {(r.file, r.line): r for r in read_rejects(report.rejects_path)}
    assert sorted((file, line, r.kind.value) for (file, line), r in rejects.items()) == [
        ("updated_date=2023-01-01/part_000.gz", 1, "conflicting_paper"),
        ("updated_date=2023-01-01/part_000.gz", 3, "duplicate_paper")]
    reason = rejects["updated_date=2023-01-01/part_000.gz", 1].reason
    assert "W1" in reason and "updated_date=2024-06-01/part_000.gz line 1" in reason


def test_the_summary_reads_as_many_lines_as_the_shards_hold(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [work(n, f"Work {n}", []) for n in range(10)] + [
        '{"id": "https://openalex.org/W98", "title": "cut', "", "[1, 2]",
        json.dumps({"id": "https://openalex.org/W99"}), "{not json"]
    write_partition(tmp_path / "works", "2024-01-01", lines)
    report = stage_openalex(tmp_path / "works", tmp_path / "staged",
                            DatasetFilter.build(from_year=2021), DEFAULT_LIMITS, 1_000_000)
    assert len(lines) == 15
    assert report.records == 15
    assert (report.kept, report.filtered_out, report.blank) == (0, 10, 1)
    print_staging_report("openalex", report)
    assert "15 lines read" in capsys.readouterr().out


def test_the_bulk_import_rejects_file_holds_the_dataset_rejects_too(
        s2ag_datasets: Path, tmp_path: Path) -> None:
    report = stage_s2ag(s2ag_datasets, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                        1_000_000)
    imported = ImportReport("staged", tmp_path / "mine.jsonl")
    (tmp_path / "work").mkdir()
    write_import_files(locate_corpus(report.folder), tmp_path / "work",
                       Settings(var_dir=tmp_path / "var"), imported.rejects_path, imported,
                       show=False, dataset_rejects=report.rejects_path)
    assert rejects_of(tmp_path / "mine.jsonl") == rejects_of(report.rejects_path) != []
    assert sum(imported.rejects.values()) == report.rejected


@pytest.mark.integration
def test_crase_load_writes_the_dataset_rejects_to_the_rejects_file(
        s2ag_datasets: Path, graph: Graph, cli_env: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "my-rejects.jsonl"
    assert main(["load", str(s2ag_datasets), "--format", "s2ag", "--quiet",
                 "--rejects", str(mine)]) == 0
    assert rejects_of(mine) == [("citations/part-0.gz", 4, "malformed_json"),
                                ("citations/part-1.gz", 3, "duplicate_edge"),
                                ("papers/part-0.gz", 3, "malformed_json"),
                                ("papers/part-0.gz", 6, "missing_title")]
    assert f"rejects    4 in {mine}" in capsys.readouterr().out
    # Unchanged on a rerun: the load is skipped and the file keeps them, once each.
    assert main(["load", str(s2ag_datasets), "--format", "s2ag", "--quiet",
                 "--rejects", str(mine)]) == 0
    assert len(rejects_of(mine)) == 4


# Empty shards: a download that never started, or stopped before its data, is refused like
# a cut-off one; loaded silently it would lose the shard's works without a word.
EMPTY_SHARDS = {
    "zero.gz": (b"", "the file is empty (0 bytes)"),
    "zero.jsonl": (b"", "the file is empty (0 bytes)"),
    "no-text.gz": (gzip.compress(b""), "hold no text"),
    "blank.gz": (gzip.compress(b"\n  \n\n"), "3 blank lines and no record"),
    "blank.jsonl": (b"\n\n", "2 blank lines and no record"),
}


def add_empty_shards(folder: Path) -> list[str]:
    """The empty shards beside the good ones in `folder`; their names as rejects say them."""
    for name, (data, _) in EMPTY_SHARDS.items():
        (folder / name).write_bytes(data)
    return sorted(EMPTY_SHARDS)


def test_every_empty_openalex_shard_is_a_bad_shard_reject_and_the_good_ones_load(
        openalex_works: Path, tmp_path: Path) -> None:
    folder = openalex_works / "updated_date=2024-03-01"
    folder.mkdir()
    names = [f"updated_date=2024-03-01/{name}" for name in add_empty_shards(folder)]
    report = stage_openalex(openalex_works, tmp_path / "staged", DatasetFilter(),
                            DEFAULT_LIMITS, 1_000_000)
    papers, edges = staged(tmp_path / "staged")
    assert papers == [ATTENTION, BERT, NMT, PROTEIN] and edges == ALL_EDGES
    assert sorted(report.bad_shards) == names and report.partial
    bad = {reject.file: reject for reject in read_rejects(report.rejects_path)
           if reject.kind.value == "bad_shard"}
    assert sorted(bad) == names
    for name, (_, reason) in EMPTY_SHARDS.items():
        shown = bad[f"updated_date=2024-03-01/{name}"].reason
        assert shown.startswith("the shard is empty") and reason in shown
        assert "download the shard again" in shown
    # The good shards' own rejects are as before.
    assert [r for r in rejects_of(report.rejects_path) if r[2] != "bad_shard"] == GOOD_REJECTS


def test_every_empty_semantic_scholar_shard_is_a_bad_shard_reject(
        s2ag_datasets: Path, tmp_path: Path) -> None:
    expected = []
    for dataset in ("papers", "abstracts", "citations"):
        expected += [f"{dataset}/{name}" for name in add_empty_shards(s2ag_datasets / dataset)]
    report = stage_s2ag(s2ag_datasets, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                        1_000_000)
    assert sorted(report.bad_shards) == sorted(expected)
    assert sorted(r[0] for r in rejects_of(report.rejects_path)
                  if r[2] == "bad_shard") == sorted(expected)
    clean = stage_s2ag(gzip_fixture_copy(tmp_path), tmp_path / "clean", DatasetFilter(),
                       DEFAULT_LIMITS, 1_000_000)
    assert staged(tmp_path / "staged") == staged(tmp_path / "clean")  # good shards all read
    assert report.kept == clean.kept > 0


def gzip_fixture_copy(tmp_path: Path) -> Path:
    return gzip_shards(FIXTURES / "s2ag", tmp_path / "s2ag-clean")


def test_a_gzip_header_alone_is_a_bad_shard(tmp_path: Path) -> None:
    works = tmp_path / "works"
    works.mkdir()
    (works / "part_000.gz").write_bytes(gzip.compress(b"")[:10])  # the header, no data
    report = stage_openalex(works, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                            1_000_000)
    assert report.bad_shards == ["part_000.gz"] and report.nothing_read


@pytest.mark.parametrize("command", [["load"], ["db", "import", "--no-embed"]])
@pytest.mark.parametrize("corpus_format", ["openalex", "s2ag"])
def test_a_load_of_only_empty_shards_stops_with_the_reason_before_the_database(
        command: list[str], corpus_format: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # No server runs: the command must stop before it connects (or, for db import,
    # before it stops a server and replaces its database).
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("CRASE_DATABASE__HOME", str(tmp_path / "no-server"))
    monkeypatch.setenv("CRASE_DATABASE__URI", "bolt://127.0.0.1:9")
    dataset = tmp_path / "dataset"
    folder = dataset / "papers" if corpus_format == "s2ag" else dataset
    folder.mkdir(parents=True)
    (folder / "part_000.gz").write_bytes(b"")
    (folder / "part_001.gz").write_bytes(gzip.compress(b"\n"))
    assert main([*command, str(dataset), "--format", corpus_format, "--quiet"]) == 2
    captured = capsys.readouterr()
    error = captured.err.strip()
    assert error.startswith("crase: DatasetEmpty: the dataset yielded no record")
    assert "2 of its 2 shards are empty or cannot be read" in error
    assert "download those shards again" in error and "\n" not in error
    assert "Bulk import" not in captured.out and "Loaded" not in captured.out
