"""The Crossref REST API: the work registered under a DOI, read as a PaperRecord (the idea
workflow verifies recalled DOIs with it)."""

from typing import Any

from crase.errors import ProviderReplyInvalid
from crase.ingest.provider_http import ProviderClient
from crase.ingest.records import PaperRecord


def crossref_record(client: ProviderClient, doi: str) -> PaperRecord | None:
    """The Crossref work for a DOI, or None when Crossref does not know it."""
    body = client.get_json(f"{client.settings.crossref_url.rstrip('/')}/works/{doi}")
    if body is None:
        return None
    message = body.get("message")
    if not isinstance(message, dict):
        raise ProviderReplyInvalid(f"Crossref {doi}: no 'message' object")
    return work_record(message, doi)


def work_record(work: dict[str, Any], doi: str) -> PaperRecord:
    """A Crossref work object as a record; fields Crossref leaves out stay empty."""
    titles = work.get("title") or []
    authors = [" ".join(filter(None, [a.get("given"), a.get("family")]))
               for a in work.get("author") or [] if isinstance(a, dict)]
    return PaperRecord(
        id=None, title=titles[0] if titles else "", year=issued_year(work), doi=doi,
        authors=[a for a in authors if a], venue=(work.get("container-title") or [None])[0],
        source="crossref",
    )


def issued_year(work: dict[str, Any]) -> int | None:
    # Crossref dates are nested lists, [[year, month, day]], any part of which may be missing.
    parts = (work.get("issued") or {}).get("date-parts") or [[None]]
    year = parts[0][0] if parts and parts[0] else None
    return year if isinstance(year, int) else None
