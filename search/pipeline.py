"""Evidence-graph search, end to end: plan -> seeds -> neighbourhood -> claims ->
entailment -> pruning -> ranking -> order -> fill -> evidence, each stage timed and
recorded on the Run. The stages up to the fill are search/stages.py, the same ones the
order model's trainer runs.

With `source="semantic-scholar"` (or `"openalex"`) the seeds come from that provider's
searches and the expand stage first fetches the seeds' neighbourhood into the graph
(search/semantic_scholar_source.py, search/openalex_source.py); the rest runs unchanged
on what the graph then holds.
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
from crase.scoring.delta import PrunedGraph
from crase.search.audit import record_considered, record_results
from crase.search.evidence import PaperEvidence, attach_claim_pairs, build_evidence
from crase.search.expansion import Edge, Neighbourhood
from crase.search.grounding import read_claims, read_matrices
from crase.search.request import SearchRequest
from crase.search.roles.protocols import SearchBackends
from crase.search.seeds import QUERY_ITSELF, Seed
from crase.search.stages import (
    EVIDENCE_STAGES,
    LIST_STAGES,
    Search,
    SearchState,
    fixed_seed_ids,
    planned,
    run_stages,
    weighs_by_delta,
)
from crase.usage import Usage

if TYPE_CHECKING:  # imported where a search uses it: it brings the HTTP client
    from crase.search.stages import ProviderSource

# The stages in the order they run; the Run's timings and the HTTP progress use these names.
STAGES = (*(name for name, _ in EVIDENCE_STAGES + LIST_STAGES), "evidence", "record")


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
    check_given_papers(graph, request)
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
    # Seeds the caller fixes are graph papers: their neighbourhood is the local one.
    return request.params.source != "local" and fixed_seed_ids(request) is None


def check_given_papers(graph: Graph, request: SearchRequest) -> None:
    """Refuses, before any Run exists, a search from papers the graph does not hold,
    naming every one (a reference list with one unknown entry is not silently shortened),
    as the command line and the HTTP API refuse them (search/given_papers.py)."""
    if not request.given_papers:
        return
    # Imported by a search from papers alone: the reference readers bring bibtexparser.
    from crase.search.given_papers import require_in_graph

    require_in_graph(graph, request.given_papers)


def check_source(backends: SearchBackends, request: SearchRequest) -> None:
    """Refuses, before any Run exists, a provider search this deployment cannot make."""
    if not uses_provider(request):
        return
    source = request.params.source
    if backends.provider is None:
        raise SettingsError(f"source {source} needs provider settings in the search "
                            "backends (build_search_backends gives them); or use source local")
    if not backends.provider.enabled:
        raise ProviderNotEnabled(f"source {source}: external providers are off; set "
                                 "CRASE_PROVIDERS__ENABLED=true, or search the local index "
                                 "with --source local")


@contextmanager
def seed_source(graph: Graph, backends: SearchBackends, request: SearchRequest,
                observer: RunObserver, notice: Callable[[str], None] | None
                ) -> Iterator["ProviderSource | None"]:
    """The provider of a semantic-scholar or openalex search for as long as the search
    runs; None for a local one."""
    if not uses_provider(request) or backends.provider is None:
        yield None
        return

    from crase.search.openalex_source import OpenAlexSource
    from crase.search.semantic_scholar_source import SemanticScholarSource

    def progress(done: int, total: int) -> None:
        observer.items_done("expand", done, total)

    say = notice or (lambda line: None)
    source: ProviderSource = (
        OpenAlexSource(graph, backends.provider, say, progress)
        if request.params.source == "openalex"
        else SemanticScholarSource(graph, backends.provider, say, progress))
    with source:
        yield source


def _run_stages(graph: Graph, backends: SearchBackends, request: SearchRequest,
                run: RunLifecycle, result: SearchResult, observer: RunObserver,
                source: "ProviderSource | None") -> None:
    """The search's stages (search/stages.py) timed on the Run, then its evidence read and
    recorded."""
    search = Search(graph, backends, request, result.run_id, source, observer, run.recorder)
    state = SearchState()
    try:
        run_stages(search, state, EVIDENCE_STAGES + LIST_STAGES, run.stage)
        with run.stage("evidence"):
            result.results = explain_results(search, state)
        with run.stage("record"):
            record_run(run, state, result, plan_calls=1 if planned(search) else 0)
    finally:
        result.plan, result.seeds = state.plan, state.seeds


def explain_results(search: Search, state: SearchState) -> list[RankedPaper]:
    """The ordered list's papers with their evidence: the path from the seeds, the seed's
    text rank and restart share, and the model's feature contributions where it placed the
    list (a paper the walk never reached is then a text match)."""
    ordering, params = state.ordering, search.params
    results = _explain(search.graph, search.backends, ordering.ranked, state.pruned,
                       params.orientation, ordering.from_text, state.hood.influential,
                       weighted=weighs_by_delta(params))
    _attach_seed_places(results, state.seeds, state.restart)
    walked = {paper for paper, _ in state.walked}
    for paper in results:
        paper.evidence.ranking_features = ordering.contributions.get(paper.id)
        if ordering.placed_by == "model" and paper.id not in walked:
            paper.evidence.text_match = True
    return results


def record_run(run: RunLifecycle, state: SearchState, result: SearchResult,
               plan_calls: int) -> None:
    result.counts = _counts(state, result, plan_calls) | {"order": state.ordering.how}
    record_considered(run.recorder, _considered_rows(state.hood, state.pruned))
    record_results(run.recorder, [
        {"paper_id": r.id, "rank": r.rank, "score": r.score,
         "evidence": _evidence_json(r.evidence)} for r in result.results])


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


def _counts(state: SearchState, result: SearchResult, plan_calls: int) -> dict[str, Any]:
    # Known before any model call: 1 plan call (none with given seeds), one claim call per
    # paper lacking claims, one entailment call per edge lacking a score (the paper's
    # 1 + |V| + |E| when cold).
    hood, scores, pruned, extracted = state.hood, state.scores, state.pruned, state.extracted
    return {
        "seeds": len(state.seed_ids), "seeds_in_graph": len(hood.seeds),
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
