"""Grow the graph from papers a person names (`crase grow`): their OpenAlex works, the
works they cite and, asked for, the works citing them, level by level to a depth and a
paper cap, each stored as `crase load` stores a paper, with the route it came by.

1. **The given works.** Each named paper (WorkAsk: an OpenAlex id, a DOI, an arXiv id, a
   title) is looked for by OpenAlex id (`openalex_id:` OR-filters), then by DOI (an
   arXiv id as its arXiv DOI, `doi:` OR-filters), then by title (one search each, kept
   when the title's words agree at `title_match`). One not found is listed, not dropped.
2. **References**: the ids in the level's `referenced_works`, asked in OR-filters of 100
   (one list call per 100 works). An id a filter does not list is asked as a singleton
   (free with a key): a merged work answers 301 and its new id is used everywhere; one
   OpenAlex does not have is listed.
3. **Citers** (`citers`): `cites:` OR-filters of 100 level works, cursor paging to the
   end or the cap.
4. **The cap**: no work past `max_papers` (given works included) is fetched; the ids left
   out are counted, and stay in the stored reference lists, so a later grow or a paper that
   joins the graph later links them.

Each work becomes a Paper through the snapshot reader's mapping (crase.ingest.openalex:
the abstract rebuilt from its inverted index, the arXiv id from its locations) and the
rules of `crase load` (validate_paper); a work that fails them is rejected with its
reason. A work the graph already holds (same graph id, OpenAlex id, arXiv id or DOI, in
the spellings crase.paper_identity gives them) keeps its id and only gains what it lacks,
so nothing is duplicated. The edges are drawn at the end from the stored reference lists
(`openalex_reference_ids`), in the database.

Every reply is cached on disk by the client (crase.ingest.request_cache), and the order of
the work depends only on the replies: a grow run again after an interruption reads what
it had fetched from the cache and continues with the first request it had not sent.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from crase.graph import Graph
from crase.ingest.openalex import map_work, short_id, work_arxiv_id, work_references
from crase.ingest.openalex_api import OpenAlexClient
from crase.ingest.records import Paper, validate_paper
from crase.paper_identity import ARXIV_DOI_PREFIX, normalise_doi, title_similarity
from crase.run_lifecycle import now_iso

WRITE_CHUNK = 2_000
EXAMPLES = 5  # rejected works named per reason
TITLE_HITS = 5  # hits of a title's search looked at
Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True)
class WorkAsk:
    """A paper as a person named it, with what it can be looked for by."""

    label: str
    openalex_id: str | None = None
    doi: str | None = None  # a DOI key (crase.paper_identity.normalise_doi)
    arxiv_id: str | None = None  # an arXiv key
    title: str | None = None


@dataclass(frozen=True)
class GrowLimits:
    depth: int = 1
    citers: bool = False
    max_papers: int = 5_000
    title_match: float = 0.8


@dataclass
class GrowReport:
    given: list[tuple[str, str]] = field(default_factory=list)  # (label, graph id)
    unknown: list[str] = field(default_factory=list)  # labels OpenAlex has no work for
    papers_fetched: int = 0  # works stored (new or merged)
    papers_created: int = 0
    papers_merged: int = 0  # already in the graph: kept their id, gained what they lacked
    rejected: dict[str, list[str]] = field(default_factory=dict)  # reason -> "W…: why"
    no_abstract: int = 0
    outside_cap: int = 0  # works named by the levels but not fetched: past max_papers
    not_found: list[str] = field(default_factory=list)  # W ids OpenAlex does not have
    papers_before: int = 0
    papers_after: int = 0
    edges_before: int = 0
    edges_after: int = 0
    new_ids: list[str] = field(default_factory=list)

    @property
    def rejected_count(self) -> int:
        return sum(len(v) for v in self.rejected.values())


class Grow:
    """One grow: its client, its limits, and what it has stored so far."""

    def __init__(self, graph: Graph, client: OpenAlexClient, limits: GrowLimits,
                 progress: Progress | None = None) -> None:
        self.graph = graph
        self.client = client
        self.limits = limits
        self.progress = progress
        self.report = GrowReport()
        self.stored: dict[str, str] = {}  # W id -> graph id
        self.references: dict[str, list[str]] = {}  # W id -> the W ids it cites
        self.refused: set[str] = set()  # W ids rejected or not found: not asked again
        self.aliases: dict[str, str] = {}  # a merged work's old W id -> its new one

    # the levels -----------------------------------------------------------------------------
    def run(self, asks: list[WorkAsk]) -> GrowReport:
        before = self.graph.read("count_papers_and_citations")[0]
        self.report.papers_before, self.report.edges_before = before["papers"], \
            before["citations"]
        frontier = self.given_works(asks)
        for level in range(1, self.limits.depth + 1):
            if not frontier:
                break
            cited = [ref for work in frontier for ref in self.references.get(work, [])]
            found = self.fetch_ids(cited, f"reference:{level}")
            if self.limits.citers:
                found += self.fetch_citers(frontier, f"citer:{level}")
            frontier = found
        self.link_edges()
        after = self.graph.read("count_papers_and_citations")[0]
        self.report.papers_after, self.report.edges_after = after["papers"], after["citations"]
        return self.report

    def room(self) -> int:
        return max(0, self.limits.max_papers - len(self.stored))

    def canonical(self, work_id: str) -> str:
        return self.aliases.get(work_id, work_id)

    def fetch_ids(self, ids: list[str], route: str) -> list[str]:
        """Store the works of `ids` not stored yet, up to the cap; their W ids."""
        wanted = list(dict.fromkeys(w for w in map(self.canonical, ids)
                                    if w not in self.stored and w not in self.refused))
        if len(wanted) > self.room():
            self.report.outside_cap += len(wanted) - self.room()
            wanted = wanted[:self.room()]
        found: list[str] = []
        for start in range(0, len(wanted), self.client.chunk):
            chunk = wanted[start:start + self.client.chunk]
            works = self.client.works(chunk)
            found += self.store(works, route)
            listed = {short_id(work.get("id")) for work in works}
            for asked in chunk:
                if asked not in listed:
                    found += self.fetch_one(asked, route)
        return found

    def fetch_one(self, asked: str, route: str) -> list[str]:
        """A work an id filter did not list: its singleton, which follows a merge."""
        work = self.client.work(asked)
        now = short_id(work.get("id")) if work else None
        if work is None or now is None:
            self.report.not_found.append(asked)
            self.refused.add(asked)
            return []
        if now != asked:
            self.aliases[asked] = now
        if now in self.stored or now in self.refused or not self.room():
            return []
        return self.store([work], route)

    def fetch_citers(self, cited: list[str], route: str) -> list[str]:
        found: list[str] = []
        for start in range(0, len(cited), self.client.chunk):
            read = 0
            for page in self.client.citing_pages(cited[start:start + self.client.chunk]):
                read += len(page.works)
                new = [w for w in page.works if self.is_new(w)]
                if len(new) > self.room():
                    self.report.outside_cap += len(new) - self.room()
                    new = new[:self.room()]
                found += self.store(new, route)
                if not self.room():
                    self.report.outside_cap += max(0, (page.count or read) - read)
                    return found
        return found

    def is_new(self, work: dict[str, Any]) -> bool:
        own = short_id(work.get("id"))
        return own is not None and own not in self.stored and own not in self.refused

    def given_works(self, asks: list[WorkAsk]) -> list[str]:
        """The given papers' works, stored with the route "given"; their W ids."""
        found: dict[int, dict[str, Any]] = {}
        by_id = {i: a.openalex_id for i, a in enumerate(asks) if a.openalex_id}
        listed = {short_id(w.get("id")): w for w in self.client.works(list(by_id.values()))}
        for index, typed in by_id.items():
            # An id the filter does not list may be a merged work's: its singleton says.
            work = listed.get(short_id(typed)) or self.client.work(typed)
            if work is not None:
                found[index] = work
        self.find_by_doi(asks, found)
        for index, ask in enumerate(asks):
            if index not in found and ask.title:
                work = self.find_by_title(ask.title)
                if work is not None:
                    found[index] = work
        self.store(list({short_id(w.get("id")): w for w in found.values()}.values()), "given")
        for index, ask in enumerate(asks):
            own = short_id(found[index].get("id")) if index in found else None
            if own is not None and own in self.stored:
                self.report.given.append((ask.label, self.stored[own]))
            else:
                self.report.unknown.append(ask.label)
        return list(dict.fromkeys(short_id(w.get("id")) or "" for w in found.values()
                                  if short_id(w.get("id")) in self.stored))

    def find_by_doi(self, asks: list[WorkAsk], found: dict[int, dict[str, Any]]) -> None:
        """Asks not found yet, by their DOI or their arXiv id's arXiv DOI."""
        dois = {i: a.doi or (ARXIV_DOI_PREFIX + a.arxiv_id if a.arxiv_id else None)
                for i, a in enumerate(asks) if i not in found}
        asked = {i: d for i, d in dois.items() if d}
        works = self.client.works_by_doi(list(dict.fromkeys(asked.values())))
        by_doi = {normalise_doi(w.get("doi")): w for w in works}
        by_arxiv = {work_arxiv_id(w): w for w in works}
        for index, doi in asked.items():
            ask = asks[index]
            work = by_doi.get(doi) or (by_arxiv.get(ask.arxiv_id) if ask.arxiv_id else None)
            if work is not None:
                found[index] = work

    def find_by_title(self, title: str) -> dict[str, Any] | None:
        hits = self.client.search(title, TITLE_HITS).works
        scored = [(title_similarity(title, str(w.get("title") or w.get("display_name") or "")),
                   w) for w in hits]
        best = max(scored, key=lambda pair: pair[0], default=(0.0, None))
        return best[1] if best[0] >= self.limits.title_match else None

    # storing ---------------------------------------------------------------------------------
    def store(self, works: list[dict[str, Any]], route: str) -> list[str]:
        """Validate and MERGE works, matched to graph papers by identity; their W ids."""
        papers: dict[str, Paper] = {}
        for work in works:
            own = short_id(work.get("id"))
            if own is None or own in self.stored or own in papers:
                continue
            paper = self.paper_of(own, work)
            if paper is not None:
                papers[own] = paper
                self.references[own] = [short_id(r) or "" for r in work_references(work)]
        existing = self.match_existing(papers)
        rows, lists = [], []
        now = now_iso()
        for own, paper in papers.items():
            graph_id, props = self.placed(own, paper, existing.get(own))
            self.stored[own] = graph_id
            rows.append({"id": graph_id, "props": props})
            lists.append({"id": graph_id, "openalex_id": own, "route": route,
                          "reference_ids": self.references[own], "fetched_at": now})
        for start in range(0, len(rows), WRITE_CHUNK):
            self.graph.write("merge_papers", rows=rows[start:start + WRITE_CHUNK])
            self.graph.write("set_openalex_works", rows=lists[start:start + WRITE_CHUNK])
        self.report.papers_fetched += len(papers)
        if self.progress is not None:
            self.progress("papers", len(self.stored), self.limits.max_papers)
        return list(papers)

    def paper_of(self, own: str, work: dict[str, Any]) -> Paper | None:
        """The Paper of a work, or None with the work rejected for its reason."""
        result = validate_paper(map_work(work))
        if isinstance(result, Paper):
            return result
        kind, why = result
        self.report.rejected.setdefault(str(kind), []).append(f"{own}: {why}")
        self.refused.add(own)
        return None

    def placed(self, own: str, paper: Paper,
               found: tuple[str, set[str]] | None) -> tuple[str, dict[str, Any]]:
        """The graph id a work is stored under and the properties written: all of a new
        paper's, and only what a paper already in the graph lacks."""
        props = paper.graph_properties()
        if found is None:
            self.report.papers_created += 1
            self.report.new_ids.append(paper.id)
            self.report.no_abstract += not paper.abstract
            return paper.id, props
        graph_id, filled = found
        self.report.papers_merged += 1
        return graph_id, {k: v for k, v in props.items() if k not in filled}

    def match_existing(self, papers: dict[str, Paper]) -> dict[str, tuple[str, set[str]]]:
        rows = [{"key": own, "id": p.id, "openalex_id": own, "arxiv_id": p.arxiv_id,
                 "doi": p.doi} for own, p in papers.items()]
        found: dict[str, tuple[str, set[str]]] = {}
        for start in range(0, len(rows), WRITE_CHUNK):
            for row in self.graph.read("match_papers_by_work_ids",
                                       rows=rows[start:start + WRITE_CHUNK]):
                if row["id"] is not None:
                    found[row["key"]] = (row["id"], set(row["filled"]))
        return found

    # edges -----------------------------------------------------------------------------------
    def link_edges(self) -> None:
        """Reference lists that name a merged work's old id are stored again with its new
        one; then the edges every stored list names are drawn."""
        now = now_iso()
        renamed = [{"id": self.stored[own], "openalex_id": own, "route": None,
                    "reference_ids": [self.canonical(r) for r in refs], "fetched_at": now}
                   for own, refs in self.references.items()
                   if own in self.stored and any(r in self.aliases for r in refs)]
        for start in range(0, len(renamed), WRITE_CHUNK):
            self.graph.write("set_openalex_works", rows=renamed[start:start + WRITE_CHUNK])
        ids = list(dict.fromkeys(self.stored.values()))
        for start in range(0, len(ids), WRITE_CHUNK):
            self.graph.write("link_openalex_references", ids=ids[start:start + WRITE_CHUNK])


def grow_from_openalex(graph: Graph, client: OpenAlexClient, asks: list[WorkAsk],
                       limits: GrowLimits, progress: Progress | None = None) -> GrowReport:
    return Grow(graph, client, limits, progress).run(asks)
