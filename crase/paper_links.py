"""Links to a paper, from the identifiers the graph holds: the one home for these URLs, used
by the command line, the JSON results, the exports and the web pages."""

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from crase.paper_identity import strip_doi_prefix

ARXIV_ABS = "https://arxiv.org/abs/"
DOI_RESOLVER = "https://doi.org/"
SEMANTIC_SCHOLAR_PAPER = "https://www.semanticscholar.org/paper/"


def paper_links(paper: Mapping[str, Any]) -> dict[str, str]:
    """{'arxiv': url, 'doi': url, 'semantic_scholar': url}, only for the ids the paper has."""
    links: dict[str, str] = {}
    if arxiv_id := clean_id(paper.get("arxiv_id")):
        links["arxiv"] = ARXIV_ABS + quote(arxiv_id, safe="/.")
    if doi := clean_id(paper.get("doi")):
        # The DOI as given, case kept: resolvers ignore case, and readers see one spelling.
        links["doi"] = DOI_RESOLVER + quote(strip_doi_prefix(doi), safe="/.:;()-_")
    if s2_id := clean_id(paper.get("s2_id")):
        links["semantic_scholar"] = SEMANTIC_SCHOLAR_PAPER + quote(s2_id, safe="")
    return links


def best_link(paper: Mapping[str, Any]) -> str | None:
    """The one link to show where there is room for one: DOI, else arXiv, else S2."""
    links = paper_links(paper)
    return links.get("doi") or links.get("arxiv") or links.get("semantic_scholar")


def clean_id(value: Any) -> str | None:
    text = str(value).strip() if value is not None else ""
    return text or None
