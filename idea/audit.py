"""The audit of an idea run: in the graph and as one JSON document.

Graph: a `Run {kind: 'idea'}` node (opened and closed by the shared run lifecycle,
crase/run_lifecycle.py), an `IDEA_CANDIDATE` relationship to every corpus Paper that was
a candidate (routes, assessment, gate and budget reasons, shortlist flag, PDF outcome,
final rank and reason), `RETURNED {rank, evidence}` to the final five (as for searches),
and the whole audit JSON on `Run.audit`. Candidates from providers that are not in the
corpus are in the JSON only (no Paper nodes are created for them).

File: `<var_dir>/runs/<run_id>/audit.json`, the same document; PDF text and downloads of
the run sit next to it.

Run.status is 'done' when a valid ranking exists and 'failed' otherwise (a ranking
failure, or an error); Run.outcome says 'done', 'partial' (a valid ranking, but some
evidence was missing or a step failed: the audit's `incomplete` lists what),
'ranking_failed', 'failed' or 'cancelled'.
"""

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from crase.errors import RunNotFound
from crase.graph import Graph
from crase.idea.candidates import Candidate
from crase.run_lifecycle import RunRecorder, to_json
from crase.run_lifecycle import browser_query as shared_browser_query

LINK_BATCH = 2000


def browser_query(run_id: str) -> str:
    """The run and its final works; every candidate with its decisions is one click away
    (`-[x:IDEA_CANDIDATE]->`, see docs/neo4j-browser.md)."""
    return f"{shared_browser_query(run_id, 'RETURNED')} ORDER BY x.rank"


def record_candidates(recorder: RunRecorder, candidates: list[Candidate]) -> int:
    rows = [row for candidate in candidates for row in candidate_rows(candidate)]
    recorder.link("link_idea_candidates", rows, batch=LINK_BATCH)
    return len(rows)


def record_results(recorder: RunRecorder, ranked: list[Candidate]) -> None:
    rows = [{"paper_id": c.paper_id, "rank": c.final.rank, "score": None,
             "evidence": to_json({"reason": c.final.reason,
                                  "evidence_source": c.final.evidence_source,
                                  "work_id": c.work_id})}
            for c in ranked if c.final is not None and c.in_corpus]
    recorder.link("link_run_results", rows)


def store_audit(recorder: RunRecorder, audit: dict[str, Any], path: Path | None,
                outcome: str) -> None:
    recorder.graph.write("set_idea_run_audit", id=recorder.run_id, audit=to_json(audit),
                         audit_path=str(path) if path else None, outcome=outcome)


def candidate_rows(candidate: Candidate) -> list[dict[str, Any]]:
    """One row per corpus version of the work; the work's record is on each."""
    a, s, g, sl, pdf, final = (candidate.assessment, candidate.selection, candidate.gate,
                               candidate.shortlist, candidate.pdf, candidate.final)
    shared = {
        "work_id": candidate.work_id,
        "routes": to_json([{"route": hit.route, **hit.detail} for hit in candidate.routes]),
        "route_names": candidate.route_names,
        "eligible": candidate.eligibility.kept,
        "eligibility_reason": candidate.eligibility.reason,
        "selected": s.kept if s else False,
        "selection_reason": s.reason if s else "not considered",
        "assessment_status": a.status if a else "not_selected",
        "assessment_score": a.score if a else None,
        "assessment": to_json(asdict(a)) if a else None,
        "gate_kept": g.kept if g else None,
        "gate_reason": g.reason if g else None,
        "shortlisted": sl.kept if sl else False,
        "shortlist_position": sl.position if sl and sl.kept else None,
        "shortlist_reason": sl.reason if sl else None,
        "pdf_status": pdf.status if pdf else "not_attempted",
        "pdf": to_json(asdict(pdf)) if pdf else None,
        "final_rank": final.rank if final else None,
        "final_reason": final.reason if final else None,
        "evidence_source": final.evidence_source if final else None,
        "identity_notes": list(candidate.identity_notes),
    }
    return [{"paper_id": pid, "primary": pid == candidate.paper_id, **shared}
            for pid in candidate.corpus_ids]


def write_audit_file(runs_dir: Path, run_id: str, audit: dict[str, Any]) -> Path:
    folder = runs_dir / run_id
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "audit.json"
    path.write_text(json.dumps(audit, indent=1, sort_keys=True, default=str,
                               ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def export_idea_audit(graph: Graph, run_id: str) -> dict[str, Any]:
    """The stored audit of an idea run, as JSON-ready data (for the API and the CLI)."""
    rows = graph.read("read_idea_run_audit", id=run_id)
    if not rows:
        raise RunNotFound(f"no idea run {run_id!r}")
    row = rows[0]
    if row["audit"] is None:
        return {"run_id": run_id, "kind": "idea", "status": row["status"],
                "outcome": row["outcome"], "audit": None,
                "note": "the run has not stored its audit (still running, or it failed "
                        "before the record stage)"}
    audit: dict[str, Any] = json.loads(row["audit"])
    return audit

