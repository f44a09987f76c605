"""Reference lists resolved to corpus papers by identifier, against a stand-in graph that
answers the identifier query as Neo4j does (exact equality on the stored value), with
papers stored as ingest validates them (no database: the resolution rules only); and titles
against the committed sample in the session's Neo4j."""

import json
from collections.abc import Iterator
from typing import Any, cast

import pytest

from crase.graph import Graph
from crase.ingest.records import Paper
from crase.reference_lists import ReferenceItem, parse_bibtex
from crase.search.reference_resolution import TITLE_HITS, resolve_references
from crase.search.text_ranking import search_hits
from tests.conftest import clean_graph
from tests.sample_slice import SAMPLE, load_sample_slice

# Maldacena's large-N paper, stored as ingest stores it (its DOI lower-cased).
MALDACENA = Paper.model_validate({
    "id": "9711200", "arxiv_id": "hep-th/9711200", "doi": "10.1023/A:1026654312961",
    "title": "The Large N Limit of Superconformal Field Theories and Supergravity"})


class IdentifierGraph:
    """The queries resolve_references runs: ids, identifiers, and a full-text search that
    finds nothing (so only an identifier can resolve a reference)."""

    def __init__(self, papers: list[Paper]) -> None:
        self.papers = papers

    def read(self, name: str, **params: Any) -> list[dict[str, Any]]:
        if name == "match_papers_by_identifier":
            return self.by_identifier(params["dois"], params["arxiv_ids"])
        if name == "read_papers":
            return [{"id": p.id, "title": p.title} for p in self.papers if p.id in params["ids"]]
        assert name in ("search_papers_fulltext", "search_papers_by_title"), name
        return []

    def by_identifier(self, dois: list[str], arxiv_ids: list[str]) -> list[dict[str, Any]]:
        rows = [(p, "doi") for p in self.papers if p.doi in dois]
        rows += [(p, "arxiv_id") for p in self.papers if p.arxiv_id in arxiv_ids]
        return [{"id": p.id, "title": p.title, "doi": p.doi, "arxiv_id": p.arxiv_id,
                 "matched_by": kind} for p, kind in rows]


def resolved(bibtex: str) -> dict[str | None, tuple[str | None, str | None]]:
    graph = cast(Graph, IdentifierGraph([MALDACENA]))
    return {r.reference.key: (r.paper_id, r.matched_by)
            for r in resolve_references(graph, parse_bibtex(bibtex))}


def test_a_bibtex_doi_written_as_a_resolver_url_resolves() -> None:
    # The regression: `doi = {https://doi.org/...}` was compared with its prefix and never
    # matched the stored DOI.
    bibtex = ("@article{url, title = {Large {N} limit}, "
              "doi = {https://doi.org/10.1023/A:1026654312961}}\n"
              "@article{dx, doi = {http://dx.doi.org/10.1023/a:1026654312961}}\n"
              "@article{prefixed, doi = {doi:10.1023/A:1026654312961}}\n"
              "@article{bare, doi = {10.1023/A:1026654312961}}\n")
    assert resolved(bibtex) == {key: ("9711200", "doi")
                                for key in ("url", "dx", "prefixed", "bare")}


def test_an_arxiv_id_resolves_with_a_prefix_and_a_version() -> None:
    bibtex = ("@misc{versioned, eprint = {hep-th/9711200v3}}\n"
              "@misc{prefixed, eprint = {arXiv:hep-th/9711200}}\n"
              "@misc{other, eprint = {2101.01234v2}}\n")
    assert resolved(bibtex) == {"versioned": ("9711200", "arxiv_id"),
                                "prefixed": ("9711200", "arxiv_id"),
                                "other": (None, None)}


def test_an_arxiv_doi_resolves_to_the_paper_stored_under_its_arxiv_id() -> None:
    # A reference manager often exports only the arXiv DOI (10.48550/arXiv.X); the paper is
    # stored under its arXiv id, as the identity module keys it.
    bibtex = ("@article{arxivdoi, doi = {10.48550/arXiv.hep-th/9711200}}\n"
              "@article{url, doi = {https://doi.org/10.48550/ARXIV.HEP-TH/9711200}}\n")
    assert resolved(bibtex) == {"arxivdoi": ("9711200", "arxiv_id"),
                                "url": ("9711200", "arxiv_id")}


def test_a_title_resolves_to_the_hit_that_agrees_best_and_a_tie_to_none() -> None:
    from crase.search.reference_resolution import best_title_hit
    from crase.search.text_ranking import Hit

    wanted = "Black hole entropy from string microstates, part 3"
    near = Hit("near", "Black hole entropy from string microstates, part 3 and 4", 2000, 9.0)
    exact = Hit("exact", "Black Hole Entropy from {String} Microstates, part 3", 2000, 8.0)
    other = Hit("other", "Black hole entropy from string microstates, part 13", 2000, 7.0)
    # The exact title wins even where the full-text ranks a near one first.
    assert best_title_hit(wanted, [near, exact, other]) is exact
    # Two papers of one title: which is meant is not known, so none is guessed.
    twin = Hit("twin", exact.title, 1999, 6.0)
    assert best_title_hit(wanted, [near, exact, twin]) is None
    # Words of twelve titles are none of them.
    assert best_title_hit("Black hole entropy from string microstates", [exact, other]) is None


# Against the real index: the committed sample (3,000 hep-th papers) in the session's Neo4j.
@pytest.fixture(scope="module")
def sample_graph(session_graph: Graph) -> Iterator[Graph]:
    clean_graph(session_graph)
    load_sample_slice(session_graph, 3000)
    session_graph.read("await_indexes", seconds=60)
    try:
        yield session_graph
    finally:
        clean_graph(session_graph)


@pytest.mark.integration
def test_an_exact_title_resolves_though_it_is_not_among_the_top_text_hits(
        sample_graph: Graph) -> None:
    # "Brane New World" (hep-th/0003052): its three words are in many longer titles and
    # abstracts, which the full-text ranking puts first.
    assert "0003052" not in [hit.id for hit in search_hits(sample_graph, "Brane New World",
                                                           TITLE_HITS, [])]
    [found] = resolve_references(sample_graph, [ReferenceItem(title="Brane New World")])
    assert (found.paper_id, found.matched_by) == ("0003052", "title")
    [spelt] = resolve_references(sample_graph, [ReferenceItem(title="{B}rane new world.")])
    assert spelt.paper_id == "0003052"
    # A title contained in a longer one is no exact match of it.
    [part] = resolve_references(sample_graph, [ReferenceItem(title="Brane New")])
    assert part.paper_id is None


@pytest.mark.integration
def test_crases_own_bibtex_export_resolves_every_entry_again(sample_graph: Graph) -> None:
    from crase.api.exports import to_bibtex
    from crase.reference_lists import reference_file_entries
    from crase.search.given_papers import resolve_given

    rows = [json.loads(line) for line in (SAMPLE / "papers.jsonl").open()][:30]
    # Three titles with what the export escapes as \textbackslash{} and braces; set on the
    # graph's papers too, as a corpus may hold them.
    for row, tail in zip(rows, (" \\", " {", " }"), strict=False):
        row["title"] += tail
    with sample_graph.driver.session() as session:
        session.run("UNWIND $rows AS r MATCH (p:Paper {id: r.id}) SET p.title = r.title",
                    rows=rows[:3]).consume()
    sample_graph.read("await_indexes", seconds=60)
    # No identifiers: every entry must come back by its title alone.
    papers = [{"id": row["id"], "title": row["title"], "authors": row["authors"],
               "year": row["year"], "rank": n + 1, "score": 0.1}
              for n, row in enumerate(rows)]
    entries = reference_file_entries(to_bibtex({"id": "run1"}, papers), "run.bib")
    given = resolve_given(sample_graph, entries)
    assert given.unknown == [] and [paper.id for paper in given.found] == [
        row["id"] for row in rows]
