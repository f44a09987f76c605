"""Grow the graph around a search's seeds from Semantic Scholar, as the Crase paper builds
its evidence graph: each seed's references and citing papers, then every citation edge
among all of them.

1. **Neighbours**: for each seed whose lists are not cached, its references and its
   citations (pages of 1,000, at most `semantic_scholar_neighbour_cap` each). Every
   neighbour arrives with its title, abstract, year and ids, so no call is spent on
   details; it is MERGEd through the ingest package's validation (`paper_from_s2`,
   `merge_records`): a paper already in the graph (same S2 id, arXiv id or DOI) keeps its
   id and only gains what it lacks.
2. **Edges among neighbours** (radius 1.5): one batch call per 500 neighbours whose own
   reference list is not cached, asking only for the ids of their references. Each list
   is stored on its paper (`s2_reference_ids`, `s2_references_at`), and the edges among
   the neighbourhood are drawn from the stored lists in the database
   (`cypher/link_stored_references.cypher`), so a paper that joins the graph later gets its
   edges without another call.

The cache rule: a list fetched less than `semantic_scholar_max_age_days` ago is not
fetched again. A list that failed or came back truncated is not stamped, so the next
search asks again. A failure costs the list it hit, never the search: it is kept as a
`ProviderProblem` naming the seed, and the rest goes on.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from crase.errors import ProviderError
from crase.graph import Graph
from crase.ingest.provider_budget import CallBudget
from crase.ingest.provider_papers import ProviderLoadReport, edges_of, merge_records, write_edges
from crase.ingest.semantic_scholar import (
    BATCH_IDS,
    REFERENCE_ID_FIELDS,
    NeighbourList,
    S2Paper,
    SemanticScholarClient,
    neighbour_pages,
)
from crase.run_lifecycle import current_stop_check, now_iso

Direction = Literal["references", "citations"]
LIST_KEYS: dict[Direction, str] = {"references": "citedPaper", "citations": "citingPaper"}
# Told (stage, calls planned, seconds they take at the rate limit) before a stage calls.
Announce = Callable[[str, int, float], None]
Progress = Callable[[int, int], None]  # (calls made, calls planned so far)


@dataclass(frozen=True)
class ProviderProblem:
    """Something a search could not fetch: whose list, which one, and why (one line)."""

    paper_id: str  # the seed's graph id, the sub-query of a failed search, or "" for a batch
    what: str  # "search", "references", "citations", "reference lists"
    reason: str

    def line(self) -> str:
        if self.what == "search":
            return f"search {self.paper_id!r}: {self.reason}"
        whose = f"seed {self.paper_id} " if self.what in LIST_KEYS else ""
        return f"{whose}{self.what}: {self.reason}"


@dataclass
class Growth:
    """What one neighbourhood fetch did."""

    seeds_fetched: list[str] = field(default_factory=list)
    seeds_cached: list[str] = field(default_factory=list)
    neighbours_merged: int = 0
    reference_lists_fetched: int = 0
    reference_lists_cached: int = 0
    papers_without_provider_id: int = 0  # local papers S2 cannot be asked about
    papers_created: int = 0
    edges_written: int = 0
    null_abstracts: int = 0
    problems: list[ProviderProblem] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"seeds_fetched": self.seeds_fetched, "seeds_cached": self.seeds_cached,
                "neighbours_merged": self.neighbours_merged,
                "reference_lists_fetched": self.reference_lists_fetched,
                "reference_lists_cached": self.reference_lists_cached,
                "papers_without_provider_id": self.papers_without_provider_id,
                "papers_created": self.papers_created, "edges_written": self.edges_written,
                "null_abstracts": self.null_abstracts}


def one_line(err: Exception) -> str:
    return f"{type(err).__name__}: {' '.join(str(err).split())}"[:300]


def cutoff(max_age_days: float) -> str:
    """The oldest fetch time still fresh, as the ISO string the stamps are written in."""
    return (datetime.now(UTC) - timedelta(days=max_age_days)).isoformat()


def is_fresh(stamp: str | None, oldest: str) -> bool:
    return stamp is not None and stamp > oldest


def provider_id(row: dict[str, Any]) -> str | None:
    """How S2 can be asked for a graph paper: its S2 id, else its arXiv id or DOI."""
    if row.get("s2_id"):
        return str(row["s2_id"])
    if row.get("arxiv_id"):
        return f"arXiv:{row['arxiv_id']}"
    return f"DOI:{row['doi']}" if row.get("doi") else None


class NeighbourhoodFetch:
    """One search's fetch: its client, its call budget, and what it reports."""

    def __init__(self, graph: Graph, client: SemanticScholarClient, budget: CallBudget,
                 max_age_days: float, announce: Announce, progress: Progress) -> None:
        self.graph = graph
        self.client = client
        self.budget = budget
        self.oldest = cutoff(max_age_days)
        self.announce = announce
        self.progress = progress
        self.growth = Growth()

    async def grow(self, seeds: dict[str, S2Paper], hops: str) -> Growth:
        """Fetch what the seeds' neighbourhood (`seeds`: graph id -> its S2 record) lacks
        and write it into the graph; radius "1" skips the edges among neighbours."""
        lists = await self.fetch_seed_lists(seeds)
        self.merge_lists(seeds, lists)
        if hops != "1":
            await self.fetch_reference_lists(list(seeds))
        return self.growth

    # 1. neighbours --------------------------------------------------------------------------
    async def fetch_seed_lists(self, seeds: dict[str, S2Paper]
                               ) -> list[tuple[str, NeighbourList]]:
        state = self.state(list(seeds))
        cap = self.client.settings.semantic_scholar_neighbour_cap
        asks: list[tuple[str, Direction, int]] = []
        for graph_id, record in seeds.items():
            row = state.get(graph_id, {})
            stamps: list[tuple[Direction, str | None]] = [
                ("references", row.get("references_at")), ("citations", row.get("citations_at"))]
            stale = [d for d, stamp in stamps if not is_fresh(stamp, self.oldest)]
            (self.growth.seeds_fetched if stale else self.growth.seeds_cached).append(graph_id)
            counts = {"references": record.referenceCount or 0,
                      "citations": record.citationCount or 0}
            asks.extend((graph_id, d, neighbour_pages(counts[d], cap)) for d in stale)
        planned = sum(pages for _, _, pages in asks)
        self.budget.plan("neighbours", planned)
        self.announce("neighbours", planned, self.budget.estimate_s(planned))
        lists: list[tuple[str, NeighbourList]] = []
        first_call = self.client.calls
        with self.budget.metered("neighbours", self.client, time.monotonic):
            for graph_id, direction, _ in asks:
                current_stop_check()()
                s2_id = seeds[graph_id].paperId or ""
                try:
                    found = await self.client.neighbours(s2_id, direction, LIST_KEYS[direction])
                except ProviderError as err:
                    self.growth.problems.append(ProviderProblem(graph_id, direction,
                                                                one_line(err)))
                    continue
                finally:
                    self.progress(self.client.calls - first_call, planned)
                if found.truncated:
                    self.growth.problems.append(ProviderProblem(
                        graph_id, direction, f"truncated: Semantic Scholar serves at most "
                        f"{cap} {direction} per paper; {len(found.papers)} were read"))
                lists.append((graph_id, found))
        return lists

    def merge_lists(self, seeds: dict[str, S2Paper],
                    lists: list[tuple[str, NeighbourList]]) -> None:
        report = ProviderLoadReport(requested=[])
        records = {r.paperId: r for _, found in lists for r in found.papers if r.paperId}
        graph_ids = merge_records(self.graph, list(records.values()), report)
        graph_ids.update({record.paperId: graph_id for graph_id, record in seeds.items()
                          if record.paperId})
        write_edges(self.graph, edges_of([found for _, found in lists], graph_ids), report)
        self.growth.neighbours_merged += len(records)
        self.growth.papers_created += report.papers_created
        self.growth.null_abstracts += len(report.null_abstracts)
        self.growth.edges_written += report.citations_written
        now = now_iso()
        stamps = [self.stamp(graph_id, seeds[graph_id].paperId, found, now)
                  for graph_id, found in lists if not found.truncated]
        self.graph.write("set_provider_lists", rows=stamps)

    @staticmethod
    def stamp(graph_id: str, s2_id: str | None, found: NeighbourList,
              now: str) -> dict[str, Any]:
        row: dict[str, Any] = {"id": graph_id, "s2_id": s2_id, "references_at": None,
                               "reference_ids": None, "citations_at": None}
        if found.direction == "references":
            row["references_at"] = now
            row["reference_ids"] = [r.paperId for r in found.papers if r.paperId]
        else:
            row["citations_at"] = now
        return row

    # 2. edges among the neighbourhood -------------------------------------------------------
    async def fetch_reference_lists(self, seed_ids: list[str]) -> None:
        rows = self.graph.read("expand_one_hop", seeds=seed_ids, excluded=[])
        ids = rows[0]["nodes"] if rows else []
        seeds = set(seed_ids)
        asks: list[tuple[str, str]] = []  # (graph id, how S2 is asked for it)
        for graph_id, row in self.state(ids).items():
            if graph_id in seeds and is_fresh(row.get("references_at"), self.oldest):
                continue  # a seed's own list came in step 1 (or is cached)
            if is_fresh(row.get("references_at"), self.oldest):
                self.growth.reference_lists_cached += 1
                continue
            asked = provider_id(row)
            if asked is None:
                self.growth.papers_without_provider_id += 1
            else:
                asks.append((graph_id, asked))
        planned = -(-len(asks) // BATCH_IDS)
        self.budget.plan("edges", planned)
        self.announce("edges", planned, self.budget.estimate_s(planned))
        first_call = self.client.calls
        with self.budget.metered("edges", self.client, time.monotonic):
            for start in range(0, len(asks), BATCH_IDS):
                current_stop_check()()
                chunk = asks[start:start + BATCH_IDS]
                try:
                    replies = await self.client.papers([a for _, a in chunk],
                                                       fields=REFERENCE_ID_FIELDS)
                except ProviderError as err:
                    self.growth.problems.append(ProviderProblem(
                        "", "reference lists", f"{len(chunk)} neighbours' reference lists "
                        f"were not fetched: {one_line(err)}"))
                    continue
                finally:
                    self.progress(self.client.calls - first_call, planned)
                self.store_reference_lists(chunk, replies)
        written = self.graph.write("link_stored_references", ids=ids)
        self.growth.edges_written += int(written[0]["written"]) if written else 0

    def store_reference_lists(self, chunk: list[tuple[str, str]],
                              replies: list[S2Paper | None]) -> None:
        now = now_iso()
        rows = [{"id": graph_id, "s2_id": reply.paperId, "references_at": now,
                 "reference_ids": [r.paperId for r in reply.references or [] if r.paperId],
                 "citations_at": None}
                for (graph_id, _), reply in zip(chunk, replies, strict=True)
                if reply is not None]
        self.graph.write("set_provider_lists", rows=rows)
        self.growth.reference_lists_fetched += len(rows)

    def state(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        return {row["id"]: dict(row) for row in self.graph.read("read_provider_state", ids=ids)}
