"""The export writers on their own: BibTeX escaping and keys, CSV formula guard, RIS."""

import csv
import io

from crase.api.exports import bibtex_entry, bibtex_key, bibtex_value, ris_entry, to_csv

PAPER = {"rank": 1, "score": 0.125, "id": "9901001", "title": "Strings & {branes} 50%",
         "authors": ["Ana Żółć", "B. Brown"], "year": 1999, "venue": None,
         "journal_ref": "Nucl. Phys. B 500 (1999) 1", "arxiv_id": "hep-th/9901001",
         "doi": "10.1000/x", "abstract": "Line one.\nLine two."}


def test_bibtex_entry_escapes_and_keeps_provenance() -> None:
    entry = bibtex_entry("run1", PAPER)
    assert entry.startswith("@article{Zoc1999_9901001,\n")  # "ł" has no ASCII base letter
    assert r"title = {Strings \& {branes} 50\%}" in entry
    assert "author = {Ana Żółć and B. Brown}" in entry
    assert "journal = {Nucl. Phys. B 500 (1999) 1}" in entry
    assert "note = {Crase run run1, rank 1, score 0.125}" in entry
    assert entry.rstrip().endswith("}")


def test_bibtex_unbalanced_braces_are_escaped() -> None:
    assert bibtex_value("a } b {") == r"a \} b \{"
    assert bibtex_value("$\\alpha$ {ok}") == "$\\alpha$ {ok}"
    assert bibtex_value("already \\& done") == "already \\& done"


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
