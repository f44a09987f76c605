"""Seeds and neighbourhood from OpenAlex (`source="openalex"`), as the Semantic Scholar
source runs a search (search/semantic_scholar_source.py): one OpenAlex keyword search per
search (the query's own, then each sub-query), the seeds chosen from its hits by the
usual rules, then the seeds' references and citing works fetched into the graph by the
grow's machinery (crase.ingest.openalex_grow: OR-filters of 100, cursor paging, every
work merged by identity), before the local expansion reads them.

Radius 1.5 costs no call of its own: every work OpenAlex returns carries its
`referenced_works`, stored on its paper, and the edges among the neighbourhood are drawn
from those lists in the database.

The budget per search (calls planned and made per stage, the seconds waited), the calls
by the API's kinds and the dollars booked go on the Run with every problem. The cache
rule is the client's: a reply younger than `openalex_max_age_days` is read from disk, so
a second search on the same topic makes no call at all. A failure costs the list it hit,
never the search; only when no seed search answers does the search fail, with a hint.
"""

import time
from collections.abc import Callable
from typing import Any

from crase.errors import ProviderError
from crase.graph import Graph
from crase.ingest.openalex import short_id
from crase.ingest.openalex_api import OR_VALUES, URL_SETTING, OpenAlexClient
from crase.ingest.openalex_grow import Grow, GrowLimits
from crase.ingest.provider_budget import CallBudget
from crase.ingest.s2_neighbourhood import ProviderProblem, one_line
from crase.run_lifecycle import current_stop_check
from crase.search.seeds import QUERY_ITSELF, Seed, SeedRules, choose_seeds
from crase.search.text_ranking import Hit
from crase.settings import ProviderSettings

Notice = Callable[[str], None]
Progress = Callable[[int, int], None]
SEARCH_HITS = 100  # hits asked of one search, at most
NO_ANSWER_HINT = (f"check {URL_SETTING}, the key and the network, or search the local index "
                  "with --source local")


class OpenAlexSource:
    """One search's seeds and neighbourhood from OpenAlex."""

    def __init__(self, graph: Graph, settings: ProviderSettings, notice: Notice,
                 progress: Progress) -> None:
        self.graph = graph
        self.notice = notice
        self.progress = progress
        self.client = OpenAlexClient(settings, settings.openalex_dir)
        self.budget = CallBudget(settings.openalex_requests_per_second)
        self.fetch = Grow(graph, self.client, GrowLimits(
            depth=1, citers=True, max_papers=settings.openalex_neighbour_cap))
        self.problems: list[ProviderProblem] = []
        self.seed_works: dict[str, str] = {}  # seed graph id -> its W id

    def __enter__(self) -> "OpenAlexSource":
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()

    def report(self) -> dict[str, Any]:
        grown = self.fetch.report
        return {"calls": self.budget.to_dict(), "openalex": self.client.spent.to_dict(),
                "papers_created": grown.papers_created, "papers_merged": grown.papers_merged,
                "null_abstracts": grown.no_abstract, "outside_cap": grown.outside_cap,
                "rejected": grown.rejected_count,
                "problems": [p.line() for p in self.problems]}

    # seeds ----------------------------------------------------------------------------------
    def seeds(self, query: str, plan: list[str], rules: SeedRules,
              excluded: list[str]) -> list[Seed]:
        searches = ([(QUERY_ITSELF, query, rules.query_seeds, 1.0)] if rules.query_seeds
                    else []) + [(index, text, rules.per_sub_query, rules.sub_query_weight)
                                for index, text in enumerate(plan, start=1)]
        self.budget.plan("search", len(searches))
        seeds: list[Seed] = []
        failures: list[ProviderError] = []
        with self.budget.metered("search", self.client, time.monotonic):
            for index, text, m, weight in searches:
                current_stop_check()()
                try:
                    hits = self.hits(text, min(rules.pool, SEARCH_HITS), set(excluded))
                except ProviderError as err:
                    failures.append(err)
                    self.problems.append(ProviderProblem(text, "search", one_line(err)))
                    continue
                seeds.extend(choose_seeds(hits, m, index, text, rules.rule, rules.weights,
                                          weight))
        if searches and len(failures) == len(searches):
            last = failures[-1]
            raise type(last)(f"OpenAlex did not answer the seed search ({one_line(last)}); "
                             f"{NO_ANSWER_HINT}") from last
        return seeds

    def hits(self, text: str, per_page: int, excluded: set[str]) -> list[Hit]:
        """The search's hits in its order, stored in the graph and named by graph id."""
        works = self.client.search(text, per_page).works
        self.fetch.store(works, "seed")
        hits = []
        for work in works:
            own = short_id(work.get("id"))
            graph_id = self.fetch.stored.get(own or "")
            if graph_id is not None and graph_id not in excluded:
                self.seed_works.setdefault(graph_id, own or "")
                hits.append(Hit(graph_id, str(work.get("title") or ""),
                                work.get("publication_year"), 0.0))
        return hits

    # neighbourhood --------------------------------------------------------------------------
    def grow(self, seed_ids: list[str], hops: str) -> None:
        """The seeds' references and citers into the graph. Radius 1 and 1.5 fetch the
        same: the lists that draw the edges among neighbours come with the works."""
        works = [self.seed_works[i] for i in seed_ids if i in self.seed_works]
        cited = [r for w in works for r in self.fetch.references.get(w, [])]
        planned = -(-len(set(cited)) // self.client.chunk) + -(-len(works) // OR_VALUES)
        self.budget.plan("neighbours", planned)
        first = self.client.calls
        with self.budget.metered("neighbours", self.client, time.monotonic):
            for what, step in (("references", lambda: self.fetch.fetch_ids(cited,
                                                                           "reference:1")),
                               ("citations", lambda: self.fetch.fetch_citers(works,
                                                                             "citer:1"))):
                current_stop_check()()
                try:
                    step()
                except ProviderError as err:
                    self.problems.append(ProviderProblem("", f"seeds' {what}", one_line(err)))
                finally:
                    self.progress(self.client.calls - first, planned)
        self.fetch.link_edges()
