"""Evidence-graph search, end to end: plan -> seeds -> neighbourhood -> claims ->
entailment -> pruning -> ranking -> evidence, each stage timed and recorded on the Run.
"""

import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from crase.errors import CraseError, RunCancelled
from crase.graph import Graph
from crase.scoring.backends import ClaimExtractor, EntailmentScorer, Planner, Usage
from crase.scoring.embeddings import MiniLmEncoder
from crase.search.audit import RunRecorder, to_json
from crase.search.evidence import PaperEvidence, attach_claim_pairs, build_evidence
from crase.search.expansion import Neighbourhood, expand
from crase.search.grounding import (
    EdgeScores,
    Progress,
    ensure_claims,
    ensure_edge_scores,
    read_claims,
    read_matrices,
)
from crase.search.ranking import PrunedGraph, Walk, keep_all_edges, prune, rank
from crase.search.request import SearchRequest
from crase.search.seeds import (
    QUERY_ITSELF,
    Seed,
    SeedRules,
    find_seeds,
    given_seeds,
    restart_distribution,
    unique_seed_ids,
)
from crase.search.text_fill import fill_from_text
from crase.settings import SearchSettings


@dataclass
class SearchBackends:
    planner: Planner
    extractor: ClaimExtractor
    scorer: EntailmentScorer
    # Embeds the query for the vector half of its own search; None: BM25 only.
    encoder: MiniLmEncoder | None = None

    def names(self) -> dict[str, str]:
        return {"planner": self.planner.name, "claims": self.extractor.name,
                "entailment": f"{self.scorer.name}@{self.scorer.version}"}

    def usage(self) -> dict[str, Usage]:
        return {"planner": self.planner.usage, "claims": self.extractor.usage,
                "entailment": self.scorer.usage}


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
    counts: dict[str, int]
    timings: dict[str, float]
    backends: dict[str, str]
    usage: dict[str, Any]
    results: list[RankedPaper] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class StageTimer:
    def __init__(self, should_cancel: Callable[[], bool] | None = None) -> None:
        self.timings: dict[str, float] = {}
        self.should_cancel = should_cancel

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        if self.should_cancel and self.should_cancel():
            raise RunCancelled(f"cancelled before stage {name}")
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(time.perf_counter() - start, 4)


def usage_since(before: dict[str, Usage], after: dict[str, Usage]) -> dict[str, Any]:
    """Per-role usage spent between two snapshots, as plain data for the Run node."""
    spent = {}
    for role, now in after.items():
        then = before[role]
        spent[role] = {
            "calls_planned": now.calls_planned - then.calls_planned,
            "calls_made": now.calls_made - then.calls_made,
            "calls_failed": now.calls_failed - then.calls_failed,
            "prompt_tokens": now.prompt_tokens - then.prompt_tokens,
            "completion_tokens": now.completion_tokens - then.completion_tokens,
            "cost_usd": round(now.cost_usd - then.cost_usd, 6),
            "models": sorted(now.models),
        }
    return spent


def snapshot(usages: dict[str, Usage]) -> dict[str, Usage]:
    return {role: replace(u, models=set(u.models)) for role, u in usages.items()}


def run_search(graph: Graph, backends: SearchBackends, request: SearchRequest,
               run_id: str | None = None, progress: Progress | None = None,
               should_cancel: Callable[[], bool] | None = None) -> SearchResult:
    """Run one search and record it; a failure is recorded on the Run, then re-raised."""
    run_id = run_id or uuid.uuid4().hex[:12]
    recorder = RunRecorder(graph, run_id)
    recorder.open("search", request.query, request.model_dump(mode="json"), backends.names())
    timer = StageTimer(should_cancel)
    before = snapshot(backends.usage())
    result = SearchResult(run_id, request.query, [], [], {}, timer.timings, backends.names(), {})
    status, error = "failed", None
    try:
        _run_stages(graph, backends, request, recorder, timer, result, progress)
        status, error = "done", None
    except CraseError as err:
        status = "cancelled" if isinstance(err, RunCancelled) else "failed"
        error = f"{type(err).__name__}: {err}"
        raise
    finally:
        # Also on an unexpected error or an interrupt, so no Run stays 'running'.
        unexpected = sys.exc_info()[1]
        if status == "failed" and error is None and unexpected is not None:
            error = f"{type(unexpected).__name__}: {unexpected}"
        result.usage = usage_since(before, backends.usage())
        recorder.close(status, result.plan, result.counts, timer.timings, result.usage, error)
    return result


def _run_stages(graph: Graph, backends: SearchBackends, request: SearchRequest,
                recorder: RunRecorder, timer: StageTimer, result: SearchResult,
                progress: Progress | None) -> None:
    p = request.params
    given = request.seed_override is not None
    # The uniform walk (a baseline) needs no claims or Delta: every edge weighs 1.
    uniform = p.weighting == "uniform"
    planned = not given and p.sub_queries > 0
    with timer.stage("plan"):
        result.plan = backends.planner.plan(request.query, p.sub_queries) if planned else []
    with timer.stage("seeds"):
        result.seeds = (given_seeds(request.seed_override or [], request.exclude) if given else
                        find_seeds(graph, backends.encoder, request.query, result.plan,
                                   seed_rules(p), request.exclude))
        seed_ids = unique_seed_ids(result.seeds)
        restart = restart_distribution(result.seeds, "uniform" if given else p.seed_weights)
        recorder.record_seeds(result.seeds, restart)
    with timer.stage("expand"):
        hood = expand(graph, seed_ids, p.hops, request.exclude)
    with timer.stage("claims"):
        extracted = 0 if uniform else ensure_claims(graph, backends.extractor, hood.nodes,
                                                    progress=progress)
    with timer.stage("entailment"):
        scores = EdgeScores() if uniform else ensure_edge_scores(
            graph, backends.extractor.name, backends.scorer, hood.edges, p.theta,
            progress=progress, stored=hood.stored)
    with timer.stage("prune"):
        pruned = (keep_all_edges(hood.nodes, hood.edges, hood.seeds) if uniform else
                  prune(hood.nodes, hood.edges, scores.delta, hood.seeds, p.tau))
    with timer.stage("rank"):
        walk = Walk(p.ranker, p.orientation, request.age_reference(),
                    0.0 if uniform else p.beta, p.alpha, p.k, p.max_iterations, p.tolerance)
        ranked = rank(graph, result.run_id, pruned, walk, restart)
    with timer.stage("fill"):
        ranked, from_text = (fill_from_text(graph, backends.encoder, request.query, ranked,
                                            p.k, request.exclude)
                             if p.fill == "text" else (ranked, []))
    with timer.stage("evidence"):
        result.results = _explain(graph, backends, ranked, pruned, p.orientation, from_text)
        _attach_seed_places(result.results, result.seeds, restart)
    with timer.stage("record"):
        result.counts = _counts(seed_ids, hood, extracted, scores, pruned, result,
                                plan_calls=1 if planned else 0)
        recorder.record_considered(_considered_rows(hood, pruned))
        recorder.record_results([
            {"paper_id": r.id, "rank": r.rank, "score": r.score,
             "evidence": _evidence_json(r.evidence)} for r in result.results])


def seed_rules(p: SearchSettings) -> SeedRules:
    return SeedRules(p.query_seeds, p.seeds_per_query, p.seed_pool, p.seed_rule,
                     p.seed_weights, p.sub_query_weight)


def _explain(graph: Graph, backends: SearchBackends, ranked: list[tuple[str, float]],
             pruned: PrunedGraph, orientation: str,
             from_text: list[str]) -> list[RankedPaper]:
    ids = [paper for paper, _ in ranked]
    evidence = build_evidence(ids, pruned.edges, pruned.seeds, orientation)
    for paper in from_text:
        evidence[paper].text_match = True
    edges = sorted({(e.citing, e.cited) for ev in evidence.values() for e in ev.edges()})
    papers_on_edges = sorted({p for edge in edges for p in edge})
    attach_claim_pairs(evidence, read_matrices(graph, backends.scorer, edges),
                       read_claims(graph, papers_on_edges, backends.extractor.name))
    papers = {row["id"]: row for row in graph.read("read_papers", ids=ids)}
    return [RankedPaper(rank, pid, round(score, 8), papers[pid]["title"] or "",
                        papers[pid]["year"], papers[pid]["authors"] or [], evidence[pid])
            for rank, (pid, score) in enumerate(ranked, start=1)]


def _attach_seed_places(results: list[RankedPaper], seeds: list[Seed],
                        restart: dict[str, float]) -> None:
    text_rank = {s.paper_id: s.relevance_rank for s in seeds
                 if s.sub_query_index == QUERY_ITSELF}
    for paper in results:
        paper.evidence.text_rank = text_rank.get(paper.id)
        if paper.id in restart:
            paper.evidence.restart_share = round(restart[paper.id], 6)


def _counts(seed_ids: list[str], hood: Neighbourhood, extracted: int, scores: EdgeScores,
            pruned: PrunedGraph, result: SearchResult, plan_calls: int) -> dict[str, int]:
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
