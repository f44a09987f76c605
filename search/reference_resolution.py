"""References resolved to corpus papers: by id, then DOI, then arXiv id (both normalised
by crase.paper_identity, so a resolver URL or a version suffix still matches), then by a
title: first a corpus title equal to it once both are normalised, else the one whose words
agree best with it among the title's full-text hits (two papers that agree equally well
are no match). Shared by the citation-gap analysis (the
draft's references), the evolution map's comparison and the papers a search starts from
(search/given_papers.py)."""

from pydantic import BaseModel, Field

from crase.graph import Graph
from crase.paper_identity import identifier_keys, normalise_title, title_similarity
from crase.reference_lists import ReferenceItem
from crase.scoring.tex import plain_text
from crase.search.text_ranking import Hit, has_searchable_word, search_hits
from crase.text_limits import compile_linear

TITLE_MATCH = 0.8  # word-set Jaccard at which two titles are the same paper
TITLE_HITS = 5  # full-text hits of a reference's title compared with it
# An exact title is looked for first, as a phrase on the title field: its words as the
# index's analyzer splits them (letters and digits, accents kept), at most this many, and
# this many candidate titles compared.
TITLE_PHRASE_WORD = compile_linear(r"[\p{L}\p{N}]+")
MAX_PHRASE_WORDS = 64
EXACT_TITLE_CANDIDATES = 50
YEAR_SLACK = 1  # a preprint and its journal version are often a year apart


class ResolvedReference(BaseModel):
    reference: ReferenceItem
    paper_id: str | None = Field(description="The corpus paper, or null when none matches")
    matched_by: str | None = Field(description="id, doi, arxiv_id or title")
    title: str | None = Field(description="The corpus paper's title")


def resolve_references(graph: Graph, items: list[ReferenceItem]) -> list[ResolvedReference]:
    """Each item matched to a corpus paper: by id, then DOI, then arXiv id, then a title
    whose words agree (Jaccard >= TITLE_MATCH) among the title's full-text hits."""
    if not items:  # every given paper found by its graph id: nothing more to ask
        return []
    ids = [item.id for item in items if item.id]
    titles = {row["id"]: row["title"] for row in graph.read("read_papers", ids=ids)}
    by_identifier = papers_by_identifier(graph, items)
    return [resolve_one(graph, item, titles, by_identifier) for item in items]


def papers_by_identifier(graph: Graph, items: list[ReferenceItem]
                         ) -> dict[tuple[str, str], dict[str, str]]:
    """The corpus papers the items' DOIs and arXiv ids name, in one query, keyed by
    (kind, normalised identifier)."""
    keys = [identifier_keys(item.doi, item.arxiv_id) for item in items]
    dois = [doi for key in keys for doi in key.dois]
    arxiv = [arxiv_id for key in keys for arxiv_id in key.arxiv_ids]
    found: dict[tuple[str, str], dict[str, str]] = {}
    for row in graph.read("match_papers_by_identifier", dois=dois, arxiv_ids=arxiv,
                          excluded=[]):
        key = row["doi"] if row["matched_by"] == "doi" else row["arxiv_id"]
        found[(row["matched_by"], key)] = {"id": row["id"], "title": row["title"]}
    return found


def resolve_one(graph: Graph, item: ReferenceItem, titles: dict[str, str],
                by_identifier: dict[tuple[str, str], dict[str, str]]) -> ResolvedReference:
    if item.id and item.id in titles:
        return ResolvedReference(reference=item, paper_id=item.id, matched_by="id",
                                 title=titles[item.id])
    # The identity module's keys: an arXiv DOI also names the work by its arXiv id.
    keys = identifier_keys(item.doi, item.arxiv_id)
    for kind, values in (("doi", keys.dois), ("arxiv_id", keys.arxiv_ids)):
        for value in values:
            found = by_identifier.get((kind, value))
            if found is not None:
                return ResolvedReference(reference=item, paper_id=found["id"],
                                         matched_by=kind, title=found["title"])
    if item.title and has_searchable_word(item.title):
        exact = exact_title_hits(graph, item.title)
        hits = exact or search_hits(graph, item.title, TITLE_HITS, [])
        hits = [hit for hit in hits if item.year is None or hit.year is None
                or abs(item.year - hit.year) <= YEAR_SLACK]
        hit = best_title_hit(item.title, hits)
        if hit is not None:
            return ResolvedReference(reference=item, paper_id=hit.id, matched_by="title",
                                     title=hit.title)
    return ResolvedReference(reference=item, paper_id=None, matched_by=None, title=None)


def exact_title_hits(graph: Graph, title: str) -> list[Hit]:
    """The papers whose title is `title` once both are normalised (TeX to plain text, case,
    accents and punctuation gone), found by a phrase query on the title field before any
    ranking: a short title ("Brane New World") is often not among the top full-text hits
    of its own words, which longer titles and abstracts share."""
    words = TITLE_PHRASE_WORD.findall(plain_text(title).casefold())
    if not words or len(words) > MAX_PHRASE_WORDS:
        return []
    wanted = normalise_title(plain_text(title))
    rows = graph.read("search_papers_by_title", phrase=f'title:"{" ".join(words)}"',
                      limit=EXACT_TITLE_CANDIDATES)
    return [Hit(row["id"], row["title"], row["year"], 1.0) for row in rows
            if row["title"] and normalise_title(plain_text(row["title"])) == wanted]


def best_title_hit(title: str, hits: list[Hit]) -> Hit | None:
    """The hit whose title agrees best with `title` (word-set overlap at least
    TITLE_MATCH), not merely the first that agrees; None when none agrees, or when two
    papers agree equally well (two papers of one title: which is meant is not known, so
    none is guessed)."""
    scored = sorted(((title_agreement(title, hit.title), hit) for hit in hits),
                    key=lambda pair: -pair[0])
    if not scored or scored[0][0] < TITLE_MATCH:
        return None
    if len(scored) > 1 and scored[1][0] == scored[0][0] and scored[1][1].id != scored[0][1].id:
        return None
    return scored[0][1]


def title_agreement(a: str, b: str) -> float:
    # BibTeX titles carry TeX (braces, accent macros, math), as do many corpus titles.
    return title_similarity(plain_text(a), plain_text(b))
