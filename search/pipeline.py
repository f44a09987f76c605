"""Evidence-graph search, end to end: plan -> seeds -> neighbourhood -> claims ->
entailment -> pruning -> ranking -> evidence, each stage timed and recorded on the Run.

With `source="semantic-scholar"` the seeds come from Semantic Scholar searches and the
expand stage first fetches the seeds' neighbourhood into the graph
(search/semantic_scholar_source.py); the rest runs unchanged on what the graph then holds.
A list that could not be fetched makes the run `partial`, with the reasons on the Run
(its error field and counts.provider) and in the result; the run still ranks what it has.
"""

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from crase.errors import DatabaseError, ProviderNotEnabled, SettingsError
from crase.graph import Graph, Row
from crase.run_lifecycle import SILENT, RunLifecycle, RunObserver, to_json
from crase.scoring.delta import PrunedGraph, influential_weights, keep_all_edges, prune
from crase.search.audit import record_considered, record_results, record_seeds
from crase.search.candidate_features import TEXT_POOL, WALK_POOL
from crase.search.evidence import PaperEvidence, attach_claim_pairs, build_evidence
from crase.search.expansion import Edge, Neighbourhood, expand
from crase.search.grounding import (
    EdgeScores,
    ensure_claims,
    ensure_edge_scores,
    read_claims,
    read_matrices,
)
from crase.search.order_model import (
    MIN_QUERY_WORDS,
    OrderModel,
    model_at,
    order_by_model,
)
from crase.search.request import SearchRequest
from crase.search.roles.protocols import SearchBackends
from crase.search.seeds import (
    QUERY_ITSELF,
    Seed,
    SeedRules,
    find_seeds,
    given_seeds,
    restart_distribution,
    unique_seed_ids,
)
from crase.search.text_fill import fill_from_text, text_order
from crase.search.walk import Walk, rank
from crase.settings import SearchSettings
from crase.usage import Usage

if TYPE_CHECKING:  # imported where a search uses it: it brings the HTTP client
    from crase.search.semantic_scholar_source import SemanticScholarSource

# Below this many papers ranked per seed, the graph adds almost nothing to the seeds and the
# query's own text ranking orders the list (graph_adds_little).
THIN_GRAPH_RATIO = 3
# The stages in the order they run; the Run's timings and the HTTP progress use these names.
STAGES = ("plan", "seeds", "expand", "claims", "entailment", "prune", "rank", "order",
          "fill", "evidence", "record")


@dataclass
class RankedPaper:
    rank: int
    id: str
    score: float
    title: str
    year: int | None
    authors: list[str]
    evidence: PaperEvidence


@dataclass
class SearchResult:
    run_id: str
    query: str
    plan: list[str]
    seeds: list[Seed]
    counts: dict[str, Any]
    timings: dict[str, float]
    backends: dict[str, str]
    usage: dict[str, Any]
    results: list[RankedPaper] = field(default_factory=list)
    source: str = "local"
    status: str = "done"  # "partial" when the provider left lists unfetched
    problems: list[str] = field(default_factory=list)  # what was not fetched, and why

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def usage_since(before: dict[str, Usage], after: dict[str, Usage]) -> dict[str, Any]:
    """Per-role usage spent between two snapshots, as plain data for the Run node."""
    return {role: now.since(before[role]).to_dict() for role, now in after.items()}


def snapshot(usages: dict[str, Usage]) -> dict[str, Usage]:
    return {role: usage.copy() for role, usage in usages.items()}


def run_search(graph: Graph, backends: SearchBackends, request: SearchRequest,
               run_id: str | None = None, observer: RunObserver = SILENT,
               notice: Callable[[str], None] | None = None) -> SearchResult:
    """Run one search and record it; a failure is recorded on the Run, then re-raised.
    `notice` hears one line before a stage starts waiting on an external provider (its
    planned calls and how long they take at the rate limit)."""
    run_id = run_id or uuid.uuid4().hex[:12]
    check_source(backends, request)
    before = snapshot(backends.usage())
    with RunLifecycle.open(graph, run_id, "search", request.query,
                           request.model_dump(mode="json"), backends.names(), STAGES,
                           observer) as run:
        result = SearchResult(run_id, request.query, [], [], {}, run.timings,
                              backends.names(), {})

        def spent() -> dict[str, Any]:
            result.usage = usage_since(before, backends.usage())
            return result.usage

        run.usage = spent
        with seed_source(graph, backends, request, observer, notice) as source:
            result.source = request.params.source if source is not None else "local"
            try:
                _run_stages(graph, backends, request, run, result, observer, source)
            finally:
                # Also on the way out of a failure: the Run records the calls it made.
                if source is not None:
                    result.counts["provider"] = source.report()
                    result.problems = [problem.line() for problem in source.problems]
                run.plan, run.counts = result.plan, result.counts
        if result.problems:
            result.status = run.status = "partial"
            run.error = partial_reason(result.problems)
    return result


def partial_reason(problems: list[str], shown: int = 5) -> str:
    """The Run's one-line reason for a partial run; all problems are in counts.provider."""
    more = f"; and {len(problems) - shown} more (counts.provider.problems)" \
        if len(problems) > shown else ""
    return "partial: " + "; ".join(problems[:shown]) + more


def uses_provider(request: SearchRequest) -> bool:
    # Seeds named by the caller are graph papers: their neighbourhood is the local one.
    return request.params.source == "semantic-scholar" and request.seed_override is None


def check_source(backends: SearchBackends, request: SearchRequest) -> None:
    """Refuses, before any Run exists, a provider search this deployment cannot make."""
    if not uses_provider(request):
        return
    if backends.provider is None:
        raise SettingsError("source semantic-scholar needs provider settings in the search "
                            "backends (build_search_backends gives them); or use source local")
    if not backends.provider.enabled:
        raise ProviderNotEnabled("source semantic-scholar: external providers are off; set "
                                 "CRASE_PROVIDERS__ENABLED=true, or search the local index "
                                 "with --source local")


@contextmanager
def seed_source(graph: Graph, backends: SearchBackends, request: SearchRequest,
                observer: RunObserver, notice: Callable[[str], None] | None
                ) -> Iterator["SemanticScholarSource | None"]:
    """The provider of a semantic-scholar search for as long as the search runs; None for
    a local one."""
    if not uses_provider(request) or backends.provider is None:
        yield None
        return

    from crase.search.semantic_scholar_source import SemanticScholarSource

    def progress(done: int, total: int) -> None:
        observer.items_done("expand", done, total)

    with SemanticScholarSource(graph, backends.provider, notice or (lambda line: None),
                               progress) as source:
        yield source


def _run_stages(graph: Graph, backends: SearchBackends, request: SearchRequest,
                run: RunLifecycle, result: SearchResult, observer: RunObserver,
                source: "SemanticScholarSource | None") -> None:
    p = request.params
    given = request.seed_override is not None
    # Only the coverage walk weighs edges by Delta; the uniform walk (a baseline, every
    # edge 1) and the influential walk (the publisher's mark) need no claims and no Delta.
    by_delta = p.weighting == "coverage"
    planned = not given and p.sub_queries > 0
    with run.stage("plan"):
        result.plan = backends.planner.plan(request.query, p.sub_queries) if planned else []
    with run.stage("seeds"):
        if given:
            result.seeds = given_seeds(request.seed_override or [], request.exclude)
        elif source is not None:
            result.seeds = source.seeds(request.query, result.plan, seed_rules(p),
                                        request.exclude)
        else:
            result.seeds = find_seeds(graph, backends.encoder, request.query, result.plan,
                                      seed_rules(p), request.exclude)
        seed_ids = unique_seed_ids(result.seeds)
        restart = restart_distribution(result.seeds, "uniform" if given else p.seed_weights)
        record_seeds(run.recorder, result.seeds, restart)
    with run.stage("expand"):
        if source is not None:
            source.grow(seed_ids, p.hops)
        hood = expand(graph, seed_ids, p.hops, request.exclude)
    with run.stage("claims"):
        extracted = ensure_claims(graph, backends.extractor, hood.nodes,
                                  progress=observer.items_done) if by_delta else 0
    with run.stage("entailment"):
        scores = ensure_edge_scores(
            graph, backends.extractor.name, backends.scorer, hood.edges, p.theta,
            progress=observer.items_done, stored=hood.stored) if by_delta else EdgeScores()
    with run.stage("prune"):
        pruned = (prune(hood.nodes, hood.edges, scores.delta, hood.seeds, p.tau) if by_delta
                  else keep_all_edges(hood.nodes, hood.edges, hood.seeds,
                                      walk_weights(p, hood)))
    learned = p.order == "learned"
    with run.stage("rank"):
        walk = Walk(p.walk, p.orientation, request.age_reference(),
                    p.beta if by_delta else 0.0, p.alpha,
                    max(p.k, WALK_POOL) if learned else p.k, p.max_iterations, p.tolerance)
        ranked = rank(graph, result.run_id, pruned, walk, restart, hood.years)
    placed: dict[str, dict[str, float]] = {}
    # What placed the list (the Run's counts.order): the model, the walk or the text.
    order: dict[str, Any] = {"order": p.order, "placed_by": "walk"}
    walked = {paper for paper, _ in ranked}
    from_text: list[str] = []
    by_text = False  # the text ranking ordered the list: nothing left to fill
    with run.stage("order"):
        thin = learned and p.fill == "text" and graph_adds_little(len(ranked), len(seed_ids))
        outside = learned_order_outside(request.query, len(ranked), p.k) if learned else None
        if thin:
            order |= {"placed_by": "text", "not_applied": (
                f"the walk ranked {len(ranked)} papers from {len(seed_ids)} seeds, fewer than "
                f"{THIN_GRAPH_RATIO} per seed: the query's own text ranking")}
            learned, by_text = False, True
            ranked, from_text = text_order(graph, backends.encoder, request.query, ranked,
                                           p.k, TEXT_POOL, request.exclude)
        elif learned and outside is None:
            model = model_at(backends.order_model)
            order |= {"placed_by": "model", "model": model.summary()}
            ranked, placed = _order_learned(graph, backends, request, ranked, hood, restart,
                                            model)
        elif learned:
            order["not_applied"] = f"{outside}: the walk's order and the text fill"
            learned = False
            ranked = ranked[:p.k]  # the walk ranked a deeper pool for the model
    with run.stage("fill"):
        if p.fill == "text" and not by_text:
            ranked, from_text = fill_from_text(graph, backends.encoder, request.query,
                                               ranked, p.k, request.exclude)
    with run.stage("evidence"):
        result.results = _explain(graph, backends, ranked, pruned, p.orientation, from_text,
                                  hood.influential, weighted=by_delta)
        _attach_seed_places(result.results, result.seeds, restart)
        for paper in result.results:
            paper.evidence.ranking_features = placed.get(paper.id)
            if learned and paper.id not in walked:
                paper.evidence.text_match = True
    with run.stage("record"):
        result.counts = _counts(seed_ids, hood, extracted, scores, pruned, result,
                                plan_calls=1 if planned else 0) | {"order": order}
        record_considered(run.recorder, _considered_rows(hood, pruned))
        record_results(run.recorder, [
            {"paper_id": r.id, "rank": r.rank, "score": r.score,
             "evidence": _evidence_json(r.evidence)} for r in result.results])


def graph_adds_little(walked: int, seeds: int) -> bool:
    """Whether the walk ranked fewer than THIN_GRAPH_RATIO papers per seed: the
    neighbourhood holds the seeds and almost nothing else, so the walk's order is only the
    seeds' order. On CSFCube (expert labels, almost no citations) every query's walk ranks
    10-23 papers from 10 seeds and the text ranking orders them better; on hep-th and
    cs768 the fewest is 34, and the text ranking there would lose
    (docs/retrieval-quality.md). Counted per seed, not against k: the same search gets the
    same order whatever its k."""
    return walked < THIN_GRAPH_RATIO * seeds


def learned_order_outside(query: str, walked: int, k: int) -> str | None:
    """Why the learned order does not apply to this search, or None where it does. On a
    thin graph (the walk ranks fewer than k papers) the list is mostly the text fill,
    whose order the model never learned (applied there, it lost on CSFCube); a keyword
    query is not the form it was trained and measured on (a title and two sentences,
    at least 16 words in every dev set): docs/retrieval-quality.md."""
    if walked < k:
        return f"the walk ranked {walked} papers, fewer than k = {k}"
    words = len(query.split())
    if words < MIN_QUERY_WORDS:
        return f"a keyword query ({words} words, fewer than {MIN_QUERY_WORDS})"
    return None


def _order_learned(graph: Graph, backends: SearchBackends, request: SearchRequest,
                   walked: list[tuple[str, float]], hood: Neighbourhood,
                   restart: dict[str, float], model: OrderModel
                   ) -> tuple[list[tuple[str, float]], dict[str, dict[str, float]]]:
    """The learned order of the walk's list and the query's text hits: the top k with each
    one's largest feature contributions."""
    placed = order_by_model(graph, backends.encoder, request.query, walked, hood, restart,
                            request.exclude, model, request.params.k)
    return ([(p.id, p.score) for p in placed],
            {p.id: p.contributions for p in placed})


def walk_weights(p: SearchSettings, hood: Neighbourhood) -> dict[Edge, float] | None:
    """The edge weights of a walk without Delta: the publisher's mark under `influential`,
    None (every edge 1) under `uniform`."""
    if p.weighting != "influential":
        return None
    return influential_weights(hood.edges, hood.influential, p.influential_weight)


def seed_rules(p: SearchSettings) -> SeedRules:
    return SeedRules(p.query_seeds, p.seeds_per_query, p.seed_pool, p.seed_rule,
                     p.seed_weights, p.sub_query_weight)


def _explain(graph: Graph, backends: SearchBackends, ranked: list[tuple[str, float]],
             pruned: PrunedGraph, orientation: str, from_text: list[str],
             influential: dict[Edge, bool], weighted: bool) -> list[RankedPaper]:
    """The ranked papers with their evidence; claim pairs only where the walk weighed its
    edges by Delta (a uniform run's edges are plain citations, even where another run
    stored claims and matrices on them)."""
    ids = [paper for paper, _ in ranked]
    evidence = build_evidence(ids, pruned.edges, pruned.seeds, orientation, influential)
    for paper in from_text:
        evidence[paper].text_match = True
    if weighted:
        edges = sorted({(e.citing, e.cited) for ev in evidence.values() for e in ev.edges()})
        papers_on_edges = sorted({p for edge in edges for p in edge})
        attach_claim_pairs(evidence, read_matrices(graph, backends.scorer, edges),
                           read_claims(graph, papers_on_edges, backends.extractor.name))
    papers = read_result_papers(graph, ids)
    return [RankedPaper(rank, pid, round(score, 8), papers[pid]["title"] or "",
                        papers[pid]["year"], papers[pid]["authors"] or [], evidence[pid])
            for rank, (pid, score) in enumerate(ranked, start=1)]


def read_result_papers(graph: Graph, ids: list[str]) -> dict[str, Row]:
    """Title, year and authors of each ranked paper. The walk ranks numbered nodes and reads
    no paper (search/walk.py), so a paper deleted while the search ran is caught here,
    as a named error."""
    papers = {row["id"]: row for row in graph.read("read_papers", ids=ids)}
    if gone := [paper for paper in ids if paper not in papers]:
        raise DatabaseError(f"paper {gone[0]} left the database while the search ran; "
                            "run the search again")
    return papers


def _attach_seed_places(results: list[RankedPaper], seeds: list[Seed],
                        restart: dict[str, float]) -> None:
    text_rank = {s.paper_id: s.relevance_rank for s in seeds
                 if s.sub_query_index == QUERY_ITSELF}
    for paper in results:
        paper.evidence.text_rank = text_rank.get(paper.id)
        if paper.id in restart:
            paper.evidence.restart_share = round(restart[paper.id], 6)


def _counts(seed_ids: list[str], hood: Neighbourhood, extracted: int, scores: EdgeScores,
            pruned: PrunedGraph, result: SearchResult, plan_calls: int) -> dict[str, Any]:
    # Known before any model call: 1 plan call (none with given seeds), one claim call per
    # paper lacking claims, one entailment call per edge lacking a score (the paper's
    # 1 + |V| + |E| when cold).
    return {
        "seeds": len(seed_ids), "seeds_in_graph": len(hood.seeds),
        "nodes": len(hood.nodes), "edges": len(hood.edges),
        "papers_claims_extracted": extracted,
        "edges_scored_now": scores.scored_now, "edges_reused": scores.reused,
        "edges_failed": len(scores.failed),
        "edges_without_claims": len(scores.without_claims),
        "edges_influential": sum(hood.influential.values()),
        "edges_pruned": len(pruned.pruned_edges), "nodes_dropped": len(pruned.dropped_nodes),
        "retained_nodes": len(pruned.nodes), "retained_edges": len(pruned.edges),
        "seeds_retained": len(pruned.seeds), "results": len(result.results),
        "results_from_text": sum(r.evidence.text_match for r in result.results),
        "backend_calls_planned": plan_calls + extracted + scores.scored_now
        + len(scores.failed),
    }


def _considered_rows(hood: Neighbourhood, pruned: PrunedGraph) -> list[dict[str, Any]]:
    seeds = set(hood.seeds)
    return [{"paper_id": n, "kept": n not in pruned.dropped_nodes,
             "reason": pruned.dropped_nodes.get(n, "has a retained edge"), "seed": n in seeds}
            for n in hood.nodes]


def _evidence_json(evidence: PaperEvidence) -> str:
    return to_json(asdict(evidence))
