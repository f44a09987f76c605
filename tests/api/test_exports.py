"""The export writers: BibTeX that a BibTeX parser reads back (case-protected titles, one
person per name, links), RIS that a RIS parser reads back (UR, DO, AB, provenance in N1),
CSV in plain Unicode with the formula guard; checked on real rows of data/sample."""

import csv
import io
import json
from functools import cache
from typing import Any

import bibtexparser
import pytest
import rispy

from crase.api.exports import (
    bibtex_entry,
    bibtex_key,
    bibtex_value,
    related_entries,
    ris_entry,
    to_bibtex,
    to_csv,
    to_ris,
)
from crase.api.run_views import shown_paper
from crase.ingest.records import Paper, validate_paper
from tests.sample_slice import SAMPLE

PAPER = {"rank": 1, "score": 0.125, "id": "9901001", "title": "Strings & {branes} 50%",
         "authors": ["Ana Żółć", "B. Brown"], "year": 1999, "venue": None,
         "journal_ref": "Nucl. Phys. B 500 (1999) 1", "arxiv_id": "hep-th/9901001",
         "doi": "10.1000/x", "abstract": "Line one.\nLine two.", "links": {}}


@cache
def sample_rows() -> dict[str, dict[str, Any]]:
    rows = (json.loads(line) for line in (SAMPLE / "papers.jsonl").open(encoding="utf-8"))
    return {row["id"]: row for row in rows}


def result_row(paper_id: str, rank: int, doi: str | None = None,
               repaired: bool = True) -> dict[str, Any]:
    """A run result as read_results gives it, for a sample paper as the loader stores it
    (repaired) or as a graph loaded before the repair holds it."""
    raw = sample_rows()[paper_id]
    row = raw
    if repaired:
        paper = validate_paper(raw)
        assert isinstance(paper, Paper)
        row = {"id": paper.id, **paper.graph_properties()}
    return shown_paper({"rank": rank, "score": 1.0 / rank, "evidence": None, "venue": None,
                        "s2_id": None, "doi": doi, **{k: row.get(k) for k in (
                            "id", "title", "year", "authors", "abstract", "journal_ref",
                            "arxiv_id")}})


def sample_results(repaired: bool = True) -> list[dict[str, Any]]:
    # Linking "and"s, TeX accents, a cut-off "Jr.", math and case in titles.
    return [result_row("9204099", 1, doi="10.1103/PhysRevLett.69.1849", repaired=repaired),
            result_row("9511173", 2, repaired=repaired),
            result_row("9802203", 3, repaired=repaired),
            result_row("9511222", 4, repaired=repaired),
            result_row("9701122", 5, repaired=repaired)]


def parsed_bibtex(text: str) -> dict[str, dict[str, str]]:
    library = bibtexparser.parse_string(text)
    assert library.failed_blocks == []
    return {entry.key: {field.key: field.value for field in entry.fields}
            for entry in library.entries}


@pytest.mark.parametrize("repaired", [True, False])
def test_bibtex_of_sample_rows_reads_back_with_links_and_whole_names(repaired: bool) -> None:
    entries = parsed_bibtex(to_bibtex({"id": "run1"}, sample_results(repaired)))
    assert list(entries) == ["Banados1992_9204099", "Callan1995_9511173",
                             "Ferrara1998_9802203", "Bershadsky1995_9511222",
                             "Meana1997_9701122"]
    zanelli = entries["Banados1992_9204099"]
    # Even from a graph that still holds "and Jorge Zanelli": no `and and`.
    assert zanelli["author"] == ("M\\'aximo Ba\\~nados and Claudio Teitelboim and "
                                 "Jorge Zanelli")
    assert zanelli["doi"] == "10.1103/PhysRevLett.69.1849"
    assert zanelli["url"] == "https://doi.org/10.1103/PhysRevLett.69.1849"
    assert (zanelli["eprint"], zanelli["archivePrefix"]) == ("hep-th/9204099", "arXiv")
    assert zanelli["abstract"].startswith("The standard Einstein-Maxwell equations")
    assert zanelli["note"] == "Crase run run1, rank 1, score 1"
    assert entries["Callan1995_9511173"]["author"] == (
        "Callan, Jr., Curtis G. and Igor R. Klebanov")
    assert entries["Callan1995_9511173"]["url"] == "https://arxiv.org/abs/hep-th/9511173"
    assert all(" and and " not in entry["author"] for entry in entries.values())


def test_bibtex_titles_keep_their_case() -> None:
    entries = parsed_bibtex(to_bibtex({"id": "run1"}, sample_results()))
    # The outer braces are the field's, the inner ones protect the case of every word.
    assert entries["Ferrara1998_9802203"]["title"] == (
        "{On N=8 Supergravity on $AdS_5$ and N=4 Superconformal Yang-Mills theory}")
    assert entries["Bershadsky1995_9511222"]["title"] == "{D-Branes and Topological Field Theories}"


def test_ris_of_sample_rows_reads_back_in_unicode_with_links() -> None:
    records = rispy.loads(to_ris({"id": "run1"}, sample_results()))
    assert [record["id"] for record in records] == ["9204099", "9511173", "9802203",
                                                    "9511222", "9701122"]
    zanelli = records[0]
    assert zanelli["authors"] == ["Máximo Bañados", "Claudio Teitelboim", "Jorge Zanelli"]
    assert zanelli["doi"] == "10.1103/PhysRevLett.69.1849"
    assert zanelli["urls"] == ["https://doi.org/10.1103/PhysRevLett.69.1849",
                               "https://arxiv.org/abs/hep-th/9204099"]
    assert zanelli["abstract"].startswith("The standard Einstein-Maxwell equations")
    assert zanelli["notes"] == ["arXiv:hep-th/9204099", "Crase run run1, rank 1, score 1"]
    assert records[2]["title"] == ("On N=8 Supergravity on AdS_5 and N=4 Superconformal "
                                   "Yang-Mills theory")
    assert records[4]["authors"][2] == "Jesús Puente Peñalba"
    assert all("\\" not in record["title"] and "$" not in record["title"]
               for record in records)


def test_csv_of_sample_rows_is_plain_unicode_with_links() -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv({}, sample_results()))))
    assert rows[0]["authors"] == "Máximo Bañados; Claudio Teitelboim; Jorge Zanelli"
    assert rows[0]["url"] == "https://doi.org/10.1103/PhysRevLett.69.1849"
    assert rows[0]["links"].split() == ["https://arxiv.org/abs/hep-th/9204099",
                                        "https://doi.org/10.1103/PhysRevLett.69.1849"]
    assert rows[0]["abstract"].startswith("The standard Einstein-Maxwell equations")
    assert rows[1]["authors"] == "Curtis G. Callan Jr.; Igor R. Klebanov"
    assert rows[2]["title"].startswith("On N=8 Supergravity on AdS_5 and")
    assert rows[4]["authors"].endswith("Jesús Puente Peñalba")


def related_lists() -> dict[str, list[dict[str, Any]]]:
    """Prior and derivative works as run_views.related_works gives them: 9511173 was
    returned, 9802203 is on both lists."""
    def work(paper_id: str, rank: int | None, why: str) -> dict[str, Any]:
        row = {**result_row(paper_id, 1), "rank": rank, "why": why, "count": 2}
        return {k: v for k, v in row.items() if k not in ("score", "evidence", "abstract")}
    return {"prior_works": [work("9511173", 2, "cited by 2 of the 5 returned papers"),
                            work("9802203", None, "cited by 2 of the 5 returned papers")],
            "derivative_works": [work("9802203", None, "cites 2 of the 5 returned papers"),
                                 work("9511222", None, "cites 2 of the 5 returned papers")]}


def test_related_works_follow_the_results_once_each_tagged_by_list() -> None:
    related = related_entries(related_lists())
    assert [(work["id"], work["list"]) for work in related] == [
        ("9802203", "prior work"), ("9511222", "derivative work")]
    results = sample_results()[:2]

    entries = parsed_bibtex(to_bibtex({"id": "run1"}, results, related))
    assert list(entries) == ["Banados1992_9204099", "Callan1995_9511173",
                             "Ferrara1998_9802203", "Bershadsky1995_9511222"]
    assert "keywords" not in entries["Banados1992_9204099"]
    assert entries["Ferrara1998_9802203"]["keywords"] == "Crase prior work"
    assert entries["Ferrara1998_9802203"]["note"] == (
        "Crase run run1, prior work: cited by 2 of the 5 returned papers")
    assert entries["Bershadsky1995_9511222"]["keywords"] == "Crase derivative work"

    records = rispy.loads(to_ris({"id": "run1"}, results, related))
    assert [(r["id"], r.get("keywords")) for r in records] == [
        ("9204099", None), ("9511173", None), ("9802203", ["Crase prior work"]),
        ("9511222", ["Crase derivative work"])]
    assert records[3]["urls"] == ["https://arxiv.org/abs/hep-th/9511222"]

    rows = list(csv.DictReader(io.StringIO(to_csv({}, results, related))))
    assert [(row["rank"], row["list"]) for row in rows] == [
        ("1", "result"), ("2", "result"), ("", "prior work"), ("", "derivative work")]
    assert rows[3]["why"] == "cites 2 of the 5 returned papers" and rows[0]["why"] == ""


def test_bibtex_entry_escapes_and_keeps_provenance() -> None:
    entry = bibtex_entry("run1", PAPER)
    assert entry.startswith("@article{Zoc1999_9901001,\n")  # "ł" has no ASCII base letter
    assert r"title = {{Strings \& {branes} 50\%}}" in entry
    assert "author = {Ana Żółć and B. Brown}" in entry
    assert "journal = {Nucl. Phys. B 500 (1999) 1}" in entry
    assert "note = {Crase run run1, rank 1, score 0.125}" in entry
    assert entry.rstrip().endswith("}")


def test_bibtex_urls_are_not_escaped() -> None:
    paper = {**PAPER, "doi": "10.1000/a%b#c"}
    fields = parsed_bibtex(bibtex_entry("run1", shown_paper(paper)))["Zoc1999_9901001"]
    assert fields["url"] == "https://doi.org/10.1000/a%25b%23c"
    assert fields["doi"] == "10.1000/a%b#c"


def test_bibtex_unbalanced_braces_are_escaped() -> None:
    # `\}` and `\{` alone: classic BibTeX counts those braces (the field ended at `\}`).
    assert bibtex_value("a } b {") == r"a \textbraceright{} b \textbraceleft{}"
    assert bibtex_value("$\\alpha$ {ok}") == "$\\alpha$ {ok}"
    assert bibtex_value("already \\& done") == "already \\& done"
    assert bibtex_value("$\\{x\\}$") == "$\\{x\\}$"  # balanced literal braces stay


def classic_bibtex(text: str) -> dict[str, dict[str, str]]:
    """Fields of each entry as classic BibTeX reads brace-delimited values: every brace
    counts, a backslash escapes nothing (bibtex.web, scan_balanced_braces)."""
    entries: dict[str, dict[str, str]] = {}
    for chunk in text.split("\n@")[0:]:
        chunk = chunk.lstrip("@")
        key_end = chunk.index(",")
        key = chunk[chunk.index("{") + 1:key_end]
        fields, index = {}, key_end + 1
        while True:
            equals = chunk.find("=", index)
            if equals < 0:
                break
            name = chunk[index:equals].strip(" ,\n")
            start = chunk.index("{", equals)
            depth, end = 0, start
            for end in range(start, len(chunk)):
                depth += {"{": 1, "}": -1}.get(chunk[end], 0)
                if depth == 0:
                    break
            fields[name] = chunk[start + 1:end]
            index = end + 1
        entries[key] = fields
    return entries


# Titles that broke an entry: a backslash at the end escaped the field's closing brace
# for bibtexparser, which then read the rest of the entry as the title; `{{evil\}}` made it
# drop the entry; a literal brace alone made classic BibTeX end the field early.
HOSTILE_TITLES = ["Strings end here \\", "{{evil\\}}", "a \\} b", "open \\{ only",
                  "two \\\\", "line\\\\{break}", "} backwards {", "{", "\\", "$\\{x\\}$ {ok}"]


@pytest.mark.parametrize("title", HOSTILE_TITLES)
def test_both_bibtex_readers_read_a_hostile_title_as_written(title: str) -> None:
    paper = {**PAPER, "title": title, "abstract": title, "authors": ["Ana Żółć", title]}
    text = to_bibtex({"id": "run1"}, [paper, {**PAPER, "id": "9901002"}])
    modern, classic = parsed_bibtex(text), classic_bibtex(text)
    assert list(modern) == list(classic) == ["Zoc1999_9901001", "Zoc1999_9901002"]
    for key, fields in modern.items():
        assert fields == classic[key]
        assert fields["note"].startswith("Crase run run1, rank 1")
    written = modern["Zoc1999_9901001"]
    assert written["title"] == "{" + bibtex_value(title) + "}"
    assert written["abstract"] == bibtex_value(title)
    assert not bibtex_value(title).endswith("\\")


def test_bibtex_key_without_authors_or_year() -> None:
    assert bibtex_key({"authors": [], "id": "a/b-1", "year": None}) == "anon_ab1"


def test_ris_entry_is_one_line_per_field() -> None:
    entry = ris_entry("run1", PAPER)
    lines = entry.split("\r\n")
    assert lines[0] == "TY  - JOUR"
    assert "AU  - Ana Żółć" in lines and "AU  - B. Brown" in lines
    assert "AB  - Line one. Line two." in lines
    assert "N1  - arXiv:hep-th/9901001" in lines
    assert entry.endswith("ER  - \r\n\r\n")
    assert ris_entry("r", {**PAPER, "journal_ref": None})[:10] == "TY  - UNPB"


def test_csv_guards_cells_a_spreadsheet_would_run() -> None:
    text = to_csv({}, [{**PAPER, "title": "=HYPERLINK(\"x\")"}])
    row = next(csv.DictReader(io.StringIO(text)))
    assert row["title"] == "'=HYPERLINK(\"x\")"
    assert row["authors"] == "Ana Żółć; B. Brown" and row["venue"] == ""

