"""Good data is kept: a junk author name, an impossible year or a null list costs no paper,
each repair is noted; the one citations reader reads RFC 4180 CSV and one whitespace rule;
rejects say why an edge's paper is missing and how big a huge row was."""

import json
from pathlib import Path
from typing import Any

import pytest

from crase.ingest.batches import ValidatedCorpus
from crase.ingest.corpus import locate_corpus, read_citations, read_papers
from crase.ingest.records import EdgeRow, Paper, Reject, RejectKind, validate_paper
from crase.ingest.rejects import NoteLog, RejectLog, read_notes, read_rejects
from crase.settings import IngestSettings


def valid(record: dict[str, Any]) -> Paper:
    result = validate_paper(record)
    assert isinstance(result, Paper), result
    return result


# papers -------------------------------------------------------------------------------
def test_a_name_without_a_letter_is_dropped_and_the_paper_kept() -> None:
    # hep-th 9302046: one author entry is "10"; the paper and its 27 citations were lost.
    paper = valid({"id": "9302046", "title": "Constrained Dynamics",
                   "authors": ["Amitabha Lahiri", "10"]})
    assert paper.authors == ["Amitabha Lahiri"]
    assert paper.repairs == {"repaired_authors": ["'10' dropped: no letter in it"]}


def test_author_entries_that_are_not_text_are_dropped_and_noted() -> None:
    paper = valid({"id": "p", "title": "T", "authors": ["A. Author", 10, None, {"x": 1}]})
    assert paper.authors == ["A. Author"]
    assert len(paper.repairs["repaired_authors"]) == 3


@pytest.mark.parametrize("year", [801, 3021, "", "19x5", ["1999"], True, 10 ** 5_000, 12.5,
                                  "1" + "0" * 5_000],
                         ids=["801", "future", "empty", "typo", "list", "bool", "huge-int",
                              "fraction", "huge-digits"])
def test_an_impossible_year_is_a_missing_year(year: Any) -> None:
    # CSFCube 17134186 (year 801) was refused whole.
    paper = valid({"id": "p", "title": "T", "year": year})
    assert paper.year is None and "year" not in paper.graph_properties()
    [note] = paper.repairs["dropped_year"]
    assert note.startswith("year ") and note.endswith("left out") and len(note) < 200


@pytest.mark.parametrize("year", [1999, "1999", " 1999 ", "1999.0", 1999.0])
def test_an_integral_year_is_that_year(year: Any) -> None:
    paper = valid({"id": "p", "title": "T", "year": year})
    assert paper.year == 1999 and paper.repairs == {}


def test_null_lists_are_absent_not_a_refusal() -> None:
    paper = valid({"id": "p", "title": "T", "authors": None, "categories": None})
    assert paper.authors == [] and paper.categories == []


@pytest.mark.parametrize("value", [3.25, 3.0, True, ["x"], {"id": "x"}])
def test_an_id_that_is_no_string_or_integer_is_a_bad_id(value: Any) -> None:
    result = validate_paper({"id": value, "title": "T"})
    assert isinstance(result, tuple) and result[0] == RejectKind.BAD_ID, result
    assert "string" in result[1]


@pytest.mark.parametrize("record", [{"id": "p", "title": "T"},
                                    {"id": "p", "title": "T", "abstract": None},
                                    {"id": "p", "title": "T", "abstract": ""},
                                    {"id": "p", "title": "T", "abstract": "  ", "venue": ""}])
def test_no_abstract_is_left_out_so_it_cannot_erase_one(record: dict[str, Any]) -> None:
    assert valid(record).graph_properties() == {"title": "T"}


def test_trimmed_text_is_noted() -> None:
    paper = valid({"id": "p", "title": " T ", "abstract": "A\n", "venue": "\u00a0V"})
    assert (paper.title, paper.abstract, paper.venue) == ("T", "A", "V")
    assert paper.repairs == {"trimmed_text": [
        "title: whitespace removed from the ends", "abstract: whitespace removed from the ends",
        "venue: whitespace removed from the ends"]}


def test_every_repair_of_a_row_is_in_the_notes_file(tmp_path: Path) -> None:
    paper = valid({"id": "p", "title": " T", "year": 801, "authors": ["and A. B", "10"]})
    notes = NoteLog(tmp_path / "n.jsonl")
    notes.add_repairs("papers.jsonl", [paper])
    notes.close()
    written = read_notes(tmp_path / "n.jsonl")
    assert {note["kind"] for note in written} == {"repaired_authors", "dropped_year",
                                                   "trimmed_text"}
    assert notes.repaired == 1  # papers, not notes


# huge rows ----------------------------------------------------------------------------
def test_a_huge_row_names_its_id_and_size(tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    path.write_text(json.dumps({"id": "big1", "title": "T", "abstract": "x" * 5_000}) + "\n"
                    + "y" * 3_000 + "\n")
    [first, second] = [item for _, _, item in read_papers(path, max_line_bytes=1_000)]
    assert isinstance(first, Reject) and first.kind == RejectKind.HUGE_ROW
    assert "'big1'" in first.reason and "5,0" in first.reason and "1,000" in first.reason
    assert isinstance(second, Reject) and "3,000 bytes" in second.reason
    assert "id" not in second.reason.split("bytes")[1]


# citations ----------------------------------------------------------------------------
def edges_of(tmp_path: Path, text: str) -> list[EdgeRow | Reject]:
    path = tmp_path / "citations.csv"
    path.write_text(text, encoding="utf-8")
    return [item for _, _, item in read_citations(path) if item is not None]


def test_quoted_ids_are_read_as_rfc_4180_csv(tmp_path: Path) -> None:
    assert edges_of(tmp_path, 'citing_id,cited_id\n"a,b",c\n"q""x",c\n') == [
        EdgeRow(2, "a,b", "c"), EdgeRow(3, 'q"x', "c")]


@pytest.mark.parametrize("line", ["a\u00a0,b", "\u00a0a,b", "a , b", "a,\tb ", 'a , "b"',
                                  '"a" ,b', "a\u2028,b\u0085"])
def test_whitespace_around_an_id_is_no_part_of_it(tmp_path: Path, line: str) -> None:
    assert edges_of(tmp_path, f"citing_id,cited_id\n{line}\n") == [EdgeRow(2, "a", "b")]


def test_the_edge_list_style_splits_on_any_whitespace(tmp_path: Path) -> None:
    assert edges_of(tmp_path, "# comment\na\u00a0b\nc\td\n") == [EdgeRow(2, "a", "b"),
                                                                 EdgeRow(3, "c", "d")]


def test_an_edge_to_a_paper_refused_in_the_corpus_says_so(tmp_path: Path) -> None:
    (tmp_path / "papers.jsonl").write_text(
        '{"id": "ok", "title": "T"}\n{"id": "gone"}\n', encoding="utf-8")
    (tmp_path / "citations.csv").write_text("citing_id,cited_id\nok,gone\nok,nowhere\n")
    corpus = ValidatedCorpus(locate_corpus(tmp_path), RejectLog(tmp_path / "r.jsonl"),
                             IngestSettings(), batch_size=10)
    list(corpus.paper_batches())
    list(corpus.edge_batches())
    corpus.rejects.close()
    reasons = {r.line: r.reason for r in read_rejects(tmp_path / "r.jsonl")
               if r.file == "citations.csv"}
    assert reasons[2] == ("paper gone was refused (papers.jsonl line 2, missing_title); "
                          "see that reject")
    assert reasons[3] == "paper nowhere is neither in the corpus nor in the graph"


def test_rejects_with_unicode_line_separators_read_back(tmp_path: Path) -> None:
    log = RejectLog(tmp_path / "r.jsonl")
    log.add(Reject("citations.csv", 2, RejectKind.UNKNOWN_PAPER, "x\u2028y", "a\u0085b"))
    log.close()
    assert [r.text for r in read_rejects(tmp_path / "r.jsonl")] == ["a\u0085b"]
