"""External providers for the idea workflow: Semantic Scholar (search, citation neighbours,
through `crase.ingest.semantic_scholar`), Crossref (DOI verification) and arXiv
(identifier resolution; PDFs are fetched by `pdf_acquisition`).

Availability is probed once per run with a short timeout and recorded apart from the
routes: a provider that does not answer is 'unavailable', and every route that needs it
is skipped with that reason on record. A provider that answered the probe but fails a
later request costs that request only; the failure is recorded with the route.

Records from a provider are hypotheses about identity until resolved against the corpus
(`identity.py`); those not in the corpus stay in the audit JSON and are not written to the
graph as Paper nodes.
"""

import asyncio
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import httpx

from crase.errors import (
    ProviderError,
    ProviderRateLimited,
    ProviderReplyInvalid,
    ProviderRequestRejected,
    ProviderTimeout,
    ProviderUnavailable,
)
from crase.idea.candidates import PaperRecord
from crase.ingest.semantic_scholar import S2Paper, SemanticScholarClient
from crase.settings import ProviderSettings

ATOM = {"atom": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}
PROVIDERS = ("semantic_scholar", "crossref", "arxiv")


@dataclass(frozen=True)
class ProviderStatus:
    name: str
    available: bool
    detail: str
    url: str
    seconds: float = 0.0

    def to_audit(self) -> dict[str, Any]:
        return asdict(self)


def probe_url(settings: ProviderSettings, name: str) -> str:
    if name == "semantic_scholar":
        return f"{settings.semantic_scholar_url.rstrip('/')}/paper/search?query=probe&limit=1"
    if name == "crossref":
        return f"{settings.crossref_url.rstrip('/')}/works?rows=0"
    return f"{settings.arxiv_url.rstrip('/')}/query?id_list=&max_results=0"


def probe_providers(settings: ProviderSettings, timeout_s: float,
                    enabled: bool) -> dict[str, ProviderStatus]:
    """Each provider: does it answer within the timeout? Any HTTP reply below 500 counts."""
    statuses = {}
    for name in PROVIDERS:
        url = probe_url(settings, name)
        if not enabled:
            statuses[name] = ProviderStatus(name, False, "not probed: providers are switched "
                                                         "off for this run", url)
            continue
        started = time.monotonic()
        try:
            response = httpx.get(url, timeout=timeout_s)
        except httpx.HTTPError as err:
            statuses[name] = ProviderStatus(
                name, False, f"unavailable: {type(err).__name__}: {err}"[:300], url,
                round(time.monotonic() - started, 3))
            continue
        seconds = round(time.monotonic() - started, 3)
        if response.status_code >= 500:
            statuses[name] = ProviderStatus(
                name, False, f"unavailable: HTTP {response.status_code}", url, seconds)
        else:
            statuses[name] = ProviderStatus(
                name, True, f"answered HTTP {response.status_code}", url, seconds)
    return statuses


class ProviderClient:
    """For Crossref and arXiv: one HTTP connection, a minimum interval between requests and
    retries on 429, 5xx and timeouts; errors come out as ProviderError subclasses."""

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self._http = httpx.Client(timeout=settings.timeout_s, follow_redirects=True)
        self._last = 0.0

    def close(self) -> None:
        self._http.close()

    def get(self, url: str, params: dict[str, Any] | None = None,
            headers: dict[str, str] | None = None) -> httpx.Response:
        for attempt in range(self.settings.max_retries + 1):
            self._wait_turn()
            try:
                response = self._http.get(url, params=params, headers=headers)
            except httpx.TimeoutException as err:
                if attempt >= self.settings.max_retries:
                    raise ProviderTimeout(f"{url}: no reply in {self.settings.timeout_s}s") \
                        from err
                self._sleep(attempt)
                continue
            except httpx.HTTPError as err:
                if attempt >= self.settings.max_retries:
                    raise ProviderUnavailable(f"{url}: {type(err).__name__}: {err}") from err
                self._sleep(attempt)
                continue
            if response.status_code == 429 or response.status_code >= 500:
                if attempt >= self.settings.max_retries:
                    cls = ProviderRateLimited if response.status_code == 429 else \
                        ProviderUnavailable
                    raise cls(f"{url}: HTTP {response.status_code} after {attempt} retries")
                self._sleep(attempt)
                continue
            if response.status_code >= 400 and response.status_code != 404:
                raise ProviderRequestRejected(f"{url}: HTTP {response.status_code}")
            return response
        raise ProviderUnavailable(f"{url}: no reply")  # unreachable: the loop returns or raises

    def get_json(self, url: str, params: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None) -> dict[str, Any] | None:
        """The JSON object of a reply; None for 404."""
        response = self.get(url, params, headers)
        if response.status_code == 404:
            return None
        try:
            body = response.json()
        except ValueError as err:
            raise ProviderReplyInvalid(f"{url}: the reply is not JSON") from err
        if not isinstance(body, dict):
            raise ProviderReplyInvalid(f"{url}: the reply is not a JSON object")
        return body

    def _wait_turn(self) -> None:
        interval = 1.0 / self.settings.requests_per_second
        wait = self._last + interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last = time.monotonic()

    def _sleep(self, attempt: int) -> None:
        time.sleep(min(self.settings.backoff_base_s * (2 ** attempt),
                       self.settings.backoff_max_s))


# --- Semantic Scholar (through the ingest client) ---------------------------------------


def s2_record(paper: S2Paper) -> PaperRecord | None:
    if not paper.title or not paper.title.strip():
        return None
    ids = paper.externalIds or {}
    return PaperRecord(
        id=None, title=paper.title.strip(), abstract=paper.abstract or "",
        year=paper.year, doi=ids.get("DOI"), arxiv_id=ids.get("ArXiv"), s2_id=paper.paperId,
        authors=[a.name for a in paper.authors or [] if a.name], venue=paper.venue or None,
        source="semantic_scholar",
    )


def _records(papers: list[S2Paper]) -> list[PaperRecord]:
    return [record for paper in papers for record in [s2_record(paper)] if record is not None]


SearchOutcome = list[PaperRecord] | ProviderError


def search_semantic_scholar(settings: ProviderSettings, queries: Sequence[str],
                            limit: int) -> list[SearchOutcome]:
    """Per query, its hits as records or the provider error (one failed query does not
    stop the others). One client, so the shared rate limit spans every query."""

    async def search_all() -> list[SearchOutcome]:
        outcomes: list[SearchOutcome] = []
        async with SemanticScholarClient(settings) as client:
            for query in queries:
                try:
                    result = await client.search(query, limit=limit)
                except ProviderError as err:
                    outcomes.append(err)
                    continue
                outcomes.append(_records(result.papers[:limit]))
        return outcomes

    return asyncio.run(search_all())


def s2_reference(record: PaperRecord) -> str | None:
    """How Semantic Scholar names a paper we know: its own id, DOI or arXiv id."""
    if record.s2_id:
        return record.s2_id
    if record.doi:
        return f"DOI:{record.doi}"
    if record.arxiv_id:
        return f"ARXIV:{record.arxiv_id}"
    return None


NeighbourOutcome = list[tuple[str, PaperRecord]] | ProviderError


def semantic_scholar_neighbours(settings: ProviderSettings, references: Sequence[str],
                                cap: int) -> list[NeighbourOutcome]:
    """Per paper, (direction, record) for its references and citing papers (at most `cap`
    of each), or the provider error."""

    async def read_all() -> list[NeighbourOutcome]:
        outcomes: list[NeighbourOutcome] = []
        async with SemanticScholarClient(settings) as client:
            for reference in references:
                try:
                    cited = await client.references(reference, cap=cap)
                    citing = await client.citations(reference, cap=cap)
                except ProviderError as err:
                    outcomes.append(err)
                    continue
                outcomes.append([("reference", r) for r in _records(cited.papers)]
                                + [("citing", r) for r in _records(citing.papers)])
        return outcomes

    return asyncio.run(read_all())


# --- Crossref and arXiv -----------------------------------------------------------------


def crossref_record(client: ProviderClient, doi: str) -> PaperRecord | None:
    """The Crossref work for a DOI, or None when Crossref does not know it."""
    body = client.get_json(f"{client.settings.crossref_url.rstrip('/')}/works/{doi}")
    if body is None:
        return None
    message = body.get("message")
    if not isinstance(message, dict):
        raise ProviderReplyInvalid(f"Crossref {doi}: no 'message' object")
    titles = message.get("title") or []
    parts = (message.get("issued") or {}).get("date-parts") or [[None]]
    year = parts[0][0] if parts and parts[0] else None
    authors = [" ".join(filter(None, [a.get("given"), a.get("family")]))
               for a in message.get("author") or [] if isinstance(a, dict)]
    return PaperRecord(
        id=None, title=titles[0] if titles else "", year=year if isinstance(year, int) else None,
        doi=doi, authors=[a for a in authors if a],
        venue=(message.get("container-title") or [None])[0], source="crossref",
    )


def arxiv_record(client: ProviderClient, arxiv_id: str) -> PaperRecord | None:
    """The arXiv listing of one identifier, or None when arXiv has no such entry."""
    response = client.get(f"{client.settings.arxiv_url.rstrip('/')}/query",
                          {"id_list": arxiv_id, "max_results": 1})
    try:
        root = ElementTree.fromstring(response.content)
    except ElementTree.ParseError as err:
        raise ProviderReplyInvalid(f"arXiv {arxiv_id}: the reply is not Atom XML") from err
    entry = root.find("atom:entry", ATOM)
    title = entry.findtext("atom:title", default="", namespaces=ATOM) if entry is not None \
        else ""
    if entry is None or not title.strip() or title.strip() == "Error":
        return None
    published = entry.findtext("atom:published", default="", namespaces=ATOM)
    return PaperRecord(
        id=None, title=" ".join(title.split()),
        abstract=" ".join(entry.findtext("atom:summary", default="", namespaces=ATOM).split()),
        year=int(published[:4]) if published[:4].isdigit() else None,
        doi=entry.findtext("arxiv:doi", default=None, namespaces=ATOM), arxiv_id=arxiv_id,
        authors=[" ".join((a.findtext("atom:name", default="", namespaces=ATOM)).split())
                 for a in entry.findall("atom:author", ATOM)],
        source="arxiv",
    )


def describe_error(err: ProviderError) -> str:
    return f"{type(err).__name__}: {err}"[:300]
