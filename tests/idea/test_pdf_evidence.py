"""Window selection on real PDFs made here, and the fixed five acquisition attempts."""

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from crase.idea.candidates import Candidate
from crase.idea.pdf_acquisition import PdfSources, acquire_pdfs
from crase.idea.pdf_evidence import join_pages, select_windows, window_spans
from crase.idea.terms import content_stems
from crase.ingest.pdf_text import read_pdf
from crase.settings import IdeaSettings
from tests.idea.builders import candidate, record
from tests.idea.pdfs import FILLER, make_pdf, paper_pages

IDEA_TERMS = content_stems("graph neural network message passing for few-shot image "
                           "classification")


@pytest.fixture
def paper_pdf(tmp_path: Path) -> Path:
    return make_pdf(tmp_path / "paper.pdf", paper_pages())


def test_windows_are_bounded_located_hashed_and_in_reading_order(paper_pdf: Path) -> None:
    pages = read_pdf(paper_pdf).pages
    text, starts = join_pages(pages)
    windows = select_windows("p1", pages, IDEA_TERMS)
    assert 1 <= len(windows) <= 6
    assert [w.start for w in windows] == sorted(w.start for w in windows)
    for window in windows:
        assert len(window.text) <= 1800 and window.partial
        assert window.text == text[window.start:window.end]
        assert window.sha256 == hashlib.sha256(window.text.encode()).hexdigest()
        page_text = pages[window.page - 1]
        head = window.text[: len(page_text) - window.page_offset]
        assert page_text[window.page_offset:].startswith(head)
        assert starts[window.page - 1] + window.page_offset == window.start
    for left, right in zip(windows, windows[1:], strict=False):
        assert left.end <= right.start  # no two windows overlap
    cues = {cue for window in windows for cue in window.cues}
    assert {"method", "experiment", "conclusion"} <= cues
    assert all(window.terms for window in windows)


def test_the_half_window_stride_covers_the_whole_text() -> None:
    spans = window_spans(5000, 1800)
    assert spans[0] == (0, 1800) and spans[1] == (900, 2700) and spans[-1][1] == 5000
    assert window_spans(100, 1800) == [(0, 100)]
    assert window_spans(0, 1800) == []


def test_smaller_limits_are_respected(paper_pdf: Path) -> None:
    pages = read_pdf(paper_pdf).pages
    windows = select_windows("p1", pages, IDEA_TERMS, window_chars=600, max_windows=2)
    assert len(windows) == 2 and all(len(w.text) <= 600 for w in windows)


def test_a_pdf_without_the_ideas_terms_yields_no_window(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "weather.pdf", [FILLER * 20, FILLER * 10])
    assert select_windows("w", read_pdf(pdf).pages, IDEA_TERMS) == []


def shortlist_of(count: int) -> list[Candidate]:
    return [candidate(f"s{n}") for n in range(1, count + 1)]


def test_exactly_five_attempts_and_no_substitution(tmp_path: Path) -> None:
    folder = tmp_path / "pdfs"
    make_pdf(folder / "s1.pdf", paper_pages())
    (folder / "s2.pdf").write_bytes(b"this is not a pdf")
    make_pdf(folder / "s3.pdf", paper_pages())
    make_pdf(folder / "s6.pdf", paper_pages())  # available, but sixth: never attempted
    shortlist = shortlist_of(7)
    sources = PdfSources(pdf_dir=folder, arxiv_pdf_url=None, artifacts_dir=tmp_path / "run")
    outcomes = acquire_pdfs(shortlist, sources, IDEA_TERMS, IdeaSettings())
    assert [o.attempt for o in outcomes] == [1, 2, 3, 4, 5]
    assert [o.status for o in outcomes] == ["acquired", "unavailable", "acquired",
                                            "unavailable", "unavailable"]
    assert shortlist[5].pdf is None and shortlist[6].pdf is None
    assert shortlist[5].windows == []
    assert "cannot open" in " ".join(outcomes[1].tried)
    assert any("arxiv: the work has no arXiv id" in t for t in outcomes[3].tried)
    assert shortlist[0].windows and not shortlist[1].windows
    assert (tmp_path / "run" / "s1.txt").read_text().count("=== page") == 4


def test_fewer_than_five_works_get_one_attempt_each(tmp_path: Path) -> None:
    shortlist = shortlist_of(3)
    outcomes = acquire_pdfs(shortlist, PdfSources(None, None, None), IDEA_TERMS,
                            IdeaSettings())
    assert len(outcomes) == 3
    assert all(o.status == "unavailable" and o.tried[0] == "local: no PDF folder given"
               for o in outcomes)


def test_old_style_arxiv_ids_are_found_under_a_safe_file_name(tmp_path: Path) -> None:
    make_pdf(tmp_path / "hep-th_9901001.pdf", paper_pages())
    work = Candidate("x", [record("x", arxiv_id="hep-th/9901001")])
    outcomes = acquire_pdfs([work], PdfSources(tmp_path, None, None), IDEA_TERMS,
                            IdeaSettings())
    assert outcomes[0].status == "acquired" and outcomes[0].source == "local"


@contextmanager
def pdf_server(files: dict[str, bytes]) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/pdf"
    finally:
        server.shutdown()
        server.server_close()


def test_arxiv_download_when_reachable(tmp_path: Path, paper_pdf: Path) -> None:
    served = {"/pdf/2101.00001": paper_pdf.read_bytes()}
    found = Candidate("a", [record("a", arxiv_id="2101.00001v2")])
    missing = Candidate("b", [record("b", arxiv_id="2101.99999")])
    with pdf_server(served) as url:
        outcomes = acquire_pdfs([found, missing], PdfSources(None, url, tmp_path / "run"),
                                IDEA_TERMS, IdeaSettings())
    assert outcomes[0].status == "acquired" and outcomes[0].source == "arxiv"
    assert (tmp_path / "run" / "2101.00001.pdf").read_bytes().startswith(b"%PDF")
    assert found.windows
    assert outcomes[1].status == "unavailable"
    assert "404" in outcomes[1].tried[-1]


def test_arxiv_unreachable_is_recorded_not_tried(tmp_path: Path) -> None:
    work = Candidate("a", [record("a", arxiv_id="2101.00001")])
    outcomes = acquire_pdfs([work], PdfSources(None, None, None), IDEA_TERMS, IdeaSettings())
    assert "did not answer the availability probe" in outcomes[0].tried[-1]
