"""The systems the quality benchmark compares. Each is a function from a benchmark query to
a ranked list of paper ids (best first), and never sees the query's source paper.

- BM25: the full-text index `paper_text` (Lucene BM25 over title and abstract) queried
  with the whole query text.
- Dense: all-MiniLM-L6-v2 cosine between the query and every paper (`dense_index`).
- Graph walks: one `run_search` of the evidence-graph pipeline per query with the settings
  of a `WalkConfig`: Crase-PPR (the shipped settings), Crase-SALSA, Recency (ages from the
  query's year instead of this year), the unweighted walk (every edge of the same
  neighbourhood weighs 1, no Delta, no pruning, no age), and the ablation and seed-corruption
  variants; a `order_model` runs the learned order with another model file. The source
  paper goes in `exclude`, which leaves it out with all its edges.
- Fusion: reciprocal-rank fusion of systems already run (the hybrid of graph and text),
  and backfill: one system's list, its empty places filled by another's.

A query may come with papers the user starts from (`seed_ids`, search/query_sets.py) and
may have no text. BM25 and dense rank by the text alone: without text they rank nothing
(they do not guess a query from the seeds). A graph walk with given papers starts from
them as the search's given papers (`given_papers`: no plan, no seed search, never a result);
the query text, or without one the given papers' titles, feeds what the search does with
text (its fill and the learned order). Co-citation + coupling ranks papers by how often
they are cited together with the given papers plus how many references they share with
them (what Connected Papers ranks by). Every system asks for k + |given| papers, so that
once the given papers are taken out of its list before scoring (Scored.from_records) it
still has k places.
"""

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from crase.errors import EvaluationError
from crase.graph import Graph
from crase.ingest.paper_vectors import DenseIndex, paper_text
from crase.models.minilm import SentenceEncoder
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.protocols import SearchBackends
from crase.search.text_ranking import fuse, search_hits
from crase.settings import (
    Fill,
    Hops,
    Order,
    Orientation,
    SearchSettings,
    SeedRule,
    SeedWeights,
    WalkMethod,
    Weighting,
)
from crase.validation_messages import describe_invalid


@dataclass(frozen=True)
class BenchQuery:
    id: str
    text: str
    relevant: frozenset[str]  # ground truth restricted to papers in the graph
    source_id: str
    year: int | None  # the source paper's year, read from the graph
    # Papers the user starts from, in the given order; never relevant, never scored.
    seed_ids: tuple[str, ...] = ()

    @property
    def has_text(self) -> bool:
        return bool(self.text.strip())

    def depth(self, depth: int) -> int:
        """How many papers a system asks for: `depth` places left once the given papers
        are out of its list."""
        return depth + len(self.seed_ids)


@dataclass
class SystemRun:
    """What one system returned for one query, with what it cost."""

    ranking: list[str]
    scores: list[float]
    seconds: float
    run_id: str | None = None
    plan: list[str] = field(default_factory=list)
    seeds: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    backends: dict[str, str] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        record = asdict(self)
        record["scores"] = [round(s, 8) for s in self.scores]
        return record


System = Callable[[BenchQuery], SystemRun]


@dataclass(frozen=True)
class WalkConfig:
    """One setting of the evidence-graph pipeline. Every field is explicit, so the key
    (the per-query output file's name) does not depend on which settings are the defaults,
    and two ablations that land on the same setting share one set of runs."""

    walk: WalkMethod
    weighting: Weighting
    hops: Hops
    query_seeds: int
    seeds_per_query: int
    sub_queries: int
    seed_rule: SeedRule
    seed_weights: SeedWeights
    sub_query_weight: float
    theta: float
    tau: float
    beta: float
    alpha: float
    orientation: Orientation
    influential_weight: float = 3.0  # a marked citation's weight under `influential`
    age: Literal["current", "query"] = "current"  # the year ages are measured from
    seeds: Literal["plan", "distractor", "random"] = "plan"  # where the seeds come from
    fill: Fill = "none"  # "text": the search's own fill, as it ships
    order: Order = "walk"  # "learned": the learned order of the walk's and text's candidates
    # The learned order's model file; None: the one the search's backends name (the shipped
    # model unless Settings.order_model says otherwise). The key holds only the file's
    # stem, so two model files of one name share their runs.
    order_model: str | None = None

    @classmethod
    def from_settings(cls, settings: SearchSettings) -> "WalkConfig":
        return cls(walk=settings.walk, weighting=settings.weighting, hops=settings.hops,
                   query_seeds=settings.query_seeds, seeds_per_query=settings.seeds_per_query,
                   sub_queries=settings.sub_queries, seed_rule=settings.seed_rule,
                   seed_weights=settings.seed_weights,
                   sub_query_weight=settings.sub_query_weight, theta=settings.theta,
                   tau=settings.tau, beta=settings.beta, alpha=settings.alpha,
                   orientation=settings.orientation,
                   influential_weight=settings.influential_weight, fill=settings.fill,
                   order=settings.order)

    def but(self, **changes: Any) -> "WalkConfig":
        return replace(self, **changes)

    def key(self) -> str:
        seeding = (f"q{self.query_seeds}-m{self.seeds_per_query}-L{self.sub_queries}"
                   f"-{self.seed_rule}-w_{self.seed_weights}")
        if self.sub_queries:
            seeding += f"-sw{self.sub_query_weight:g}"
        tail = (f"-seeds_{self.seeds}" + ("-fill_text" if self.fill == "text" else "")
                + ("-order_learned" if self.order == "learned" else "")
                + (f"-model_{Path(self.order_model).stem}" if self.order_model else ""))
        if self.weighting == "uniform":  # Delta, tau, theta and beta play no part
            return (f"walk-{self.walk}-uniform-h{self.hops}-{seeding}-a{self.alpha:g}"
                    f"-{self.orientation}{tail}")
        if self.weighting == "influential":  # nor here: the publisher's mark weighs edges
            return (f"walk-{self.walk}-influential{self.influential_weight:g}-h{self.hops}"
                    f"-{seeding}-a{self.alpha:g}-{self.orientation}{tail}")
        return (f"walk-{self.walk}-h{self.hops}-{seeding}-th{self.theta:g}-tau{self.tau:g}"
                f"-b{self.beta:g}-a{self.alpha:g}-{self.orientation}-age_{self.age}{tail}")

    def search_settings(self, base: SearchSettings, depth: int) -> SearchSettings:
        return base.model_copy(update={
            "walk": self.walk, "weighting": self.weighting, "hops": self.hops,
            "query_seeds": self.query_seeds, "seeds_per_query": self.seeds_per_query,
            "sub_queries": self.sub_queries, "seed_rule": self.seed_rule,
            "seed_weights": self.seed_weights, "sub_query_weight": self.sub_query_weight,
            "theta": self.theta, "tau": self.tau, "beta": self.beta, "alpha": self.alpha,
            "orientation": self.orientation, "k": depth, "fill": self.fill,
            "influential_weight": self.influential_weight, "order": self.order,
        })


def bm25_system(graph: Graph, depth: int) -> System:
    """The full-text index with the whole query, as a search's BM25 half queries it."""
    def search(query: BenchQuery) -> SystemRun:
        started = time.perf_counter()
        hits = (search_hits(graph, query.text, query.depth(depth), [query.source_id])
                if query.has_text else [])
        return SystemRun([h.id for h in hits], [h.score for h in hits],
                         time.perf_counter() - started)
    return search


def dense_system(index: DenseIndex, encoder: SentenceEncoder, depth: int) -> System:
    def search(query: BenchQuery) -> SystemRun:
        started = time.perf_counter()
        if not query.has_text:
            return SystemRun([], [], time.perf_counter() - started)
        vector = encoder.encode([paper_text(query.text, "")])[0]
        hits = index.search(vector, query.depth(depth), [query.source_id])
        return SystemRun([h for h, _ in hits], [s for _, s in hits],
                         time.perf_counter() - started)
    return search


def cocitation_system(graph: Graph, depth: int) -> System:
    """Co-citation + bibliographic coupling with the query's given papers; nothing without
    them. The source paper's own citations do not count (it is excluded)."""
    def search(query: BenchQuery) -> SystemRun:
        started = time.perf_counter()
        rows = (graph.read("rank_cocited_and_coupled", ids=list(query.seed_ids),
                           excluded=[query.source_id], limit=query.depth(depth))
                if query.seed_ids else [])
        return SystemRun([row["id"] for row in rows], [float(row["score"]) for row in rows],
                         time.perf_counter() - started)
    return search


def walk_system(graph: Graph, backends: SearchBackends, config: WalkConfig,
                base: SearchSettings, depth: int,
                seeds_for: Callable[[BenchQuery], list[str]] | None = None) -> System:
    """The evidence-graph pipeline with `config`; the query's given papers are its seeds
    where it has some; `seeds_for` supplies replacement seeds (the corruption test) instead
    of the plan and seed search or the given papers."""
    params = config.search_settings(base, depth)
    if config.order_model:
        backends = replace(backends, order_model=Path(config.order_model))

    def search(query: BenchQuery) -> SystemRun:
        request = search_request(query, params.model_copy(update={"k": query.depth(depth)}),
                                 reference_year=query.year if config.age == "query" else None,
                                 seed_override=seeds_for(query) if seeds_for else None)
        started = time.perf_counter()
        result = run_search(graph, backends, request)
        return SystemRun(
            ranking=[r.id for r in result.results], scores=[r.score for r in result.results],
            seconds=time.perf_counter() - started, run_id=result.run_id, plan=result.plan,
            seeds=list(dict.fromkeys(s.paper_id for s in result.seeds)),
            counts=result.counts, timings=result.timings, usage=result.usage,
            backends=result.backends,
        )
    return search


def search_request(query: BenchQuery, params: SearchSettings, reference_year: int | None,
                   seed_override: list[str] | None) -> SearchRequest:
    """The search's request for a benchmark query, the source paper excluded, the query's
    given papers as the papers the search starts from. A request the search refuses is an
    EvaluationError, recorded for the query and counted as an empty ranking."""
    try:
        return SearchRequest(query=query.text, params=params, reference_year=reference_year,
                             exclude=[query.source_id], given_papers=list(query.seed_ids),
                             seed_override=seed_override)
    except ValidationError as err:
        line = describe_invalid(err, SearchRequest, lambda loc: ".".join(map(str, loc)),
                                "the search does not take this query form")
        raise EvaluationError(f"query {query.id}: the search refuses the request: {line}"
                              ) from err


def fuse_rankings(rankings: list[list[str]], depth: int) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion with equal weights (search/text_ranking.py): score(p) =
    sum over lists of 1 / (RRF_K + rank of p); best first, ties by id."""
    return fuse(rankings)[:depth]


def backfill_rankings(primary: list[str], fallback: list[str], depth: int) -> list[str]:
    """`primary` as it is, then `fallback`'s papers not in it, up to `depth`: a graph walk
    that found few papers keeps its order and gets text hits after them."""
    filled = list(dict.fromkeys(primary))[:depth]
    seen = set(filled)
    for paper in fallback:
        if len(filled) >= depth:
            break
        if paper not in seen:
            filled.append(paper)
            seen.add(paper)
    return filled
