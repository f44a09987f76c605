"""The semantic citation-neighbour gate.

Up to 5 seeds (the best positively assessed works) bring their references and citing
papers. Neighbours that are new to assessment are graded 0-3 (or null) in batches of up
to 20 against the whole idea. Then, per the published policy:

- a valid 0 is excluded;
- positives are ordered 3 > 2 > 1 (ties: the seed's order, then the order found) and at
  most 15 are kept per seed;
- unassessed neighbours (no abstract, insufficient evidence, a failed batch) bypass the
  per-seed cap, since missing evidence is not negative evidence;
- at most 50 new candidates are admitted overall: positives first (3 > 2 > 1), then the
  unassessed, each in seed order.

Admission only puts a work into the pool; it does not reach the shortlist by being a
neighbour. Every neighbour gets a Decision with its reason.
"""

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from crase.errors import ProviderError
from crase.graph import Graph
from crase.idea.assessment import Progress, assess_candidates, assessment_key
from crase.idea.candidates import Candidate, Decision, NeighbourVerdict, RouteHit
from crase.idea.discovery import add_provider_record
from crase.idea.identity import IdentityRegistry, apply_eligibility
from crase.idea.providers import (
    ProviderStatus,
    describe_error,
    s2_reference,
    semantic_scholar_neighbours,
)
from crase.idea.request import IdeaRequest
from crase.idea.roles.protocols import Assessor, NeighbourScorer
from crase.idea.structuring import IdeaStructure
from crase.ingest.records import PaperRecord
from crase.models.chat import ModelRunner
from crase.settings import ProviderSettings


@dataclass(frozen=True)
class GateEntry:
    """One neighbour work in front of the gate."""

    work_id: str
    seed_index: int  # position of the (first) seed that brought it
    order: int  # position in the order the neighbours were found
    verdict: NeighbourVerdict


def choose_seeds(candidates: Sequence[Candidate], max_seeds: int) -> list[Candidate]:
    """The best positively assessed works in the corpus (they have citation edges)."""
    positive = [c for c in candidates
                if c.is_assessed and (c.assessment.score or 0) >= 1  # type: ignore[union-attr]
                and c.in_corpus and c.eligibility.kept and not c.identity_conflict]
    return sorted(positive, key=assessment_key)[:max_seeds]


def admit_neighbours(
    entries: Sequence[GateEntry], per_seed: int, budget: int
) -> dict[str, Decision]:
    """The gate's verdict for every entry (pure: the exact counts are testable)."""
    decisions: dict[str, Decision] = {}
    positives: list[GateEntry] = []
    unassessed: list[GateEntry] = []
    for entry in entries:
        verdict = entry.verdict
        if verdict.status == "graded" and verdict.score == 0:
            decisions[entry.work_id] = Decision(False, "neighbour score 0: clearly unrelated",
                                                score=0.0)
        elif verdict.status == "graded":
            positives.append(entry)
        else:
            unassessed.append(entry)
    kept_positive = _apply_per_seed_cap(positives, per_seed, decisions)
    ordered = sorted(kept_positive, key=lambda e: (-(e.verdict.score or 0), e.seed_index, e.order))
    ordered += sorted(unassessed, key=lambda e: (e.seed_index, e.order))
    for position, entry in enumerate(ordered, start=1):
        score = float(entry.verdict.score) if entry.verdict.score is not None else None
        if position <= budget:
            kind = (f"score {entry.verdict.score}" if entry.verdict.status == "graded"
                    else f"unassessed ({entry.verdict.status}), bypasses the per-seed cap")
            decisions[entry.work_id] = Decision(
                True, f"admitted as new candidate {position} of at most {budget}: {kind}",
                position=position, score=score)
        else:
            decisions[entry.work_id] = Decision(
                False, f"global neighbour budget of {budget} new candidates reached "
                       f"(position {position})", position=position, score=score)
    return decisions


def _apply_per_seed_cap(
    positives: list[GateEntry], per_seed: int, decisions: dict[str, Decision]
) -> list[GateEntry]:
    kept: list[GateEntry] = []
    by_seed: dict[int, list[GateEntry]] = {}
    for entry in positives:
        by_seed.setdefault(entry.seed_index, []).append(entry)
    for seed_index in sorted(by_seed):
        ranked = sorted(by_seed[seed_index], key=lambda e: (-(e.verdict.score or 0), e.order))
        kept.extend(ranked[:per_seed])
        for place, entry in enumerate(ranked[per_seed:], start=per_seed + 1):
            decisions[entry.work_id] = Decision(
                False, f"per-seed cap of {per_seed} positives reached for seed "
                       f"{seed_index + 1} (place {place}, score {entry.verdict.score})",
                position=place, score=float(entry.verdict.score or 0))
    return kept


@dataclass
class GateReport:
    status: Literal["ran", "skipped"]
    reason: str = ""
    seeds: list[dict[str, Any]] = field(default_factory=list)
    neighbours_read: int = 0  # rows from the graph (a work reached twice counts twice)
    cut_by_read_limit: int = 0
    works: int = 0  # distinct neighbour works
    seeds_among_neighbours: int = 0
    not_new: int = 0  # already selected for assessment before the gate
    ineligible: int = 0
    in_front_of_gate: int = 0
    graded: int = 0
    unassessed: int = 0
    excluded_zero: int = 0
    excluded_per_seed_cap: int = 0
    excluded_global_budget: int = 0
    admitted: int = 0
    provider: dict[str, Any] = field(default_factory=dict)

    def to_audit(self) -> dict[str, Any]:
        return asdict(self)


def run_gate(
    graph: Graph,
    registry: IdentityRegistry,
    structure: IdeaStructure,
    scorer: NeighbourScorer,
    assessor: Assessor,
    runner: ModelRunner,
    request: IdeaRequest,
    providers: ProviderSettings | None,
    s2_status: ProviderStatus,
    progress: Progress | None = None,
) -> GateReport:
    """Seeds -> neighbours (graph, and Semantic Scholar when it answers) -> identity ->
    grades -> admission; admitted works are assessed like the rest of the pool."""
    params = request.params
    seeds = choose_seeds(registry.works, params.neighbour_seeds)
    report = GateReport("ran", seeds=[
        {"seed": number, "paper_id": s.paper_id, "title": s.primary.title,
         "grade": s.assessment.score if s.assessment else None}
        for number, s in enumerate(seeds, start=1)])
    if not seeds:
        report.status = "skipped"
        report.reason = "no positively assessed work in the corpus to seed the gate"
        report.provider = {"status": "skipped", "reason": report.reason}
        return report
    first_seed: dict[int, int] = {}
    order: list[Candidate] = []
    _read_graph_neighbours(graph, registry, seeds, request, report, first_seed, order)
    report.provider = _read_provider_neighbours(graph, registry, seeds, request, providers,
                                                s2_status, first_seed, order)
    entries = _gate_entries(seeds, order, first_seed, request, report)
    verdicts = grade_neighbours(scorer, runner, structure, [c for c, _ in entries],
                                params.neighbour_batch, progress)
    gate_entries = [GateEntry(c.work_id, seed_index, position, verdict)
                    for position, ((c, seed_index), verdict)
                    in enumerate(zip(entries, verdicts, strict=True))]
    decisions = admit_neighbours(gate_entries, params.neighbour_per_seed,
                                 params.neighbour_budget)
    admitted = _apply_decisions([c for c, _ in entries], gate_entries, decisions, report)
    assess_candidates(assessor, runner, structure, admitted, progress, "neighbours assessed")
    return report


def grade_neighbours(scorer: NeighbourScorer, runner: ModelRunner, structure: IdeaStructure,
                     candidates: list[Candidate], batch_size: int,
                     progress: Progress | None) -> list[NeighbourVerdict]:
    """The scorer's verdicts, a few of its batches at a time so that the count moves."""
    verdicts: list[NeighbourVerdict] = []
    step = max(batch_size, 1) * 8  # the default endpoint concurrency
    for start in range(0, len(candidates), step):
        if progress is not None:
            progress("neighbours", start, len(candidates))
        verdicts += scorer.score(runner, structure,
                                 [c.primary for c in candidates[start:start + step]], batch_size)
    if progress is not None and candidates:
        progress("neighbours", len(candidates), len(candidates))
    return verdicts


def _read_graph_neighbours(graph: Graph, registry: IdentityRegistry, seeds: list[Candidate],
                           request: IdeaRequest, report: GateReport,
                           first_seed: dict[int, int], order: list[Candidate]) -> None:
    # Every corpus version of a seed brings its own edges; rows say which version.
    versions = [(number, pid) for number, seed in enumerate(seeds) for pid in seed.corpus_ids]
    rows = graph.read("read_citation_neighbours", seed_ids=[pid for _, pid in versions],
                      excluded=list(request.exclude), limit=request.params.neighbour_read_limit)
    available: dict[tuple[int, str], int] = {}
    kept: dict[tuple[int, str], int] = {}
    for row in rows:
        seed_index = versions[row["seed_index"]][0]
        key = (row["seed_index"], row["direction"])
        available[key] = row["available"]
        kept[key] = kept.get(key, 0) + 1
        hit = RouteHit("citation_neighbour", {"seed": seed_index + 1, "seed_id": row["seed_id"],
                                              "direction": row["direction"]})
        work = registry.add(PaperRecord.from_row(row), hit)
        report.neighbours_read += 1
        if work is not None and id(work) not in first_seed:
            first_seed[id(work)] = seed_index
            order.append(work)
    report.cut_by_read_limit = sum(available[key] - kept[key] for key in available)


def _read_provider_neighbours(graph: Graph, registry: IdentityRegistry, seeds: list[Candidate],
                              request: IdeaRequest, settings: ProviderSettings | None,
                              status: ProviderStatus, first_seed: dict[int, int],
                              order: list[Candidate]) -> dict[str, Any]:
    if settings is None or not status.available:
        return {"status": "skipped", "reason": f"semantic_scholar {status.detail}"}
    problems: list[str] = []
    asked = [(index, seed, s2_reference(seed.primary)) for index, seed in enumerate(seeds)]
    for index, _, reference in asked:
        if reference is None:
            problems.append(f"seed {index + 1}: no identifier Semantic Scholar knows")
    known = [(index, seed, ref) for index, seed, ref in asked if ref is not None]
    outcomes = semantic_scholar_neighbours(settings, [ref for _, _, ref in known],
                                           request.params.neighbour_read_limit)
    found = 0
    for (seed_index, seed, _), outcome in zip(known, outcomes, strict=True):
        if isinstance(outcome, ProviderError):
            problems.append(f"seed {seed_index + 1}: {describe_error(outcome)}")
            continue
        for direction, record in outcome:
            hit = RouteHit("semantic_scholar_neighbour", {
                "seed": seed_index + 1, "seed_id": seed.paper_id, "direction": direction,
                "s2_id": record.s2_id})
            work = add_provider_record(graph, registry, record, request.exclude, hit)
            found += 1
            if work is not None and id(work) not in first_seed:
                first_seed[id(work)] = seed_index
                order.append(work)
    return {"status": "ran" if not problems else "partial", "records": found,
            "problems": problems}


def _gate_entries(seeds: list[Candidate], order: list[Candidate], first_seed: dict[int, int],
                  request: IdeaRequest, report: GateReport) -> list[tuple[Candidate, int]]:
    """The neighbour works that are new to assessment and eligible, in the order found."""
    seed_ids = {id(seed) for seed in seeds}
    report.works = len(order)
    entries = []
    for work in order:
        if id(work) in seed_ids:
            report.seeds_among_neighbours += 1
            continue
        if work.selection is not None and work.selection.kept:
            report.not_new += 1
            work.gate = Decision(True, "not new: selected for assessment before the gate")
            continue
        apply_eligibility(work, request.year_min, request.year_max)
        if not work.eligibility.kept or work.identity_conflict:
            report.ineligible += 1
            reason = work.eligibility.reason if not work.eligibility.kept else \
                "identity conflict"
            work.gate = Decision(False, f"not graded: {reason}")
            work.selection = work.selection or Decision(False, f"not selected: {reason}")
            continue
        entries.append((work, first_seed[id(work)]))
    report.in_front_of_gate = len(entries)
    return entries


def _apply_decisions(works: list[Candidate], entries: list[GateEntry],
                     decisions: dict[str, Decision], report: GateReport) -> list[Candidate]:
    admitted = []
    for work, entry in zip(works, entries, strict=True):
        decision = decisions[entry.work_id]
        decision.extra = {"verdict": asdict(entry.verdict), "seed": entry.seed_index + 1}
        work.gate = decision
        graded = entry.verdict.status == "graded"
        report.graded += int(graded)
        report.unassessed += int(not graded)
        if decision.kept:
            report.admitted += 1
            before = f" (before the gate: {work.selection.reason})" if work.selection else ""
            work.selection = Decision(True, f"admitted by the citation gate{before}",
                                      position=decision.position)
            work.assessment = None  # assessed below, like every selected work
            admitted.append(work)
            continue
        if graded and entry.verdict.score == 0:
            report.excluded_zero += 1
        elif "per-seed cap" in decision.reason:
            report.excluded_per_seed_cap += 1
        else:
            report.excluded_global_budget += 1
        if work.selection is None:
            work.selection = Decision(False, f"not admitted by the citation gate: "
                                             f"{decision.reason}")
    return admitted
