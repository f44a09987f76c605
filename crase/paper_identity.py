"""What makes two mentions of a paper the same paper: the one home for DOI and arXiv id
normalisation and for the title comparison, used by ingest, the idea pipeline's identity
resolution, the citation-gap reference lists and the paper links.

- DOI: a resolver URL (`https://doi.org/`, `http://dx.doi.org/`) or a `doi:` prefix and
  surrounding whitespace are dropped. DOIs are case-insensitive, so the comparison key is
  lower-cased; a link keeps the DOI as given.
- arXiv id: both forms (`hep-th/9901001`, `2101.01234`), with an `arXiv:` prefix or an
  abs/pdf URL dropped, and the version suffix (`v2`) dropped, since every version is one
  paper.
- Title: its words with case, accents, punctuation and spacing removed; two titles are
  compared by the overlap of their word sets.
"""

import re
import unicodedata

DOI_PREFIX = re.compile(r"^(https?://(dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
ARXIV_PREFIX = re.compile(r"^(https?://arxiv\.org/(abs|pdf)/|arxiv:\s*)", re.IGNORECASE)
ARXIV_VERSION = re.compile(r"v\d+$", re.IGNORECASE)
# A run of letters or digits in any script: hyphens and apostrophes split words, so
# "Chern-Simons" and "Chern Simons" are the same two words.
TITLE_WORD = re.compile(r"[^\W_]+")


def strip_doi_prefix(doi: str) -> str:
    """The DOI as given, without a resolver URL or `doi:` prefix (what a link shows)."""
    return DOI_PREFIX.sub("", doi.strip()).strip()


def normalise_doi(doi: str | None) -> str | None:
    """The comparison key of a DOI, or None when there is none. Lower case, not casefold:
    the graph's DOIs are stored in this spelling (ingest uses this function)."""
    if not doi:
        return None
    return strip_doi_prefix(doi).lower() or None


def normalise_arxiv_id(arxiv_id: str | None) -> str | None:
    """The comparison key of an arXiv id (no prefix, no version, lower case), or None."""
    if not arxiv_id:
        return None
    value = ARXIV_PREFIX.sub("", arxiv_id.strip()).strip().removesuffix(".pdf")
    return ARXIV_VERSION.sub("", value).lower() or None


def title_words(title: str) -> list[str]:
    """A title's words in order: lower case, accents dropped (é -> e), punctuation gone."""
    decomposed = unicodedata.normalize("NFKD", title)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return TITLE_WORD.findall(bare.casefold())


def normalise_title(title: str) -> str:
    """A title reduced to its words, one space apart: the key of an exact title match."""
    return " ".join(title_words(title))


def title_similarity(left: str, right: str) -> float:
    """Jaccard overlap of the two titles' word sets (1.0 for the same words, 0.0 when
    either has none)."""
    a, b = set(title_words(left)), set(title_words(right))
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def paper_key(arxiv_id: str | None, doi: str | None, own_id: str) -> str:
    """The graph id a bulk-dataset paper gets: its arXiv id, else `doi:` and its DOI key,
    else `own_id` (the dataset's id, with its prefix). Every dataset reader uses it, so the
    same work from OpenAlex, the Semantic Scholar datasets and an arXiv-keyed corpus of our
    own format (whose ids are arXiv ids, as the arXiv snapshot's are) is one node."""
    arxiv_key = normalise_arxiv_id(arxiv_id)
    if arxiv_key:
        return arxiv_key
    doi_key = normalise_doi(doi)
    return f"doi:{doi_key}" if doi_key else own_id
