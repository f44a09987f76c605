"""The papers a search starts from, as a person names them: typed entries (a graph id, an
arXiv id or a DOI in any spelling crase.paper_identity knows, or a title) and the entries
of a reference file (BibTeX or RIS, as Zotero, Mendeley or `crase export` write it), each
resolved to one graph paper. `crase search --from/--from-file`, `POST /searches` with
`given_papers` and the search page's "Start from papers" box all resolve here, and the
search itself checks the graph ids it is given here (`require_in_graph`); a file's entries
are read by crase/reference_lists.py (`read_reference_file`), every one listed.

A typed entry is looked for as a graph id first (as typed, as an arXiv key, as a DOI's
`doi:` key), then by its DOI or arXiv id, then as a title; a file's entry by its DOI, then
its arXiv id, then its title. The DOI, arXiv id and title steps are
crase.search.reference_resolution's, the rule the citation-gap analysis uses: a title
counts only when a full-text hit's words agree with it (word-set overlap of at least
TITLE_MATCH there; "Black hole entropy" is not "Black hole entropy, part 2"). What cannot
be found is listed (as typed, or by the file entry's key and what it names), never dropped:
a search with one unknown entry is refused (GivenPapersUnknown, `require_all_found`) with
all of them named, by one message wherever it starts.
"""

from dataclasses import dataclass, field

from pydantic import ValidationError

from crase.errors import GivenPapersUnknown, InvalidRequest, ParameterAboveServerCap
from crase.graph import Graph
from crase.paper_identity import lookup_keys, unique
from crase.reference_lists import ReferenceEntry, ReferenceItem
from crase.search.reference_resolution import resolve_references
from crase.search.request import MAX_GIVEN_PAPERS
from crase.search.text_ranking import has_searchable_word

MAX_ENTRY_CHARS = 2000  # a typed entry: a title at most (ReferenceItem's bound)
UNKNOWN_SHOWN = 10  # unknown entries named in the one-line message (all are in `unknown`)


@dataclass(frozen=True)
class GivenPaper:
    entry: str  # the entry's label
    id: str
    title: str | None
    matched_by: str  # id, doi, arxiv_id or title


@dataclass
class GivenPapers:
    found: list[GivenPaper] = field(default_factory=list)  # in the order given
    unknown: list[str] = field(default_factory=list)  # labels of the entries not found

    @property
    def ids(self) -> list[str]:
        """The graph ids found, each once, in the order given."""
        return unique([paper.id for paper in self.found])


def typed_entry(text: str) -> ReferenceEntry:
    """An entry a person typed: its graph-id keys, and its DOI, arXiv id or (for text that
    is neither) title."""
    name = " ".join(text.split())
    if len(name) > MAX_ENTRY_CHARS:
        raise InvalidRequest(f"a given paper's entry is longer than {MAX_ENTRY_CHARS:,} "
                             "characters; give its DOI, arXiv id, id or title")
    keys = lookup_keys(name)
    try:
        if keys.dois:
            reference: ReferenceItem | None = ReferenceItem(doi=keys.dois[0])
        elif keys.arxiv_ids:
            reference = ReferenceItem(arxiv_id=keys.arxiv_ids[0])
        else:
            reference = ReferenceItem(title=name) if has_searchable_word(name) else None
    except ValidationError:  # a "DOI" past any DOI's length names no paper
        reference = None
    return ReferenceEntry(label=name, reference=reference, ids=keys.ids)


def typed_entries(texts: list[str]) -> list[ReferenceEntry]:
    """The typed entries that hold anything (an empty line is no entry)."""
    return [typed_entry(text) for text in texts if text.strip()]


def resolve_given(graph: Graph, entries: list[ReferenceEntry],
                  max_titles: int | None = None) -> GivenPapers:
    """Each entry resolved to a graph paper (ids first, in one query; then DOI, arXiv id
    and title as crase.search.reference_resolution finds them); the rest listed.
    `max_titles`: how many entries not found by id may be named by a title alone (each a
    full-text query), past which ParameterAboveServerCap (the HTTP API's cap)."""
    if len(entries) > MAX_GIVEN_PAPERS:
        raise InvalidRequest(f"{len(entries)} papers to start from; give at most "
                             f"{MAX_GIVEN_PAPERS} (a reference list, not a corpus)")
    candidates = unique([key for entry in entries for key in entry.ids])
    titles = {row["id"]: row["title"] for row in graph.read("read_papers", ids=candidates)}
    by_id = {index: next(key for key in entry.ids if key in titles)
             for index, entry in enumerate(entries) if any(key in titles for key in entry.ids)}
    pending = {index: entry.reference for index, entry in enumerate(entries)
               if index not in by_id and entry.reference is not None}
    by_title = sum(not (ref.doi or ref.arxiv_id) for ref in pending.values() if ref)
    if max_titles is not None and by_title > max_titles:
        raise ParameterAboveServerCap(
            f"{by_title} of the papers to start from are named by a title alone; this "
            f"server looks up at most {max_titles} titles a request "
            "(api.given_papers_max_titles); name the others by arXiv id, DOI or graph id")
    resolved = dict(zip(pending, resolve_references(graph, list(pending.values())),
                        strict=True))
    given = GivenPapers()
    for index, entry in enumerate(entries):
        if index in by_id:
            paper = by_id[index]
            given.found.append(GivenPaper(entry.label, paper, titles[paper], "id"))
        elif index in resolved and resolved[index].paper_id is not None:
            match = resolved[index]
            given.found.append(GivenPaper(entry.label, str(match.paper_id), match.title,
                                          str(match.matched_by)))
        else:
            given.unknown.append(entry.label)
    return given


def require_all_found(given: GivenPapers) -> list[str]:
    """The graph ids of the papers given; GivenPapersUnknown, naming every entry that was
    not found, when any was not."""
    if not given.unknown:
        return given.ids
    shown = ", ".join(f"\"{entry}\"" for entry in given.unknown[:UNKNOWN_SHOWN])
    more = (f" and {len(given.unknown) - UNKNOWN_SHOWN} more"
            if len(given.unknown) > UNKNOWN_SHOWN else "")
    raise GivenPapersUnknown(
        f"{len(given.unknown)} of the {len(given.found) + len(given.unknown)} papers to "
        f"start from are not in the graph (looked for by id, DOI, arXiv id and title): "
        f"{shown}{more}; check the spelling, load them (`crase load`, `crase fetch`) or "
        "leave them out", given.unknown)


def resolve_typed(graph: Graph, texts: list[str], max_titles: int | None = None) -> list[str]:
    """The graph ids of typed entries (the HTTP API's `given_papers`, the page's box);
    GivenPapersUnknown naming each one not found."""
    return require_all_found(resolve_given(graph, typed_entries(texts), max_titles))


def require_in_graph(graph: Graph, paper_ids: list[str]) -> None:
    """GivenPapersUnknown, naming each, for graph ids the graph does not hold: a search's
    given papers as its request names them, looked for by id alone (a caller that builds
    the request itself names graph ids, and a paper may leave the graph after they were
    resolved)."""
    require_all_found(resolve_given(graph, [ReferenceEntry(label=paper, ids=[paper])
                                            for paper in paper_ids]))
