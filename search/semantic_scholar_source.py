"""Seeds and neighbourhood from Semantic Scholar (`source="semantic-scholar"`), as the Crase
paper runs a search: one Semantic Scholar search per sub-query (the query's own search
counts as one), the seeds chosen from its hits, then the seeds' neighbourhood fetched into
the graph (crase.ingest.s2_neighbourhood) before the local expansion reads it.

Relevance and recency: the paper takes both rankings from the single search call of a
sub-query. The relevance ranking is the order the relevance search returns; the recency
ranking is the same hits ordered by year (search/seeds.py `choose_seeds`). The bulk
search's date sort is not used: it is a second call per sub-query, and it orders every
paper matching the words by date with no relevance at all, so its top places are the
newest matches anywhere, not recent papers among the relevant ones.

The client and its event loop live as long as one search (a context manager), so the
rate limiter's pace spans every call the search makes. The budget (calls planned and
made per stage, the seconds waited) and every problem go on the Run.
"""

import asyncio
import time
from collections.abc import Callable
from typing import Any

from crase.errors import ProviderError
from crase.graph import Graph
from crase.ingest.provider_budget import CallBudget
from crase.ingest.provider_papers import ProviderLoadReport, match_existing, merge_records
from crase.ingest.s2_neighbourhood import Growth, NeighbourhoodFetch, ProviderProblem, one_line
from crase.ingest.semantic_scholar import (
    SEARCH_PAGE_SIZE,
    S2Paper,
    SemanticScholarClient,
    paper_from_s2,
)
from crase.run_lifecycle import current_stop_check
from crase.search.seeds import QUERY_ITSELF, Seed, SeedRules, choose_seeds
from crase.search.text_ranking import Hit
from crase.settings import ProviderSettings

Notice = Callable[[str], None]
Progress = Callable[[int, int], None]
NO_ANSWER_HINT = ("check CRASE_PROVIDERS__SEMANTIC_SCHOLAR_URL and the network, or search "
                  "the local index with --source local")


def estimate_line(stage: str, calls: int, seconds: float, rate: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    took = f"{minutes} min {rest} s" if minutes else f"{rest} s"
    return (f"Semantic Scholar {stage}: {calls} call{'s' if calls != 1 else ''} planned, "
            f"about {took} at {rate:g} request/s")


class SemanticScholarSource:
    """One search's seeds and neighbourhood from Semantic Scholar."""

    def __init__(self, graph: Graph, settings: ProviderSettings, notice: Notice,
                 progress: Progress) -> None:
        self.graph = graph
        self.settings = settings
        self.notice = notice
        self.budget = CallBudget(settings.requests_per_second)
        self.runner = asyncio.Runner()
        self.client = SemanticScholarClient(settings)
        self.fetch = NeighbourhoodFetch(graph, self.client, self.budget,
                                        settings.semantic_scholar_max_age_days, self.announce,
                                        progress)
        self.records: dict[str, S2Paper] = {}  # seed graph id -> its record from the search

    def __enter__(self) -> "SemanticScholarSource":
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.runner.run(self.client.close())
        finally:
            self.runner.close()

    @property
    def growth(self) -> Growth:
        return self.fetch.growth

    @property
    def problems(self) -> list[ProviderProblem]:
        return self.fetch.growth.problems

    def announce(self, stage: str, calls: int, seconds: float) -> None:
        if calls:
            self.notice(estimate_line(stage, calls, seconds, self.budget.requests_per_second))

    def report(self) -> dict[str, Any]:
        """What goes on the Run and in the result: the budget, the growth, the problems."""
        return {"calls": self.budget.to_dict(), **self.growth.to_dict(),
                "problems": [p.line() for p in self.problems]}

    # seeds ----------------------------------------------------------------------------------
    def seeds(self, query: str, plan: list[str], rules: SeedRules,
              excluded: list[str]) -> list[Seed]:
        return self.runner.run(self.search_seeds(query, plan, rules, excluded))

    async def search_seeds(self, query: str, plan: list[str], rules: SeedRules,
                           excluded: list[str]) -> list[Seed]:
        """One search call per search (the query itself, then each sub-query); the seeds
        are MERGEd into the graph and named by their graph ids."""
        searches = ([(QUERY_ITSELF, query, rules.query_seeds, 1.0)] if rules.query_seeds
                    else []) + [(index, text, rules.per_sub_query, rules.sub_query_weight)
                                for index, text in enumerate(plan, start=1)]
        self.budget.plan("search", len(searches))
        self.announce("search", len(searches), self.budget.estimate_s(len(searches)))
        seeds: list[Seed] = []
        failures: list[ProviderError] = []
        with self.budget.metered("search", self.client, time.monotonic):
            for index, text, m, weight in searches:
                current_stop_check()()
                try:
                    found = await self.client.search(text, limit=min(rules.pool,
                                                                     SEARCH_PAGE_SIZE))
                except ProviderError as err:
                    failures.append(err)
                    self.problems.append(ProviderProblem(text, "search", one_line(err)))
                    continue
                hits = self.hits(found.papers, set(excluded))
                seeds.extend(choose_seeds(hits, m, index, text, rules.rule, rules.weights,
                                          weight))
        if searches and len(failures) == len(searches):
            last = failures[-1]
            raise type(last)(f"Semantic Scholar did not answer the seed search "
                             f"({one_line(last)}); {NO_ANSWER_HINT}") from last
        return self.merge_seeds(seeds)

    def hits(self, records: list[S2Paper], excluded: set[str]) -> list[Hit]:
        """The search's hits in its order, named by the graph id each has or will get;
        excluded papers are left out."""
        papers = {r.paperId: (r, paper) for r in records
                  if r.paperId and (paper := paper_from_s2(r)) is not None}
        known = match_existing(self.graph, [paper for _, paper in papers.values()])
        hits = []
        for s2_id, (record, paper) in papers.items():
            graph_id = known[s2_id][0] if s2_id in known else paper.id
            if graph_id not in excluded:
                self.records.setdefault(graph_id, record)
                hits.append(Hit(graph_id, paper.title, paper.year, 0.0))
        return hits

    def merge_seeds(self, seeds: list[Seed]) -> list[Seed]:
        """MERGE the chosen seeds; their ids stay those `hits` gave them (a known paper's,
        else `s2:<paperId>`), which are the ids `merge_records` writes."""
        self.records = {seed.paper_id: self.records[seed.paper_id] for seed in seeds}
        merge_records(self.graph, list(self.records.values()), ProviderLoadReport(requested=[]))
        return seeds

    # neighbourhood --------------------------------------------------------------------------
    def grow(self, seed_ids: list[str], hops: str) -> Growth:
        seeds = {graph_id: self.records[graph_id] for graph_id in seed_ids
                 if graph_id in self.records}
        return self.runner.run(self.fetch.grow(seeds, hops))
