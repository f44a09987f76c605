"""PDF acquisition: exactly min(5, |shortlist|) fixed attempts, one per paper, for the top of
the shortlist in its pre-expert order. A failed attempt is recorded and never replaced by
another paper; the paper stays in the shortlist with its abstract or metadata.

Per attempt, in order: a local folder (files named by any of the work's corpus ids or its
arXiv id, `/` written as `_`), then arXiv when it answered the availability probe and the
work has an arXiv id. The native text of every page comes from PyMuPDF; the full text is
kept next to the run's audit, and only the selected windows go to the expert. Text comes
from `crase.ingest.pdf_text.read_pdf`; a file it refuses (not a PDF, no text layer) makes
the attempt unavailable, with its reason in `tried`.
"""

import hashlib
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from crase.errors import PdfError
from crase.idea.candidates import Candidate, PdfOutcome
from crase.idea.pdf_evidence import select_windows
from crase.ingest.pdf_text import read_pdf
from crase.paper_identity import normalise_arxiv_id
from crase.settings import IdeaSettings

PDF_ATTEMPTS = 5  # fixed by the workflow, not a setting
UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class PdfSources:
    pdf_dir: Path | None  # a local folder of PDFs, or None
    arxiv_pdf_url: str | None  # None when arXiv is unavailable or disabled
    artifacts_dir: Path | None  # where downloads and extracted text are kept
    timeout_s: float = 30.0
    max_bytes: int = 50_000_000


@dataclass(frozen=True)
class PdfText:
    pages: list[str]
    sha256: str

    @property
    def chars(self) -> int:
        return sum(len(page) for page in self.pages)


def safe_name(identifier: str) -> str:
    return UNSAFE.sub("_", identifier)


def local_names(candidate: Candidate) -> list[str]:
    names = [f"{safe_name(pid)}.pdf" for pid in candidate.corpus_ids]
    names += [f"{safe_name(arxiv_id)}.pdf" for arxiv_id in arxiv_ids(candidate)]
    return list(dict.fromkeys(names))


def arxiv_ids(candidate: Candidate) -> list[str]:
    """The work's arXiv ids without a version suffix (arXiv serves the latest version)."""
    ids = (normalise_arxiv_id(r.arxiv_id) for r in candidate.records)
    return list(dict.fromkeys(i for i in ids if i))


def acquire_pdfs(
    shortlist: Sequence[Candidate],
    sources: PdfSources,
    idea_terms: Sequence[str],
    params: IdeaSettings,
) -> list[PdfOutcome]:
    """One attempt for each of the first min(5, |shortlist|) works; windows land on each."""
    outcomes = []
    with httpx.Client(timeout=sources.timeout_s, follow_redirects=True) as client:
        for attempt, candidate in enumerate(shortlist[:PDF_ATTEMPTS], start=1):
            outcome, text = attempt_one(attempt, candidate, sources, client)
            candidate.pdf = outcome
            if text is not None:
                candidate.windows = select_windows(
                    candidate.paper_id, text.pages, idea_terms, params.window_chars,
                    params.windows_per_paper, params.term_frequency_cap)
                _keep_text(sources, candidate, text)
            outcomes.append(outcome)
    return outcomes


def attempt_one(
    attempt: int, candidate: Candidate, sources: PdfSources, client: httpx.Client
) -> tuple[PdfOutcome, PdfText | None]:
    tried: list[str] = []
    found = _from_folder(candidate, sources, tried) or _from_arxiv(
        candidate, sources, client, tried)
    if found is None:
        return PdfOutcome(attempt, "unavailable", None, tried,
                          detail="no source had a PDF with a text layer"), None
    source, path, text = found
    return PdfOutcome(attempt, "acquired", source, tried, str(path), text.sha256,
                      len(text.pages), text.chars), text


def read_text(path: Path) -> PdfText:
    """Pages of native text (PdfError when unreadable or without a text layer)."""
    pages = read_pdf(path).pages
    return PdfText(pages, hashlib.sha256(path.read_bytes()).hexdigest())


def _from_folder(candidate: Candidate, sources: PdfSources,
                 tried: list[str]) -> tuple[str, Path, PdfText] | None:
    if sources.pdf_dir is None:
        tried.append("local: no PDF folder given")
        return None
    for name in local_names(candidate):
        path = sources.pdf_dir / name
        if not path.is_file():
            tried.append(f"local {path}: not there")
            continue
        try:
            text = read_text(path)
        except (OSError, PdfError) as err:
            tried.append(f"local {path}: {err}")
            continue
        tried.append(f"local {path}: read")
        return "local", path, text
    return None


def _from_arxiv(candidate: Candidate, sources: PdfSources, client: httpx.Client,
                tried: list[str]) -> tuple[str, Path, PdfText] | None:
    ids = arxiv_ids(candidate)
    if not ids:
        tried.append("arxiv: the work has no arXiv id")
        return None
    if sources.arxiv_pdf_url is None:
        tried.append("arxiv: unavailable (did not answer the availability probe)")
        return None
    for arxiv_id in ids:
        url = f"{sources.arxiv_pdf_url.rstrip('/')}/{arxiv_id}"
        try:
            data = _download(client, url, sources.max_bytes)
            path = _save(sources, f"{safe_name(arxiv_id)}.pdf", data)
            text = read_text(path)
        except (httpx.HTTPError, PdfError, OSError) as err:
            tried.append(f"arxiv {url}: {type(err).__name__}: {err}")
            continue
        tried.append(f"arxiv {url}: downloaded")
        return "arxiv", path, text
    return None


def _download(client: httpx.Client, url: str, max_bytes: int) -> bytes:
    with client.stream("GET", url) as response:
        response.raise_for_status()
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise PdfError(f"larger than {max_bytes} bytes")
            chunks.append(chunk)
    data = b"".join(chunks)
    if not data.startswith(b"%PDF"):
        raise PdfError("the reply is not a PDF")
    return data


def _save(sources: PdfSources, name: str, data: bytes) -> Path:
    """Downloads are kept with the run; without a run folder, in a temporary one."""
    folder = sources.artifacts_dir or Path(tempfile.mkdtemp(prefix="crase-pdf-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    return path


def _keep_text(sources: PdfSources, candidate: Candidate, text: PdfText) -> None:
    """The full extracted text stays local, page by page, next to the audit."""
    if sources.artifacts_dir is None:
        return
    sources.artifacts_dir.mkdir(parents=True, exist_ok=True)
    body = "".join(f"\n=== page {n} ===\n{page}" for n, page in enumerate(text.pages, start=1))
    (sources.artifacts_dir / f"{safe_name(candidate.paper_id)}.txt").write_text(
        body, encoding="utf-8")
