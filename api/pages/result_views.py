"""A run's results as the run page shows them: links, and the evidence in plain sentences
(which seed a paper was reached from, each edge on the way with its Delta and the claim
pair that grounds it where the run computed them, else that the edge was unweighted)."""

import re
from collections import Counter
from typing import Any

from crase.api.pages.graph_drawing import label_text
from crase.api.run_views import UNWEIGHTED_EDGE
from crase.graph import Graph
from crase.paper_links import paper_links
from crase.scoring.tex import tex_to_unicode

LINK_LABELS = {"arxiv": "arXiv", "doi": "DOI", "semantic_scholar": "Semantic Scholar"}


def link_list(paper: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, url) for each identifier the paper has, in a fixed order."""
    return [(LINK_LABELS[name], url) for name, url in paper_links(paper).items()]


def paper_titles(graph: Graph, run: dict[str, Any]) -> dict[str, str]:
    """Titles of every paper the results' evidence names; the ones not already in the run
    view are read in one query."""
    titles = {r["id"]: r["title"] for r in run["results"]}
    titles.update({s["paper_id"]: s["title"] for s in run["seeds"]})
    named = {paper for r in run["results"] for paper in evidence_papers(r["evidence"])}
    missing = sorted(named - titles.keys())
    if missing:
        titles.update({row["id"]: row["title"] for row in graph.read("read_papers", ids=missing)})
    return titles


def evidence_papers(evidence: dict[str, Any] | None) -> set[str]:
    if not evidence:
        return set()
    papers = {evidence["reached_from"]} if evidence.get("reached_from") else set()
    for edge in evidence.get("path", []) + evidence.get("strongest_edges", []):
        papers.update((edge["citing"], edge["cited"]))
    return papers


def search_results(graph: Graph, run: dict[str, Any]) -> list[dict[str, Any]]:
    titles = paper_titles(graph, run)
    seeds = {seed["paper_id"]: seed for seed in run["seeds"]}
    given = {paper["id"] for paper in run.get("given_papers", [])}
    # A search from papers alone asks its text lists with the given papers' titles.
    text = "the query" if (run.get("query") or "").strip() else "the given papers' titles"
    return [{**paper, "links": link_list(paper),
             "evidence_view": describe_evidence(paper, titles, seeds, given, text)}
            for paper in run["results"]]


def describe_evidence(paper: dict[str, Any], titles: dict[str, str],
                      seeds: dict[str, dict[str, Any]],
                      given: set[str] | None = None,
                      text: str = "the query") -> dict[str, Any]:
    """{'summary': sentences, 'path': edges from the seed, 'strongest': other strong edges};
    a paper reached from one of the `given` papers (those the search started from) says
    so first: "From the given paper ..."."""
    evidence = paper["evidence"] or {}
    summary = []
    if evidence.get("seed"):
        summary.append(seed_sentence(seeds.get(paper["id"]), evidence))
    elif evidence.get("reached_from"):
        steps = len(evidence.get("path", []))
        origin = titles.get(evidence["reached_from"], evidence["reached_from"])
        edges = f"{steps} retained citation edge{'s' if steps != 1 else ''}"
        summary.append(f"From the given paper “{origin}”, over {edges}."
                       if evidence["reached_from"] in (given or set())
                       else f"Reached from the seed “{origin}” over {edges}.")
    if evidence.get("text_match"):
        summary.append(f"Not reached by the walk: a full-text match of {text} that filled "
                       "an empty place in the list.")
    if placed := evidence.get("ranking_features"):
        largest = sorted(placed.items(), key=lambda item: (-abs(item[1]), item[0]))
        summary.append("Placed by the learned order; its largest terms: " + ", ".join(
            f"{name} {value:+.2f}" for name, value in largest) + ".")
    if not summary:
        summary.append("No graph evidence was recorded for this paper.")
    return {"summary": summary,
            "path": [edge_sentence(e, titles) for e in evidence.get("path", [])],
            "strongest": [edge_sentence(e, titles) for e in evidence.get("strongest_edges", [])]}


def seed_sentence(seed: dict[str, Any] | None, evidence: dict[str, Any]) -> str:
    if seed is None or seed["sub_query_index"] == 0:
        found = "the query's own text ranking"
    elif seed["sub_query_index"] < 0:
        found = "the request (a given seed)"
    else:
        found = f"the sub-query “{seed['sub_query']}”"
    rank = (seed or {}).get("relevance_rank") or evidence.get("text_rank")
    sentence = f"A seed: found by {found}" + (f" at rank {rank}" if rank else "")
    share = (seed or {}).get("restart_share") or evidence.get("restart_share")
    if share:
        sentence += f", with {share:.0%} of the walk's restart mass"
    return sentence + "."


def edge_sentence(edge: dict[str, Any], titles: dict[str, str]) -> dict[str, Any]:
    """One edge as words: who cites whom, its Delta (None in a run without Delta, whose
    edge says what it was instead) and the claim pair behind it."""
    citing = titles.get(edge["citing"], edge["citing"])
    cited = titles.get(edge["cited"], edge["cited"])
    grounding = None
    if edge.get("citing_claim") and edge.get("cited_claim") and edge.get("support") is not None:
        grounding = (f"the claim “{edge['citing_claim']}” of the citing paper is grounded "
                     f"by “{edge['cited_claim']}” of the cited one (entailment "
                     f"{edge['support']:.2f})")
    return {"citing": edge["citing"], "cited": edge["cited"],
            "text": f"“{citing}” cites “{cited}”", "delta": edge.get("delta"),
            "kind": with_article(edge.get("edge") or UNWEIGHTED_EDGE), "grounding": grounding}


def with_article(words: str) -> str:
    return f"{'an' if words[:1] in tuple('aeiou') else 'a'} {words}"


def linked_results(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The returned papers as the graph page lists them beside the drawing: a label, and
    the citation edges from the paper's seed to it, which hovering the entry lights up."""
    titles = {r["id"]: r["title"] for r in run["results"]}
    titles.update({s["paper_id"]: s["title"] for s in run["seeds"]})
    # Seeds the request named (sub_query_index -1): on a page, the papers started from.
    given = {s["paper_id"] for s in run["seeds"] if (s["sub_query_index"] or 0) < 0}
    return [{"rank": paper["rank"], "id": paper["id"], "title": paper["title"] or paper["id"],
             "label": label_text({"first_author": (paper["authors"] or [None])[0],
                                  "year": paper["year"]}),
             "path": [[e["citing"], e["cited"]]
                      for e in (paper["evidence"] or {}).get("path", [])],
             "how": how_reached(paper["evidence"] or {}, titles, given)}
            for paper in run["results"]]


def how_reached(evidence: dict[str, Any], titles: dict[str, str],
                given: set[str] | None = None) -> str:
    if evidence.get("seed"):
        return "a seed"
    if evidence.get("text_match"):
        return "a full-text match, not reached by the walk"
    if not evidence.get("reached_from"):
        return ""
    steps = len(evidence.get("path", []))
    origin = titles.get(evidence["reached_from"]) or evidence["reached_from"]
    kind = "given paper" if evidence["reached_from"] in (given or set()) else "seed"
    return f"{steps} citation edge{'s' if steps != 1 else ''} from the {kind} “{origin}”"


TOP_NAMES = 10
# A journal reference's name, before its volume ("Nucl.Phys. B443 (1995) 85" -> Nucl.Phys.
# and series B); references are cut to JOURNAL_REF_CHARS first, so the match stays short.
JOURNAL_NAME = re.compile(r"^(?P<name>[^\d()]*?)\s*(?P<series>\b[A-Z])?\s*\d")
JOURNAL_REF_CHARS = 120


def top_authors_and_venues(results: list[dict[str, Any]],
                           ) -> dict[str, list[tuple[str, int]]]:
    """The run's most frequent authors and venues among its returned papers, with counts;
    only those that occur at least twice (a list of ones says nothing)."""
    authors = Counter(name for paper in results for name in dict.fromkeys(paper["authors"]))
    venues = Counter(venue for paper in results if (venue := venue_name(paper)))
    return {name: [(key, count) for key, count in counter.most_common(TOP_NAMES) if count > 1]
            for name, counter in (("authors", authors), ("venues", venues))}


def venue_name(paper: dict[str, Any]) -> str | None:
    """The venue, or the journal's name out of its journal reference, spaced one way."""
    text = paper.get("venue") or ""
    if not text and paper.get("journal_ref"):
        match = JOURNAL_NAME.match(paper["journal_ref"][:JOURNAL_REF_CHARS])
        if match is None:
            return None
        text = " ".join(part for part in (match["name"], match["series"]) if part)
    text = re.sub(r"\.\s*", ". ", tex_to_unicode(text)).strip(" ,;:")
    return text or None
