"""PDF text through PyMuPDF on real PDF files made here: with and without an introduction
heading, several heading styles, and broken files."""

import os
from pathlib import Path

import pymupdf
import pytest

from crase.errors import PdfError
from crase.graph import Graph
from crase.ingest.pdf_text import compose_paper_text, extract_introduction, read_pdf, store_intros

BODY = ["This paper studies widgets.", "Widgets are small and numer-",
        "ous, and nobody has counted them.", ""]


def write_pdf(path: Path, pages: list[list[str]]) -> Path:
    """A real PDF with one text line per entry, as a typesetter would place them."""
    document = pymupdf.open()
    for lines in pages:
        page = document.new_page()
        for number, line in enumerate(lines):
            page.insert_text((72, 72 + 14 * number), line, fontsize=10)
    document.save(path)
    document.close()
    return path


@pytest.mark.parametrize("heading", ["1 Introduction", "1. Introduction", "I. INTRODUCTION",
                                     "INTRODUCTION", "Introduction"])
def test_the_introduction_is_found_under_each_heading_style(tmp_path: Path,
                                                           heading: str) -> None:
    pdf = write_pdf(tmp_path / "paper.pdf", [
        ["Counting widgets", "Abstract", "We count widgets.", heading, *BODY],
        ["1.1 Motivation", "Counting matters.", "2 Related work", "Others counted gadgets."],
    ])
    text = read_pdf(pdf)
    assert len(text.pages) == 2 and "Others counted gadgets." in text.full_text
    assert text.intro == ("This paper studies widgets. Widgets are small and numerous, and "
                          "nobody has counted them. 1.1 Motivation Counting matters.")


def test_a_paper_without_an_introduction_heading_has_none(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "letter.pdf", [["A short letter", "We found a widget.",
                                              "The introduction of widgets is recent."]])
    text = read_pdf(pdf)
    assert text.intro == ""
    assert "We found a widget." in text.full_text


def test_the_introduction_stops_at_a_named_heading() -> None:
    text = "Intro\nIntroduction\nFirst words.\nMore words.\nReferences\n[1] A. Person"
    assert extract_introduction(text) == "First words. More words."
    assert extract_introduction(text, max_chars=5) == "First"


@pytest.mark.parametrize("content", [os.urandom(4096), b"", b"%PDF-1.7\n1 0 obj\n<<"])
def test_broken_files_are_pdf_errors(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(content)
    with pytest.raises(PdfError):
        read_pdf(path)


def test_a_truncated_pdf_is_a_pdf_error(tmp_path: Path) -> None:
    whole = write_pdf(tmp_path / "whole.pdf", [["1 Introduction", *BODY]]).read_bytes()
    path = tmp_path / "truncated.pdf"
    path.write_bytes(whole[: len(whole) // 3])
    with pytest.raises(PdfError):
        read_pdf(path)


def test_a_pdf_without_text_is_a_pdf_error(tmp_path: Path) -> None:
    with pytest.raises(PdfError, match="no text layer"):
        read_pdf(write_pdf(tmp_path / "scan.pdf", [[]]))
    with pytest.raises(PdfError):
        read_pdf(tmp_path / "missing.pdf")


def test_paper_text_is_title_abstract_and_introduction() -> None:
    assert compose_paper_text("T", "A.", "I.") == "T\n\nA.\n\nI."
    assert compose_paper_text("T", "", "I.") == "T\n\nI."


@pytest.mark.integration
def test_introductions_are_stored_on_the_papers(graph: Graph, tmp_path: Path) -> None:
    with graph.driver.session(database=graph.database) as session:
        session.run("CREATE (:Paper {id: 'w1', title: 'Widgets'}), "
                    "(:Paper {id: 'w2', title: 'Gadgets'})").consume()
    good = write_pdf(tmp_path / "w1.pdf", [["1 Introduction", *BODY, "2 Model"]])
    bare = write_pdf(tmp_path / "w2.pdf", [["No heading here."]])
    broken = tmp_path / "w3.pdf"
    broken.write_bytes(b"not a pdf")
    written, failures = store_intros(graph, {"w1": good, "w2": bare, "w3": broken})
    assert written == 1 and set(failures) == {"w2", "w3"}
    with graph.driver.session(database=graph.database) as session:
        record = session.run("MATCH (p:Paper {id: 'w1'}) RETURN p.intro AS i").single(strict=True)
    intro = record["i"]
    assert intro.startswith("This paper studies widgets.") and "Model" not in intro
