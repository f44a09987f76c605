"""Hostile input for the loader: rows that used to crash a load (deep JSON, huge integers,
ids too long for Neo4j's indexes) are rejects among rows that load; unreadable or
mislabelled files are one clear CorpusError; Ctrl-C stops a load that resumes after."""

import io
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from crase.api.cli import main
from crase.bench.generate import generate
from crase.errors import CorpusError
from crase.graph import Graph
from crase.ingest.batches import ValidatedCorpus
from crase.ingest.bulk import ImportReport, write_import_files
from crase.ingest.corpus import locate_corpus, read_citations, read_papers
from crase.ingest.edge_table import header_of, write_checked_edges
from crase.ingest.loader import load_corpus
from crase.ingest.records import MAX_ID_CHARS, EdgeRow, Paper, Reject, RejectKind, validate_paper
from crase.ingest.rejects import RejectLog, read_rejects
from crase.settings import DatabaseSettings, IngestSettings, Settings
from tests.ingest.conftest import point_cli_at

GOOD = [{"id": "g1", "title": "Good one", "year": 2001}, {"id": "g2", "title": "Good two"},
        {"id": "g3", "title": "Good three"}]


def line(record: Any) -> str:
    return json.dumps(record) + "\n"


def hostile_papers() -> str:
    """Good rows with a row of every new bad kind between them; the comment is the line."""
    return "".join([
        line(GOOD[0]),                                                         # 1 good
        '{"id": "deep", "title": "Deep", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n",  # 2
        '{"id": "y", "title": "Year", "year": 1' + "0" * 5_000 + "}\n",       # 3 huge number
        '{"id": 1' + "0" * 5_000 + ', "title": "Numeric id"}\n',              # 4 huge number
        line({"id": "x" * 20_000, "title": "Long id"}),                       # 5 id too long
        line({"id": "d", "title": "Long doi", "doi": "10." + "9" * 50_000}),  # 6 id too long
        line({"id": "a", "title": "Long arXiv id", "arxiv_id": "a" * 2_000}),  # 7 too long
        line({"id": "s", "title": "Long S2 id", "s2_id": "f" * 2_000}),       # 8 too long
        line({"id": "t", "title": "Digit year", "year": "1" + "0" * 5_000}),  # 9 year dropped
        line(GOOD[1]),                                                         # 10 good
        line({"id": "e" * MAX_ID_CHARS, "title": "Longest id allowed"}),      # 11 good
        line(GOOD[2]),                                                         # 12 good
    ])


def hostile_citations() -> str:
    return "".join([
        "citing_id,cited_id\n",
        "g2,g1\n",                       # 2 good
        f"g3,{'x' * 20_000}\n",          # 3 cites the paper refused for its long id
        f"{'z' * 5_000},g1\n",           # 4 too long a citing id
        f"g3,{'e' * MAX_ID_CHARS}\n",    # 5 good: the longest id allowed
        "g3,g1\n",                       # 6 good
    ])


def hostile_corpus(folder: Path) -> Path:
    folder.mkdir()
    (folder / "papers.jsonl").write_text(hostile_papers())
    (folder / "citations.csv").write_text(hostile_citations())
    return folder


EXPECTED_REJECTS = {
    ("papers.jsonl", 2, "too_deep"), ("papers.jsonl", 3, "huge_number"),
    ("papers.jsonl", 4, "huge_number"), ("papers.jsonl", 5, "id_too_long"),
    ("papers.jsonl", 6, "id_too_long"), ("papers.jsonl", 7, "id_too_long"),
    ("papers.jsonl", 8, "id_too_long"),
    ("citations.csv", 3, "id_too_long"), ("citations.csv", 4, "id_too_long"),
}


# rows ---------------------------------------------------------------------------------
def test_hostile_rows_are_rejects_with_reasons(tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    path.write_text(hostile_papers())
    items = [item for _, _, item in read_papers(path)]
    assert [item.id for item in items if isinstance(item, Paper)] == [
        "g1", "t", "g2", "e" * MAX_ID_CHARS, "g3"]
    rejects = [item for item in items if isinstance(item, Reject)]
    assert {("papers.jsonl", r.line, r.kind.value) for r in rejects} == {
        key for key in EXPECTED_REJECTS if key[0] == "papers.jsonl"}
    for reject in rejects:
        assert reject.reason and len(reject.reason) < 200 and "\n" not in reject.reason
        assert len(reject.text) <= 200
    reasons = {r.line: r.reason for r in rejects}
    assert "nested deeper" in reasons[2] and "4,300 digits" in reasons[3]
    assert reasons[5].startswith("id has 20000 characters, more than the 1000")
    assert reasons[6].startswith("doi has 50003 characters")
    [kept] = [item for item in items if isinstance(item, Paper) and item.id == "t"]
    [note] = kept.repairs["dropped_year"]
    assert "10000000" in note and "5,001 characters" in note


@pytest.mark.parametrize(("value", "shown"), [
    ("19x5", "year '19x5' is no year; left out"),
    (["1999"], "year ['1999'] is no year; left out"),
    (10 ** 5_000, "year (a number of about 5,001 digits) is no year; left out"),
    (3021, "year 3021 is outside 1600.."),
], ids=["typo", "list", "huge-int", "future"])  # pytest's own ids would str() the huge int
def test_dropped_year_notes_show_the_value(value: Any, shown: str) -> None:
    paper = validate_paper({"id": "p", "title": "T", "year": value})
    assert isinstance(paper, Paper) and paper.year is None
    assert paper.repairs["dropped_year"][0].startswith(shown), paper.repairs


def test_a_huge_integer_id_is_too_long_not_a_crash() -> None:
    assert validate_paper({"id": 10 ** 5_000, "title": "T"}) == (
        RejectKind.ID_TOO_LONG, f"id is a number of more than {MAX_ID_CHARS} digits")
    paper = validate_paper({"id": 10 ** 50, "title": "T"})
    assert isinstance(paper, Paper) and paper.id == "1" + "0" * 50


def test_citations_with_long_ids_are_rejects(tmp_path: Path) -> None:
    path = tmp_path / "citations.csv"
    long_id = "q" * (MAX_ID_CHARS + 1)
    path.write_text(f"citing_id,cited_id\na,{long_id}\n{long_id} b\n\"a\",\"{long_id}\"\nb,a\n")
    items = [item for _, _, item in read_citations(path)]
    assert [r.kind for r in items if isinstance(r, Reject)] == [RejectKind.ID_TOO_LONG] * 3
    assert [r for r in items if isinstance(r, EdgeRow)] == [EdgeRow(5, "b", "a")]


def test_the_bulk_edge_path_refuses_long_ids_as_the_line_reader_does(tmp_path: Path) -> None:
    (tmp_path / "papers.jsonl").write_text(hostile_papers())
    (tmp_path / "citations.csv").write_text(hostile_citations())

    def fresh_corpus(name: str) -> ValidatedCorpus:
        corpus = ValidatedCorpus(locate_corpus(tmp_path), RejectLog(tmp_path / name),
                                 IngestSettings(), batch_size=2)
        assert sum(len(batch.rows) for batch in corpus.paper_batches()) == 5
        return corpus

    fast = write_checked_edges(tmp_path / "citations.csv", fresh_corpus("a.jsonl").papers,
                               io.BytesIO())
    assert fast is not None
    slow = fresh_corpus("b.jsonl")
    slow_edges = sum(len(batch.rows) for batch in slow.edge_batches())
    slow.rejects.flush()
    assert fast.accepted == slow_edges == 3
    assert [(r.line, r.kind, r.reason) for r in fast.rejects] == [
        (r.line, r.kind, r.reason) for r in read_rejects(tmp_path / "b.jsonl")
        if r.file == "citations.csv"]
    assert [r.kind for r in fast.rejects] == [RejectKind.ID_TOO_LONG] * 2


def test_the_bulk_import_files_hold_no_row_that_breaks_an_index(tmp_path: Path) -> None:
    settings = Settings(var_dir=tmp_path / "var")
    corpus = hostile_corpus(tmp_path / "hostile")
    workdir = tmp_path / "work"
    workdir.mkdir()
    report = ImportReport("hostile", tmp_path / "bulk.rejects.jsonl")
    write_import_files(locate_corpus(corpus), workdir, settings, report.rejects_path, report,
                       show=False)
    assert (report.papers.accepted, report.citations.accepted) == (5, 3)
    written = {(r.file, r.line, r.kind.value) for r in read_rejects(report.rejects_path)}
    assert written == EXPECTED_REJECTS
    longest = max(len(field) for text in (workdir / "papers.csv",
                                          workdir / "citations.csv")
                  for field in text.read_text().replace("\n", ",").split(","))
    assert longest <= MAX_ID_CHARS + 2  # quotes


# files --------------------------------------------------------------------------------
def test_a_citations_file_that_is_a_symlink_loop_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "papers.jsonl").write_text(line(GOOD[0]))
    (tmp_path / "citations.csv").symlink_to(tmp_path / "citations.csv")
    with pytest.raises(CorpusError, match=r"citations file .*citations.csv is a symbolic link "
                                          r"that cannot be followed .*; point it at"):
        locate_corpus(tmp_path)
    (tmp_path / "loop.csv").symlink_to(tmp_path / "loop.csv")
    with pytest.raises(CorpusError, match="loop.csv is a symbolic link"):
        locate_corpus(tmp_path / "papers.jsonl", citations=tmp_path / "loop.csv")
    (tmp_path / "citations.csv").unlink()
    (tmp_path / "citations.csv").symlink_to(tmp_path / "nowhere.csv")  # dangling
    with pytest.raises(CorpusError, match="symbolic link"):
        locate_corpus(tmp_path)


def test_a_papers_file_that_is_a_symlink_loop_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "papers.jsonl").symlink_to(tmp_path / "papers.jsonl")
    with pytest.raises(CorpusError, match="papers file .* is a symbolic link"):
        locate_corpus(tmp_path)


def test_the_bulk_import_refuses_a_wrong_header_too(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "papers.jsonl").write_text("".join(line(paper) for paper in GOOD))
    (corpus / "citations.csv").write_text("source,target\ng2,g1\n")
    report = ImportReport("c", tmp_path / "r.jsonl")
    with pytest.raises(CorpusError, match="not the header 'citing_id,cited_id'"):
        write_import_files(locate_corpus(corpus), tmp_path, Settings(var_dir=tmp_path / "v"),
                           report.rejects_path, report, show=False)


def test_a_file_without_header_still_loads(tmp_path: Path) -> None:
    (tmp_path / "papers.jsonl").write_text("".join(line(paper) for paper in GOOD))
    (tmp_path / "citations.csv").write_text("g2,g1\ng3,nowhere\n")
    corpus = ValidatedCorpus(locate_corpus(tmp_path), RejectLog(tmp_path / "r.jsonl"),
                             IngestSettings(), batch_size=10)
    list(corpus.paper_batches())
    assert [e.line for batch in corpus.edge_batches() for e in batch.rows] == [1]


# loads --------------------------------------------------------------------------------
def paper_ids(graph: Graph) -> set[str]:
    with graph.driver.session(database=graph.database) as session:
        return {r["id"] for r in session.run("MATCH (p:Paper) RETURN p.id AS id")}


def edge_count(graph: Graph) -> int:
    with graph.driver.session(database=graph.database) as session:
        record = session.run("MATCH ()-[r:CITES]->() RETURN count(r) AS n").single()
    return int(record["n"]) if record else 0


@pytest.mark.integration
def test_a_hostile_batch_loads_every_good_row(graph: Graph, settings: Settings,
                                              tmp_path: Path) -> None:
    files = locate_corpus(hostile_corpus(tmp_path / "hostile"))
    report = load_corpus(graph, files, settings, batch_size=100, show_progress=False)
    assert paper_ids(graph) == {"g1", "g2", "g3", "t", "e" * MAX_ID_CHARS}
    assert edge_count(graph) == 3
    written = read_rejects(report.rejects_path)
    assert {(r.file, r.line, r.kind.value) for r in written} == EXPECTED_REJECTS
    assert (report.papers.accepted, report.papers.rejected) == (5, 7)
    assert (report.citations.accepted, report.citations.rejected) == (3, 2)
    again = load_corpus(graph, files, settings, batch_size=100, restart=True,
                        show_progress=False)
    assert again.status == "loaded" and again.rejects == report.rejects


class SigintInDestructor:
    """What the driver's Workspace.__del__ met: Ctrl-C arriving while a destructor runs."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10_000):  # Python runs the signal handler here, inside __del__
            pass


class CtrlCGraph(Graph):
    """The real graph; Ctrl-C lands in a destructor during the second citation write."""

    def __init__(self, graph: Graph) -> None:
        super().__init__(graph.driver, graph.database)
        self.citation_writes = 0

    def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        if name == "merge_citations":
            self.citation_writes += 1
            if self.citation_writes == 2:
                SigintInDestructor()
        return super().write(name, **params)


@pytest.mark.integration
def test_ctrl_c_in_a_destructor_stops_the_load_and_the_rerun_resumes(
        graph: Graph, settings: Settings, tmp_path: Path) -> None:
    generate(tmp_path / "c", 100, 1000, seed=3)
    files = locate_corpus(tmp_path / "c")
    interrupted = CtrlCGraph(graph)
    # The load puts back the handler it found (Python's own, or SIG_IGN where the test
    # session was started in the background).
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        load_corpus(interrupted, files, settings, batch_size=200, show_progress=False)
    assert interrupted.citation_writes == 2 and edge_count(graph) == 400
    assert signal.getsignal(signal.SIGINT) is before

    report = load_corpus(graph, files, settings, batch_size=200, show_progress=False)
    assert report.status == "resumed" and report.citations_written == 600
    assert report.resume_point is not None
    assert report.resume_point.describe() == (
        "resumed in the citations phase after line 401 of citations.csv")
    assert edge_count(graph) == 1000


@pytest.mark.integration
def test_the_resume_summary_names_the_phase_and_line(
        graph: Graph, cli_env: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    generate(tmp_path / "c", 300, 500, seed=4)  # more paper lines than citation lines done
    original = Graph.write
    writes = {"merge_citations": 0}

    def dies_in_citations(self: Graph, name: str, **params: Any) -> list[dict[str, Any]]:
        # As kill -9 would: the process stops mid-phase, the last checkpoint stays.
        if name == "merge_citations":
            writes[name] += 1
            if writes[name] == 2:
                raise KeyboardInterrupt
        return original(self, name, **params)

    monkeypatch.setattr(Graph, "write", dies_in_citations)
    assert main(["load", str(tmp_path / "c"), "--batch-size", "100", "--quiet"]) == 130
    assert "rerun the same command to resume" in capsys.readouterr().err
    monkeypatch.setattr(Graph, "write", original)
    assert main(["load", str(tmp_path / "c"), "--batch-size", "100", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "resumed in the citations phase after line 101 of citations.csv" in out
    assert "500 loaded" in out


@pytest.mark.integration
def test_a_load_stopped_between_phases_resumes_in_citations(
        graph: Graph, settings: Settings, tmp_path: Path) -> None:
    generate(tmp_path / "c", 50, 100, seed=5)
    files = locate_corpus(tmp_path / "c")

    class StopsAtCitations(Graph):
        def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
            if name == "merge_citations":
                raise KeyboardInterrupt
            return super().write(name, **params)

    with pytest.raises(KeyboardInterrupt):
        load_corpus(StopsAtCitations(graph.driver, graph.database), files, settings,
                    show_progress=False)
    report = load_corpus(graph, files, settings, show_progress=False)
    assert report.resume_point is not None
    assert report.resume_point.describe() == (
        "resumed at the start of the citations phase (citations.csv)")
    assert report.papers_written == 0 and report.citations_written == 100




@pytest.mark.integration
@pytest.mark.slow
def test_the_bulk_import_of_a_hostile_corpus_builds_every_index(
        second_server: DatabaseSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    corpus = hostile_corpus(tmp_path / "hostile")
    point_cli_at(second_server, monkeypatch, tmp_path)
    rejects = tmp_path / "bulk.rejects.jsonl"
    assert main(["db", "import", str(corpus), "--rejects", str(rejects), "--quiet"]) == 0
    assert "id_too_long" in capsys.readouterr().out
    bulk_graph = Graph.connect(second_server)
    try:
        assert paper_ids(bulk_graph) == {"g1", "g2", "g3", "t", "e" * MAX_ID_CHARS}
        assert edge_count(bulk_graph) == 3
        with bulk_graph.driver.session() as session:
            states = {r["state"] for r in session.run("SHOW INDEXES YIELD state")}
    finally:
        bulk_graph.close()
    assert states == {"ONLINE"}
    assert {(r.file, r.line, r.kind.value) for r in read_rejects(rejects)} == EXPECTED_REJECTS


@pytest.mark.parametrize("header", ["Citing_ID,Cited_ID", "CITED_ID,CITING_ID",
                                    "\ufeffcitING_id , Cited_Id"])
def test_a_header_in_another_case_is_the_header_on_both_edge_paths(
        tmp_path: Path, header: str) -> None:
    (tmp_path / "papers.jsonl").write_text("".join(line(paper) for paper in GOOD))
    swapped = header.strip("\ufeff").lower().startswith("cited")
    rows = "g1,g2\ng1,g3\n" if swapped else "g2,g1\ng3,g1\n"
    (tmp_path / "citations.csv").write_text(f"{header}\n{rows}")
    corpus = ValidatedCorpus(locate_corpus(tmp_path), RejectLog(tmp_path / "r.jsonl"),
                             IngestSettings(), batch_size=10)
    list(corpus.paper_batches())
    edges = [(e.citing, e.cited) for batch in corpus.edge_batches() for e in batch.rows]
    assert edges == [("g2", "g1"), ("g3", "g1")]
    assert header_of(tmp_path / "citations.csv") == swapped
    fast = write_checked_edges(tmp_path / "citations.csv", corpus.papers, io.BytesIO())
    if " " not in header:  # a space is something to interpret: the line reader's alone
        assert fast is not None and fast.accepted == 2 and fast.rejects == []


@pytest.mark.parametrize("header", ["source,target", "citing,cited", "from to"])
def test_a_wrong_header_is_refused_before_any_paper_is_handed_on(tmp_path: Path,
                                                                 header: str) -> None:
    (tmp_path / "papers.jsonl").write_text("".join(line(paper) for paper in GOOD))
    (tmp_path / "citations.csv").write_text(f"{header}\ng2,g1\n")
    corpus = ValidatedCorpus(locate_corpus(tmp_path), RejectLog(tmp_path / "r.jsonl"),
                             IngestSettings(), batch_size=1)
    with pytest.raises(CorpusError, match="citations.csv line 1 is .*: not the header "
                                          "'citing_id,cited_id'.*make the first line "
                                          "citing_id,cited_id"):
        next(corpus.paper_batches())
    # A first line that names papers is an edge, not a header: nothing is refused early.
    (tmp_path / "citations.csv").write_text("g2,g1\ng3,g1\n")
    corpus = ValidatedCorpus(locate_corpus(tmp_path), RejectLog(tmp_path / "r2.jsonl"),
                             IngestSettings(), batch_size=1)
    assert next(corpus.paper_batches()).rows


@pytest.mark.integration
def test_a_load_with_a_wrong_header_writes_nothing(graph: Graph, settings: Settings,
                                                   tmp_path: Path) -> None:
    (tmp_path / "papers.jsonl").write_text("".join(line(paper) for paper in GOOD))
    (tmp_path / "citations.csv").write_text("Source,Target\ng2,g1\n")
    with pytest.raises(CorpusError, match="not the header"):
        load_corpus(graph, locate_corpus(tmp_path), settings, rejects_path=tmp_path / "r",
                    show_progress=False)
    assert graph.read("count_papers_and_citations")[0]["papers"] == 0
