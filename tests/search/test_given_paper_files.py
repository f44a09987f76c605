"""Reference files read into the papers a search starts from, no server: BibTeX (doi,
eprint with its archive, Mendeley's arxivid, DOI and arXiv URLs, title) and RIS (DO, TI/T1,
UR, Crase's `arXiv:` note), Crase's own BibTeX and RIS exports read back, typed entries
told apart, and each malformed file refused with a named error. Resolving them against a
graph is tests/api/test_given_papers.py."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crase.api.exports import to_bibtex, to_ris
from crase.errors import InvalidRequest, ReferenceFileUnreadable
from crase.reference_lists import (
    read_reference_file,
    read_reference_list,
    reference_file_entries,
)
from crase.search.given_papers import typed_entry

BIBTEX = r"""
@article{doi_first, title = {A {D}-brane paper}, doi = {10.1000/ABC},
         url = {https://arxiv.org/abs/hep-th/9901001}}
@misc{eprint_only, title = {An arXiv paper}, eprint = {2101.01234v2}, archivePrefix = {arXiv}}
@misc{hal_eprint, title = {A HAL paper}, eprint = {hal-01234567}, eprinttype = {hal}}
@article{mendeley, title = {A Mendeley export}, arxivId = {hep-th/0101001}}
@misc{urls_only, url = {https://doi.org/10.1000/XYZ}}
@book{nothing, publisher = {Nobody}}
@article{broken, title = {Never closed
"""

RIS = """TY  - JOUR
ID  - first
TI  - A journal paper
AU  - One, A.
PY  - 1999/01/02
DO  - 10.1000/RIS
ER  - 

TY  - UNPB
T1  - A preprint
UR  - http://arxiv.org/abs/hep-th/9902002v3
ER  - 
TY  - GEN
N1  - arXiv:2102.00002
ER  -
TY  - GEN
AB  - an abstract only
ER  - 
"""


def identifiers(path: Path) -> list[tuple[str | None, str | None, str | None] | None]:
    return [(e.reference.doi, e.reference.arxiv_id, e.reference.title) if e.reference else None
            for e in read_reference_file(path)]


def test_bibtex_entries_give_doi_then_arxiv_then_title(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(BIBTEX, encoding="utf-8")
    entries = read_reference_file(path)
    assert identifiers(path) == [
        ("10.1000/ABC", "hep-th/9901001", "A D-brane paper"),
        (None, "2101.01234v2", "An arXiv paper"),
        (None, None, "A HAL paper"),  # a HAL eprint is no arXiv id
        (None, "hep-th/0101001", "A Mendeley export"),
        ("https://doi.org/10.1000/XYZ", None, None),
        None, None]
    # What cannot name a paper is listed, never dropped: by key, and by its line.
    assert entries[5].label == "nothing (names no DOI, arXiv id or title)"
    assert entries[6].label.startswith("unreadable entry at line 9: @article{broken")
    assert entries[0].label == "doi_first (10.1000/ABC)"


def test_ris_records_give_doi_then_arxiv_then_title(tmp_path: Path) -> None:
    path = tmp_path / "refs.ris"
    path.write_text(RIS, encoding="utf-8")
    assert identifiers(path) == [("10.1000/RIS", None, "A journal paper"),
                                 (None, "hep-th/9902002", "A preprint"),
                                 (None, "2102.00002", None), None]
    entries = read_reference_file(path)
    assert entries[0].label == "first (10.1000/RIS)"
    assert entries[3].label == "record 4 (line 16) (names no DOI, arXiv id or title)"
    # The same records read as a reference list (the citation-gap analysis's input).
    assert [item.title for item in read_reference_list(RIS)][:2] == ["A journal paper",
                                                                     "A preprint"]


@pytest.mark.parametrize(("text", "problem"), [
    ("TY  - JOUR\nTI  - never closed\n", "line 1: a record without its closing ER line"),
    ("TI  - no type\nER  - \n", "line 1: a TI line before any TY line"),
    ("TY  - JOUR\nER  - \nstray words\n", "line 3: a line outside any record"),
    ("TY  - JOUR\nTY  - JOUR\nER  - \n", "line 1: a record without its closing ER line"),
    ("\n\n", "holds no RIS record"),
])
def test_malformed_ris_is_a_named_error_with_its_line(tmp_path: Path, text: str,
                                                      problem: str) -> None:
    path = tmp_path / "bad.ris"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ReferenceFileUnreadable, match=problem) as raised:
        read_reference_file(path)
    assert "\n" not in str(raised.value) and "export" in str(raised.value)


def test_other_files_are_named_errors(tmp_path: Path) -> None:
    cases = {"refs.txt": ("just some words\n", "neither BibTeX nor RIS"),
             "empty.bib": ("% only a comment\n", "holds no entry"),
             "broken.bib": ("@article{a, title = {Open\n@misc{b, title = {Also open\n",
                            "no entry can; the first at line 1: @article"),
             "ris-named.bib": ("TY  - JOUR\nER  - \n", "holds no entry"),
             "latin1.bib": (None, "not UTF-8")}
    for name, (text, problem) in cases.items():
        path = tmp_path / name
        if text is None:
            path.write_bytes("@misc{k, title = {Caf\u00e9}}".encode("latin-1"))
        else:
            path.write_text(text, encoding="utf-8")
        with pytest.raises(ReferenceFileUnreadable, match=problem):
            read_reference_file(path)
    with pytest.raises(ReferenceFileUnreadable, match="no file"):
        read_reference_file(tmp_path / "missing.bib")


def test_the_kind_is_sniffed_when_the_name_does_not_say() -> None:
    assert reference_file_entries(RIS, "export.txt")[0].label == "first (10.1000/RIS)"
    assert reference_file_entries(BIBTEX, "export")[0].label == "doi_first (10.1000/ABC)"


def exported_papers() -> list[dict[str, Any]]:
    """Three run results as api/exports.py is given them: a DOI and an arXiv id, an arXiv
    id alone, and neither (a title with TeX and a brace in it)."""
    base = {"authors": ["A. One", "B. Two"], "year": 2001, "abstract": "Text.",
            "venue": None, "journal_ref": None, "s2_id": None, "score": 0.5}
    return [{**base, "rank": 1, "id": "hep-th/0101001", "title": "Tachyons & {D}-branes",
             "doi": "10.1000/J.1", "arxiv_id": "hep-th/0101001"},
            {**base, "rank": 2, "id": "2101.00001", "title": "A preprint", "doi": None,
             "arxiv_id": "2101.00001"},
            {**base, "rank": 3, "id": "W123", "title": r"On $\alpha'$ corrections",
             "doi": None, "arxiv_id": None}]


@pytest.mark.parametrize(("writer", "name"), [(to_bibtex, "run.bib"), (to_ris, "run.ris")])
def test_crase_exports_read_back(writer: Callable[..., str], name: str) -> None:
    text = writer({"id": "run1"}, exported_papers())
    references = [entry.reference for entry in reference_file_entries(text, name)]
    assert all(references)
    got = [(r.doi, r.arxiv_id) for r in references if r]
    assert got == [("10.1000/J.1", "hep-th/0101001"), (None, "2101.00001"), (None, None)]
    # The title of the paper with neither identifier comes back to the same words.
    assert references[2] is not None and "corrections" in (references[2].title or "")


@pytest.mark.parametrize(("text", "doi", "arxiv", "title", "ids"), [
    ("https://doi.org/10.1000/ABC", "10.1000/abc", None, None, ["doi:10.1000/abc"]),
    ("arXiv:hep-th/9901001v2", None, "hep-th/9901001", None, ["hep-th/9901001"]),
    ("2101.01234", None, "2101.01234", None, ["2101.01234"]),
    ("  Tachyon condensation  on D-branes ", None, None, "Tachyon condensation on D-branes",
     []),
    ("tachyon-03", None, None, "tachyon-03", []),
])
def test_typed_entries_are_told_apart(text: str, doi: str | None, arxiv: str | None,
                                      title: str | None, ids: list[str]) -> None:
    entry = typed_entry(text)
    assert entry.reference is not None
    assert (entry.reference.doi, entry.reference.arxiv_id, entry.reference.title) == (
        doi, arxiv, title)
    assert entry.label == " ".join(text.split())
    assert entry.ids[0] == entry.label and set(ids) <= set(entry.ids)


def test_a_typed_entry_without_a_word_names_no_paper_and_a_long_one_is_refused() -> None:
    assert typed_entry("***").reference is None
    assert typed_entry("10.1000/" + "x" * 1500).reference is None  # no DOI is that long
    with pytest.raises(InvalidRequest, match="longer than 2,000"):
        typed_entry("word " * 500)


def test_the_command_line_offers_the_flags_and_refuses_a_bad_file_before_the_database(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from crase.api.cli import main

    monkeypatch.setenv("CRASE_DATABASE__URI", "bolt://127.0.0.1:9")  # nothing answers there
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path / "var"))
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    help_text = capsys.readouterr().out
    assert "--from PAPER" in help_text and "--from-file PATH" in help_text
    assert "optional with --from" in help_text

    bad = tmp_path / "library.ris"
    bad.write_text("TY  - JOUR\nTI  - never closed\n", encoding="utf-8")
    assert main(["search", "--from-file", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("crase: ReferenceFileUnreadable: library.ris is not "
                          "RIS at line 1") and "\n" not in err
    assert main(["search"]) == 2  # neither a query nor papers
    assert "no word to search" in capsys.readouterr().err


def test_a_text_match_of_a_search_from_papers_alone_says_what_it_matched() -> None:
    from crase.api.commands.search import describe_evidence, matched_text
    from crase.search.evidence import PaperEvidence
    from crase.search.pipeline import RankedPaper

    paper = RankedPaper(1, "p", 0.0, "A title", 2003, [],
                        PaperEvidence(seed=False, reached_from=None, text_match=True))
    assert describe_evidence(paper, None, text=matched_text(" ")) == [
        "full-text match of the given papers' titles; the evidence graph did not reach it"]
    assert describe_evidence(paper, None, text=matched_text("tachyons"))[0].startswith(
        "full-text match of the query;")


# Records in the shapes the tools themselves write, not written from a format description:
# Zotero's RIS export (CRLF line ends, `DA  - 1998///`, the arXiv id in a note, the access
# date in Y2), EndNote's (a byte-order mark, values wrapped onto untagged lines, an `ER  -`
# without its trailing space), arXiv's "Export BibTeX citation" (eprint, archivePrefix,
# primaryClass) and Zotero's BibTeX export (braced capitals, an arXiv URL and a note).
ZOTERO_RIS = (
    "TY  - JOUR\r\nTI  - The Large N Limit of Superconformal Field Theories and "
    "Supergravity\r\nAU  - Maldacena, Juan\r\nT2  - Advances in Theoretical and "
    "Mathematical Physics\r\nDA  - 1998///\r\nPY  - 1998\r\nDO  - "
    "10.4310/ATMP.1998.v2.n2.a1\r\nVL  - 2\r\nIS  - 2\r\nSP  - 231\r\nEP  - 252\r\n"
    "UR  - http://arxiv.org/abs/hep-th/9711200\r\nY2  - 2026/12/01/10:20:31\r\n"
    "N1  - arXiv: hep-th/9711200\r\nER  - \r\n\r\n"
    "TY  - PREPRINT\r\nTI  - Wilson loops in large N field theories\r\nAU  - Maldacena, "
    "Juan\r\nDA  - 1998/03/02/\r\nPY  - 1998\r\nDP  - arXiv.org\r\nUR  - "
    "http://arxiv.org/abs/hep-th/9803002\r\nY2  - 2026/12/01/10:21:02\r\nER  - \r\n\r\n")
ENDNOTE_RIS = (
    "\ufeffTY  - JOUR\nAB  - We study the large N limit of superconformal field theories\n"
    "and their relation to supergravity.\nAU  - Maldacena, J.\nDB  - EndNote\nRIS\n"
    "DO  - 10.1023/A:1026654312961\nKW  - AdS/CFT\nholography\nPY  - 1999\n"
    "T2  - International Journal of Theoretical Physics\nTI  - The Large N limit of "
    "superconformal field theories and supergravity\nVL  - 38\nID  - 123\nER  -\n")
ARXIV_BIBTEX = r"""@misc{maldacena1997large,
      title={The Large N Limit of Superconformal Field Theories and Supergravity},
      author={Juan M. Maldacena},
      year={1997},
      eprint={hep-th/9711200},
      archivePrefix={arXiv},
      primaryClass={hep-th},
      url={https://arxiv.org/abs/hep-th/9711200},
}
"""
ZOTERO_BIBTEX = r"""
@article{maldacena_large_1998,
	title = {The {Large} {N} {Limit} of {Superconformal} {Field} {Theories} and {Supergravity}},
	volume = {2},
	issn = {10950761, 10950753},
	url = {http://arxiv.org/abs/hep-th/9711200},
	doi = {10.4310/ATMP.1998.v2.n2.a1},
	number = {2},
	urldate = {2026-12-01},
	journal = {Advances in Theoretical and Mathematical Physics},
	author = {Maldacena, Juan},
	year = {1998},
	note = {arXiv: hep-th/9711200},
	pages = {231--252},
}

@misc{maldacena_wilson_1998,
	title = {Wilson loops in large {N} field theories},
	url = {http://arxiv.org/abs/hep-th/9803002},
	doi = {10.48550/arXiv.hep-th/9803002},
	publisher = {arXiv},
	author = {Maldacena, Juan},
	month = mar,
	year = {1998},
}
"""


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("zotero.ris", ZOTERO_RIS, [
        ("10.4310/ATMP.1998.v2.n2.a1", "hep-th/9711200",
         "The Large N Limit of Superconformal Field Theories and Supergravity"),
        (None, "hep-th/9803002", "Wilson loops in large N field theories")]),
    ("endnote.ris", ENDNOTE_RIS, [
        ("10.1023/A:1026654312961", None,
         "The Large N limit of superconformal field theories and supergravity")]),
    ("arxiv.bib", ARXIV_BIBTEX, [
        (None, "hep-th/9711200",
         "The Large N Limit of Superconformal Field Theories and Supergravity")]),
    ("zotero.bib", ZOTERO_BIBTEX, [
        ("10.4310/ATMP.1998.v2.n2.a1", "hep-th/9711200",
         "The Large N Limit of Superconformal Field Theories and Supergravity"),
        ("10.48550/arXiv.hep-th/9803002", "hep-th/9803002",
         "Wilson loops in large N field theories")]),
])
def test_files_in_the_reference_managers_own_shapes(tmp_path: Path, name: str, text: str,
                                                    expected: list[tuple]) -> None:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    assert identifiers(path) == expected
