"""External providers for the idea workflow: Semantic Scholar (search, citation neighbours),
OpenAlex (search, where a key is set), Crossref (DOI verification) and arXiv (identifier
resolution; PDFs are fetched by `pdf_acquisition`). Their clients are in `crase.ingest`,
one module per API (`semantic_scholar`, `openalex_api`, `crossref`, `arxiv`); this module
holds the workflow's side: the availability probe, the Semantic Scholar and OpenAlex
routes and how a provider error is recorded.

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
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import httpx

from crase.errors import ProviderError
from crase.ingest.openalex import map_work
from crase.ingest.openalex_api import OpenAlexClient
from crase.ingest.records import PaperRecord
from crase.ingest.semantic_scholar import S2Paper, SemanticScholarClient
from crase.paper_identity import normalise_doi
from crase.settings import ProviderSettings

PROVIDERS = ("semantic_scholar", "crossref", "arxiv")
# Probed only where a key is set: without one the API allows a few cents a day, for tests.
OPENALEX = "openalex"


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
    if name == OPENALEX:  # a singleton: free, and any answer below 500 will do
        return f"{settings.openalex_url.rstrip('/')}/works/W0"
    return f"{settings.arxiv_url.rstrip('/')}/query?id_list=&max_results=0"


def probe_providers(settings: ProviderSettings, timeout_s: float,
                    enabled: bool) -> dict[str, ProviderStatus]:
    """Each provider: does it answer within the timeout? Any HTTP reply below 500 counts."""
    statuses = {}
    names = PROVIDERS + ((OPENALEX,) if settings.openalex_api_key is not None else ())
    for name in names:
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


# --- OpenAlex (through the ingest client: its budget, cache and retry policy) -----------


def openalex_record(work: dict[str, Any]) -> PaperRecord | None:
    """A Work as a record, read by the snapshot reader's mapping."""
    fields = map_work(work)
    title = fields.get("title")
    if not isinstance(title, str) or not title.strip():
        return None
    year = fields.get("year")
    return PaperRecord(
        id=None, title=title.strip(), abstract=fields.get("abstract") or "",
        year=year if isinstance(year, int) else None,
        doi=normalise_doi(fields.get("doi")), arxiv_id=fields.get("arxiv_id"),
        authors=fields.get("authors") or [], venue=fields.get("venue"), source=OPENALEX)


def search_openalex(settings: ProviderSettings, queries: Sequence[str],
                    limit: int) -> list[SearchOutcome]:
    """Per query, its OpenAlex hits as records or the provider error."""
    outcomes: list[SearchOutcome] = []
    with OpenAlexClient(settings, settings.openalex_dir) as client:
        for query in queries:
            try:
                works = client.search(query, limit).works
            except ProviderError as err:
                outcomes.append(err)
                continue
            outcomes.append([r for w in works[:limit] for r in [openalex_record(w)]
                             if r is not None])
    return outcomes


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


# --- the record -------------------------------------------------------------------------


# The route's status where no key is set: skipped, and the audit says why.
NO_OPENALEX_KEY = ProviderStatus(OPENALEX, False, "not probed: no key set "
                                 "(CRASE_PROVIDERS__OPENALEX_API_KEY)", "")


def describe_error(err: ProviderError) -> str:
    """How a provider error reads in the audit: its class and message, cut short."""
    return f"{type(err).__name__}: {err}"[:300]
