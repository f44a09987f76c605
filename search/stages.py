"""One search's stages, from its plan to its ordered list, over one state: the search
(search/pipeline.py) runs them timed on its Run and records what they found; the order
model's trainer (search/order/training.py) and its benchmark (bench/learned_order.py) run
the very same stages untimed and record nothing, the training query's source paper
excluded. A model learns the evidence of the search it serves, not of a copy.

The query's text lists (BM25 and embeddings, search/text_ranking.py) are asked once per
search, by the first stage that needs them (the seeds' own search; for a provider's seeds,
the order or the fill, once the provider's papers are in the graph), deep enough for every
use: the seeds' pool, the order's TEXT_POOL candidates, the fill's k plus the walk's papers
(fewer than 2k) and the text order's TEXT_POOL.

The learned order has two gates, neither of which depends on k, so a search's first ten
papers are the same at k = 10 and at k = 50: where the walk ranks fewer than
THIN_GRAPH_RATIO papers per seed the query's text ranking orders the list, and a query of
a form the model file holds no model for (search/order/model.py: query_form) keeps the
walk's order (docs/retrieval-quality.md).
"""

import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from crase.graph import Graph
from crase.run_lifecycle import SILENT, RunObserver, RunRecorder
from crase.scoring.delta import PrunedGraph, influential_weights, keep_all_edges, prune
from crase.search.audit import record_seeds
from crase.search.expansion import Edge, Neighbourhood, expand
from crase.search.grounding import EdgeScores, ensure_claims, ensure_edge_scores
from crase.search.order.features import (
    FEATURES,
    TEXT_POOL,
    WALK_POOL,
    Candidates,
    SearchEvidence,
    features_of,
    gathered,
)
from crase.search.order.model import OrderModel, model_at, order_candidates
from crase.search.request import FORM_NAMES, SearchRequest, query_form
from crase.search.roles.protocols import SearchBackends
from crase.search.seeds import (
    Seed,
    SeedRules,
    find_seeds,
    fixed_seeds,
    restart_distribution,
    unique_seed_ids,
)
from crase.search.text_fill import fill_from_text, text_order
from crase.search.text_ranking import QueryLists, ask_query_lists
from crase.search.walk import Walk, rank
from crase.settings import SearchSettings

if TYPE_CHECKING:  # imported where a search uses it: it brings the HTTP client
    from crase.search.openalex_source import OpenAlexSource
    from crase.search.semantic_scholar_source import SemanticScholarSource

    ProviderSource = SemanticScholarSource | OpenAlexSource

# Below this many papers ranked per seed, the graph adds almost nothing to the seeds and the
# query's own text ranking orders the list (graph_adds_little).
THIN_GRAPH_RATIO = 3

StageTimer = Callable[[str], AbstractContextManager[Any]]


def untimed(name: str) -> AbstractContextManager[None]:
    """The stage timer of a search that keeps no Run (the trainer, the benchmark)."""
    return nullcontext()


@dataclass(frozen=True)
class Search:
    """What one search is given: its request and the means to answer it. Without a
    recorder it records nothing."""

    graph: Graph
    backends: SearchBackends
    request: SearchRequest
    run_id: str = field(default_factory=lambda: f"untimed-{uuid.uuid4().hex[:12]}")
    source: "ProviderSource | None" = None
    observer: RunObserver = field(default_factory=lambda: SILENT)
    recorder: RunRecorder | None = None

    @property
    def params(self) -> SearchSettings:
        return self.request.params


@dataclass
class Ordering:
    """The list a search returns, before its evidence is read, and what placed it."""

    ranked: list[tuple[str, float]]
    how: dict[str, Any]  # the Run's counts.order: the order asked for, what placed the list
    contributions: dict[str, dict[str, float]] = field(default_factory=dict)  # the model's
    from_text: list[str] = field(default_factory=list)  # papers the text ranking added

    @property
    def placed_by(self) -> str:
        return str(self.how["placed_by"])


@dataclass
class SearchState:
    """What the stages have found so far; each stage fills its own part."""

    plan: list[str] = field(default_factory=list)
    seeds: list[Seed] = field(default_factory=list)
    restart: dict[str, float] = field(default_factory=dict)
    text: QueryLists | None = None  # asked once, by the first stage that needs it
    hood: Neighbourhood = field(default_factory=lambda: Neighbourhood([], [], []))
    extracted: int = 0  # papers whose claims this search extracted
    scores: EdgeScores = field(default_factory=EdgeScores)
    pruned: PrunedGraph = field(default_factory=lambda: PrunedGraph({}, [], [], {}, {}))
    walked: list[tuple[str, float]] = field(default_factory=list)
    ordering: Ordering = field(default_factory=lambda: Ordering([], {}))

    @property
    def seed_ids(self) -> list[str]:
        return unique_seed_ids(self.seeds)


def weighs_by_delta(p: SearchSettings) -> bool:
    # Only the coverage walk weighs edges by Delta; the uniform walk (a baseline, every
    # edge 1) and the influential walk (the publisher's mark) need no claims and no Delta.
    return p.weighting == "coverage"


def fixed_seed_ids(request: SearchRequest) -> list[str] | None:
    """The seeds the caller fixes, None where the search finds its own: the papers the
    user starts from (never a result), else a benchmark's seed_override (which may be)."""
    return request.given_papers or request.seed_override


def planned(search: Search) -> bool:
    return fixed_seed_ids(search.request) is None and search.params.sub_queries > 0


def not_given(search: Search, ranked: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """`ranked` without the papers the user starts from: they are never a result."""
    given = set(search.request.given_papers)
    return [entry for entry in ranked if entry[0] not in given] if given else ranked


def list_text(search: Search) -> str:
    """The text the query's lists are asked with: the query; for a search from papers
    alone, the given papers' titles (what they are about, in the words the index holds)."""
    request = search.request
    if request.query.strip() or not request.given_papers:
        return request.query
    rows = search.graph.read("read_papers", ids=request.given_papers)
    return " ".join(row["title"] for row in rows if row.get("title"))


def text_depth(p: SearchSettings) -> int:
    """How deep the query's text lists are asked: the seeds' pool, the order's candidates
    and the text order (TEXT_POOL), the fill (k plus fewer than k walked papers)."""
    return max(p.seed_pool, p.query_seeds, TEXT_POOL, 2 * p.k)


def text_lists(search: Search, state: SearchState) -> QueryLists:
    """The query's text lists, asked the first time a stage needs them."""
    if state.text is None:
        request = search.request
        state.text = ask_query_lists(search.graph, search.backends.encoder,
                                     list_text(search), text_depth(search.params),
                                     request.exclude + request.given_papers)
    return state.text


def seed_rules(p: SearchSettings) -> SeedRules:
    return SeedRules(p.query_seeds, p.seeds_per_query, p.seed_pool, p.seed_rule,
                     p.seed_weights, p.sub_query_weight)


def plan_stage(search: Search, state: SearchState) -> None:
    if planned(search):
        state.plan = search.backends.planner.plan(search.request.query,
                                                  search.params.sub_queries)


def seeds_stage(search: Search, state: SearchState) -> None:
    state.seeds = choose_run_seeds(search, state)
    fixed = fixed_seed_ids(search.request) is not None
    state.restart = restart_distribution(state.seeds,
                                         "uniform" if fixed else search.params.seed_weights)
    if search.recorder is not None:
        record_seeds(search.recorder, state.seeds, state.restart)


def choose_run_seeds(search: Search, state: SearchState) -> list[Seed]:
    """The caller's seeds, the provider's, or the local text searches' (the query's own
    hits come from its text lists)."""
    request, rules = search.request, seed_rules(search.params)
    if (fixed := fixed_seed_ids(request)) is not None:
        return fixed_seeds(fixed, request.exclude)
    if search.source is not None:
        return search.source.seeds(request.query, state.plan, rules, request.exclude)
    own = (text_lists(search, state).fused(max(rules.pool, rules.query_seeds))
           if rules.query_seeds > 0 else [])
    return find_seeds(search.graph, request.query, own, state.plan, rules, request.exclude)


def expand_stage(search: Search, state: SearchState) -> None:
    if search.source is not None:
        search.source.grow(state.seed_ids, search.params.hops)
    state.hood = expand(search.graph, state.seed_ids, search.params.hops,
                        search.request.exclude)


def claims_stage(search: Search, state: SearchState) -> None:
    if weighs_by_delta(search.params):
        state.extracted = ensure_claims(search.graph, search.backends.extractor,
                                        state.hood.nodes, progress=search.observer.items_done)


def entailment_stage(search: Search, state: SearchState) -> None:
    if weighs_by_delta(search.params):
        b, hood = search.backends, state.hood
        state.scores = ensure_edge_scores(
            search.graph, b.extractor.name, b.scorer, hood.edges, search.params.theta,
            progress=search.observer.items_done, stored=hood.stored)


def prune_stage(search: Search, state: SearchState) -> None:
    p, hood = search.params, state.hood
    state.pruned = (prune(hood.nodes, hood.edges, state.scores.delta, hood.seeds, p.tau)
                    if weighs_by_delta(p)
                    else keep_all_edges(hood.nodes, hood.edges, hood.seeds,
                                        walk_weights(p, hood)))


def walk_weights(p: SearchSettings, hood: Neighbourhood) -> dict[Edge, float] | None:
    """The edge weights of a walk without Delta: the publisher's mark under `influential`,
    None (every edge 1) under `uniform`."""
    if p.weighting != "influential":
        return None
    return influential_weights(hood.edges, hood.influential, p.influential_weight)


def rank_stage(search: Search, state: SearchState) -> None:
    p = search.params
    walk = Walk(p.walk, p.orientation, search.request.age_reference(),
                p.beta if weighs_by_delta(p) else 0.0, p.alpha,
                walk_depth(p, len(state.seed_ids)) + len(search.request.given_papers),
                p.max_iterations, p.tolerance)
    state.walked = rank(search.graph, search.run_id, state.pruned, walk, state.restart,
                        state.hood.years)


def walk_depth(p: SearchSettings, seeds: int) -> int:
    """How many papers the walk ranks: k; for the learned order also its WALK_POOL
    candidates, and enough to tell a thin graph (graph_adds_little) whatever k is. The
    search asks for as many more as the user gives papers, which are never a result."""
    if p.order != "learned":
        return p.k
    return max(p.k, WALK_POOL, THIN_GRAPH_RATIO * seeds)


def order_stage(search: Search, state: SearchState) -> None:
    state.ordering = order_list(search, state)


def fill_stage(search: Search, state: SearchState) -> None:
    state.ordering = filled_ordering(search, state, state.ordering)


# The stages up to the walk: all a trainer needs of a search to compute its features.
EVIDENCE_STAGES: tuple[tuple[str, Callable[[Search, SearchState], None]], ...] = (
    ("plan", plan_stage), ("seeds", seeds_stage), ("expand", expand_stage),
    ("claims", claims_stage), ("entailment", entailment_stage), ("prune", prune_stage),
    ("rank", rank_stage))
LIST_STAGES: tuple[tuple[str, Callable[[Search, SearchState], None]], ...] = (
    ("order", order_stage), ("fill", fill_stage))


def run_stages(search: Search, state: SearchState,
               stages: tuple[tuple[str, Callable[[Search, SearchState], None]], ...],
               stage: StageTimer = untimed) -> SearchState:
    for name, step in stages:
        with stage(name):
            step(search, state)
    return state


def gather_evidence(search: Search, stage: StageTimer = untimed) -> SearchState:
    """The search's stages from its plan to its walk: seeds, neighbourhood, weights, the
    walk, and (once asked) the text lists."""
    return run_stages(search, SearchState(), EVIDENCE_STAGES, stage)


def graph_adds_little(walked: int, seeds: int) -> bool:
    """Whether the walk ranked fewer than THIN_GRAPH_RATIO papers per seed: the
    neighbourhood holds the seeds and almost nothing else, so the walk's order is only the
    seeds' order. On CSFCube (expert labels, almost no citations) every query's walk ranks
    10-23 papers from 10 seeds and the text ranking orders them better; on hep-th and
    cs768 the fewest is 34, and the text ranking there would lose
    (docs/retrieval-quality.md). Counted per seed, not against k: the same search gets the
    same order whatever its k."""
    return walked < THIN_GRAPH_RATIO * seeds


def form_of(request: SearchRequest) -> str:
    """The query's form (search/order/model.py), which picks the model that orders it."""
    return query_form(request.query, request.given_papers)


def order_model_for(search: Search) -> OrderModel | None:
    """The model for this search's query form; None where the model file has none."""
    return model_at(search.backends.order_model).for_form(form_of(search.request))


def thin_graph_gate(search: Search, state: SearchState) -> str | None:
    """Why the query's text ranking orders the list instead of the model (a thin graph,
    under the text fill); None where the graph tells enough."""
    walked, seeds = len(state.walked), len(state.seed_ids)
    if search.params.fill == "text" and graph_adds_little(walked, seeds):
        return (f"the walk ranked {walked} papers from {seeds} seeds, fewer than "
                f"{THIN_GRAPH_RATIO} per seed: the query's own text ranking")
    return None


def learned_order_gate(search: Search, state: SearchState) -> tuple[str, str] | None:
    """What places a learned-order search's list instead of the model, and why: ("text",
    why) on a thin graph, ("walk", why) for a query form the model file has no model for;
    None where the model does."""
    if thin := thin_graph_gate(search, state):
        return "text", thin
    if order_model_for(search) is None:
        form = form_of(search.request)
        return "walk", (f"{FORM_NAMES[form]}, for which the order model has no weights: "
                        "the walk's order and the text fill")
    return None


def order_list(search: Search, state: SearchState) -> Ordering:
    """The list in its final order, up to k papers: by the model, by the walk or by the
    query's text ranking."""
    if search.params.order != "learned":
        return walk_ordering(search, state)
    gate = learned_order_gate(search, state)
    if gate is None:
        return model_ordering(search, state)
    placed_by, why = gate
    if placed_by == "text":
        return text_ordering(search, state, why)
    return walk_ordering(search, state, why)


def walk_ordering(search: Search, state: SearchState, why: str | None = None) -> Ordering:
    how: dict[str, Any] = {"order": search.params.order, "placed_by": "walk"}
    if why is not None:
        how["not_applied"] = why
    return Ordering(not_given(search, state.walked)[:search.params.k], how)


def text_ordering(search: Search, state: SearchState, why: str) -> Ordering:
    ranked, added = text_order(not_given(search, state.walked), search.params.k, TEXT_POOL,
                               text_lists(search, state))
    return Ordering(ranked, {"order": "learned", "placed_by": "text", "not_applied": why},
                    from_text=added)


def model_ordering(search: Search, state: SearchState) -> Ordering:
    """The model's top k of the candidates, each with its largest feature contributions."""
    model = order_model_for(search)
    assert model is not None  # learned_order_gate sends a form without a model elsewhere
    placed = order_candidates(model, candidates_of(search, state, model.features),
                              search.params.k)
    return Ordering([(p.id, p.score) for p in placed],
                    {"order": "learned", "placed_by": "model", "model": model.summary()},
                    {p.id: p.contributions for p in placed})


def candidate_evidence(search: Search, state: SearchState) -> SearchEvidence:
    """What the order's candidates are drawn from: the walk's top WALK_POOL, each text
    list's top TEXT_POOL, the neighbourhood and the seeds' restart mass, and for a search
    from papers the papers most linked to them across the corpus."""
    lexical, dense = text_lists(search, state).top(TEXT_POOL)
    return gathered(search.graph, state.walked[:WALK_POOL], lexical, dense, state.hood,
                    state.restart, search.request.exclude, search.request.given_papers)


def candidates_of(search: Search, state: SearchState,
                  features: Sequence[str] = FEATURES) -> Candidates:
    """Every candidate of the learned order with its features (search/order/features.py;
    the corpus-wide ones read only where `features` use them); the papers the user starts
    from are evidence, never candidates."""
    candidates = features_of(search.graph, candidate_evidence(search, state),
                             search.request.exclude, features)
    return candidates.without(search.request.given_papers)


def filled_ordering(search: Search, state: SearchState, ordering: Ordering) -> Ordering:
    """The list with its empty places, up to k, filled by the query's text ranking (not
    a list the text ranking ordered already, and only under fill "text")."""
    p = search.params
    if p.fill != "text" or ordering.placed_by == "text" or len(ordering.ranked) >= p.k:
        return ordering
    ranked, added = fill_from_text(ordering.ranked, p.k, text_lists(search, state))
    return replace(ordering, ranked=ranked, from_text=ordering.from_text + added)
