"""Native PDF text through PyMuPDF: the full text, page by page, and the introduction.

The text a paper contributes downstream is title + abstract + introduction
(`compose_paper_text`). The introduction is the span after an "Introduction" heading
("Introduction", "1 Introduction", "1. Introduction", "I. INTRODUCTION") up to the next
top-level heading; a paper without such a heading has no introduction (empty), which is
missing evidence, not an error. A file PyMuPDF cannot open, or one without any text
layer (a scan), is a `PdfError`.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from crase.errors import PdfError
from crase.graph import Graph

MAX_INTRO_CHARS = 20_000
NUMBER = r"(?:\d{1,2}|[IVX]{1,6})"
INTRO_HEADING = re.compile(rf"^\s*(?:{NUMBER}\.?\s*)?introduction\s*[.:]?\s*$", re.IGNORECASE)
# The next section: "2 Related work", "2. Model", "III. RESULTS" (not "1.1 Motivation"),
# or a well-known unnumbered heading on a line of its own.
NUMBERED_HEADING = re.compile(rf"^\s*{NUMBER}\.?\s+[A-Z][A-Za-z][\w\s,:&'-]{{0,80}}$")
NAMED_HEADINGS = re.compile(
    r"^\s*(background|related work|preliminaries|methods?|model|results|discussion|"
    r"conclusions?|references|bibliography|acknowledge?ments?)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class PdfText:
    path: Path
    pages: list[str]
    intro: str

    @property
    def full_text(self) -> str:
        return "\n".join(self.pages)


def read_pdf(path: Path) -> PdfText:
    """Text of every page and the introduction; PdfError if the file is unusable."""
    try:
        with pymupdf.open(path) as document:
            if not document.is_pdf:
                raise PdfError(f"{path} is not a PDF")
            pages = [page.get_text("text") for page in document]
    except (pymupdf.FileDataError, pymupdf.FileNotFoundError, FileNotFoundError) as err:
        raise PdfError(f"cannot open {path} as a PDF: {err}") from err
    if not any(page.strip() for page in pages):
        raise PdfError(f"{path} has no text layer (a scan?); OCR is not attempted")
    return PdfText(path, pages, extract_introduction("\n".join(pages)))


def extract_introduction(text: str, max_chars: int = MAX_INTRO_CHARS) -> str:
    """The introduction section of a paper's text, or "" if there is no such heading."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if INTRO_HEADING.match(line)), None)
    if start is None:
        return ""
    body = []
    for line in lines[start + 1:]:
        if is_section_heading(line):
            break
        body.append(line)
    return join_lines(body)[:max_chars].strip()


def is_section_heading(line: str) -> bool:
    stripped = line.strip()
    if NAMED_HEADINGS.match(stripped):
        return True
    return bool(NUMBERED_HEADING.match(stripped)) and not stripped.endswith(".")


def join_lines(lines: list[str]) -> str:
    """Undo the line wrapping of the PDF: hyphenated breaks joined, other breaks spaces."""
    text = ""
    for line in (line.strip() for line in lines):
        if not line:
            continue
        if text.endswith("-"):
            text = text[:-1] + line
        else:
            text = f"{text} {line}" if text else line
    return text


def compose_paper_text(title: str, abstract: str = "", intro: str = "") -> str:
    """The paper text used downstream: title, abstract and introduction, where present."""
    return "\n\n".join(part.strip() for part in (title, abstract, intro) if part and part.strip())


def store_intros(graph: Graph, pdfs: dict[str, Path]) -> tuple[int, dict[str, str]]:
    """Read each paper's PDF and store its introduction on the paper; returns how many
    papers were updated and, per paper id, why its PDF gave nothing."""
    rows, failures = [], {}
    for paper_id, path in pdfs.items():
        try:
            text = read_pdf(path)
        except PdfError as err:
            failures[paper_id] = str(err)
            continue
        if text.intro:
            rows.append({"id": paper_id, "intro": text.intro})
        else:
            failures[paper_id] = "no introduction heading found"
    written = graph.write("set_paper_intros", rows=rows) if rows else []
    return (int(written[0]["written"]) if written else 0), failures
