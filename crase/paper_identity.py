"""What makes two mentions of a paper the same paper: the one home for DOI and arXiv id
normalisation and for the title comparison, used by ingest, the idea pipeline's identity
resolution, the citation-gap reference lists, the paper links and the papers a search
starts from (search/given_papers.py).

- DOI: a resolver URL (`https://doi.org/`, `http://dx.doi.org/`) or a `doi:` prefix and
  surrounding whitespace are dropped. DOIs are case-insensitive, so the comparison key is
  lower-cased; a link keeps the DOI as given.
- arXiv id: both forms (`hep-th/9901001`, `2101.01234`), with an `arXiv:` prefix or an
  abs/pdf URL dropped, and the version suffix (`v2`) dropped, since every version is one
  paper. arXiv's own DOI (`10.48550/arXiv.<id>`, any case, any DOI prefix) names the same
  preprint, so it gives that arXiv id too: a work one dataset knows by its arXiv id and
  another only by its arXiv DOI is one key (`paper_key`).
- Look-ups: a name a person types (an id, an arXiv id in any spelling, a DOI or its URL)
  gives the keys it is looked for by (`lookup_keys`); a record's DOI and arXiv id give
  theirs (`identifier_keys`). The graph stores these spellings (ingest normalises, and
  `crase db migrate` brings an older graph to them), so one key per identifier is sent.
- Title: its words with case, accents, punctuation and spacing removed; two titles are
  compared by the overlap of their word sets.
"""

import re
import unicodedata
from dataclasses import dataclass, field

DOI_PREFIX = re.compile(r"^(https?://(dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
ARXIV_PREFIX = re.compile(r"^(https?://arxiv\.org/(abs|pdf)/|arxiv:\s*)", re.IGNORECASE)
ARXIV_VERSION = re.compile(r"v\d+$", re.IGNORECASE)
ARXIV_DOI_PREFIX = "10.48550/arxiv."  # in the spelling of `normalise_doi`
DOI_START = "10."  # every DOI's directory indicator
# What an arXiv key looks like (old form archive[.class]/YYMMNNN, new form YYMM.NNNN[N]):
# a typed name is looked up as an arXiv id only when it has this shape. Anchored, with no
# nested repetition, so it runs in linear time on any text.
ARXIV_KEY_SHAPE = re.compile(r"[a-z][a-z\-]*(\.[a-z]{2})?/\d{7}|\d{4}\.\d{4,5}")
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


def arxiv_from_doi(doi: str | None) -> str | None:
    """The arXiv key an arXiv DOI (10.48550/arXiv.<id>) names, or None for any other DOI."""
    doi_key = normalise_doi(doi)
    if not doi_key or not doi_key.startswith(ARXIV_DOI_PREFIX):
        return None
    return normalise_arxiv_id(doi_key[len(ARXIV_DOI_PREFIX):])


def arxiv_key(arxiv_id: str | None, doi: str | None) -> str | None:
    """A record's arXiv key: from its arXiv id, else from an arXiv DOI."""
    return normalise_arxiv_id(arxiv_id) or arxiv_from_doi(doi)


@dataclass(frozen=True)
class PaperLookup:
    """The keys a paper is looked for by: graph ids, DOI keys and arXiv keys."""

    ids: list[str] = field(default_factory=list)
    dois: list[str] = field(default_factory=list)
    arxiv_ids: list[str] = field(default_factory=list)


def identifier_keys(doi: str | None, arxiv_id: str | None) -> PaperLookup:
    """The keys of a record's DOI and arXiv id (an arXiv DOI gives its arXiv key too)."""
    doi_key = normalise_doi(doi)
    arxiv = unique([normalise_arxiv_id(arxiv_id), arxiv_from_doi(doi)])
    return PaperLookup(dois=[doi_key] if doi_key else [], arxiv_ids=arxiv)


def lookup_keys(name: str) -> PaperLookup:
    """The keys a typed name is looked for by: as a graph id (as given, as an arXiv key
    and as a DOI's `paper_key`), as a DOI when it is one, as an arXiv id when it has the
    shape of one."""
    name = name.strip()
    doi_key = normalise_doi(name)
    doi_key = doi_key if doi_key and doi_key.startswith(DOI_START) else None
    arxiv = normalise_arxiv_id(name)
    arxiv = arxiv if arxiv and ARXIV_KEY_SHAPE.fullmatch(arxiv) else None
    arxiv_ids = unique([arxiv, arxiv_from_doi(doi_key)])
    ids = unique([name, *arxiv_ids, f"doi:{doi_key}" if doi_key else None])
    return PaperLookup(ids=ids, dois=[doi_key] if doi_key else [], arxiv_ids=arxiv_ids)


def unique(values: list[str | None]) -> list[str]:
    """The values that are set, each once, in order."""
    return [value for value in dict.fromkeys(values) if value]


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
    """The graph id a bulk-dataset paper gets: its arXiv key (from its arXiv id, else from
    an arXiv DOI), else `doi:` and its DOI key, else `own_id` (the dataset's id, with its
    prefix). Every dataset reader uses it, so the same work from OpenAlex, the Semantic
    Scholar datasets and an arXiv-keyed corpus of our own format (whose ids are arXiv ids,
    as the arXiv snapshot's are) is one node."""
    arxiv = arxiv_key(arxiv_id, doi)
    if arxiv:
        return arxiv
    doi_key = normalise_doi(doi)
    return f"doi:{doi_key}" if doi_key else own_id
