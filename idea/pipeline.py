"""Idea to prior work, end to end: `run_idea(graph, backends, request) -> IdeaResult`.

structure -> providers probe -> discovery (full text, recalled titles, Semantic Scholar)
-> identity and eligibility -> budgeted selection -> abstract assessment -> citation gate
-> shortlist -> 5 PDF attempts and windows -> joint expert ranking -> (report) -> audit.

Each stage is timed. The audit (graph + JSON) is written at the end, also when a stage
raised: what was decided until then stays on record. A ranking failure is not an error:
the run ends with outcome 'ranking_failed', no final papers, and the failure in the audit.
"""

import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from crase.errors import RunCancelled
from crase.graph import Graph
from crase.idea.assessment import assess_candidates, match_strength, weak_match_warning
from crase.idea.audit import (
    browser_query,
    record_candidates,
    record_results,
    store_audit,
    write_audit_file,
)
from crase.idea.candidates import Candidate, FinalRank
from crase.idea.discovery import (
    RouteReport,
    resolve_recalled,
    search_fulltext,
    search_provider,
)
from crase.idea.expert import ExpertOutcome, idea_text_ranks, shortlist_entries
from crase.idea.identity import IdentityRegistry, apply_eligibility
from crase.idea.neighbour_gate import GateReport, run_gate
from crase.idea.pdf_acquisition import PdfSources, acquire_pdfs
from crase.idea.providers import NO_OPENALEX_KEY, OPENALEX, ProviderStatus, probe_providers
from crase.idea.report import ReportOutcome, build_synthesis
from crase.idea.request import IdeaRequest
from crase.idea.roles.protocols import IdeaBackends
from crase.idea.selection import select_for_assessment
from crase.idea.shortlist import build_shortlist
from crase.idea.structuring import IdeaStructure
from crase.ingest.provider_http import ProviderClient
from crase.models.chat import ModelRunner
from crase.run_lifecycle import SILENT, RunLifecycle, RunObserver
from crase.settings import ProviderSettings

# The stages in the order they run ('report' only in full_report mode); the Run's timings
# and the HTTP progress use these names.
STAGES = ("structure", "providers", "discovery", "identity", "selection", "assessment",
          "neighbours", "shortlist", "pdf", "expert", "report", "record")


@dataclass
class IdeaPaperResult:
    """One of the final works, with where the audit explains it."""

    rank: int
    paper_id: str
    work_id: str
    title: str
    year: int | None
    authors: list[str]
    venue: str | None
    doi: str | None
    arxiv_id: str | None
    in_corpus: bool
    versions: list[str]
    reason: str
    evidence_source: str
    grade: int | None
    assessment_status: str | None
    routes: list[str]
    pdf_status: str
    shortlist_position: int | None
    # How well the assessment matches the idea (idea.assessment.match_strength), and the
    # idea-paper similarity it rests on; defaults for audits written before them.
    match: str = ""
    similarity: float | None = None


@dataclass
class IdeaResult:
    """JSON-serialisable with `to_dict()`; `audit` is the full audit document."""

    run_id: str
    status: str  # Run.status: 'done' (a valid ranking) or 'failed'
    outcome: str  # done | partial | ranking_failed | failed | cancelled
    mode: str
    idea: str
    papers: list[IdeaPaperResult] = field(default_factory=list)
    ranking: dict[str, Any] = field(default_factory=dict)
    incomplete: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # e.g. a weak match
    counts: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    backends: dict[str, str] = field(default_factory=dict)
    providers: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    report: dict[str, Any] | None = None
    audit_path: str | None = None
    browser_query: str = ""
    audit: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, include_audit: bool = True) -> dict[str, Any]:
        data = asdict(self)
        if not include_audit:
            data.pop("audit")
        return data


@dataclass
class RunState:
    """Everything a run decided so far; the audit is built from it, also after an error."""

    run_id: str
    request: IdeaRequest
    runner: ModelRunner
    structure: IdeaStructure | None = None
    providers: dict[str, ProviderStatus] = field(default_factory=dict)
    registry: IdentityRegistry = field(default_factory=IdentityRegistry)
    routes: list[RouteReport] = field(default_factory=list)
    recall: dict[str, Any] = field(default_factory=dict)
    selected: int = 0
    gate: GateReport | None = None
    shortlist: list[Candidate] = field(default_factory=list)
    expert: ExpertOutcome | None = None
    report: ReportOutcome | None = None
    artifacts_dir: Path | None = None


def run_idea(graph: Graph, backends: IdeaBackends, request: IdeaRequest,
             run_id: str | None = None, observer: RunObserver = SILENT) -> IdeaResult:
    """Run the workflow for one idea and record it (Run node, IDEA_CANDIDATE links, audit
    JSON on the node and under `backends.runs_dir`). Raises on an operational error after
    recording it; a ranking failure is returned, not raised."""
    run_id = run_id or uuid.uuid4().hex[:12]
    state = RunState(run_id, request, backends.new_runner(),
                     registry=IdentityRegistry(excluded=frozenset(request.exclude)),
                     artifacts_dir=(backends.runs_dir / run_id) if backends.runs_dir else None)
    with RunLifecycle.open(graph, run_id, "idea", request.idea,
                           request.model_dump(mode="json"), backends.names(), STAGES,
                           observer) as run:
        try:
            _run_stages(graph, backends, state, run)
        except BaseException as err:
            # What was decided until the error stays on record: candidates and the audit.
            outcome = "cancelled" if isinstance(err, RunCancelled) else "failed"
            _finish(run, backends, state, outcome, f"{type(err).__name__}: {err}")
            raise
        result = _finish(run, backends, state, _outcome(state), None)
    return result


def _run_stages(graph: Graph, backends: IdeaBackends, state: RunState,
                run: RunLifecycle) -> None:
    request, runner = state.request, state.runner
    params = request.params
    with run.stage("structure"):
        structure = backends.structurer.structure(runner, request.idea, params)
        state.structure = structure
    with run.stage("providers"):
        use = params.use_providers if request.providers is None else request.providers
        settings = backends.providers or ProviderSettings()
        state.providers = probe_providers(settings, params.provider_probe_timeout_s,
                                          use and backends.providers is not None)
    client = ProviderClient(settings) if any(s.available for s in state.providers.values()) \
        else None
    try:
        _discover_and_rank(graph, backends, state, run, structure, client)
    finally:
        if client is not None:
            client.close()


def _discover_and_rank(graph: Graph, backends: IdeaBackends, state: RunState,
                       run: RunLifecycle, structure: IdeaStructure,
                       client: ProviderClient | None) -> None:
    request, runner, registry = state.request, state.runner, state.registry
    params, excluded = request.params, request.exclude
    with run.stage("discovery"):
        state.routes.append(search_fulltext(graph, registry, structure.queries,
                                            params.hits_per_query, excluded))
        recall = backends.recaller.recall(runner, request.idea, params.recall_max_papers)
        state.recall = asdict(recall)
        state.routes.append(resolve_recalled(graph, registry, recall, excluded, client,
                                             state.providers))
        state.routes.append(search_provider(
            graph, registry, structure.queries, params.provider_hits_per_query, excluded,
            backends.providers, state.providers["semantic_scholar"]))
        state.routes.append(search_provider(
            graph, registry, structure.queries, params.provider_hits_per_query, excluded,
            backends.providers, state.providers.get(OPENALEX, NO_OPENALEX_KEY),
            route="openalex_search"))
    with run.stage("identity"):
        for work in registry.works:
            apply_eligibility(work, request.year_min, request.year_max)
    with run.stage("selection"):
        selected = select_for_assessment(registry.works, structure.idea_terms(), params)
        state.selected = len(selected)
    progress = run.clock.observer.items_done
    with run.stage("assessment"):
        assess_candidates(backends.assessor, runner, structure, selected, progress)
    with run.stage("neighbours"):
        state.gate = run_gate(graph, registry, structure, backends.neighbour_scorer,
                              backends.assessor, runner, request, backends.providers,
                              state.providers["semantic_scholar"], progress)
    with run.stage("shortlist"):
        state.shortlist = build_shortlist(registry.works, params)
    with run.stage("pdf"):
        arxiv = state.providers["arxiv"].available
        sources = PdfSources(
            pdf_dir=Path(request.pdf_dir) if request.pdf_dir else None,
            arxiv_pdf_url=params.arxiv_pdf_url if arxiv else None,
            artifacts_dir=state.artifacts_dir / "pdf" if state.artifacts_dir else None,
            timeout_s=params.pdf_timeout_s, max_bytes=params.pdf_max_bytes)
        acquire_pdfs(state.shortlist, sources, structure.idea_terms(), params)
    with run.stage("expert"):
        ranks = idea_text_ranks(graph, backends.encoder, structure.idea, request.exclude)
        state.expert = backends.expert.rank(runner, structure,
                                            shortlist_entries(state.shortlist, ranks))
        _apply_ranking(state)
    if request.mode == "full_report":
        with run.stage("report"):
            state.report = _write_report(backends, state, structure)


def _apply_ranking(state: RunState) -> None:
    expert = state.expert
    if expert is None or expert.status != "valid":
        return
    by_id = {c.paper_id: c for c in state.shortlist}
    for item in expert.ranking:
        by_id[item.paper_id].final = FinalRank(item.rank, item.reason, item.evidence_source)


def _write_report(backends: IdeaBackends, state: RunState,
                  structure: IdeaStructure) -> ReportOutcome:
    if state.expert is None or state.expert.status != "valid":
        return ReportOutcome("skipped", backends.reporter.name,
                             failure={"reason": "no valid ranking to report on"})
    synthesis = build_synthesis(structure, state.shortlist, state.expert.ranking,
                                _counts(state), _incomplete(state),
                                [route.to_audit() for route in state.routes])
    outcome = backends.reporter.write(state.runner, structure, synthesis, state.shortlist)
    if outcome.markdown and state.artifacts_dir is not None:
        state.artifacts_dir.mkdir(parents=True, exist_ok=True)
        path = state.artifacts_dir / "report.md"
        path.write_text(outcome.markdown, encoding="utf-8")
        outcome.path = str(path)
    return outcome


# --- outcome, counts and the audit --------------------------------------------------------


def _outcome(state: RunState) -> str:
    if state.expert is None or state.expert.status != "valid":
        return "ranking_failed"
    return "partial" if _incomplete(state) else "done"


def _incomplete(state: RunState) -> list[str]:
    """What a valid ranking had to do without: the run is 'partial' when this is not empty."""
    notes = []
    if providers := _providers_missing(state):
        notes.append(providers)
    for route in state.routes:
        if route.status in ("failed", "partial"):
            notes.append(f"route {route.route} {route.status}: {route.reason}")
    failed = [c.paper_id for c in state.registry.works
              if c.assessment is not None and c.assessment.status == "failed"]
    if failed:
        notes.append(f"{len(failed)} abstract assessments failed: {failed[:10]}")
    missing = [f"{c.paper_id} ({c.pdf.status})" for c in state.shortlist
               if c.pdf is not None and c.pdf.status != "acquired"]
    if missing:
        notes.append(f"{len(missing)} of {min(5, len(state.shortlist))} PDF attempts without "
                     f"text: {missing}")
    if state.structure is not None and state.structure.failures:
        notes.append(f"{len(state.structure.failures)} structuring calls failed (offline "
                     "parts used instead)")
    return notes


def _providers_missing(state: RunState) -> str | None:
    """One note for every provider that did not answer (offline, all of them fail alike)."""
    missing = [s for s in state.providers.values()
               if not s.available and not s.detail.startswith("not probed")]
    if not missing:
        return None
    names = ", ".join(s.name for s in missing)
    details = {s.detail for s in missing}
    reasons = (f" ({details.pop()})" if len(details) == 1 else
               ": " + "; ".join(f"{s.name} {s.detail}" for s in missing))
    return (f"providers not reachable, searched the corpus only: {names}{reasons}; "
            "--no-providers skips them")


def _warnings(state: RunState) -> list[str]:
    """A weak-match warning, judged on the final works, else (none was ranked) on every
    assessed work, else (discovery found nothing to assess) on the empty result."""
    results = _paper_results(state)
    if results:
        warning = weak_match_warning([p.grade for p in results],
                                     [p.similarity for p in results])
    elif assessed := [w.assessment for w in state.registry.works if w.assessment is not None]:
        warning = weak_match_warning([a.score for a in assessed],
                                     [a.task_similarity for a in assessed])
    else:
        # Only once the run got to its ranking: an earlier failure says nothing of the match.
        warning = None if state.expert is None else weak_match_warning([None], [])
    return [warning] if warning else []


def _counts(state: RunState) -> dict[str, Any]:
    works = state.registry.works
    by_route: dict[str, int] = {}
    for work in works:
        for name in work.route_names:
            by_route[name] = by_route.get(name, 0) + 1
    grades: dict[str, int] = {}
    for assessment in (w.assessment for w in works if w.assessment is not None):
        key = str(assessment.score) if assessment.status == "assessed" else assessment.status
        grades[key] = grades.get(key, 0) + 1
    pdf = [c.pdf.status for c in state.shortlist if c.pdf is not None]
    return {
        "queries": len(state.structure.queries) if state.structure else 0,
        "works": len(works),
        "works_in_corpus": sum(1 for w in works if w.in_corpus),
        "works_external": sum(1 for w in works if not w.in_corpus),
        "works_by_route": by_route,
        "merged_versions": sum(len(w.records) - 1 for w in works),
        "identity_conflicts": sum(1 for w in works if w.identity_conflict),
        "ineligible": sum(1 for w in works if not w.eligibility.kept),
        "selected_for_assessment": state.selected,
        "assessed_by_grade": grades,
        "gate_admitted": state.gate.admitted if state.gate else 0,
        "shortlist": len(state.shortlist),
        "shortlist_assessed": sum(1 for c in state.shortlist if c.is_assessed),
        "pdf_attempts": len(pdf),
        "pdf_acquired": pdf.count("acquired"),
        "windows_sent": sum(len(c.windows) for c in state.shortlist),
        "final": sum(1 for c in state.shortlist if c.final is not None),
    }


def _ordered_candidates(works: list[Candidate]) -> list[Candidate]:
    def key(c: Candidate) -> tuple[int, int, float, str]:
        final = c.final.rank if c.final else 10**6
        position = c.shortlist.position if c.shortlist and c.shortlist.kept and \
            c.shortlist.position else 10**6
        return (final, position, -c.signals.get("selection_score", 0.0), c.work_id)
    return sorted(works, key=key)


def _paper_results(state: RunState) -> list[IdeaPaperResult]:
    ranked = sorted((c for c in state.shortlist if c.final is not None),
                    key=lambda c: c.final.rank)  # type: ignore[union-attr]
    results = []
    for c in ranked:
        record, final, a = c.primary, c.final, c.assessment
        assert final is not None
        results.append(IdeaPaperResult(
            rank=final.rank, paper_id=c.paper_id, work_id=c.work_id, title=record.title,
            year=record.year, authors=record.authors, venue=record.venue, doi=record.doi,
            arxiv_id=record.arxiv_id, in_corpus=c.in_corpus,
            versions=[r.id or r.doi or r.arxiv_id or r.title for r in c.records],
            reason=final.reason, evidence_source=final.evidence_source,
            grade=a.score if a else None, assessment_status=a.status if a else None,
            routes=c.route_names, pdf_status=c.pdf.status if c.pdf else "not_attempted",
            shortlist_position=c.shortlist.position if c.shortlist else None,
            match=match_strength(a.score if a else None, a.task_similarity if a else None),
            similarity=a.task_similarity if a else None))
    return results


def build_audit(state: RunState, backends: IdeaBackends, timings: dict[str, float],
                outcome: str, error: str | None) -> dict[str, Any]:
    structure = state.structure
    candidates = _ordered_candidates(state.registry.works)
    return {
        "run_id": state.run_id, "kind": "idea", "outcome": outcome, "error": error,
        "mode": state.request.mode, "idea": state.request.idea,
        "request": state.request.model_dump(mode="json"),
        "backends": backends.names(),
        "providers": {name: s.to_audit() for name, s in state.providers.items()},
        "structure": structure.to_audit() if structure else None,
        "queries": structure.queries if structure else [],
        "routes": [route.to_audit() for route in state.routes],
        "recall": state.recall,
        "identity_log": state.registry.log,
        "neighbour_gate": state.gate.to_audit() if state.gate else None,
        "shortlist": [c.paper_id for c in state.shortlist],
        "pdf_attempts": [{"paper_id": c.paper_id, **asdict(c.pdf)}
                         for c in state.shortlist if c.pdf is not None],
        "expert": state.expert.to_audit() if state.expert else None,
        "final_ranking": [asdict(paper) for paper in _paper_results(state)],
        "report": state.report.to_audit() if state.report else None,
        "incomplete": _incomplete(state),
        "warnings": _warnings(state),
        "counts": _counts(state),
        "timings": dict(timings),
        "usage": state.runner.ledger.to_dict(),
        "candidates": [c.to_audit() for c in candidates],
        "graph": {"run": state.run_id, "relationship": "IDEA_CANDIDATE",
                  "browser_query": browser_query(state.run_id)},
    }


def _finish(run: RunLifecycle, backends: IdeaBackends, state: RunState, outcome: str,
            error: str | None) -> IdeaResult:
    """Record the candidates, results and audit, and say what the Run is closed with."""
    with run.stage("record", cancellable=False):
        record_candidates(run.recorder, state.registry.works)
        record_results(run.recorder, [c for c in state.shortlist if c.final is not None])
    audit = build_audit(state, backends, run.timings, outcome, error)
    if outcome == "ranking_failed" and error is None and state.expert is not None:
        failure = state.expert.failure or {}
        # Returned, not raised (the module's docstring): words, not an error class's name.
        error = (f"the expert ranking failed: {failure.get('kind')}: "
                 f"{failure.get('detail')}")[:2000]
    status = "done" if outcome in ("done", "partial") else \
        "cancelled" if outcome == "cancelled" else "failed"
    path = write_audit_file(backends.runs_dir, state.run_id, audit) \
        if backends.runs_dir else None
    store_audit(run.recorder, audit, path, outcome)
    run.status, run.error = status, error
    run.plan, run.counts = audit["queries"], audit["counts"]
    run.usage = lambda: audit["usage"]
    return IdeaResult(
        run_id=state.run_id, status=status, outcome=outcome, mode=state.request.mode,
        idea=state.request.idea, papers=_paper_results(state),
        ranking=audit["expert"] or {}, incomplete=audit["incomplete"],
        warnings=audit["warnings"], counts=audit["counts"],
        timings=audit["timings"], backends=audit["backends"], providers=audit["providers"],
        usage=audit["usage"], report=audit["report"], audit_path=str(path) if path else None,
        browser_query=browser_query(state.run_id), audit=audit)
