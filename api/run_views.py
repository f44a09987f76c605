"""What the API shows of a run: its state (live from the registry, recorded from the Run
node), its results with evidence, and its evidence graph as nodes and edges.

The graph is the record; the registry adds what only this server knows while the run
lives (queued, the stage it is in, per-stage progress) and what a crash, or a database
that went away, left unrecorded.

The evidence graph's Delta and prune verdicts come from the rules in crase.scoring.delta, the
ones the search itself applied, so the view says what the run did.
"""

import json
from typing import TYPE_CHECKING, Any

from crase.errors import DatabaseError, InvalidRequest, RunNotFinished, RunNotFound
from crase.graph import Graph
from crase.ingest.records import repair_authors
from crase.paper_links import paper_links
from crase.run_lifecycle import FINISHED, WITH_RESULTS
from crase.scoring.delta import (
    RETAINED,
    EdgeVerdict,
    judge_delta,
    stored_coverage_affinity,
)

if TYPE_CHECKING:  # the registry brings both pipelines, which reading a run needs not
    from crase.api.runs import TrackedRun

# What an edge of a uniform run is: the walk weighed it 1, no claims were compared on it.
UNWEIGHTED_EDGE = "unweighted citation edge"
DELTA_EDGE = "citation edge weighed by its Delta"
# An influential run weighed its edges by the publisher's mark, not by claims.
INFLUENTIAL_EDGES = "citation edge weighed by the publisher's influential mark"
MARKED_EDGE = "citation marked influential, weighed {weight:g}"
UNMARKED_EDGE = "citation not marked influential, weighed 1"
EDGE_WEIGHTS = {"coverage": DELTA_EDGE, "uniform": UNWEIGHTED_EDGE,
                "influential": INFLUENTIAL_EDGES}
# Claims and entailment on an edge belong to the runs that computed them; a uniform run
# shows none of them, even where another run stored some.
SCORING_FIELDS = ("citing_claim", "cited_claim", "support")
# Prior and derivative works: how many of each, and the fewest returned papers that must
# cite one (or that one must cite): a paper tied to a single result is no shared ground.
RELATED_LIMIT = 10
RELATED_MIN_COUNT = 2
RANKS_NAMED = 10


def parse_json(text: str | None, default: Any) -> Any:
    return json.loads(text) if text else default


def run_weighting(record: dict[str, Any]) -> str:
    """`coverage`, `uniform` or `influential`, as the run recorded it. Runs recorded
    before the uniform walk existed have no such parameter: they weighed every edge by
    Delta."""
    return str(record.get("params", {}).get("params", {}).get("weighting", "coverage"))


def weighed_evidence(evidence: dict[str, Any] | None, weighting: str,
                     ) -> dict[str, Any] | None:
    """A result's evidence as the run's weighting allows it to be read: every edge says
    what it was (`edge`); an edge of a run without Delta carries no Delta (the walk stored
    its weight there, and 1.0 reads as "fully grounded") and no claim pair, and an edge of
    an influential run its `weight`."""
    if not evidence:
        return evidence
    shown = dict(evidence)
    for name in ("path", "strongest_edges"):
        shown[name] = [weighed_edge(edge, weighting) for edge in evidence.get(name) or []]
    return shown


def weighed_edge(edge: dict[str, Any], weighting: str) -> dict[str, Any]:
    if weighting == "coverage":
        return {**edge, "edge": DELTA_EDGE}
    kept = {k: v for k, v in edge.items() if k not in SCORING_FIELDS}
    if weighting != "influential":
        return {**kept, "delta": None, "edge": UNWEIGHTED_EDGE}
    weight = float(edge.get("delta") or 1.0)
    wording = MARKED_EDGE.format(weight=weight) if edge.get("influential") else UNMARKED_EDGE
    return {**kept, "delta": None, "weight": weight, "edge": wording}


def read_run_record(graph: Graph, run_id: str) -> dict[str, Any] | None:
    rows = graph.read("read_run", id=run_id)
    if not rows:
        return None
    row = rows[0]
    return {
        "id": row["id"], "kind": row["kind"], "query": row["query"], "status": row["status"],
        "started": row["started"], "finished": row["finished"], "error": row["error"],
        "params": parse_json(row["params"], {}), "backends": parse_json(row["backends"], {}),
        "plan": row["plan"] or [], "counts": parse_json(row["counts"], {}),
        "timings": parse_json(row["timings"], {}), "usage": parse_json(row["usage"], {}),
    }


def list_runs(graph: Graph, offset: int = 0, limit: int = 20, kind: str | None = None,
              ) -> dict[str, Any]:
    """One page of runs, newest first: what `GET /runs`, `crase runs` and the runs page show."""
    total = graph.read("count_runs", kind=kind)[0]["total"]
    rows = graph.read("list_runs", kind=kind, skip=offset, limit=limit)
    return {"total": total, "offset": offset, "limit": limit, "runs": rows}


def recorded_progress(record: dict[str, Any]) -> dict[str, Any]:
    """Progress of a run this server does not track, from the timings it recorded."""
    timings = record["timings"]
    # A finished run's timings name every stage it ran; others show what was still to come.
    known = () if record["status"] in WITH_RESULTS else pipeline_stages(record["kind"])
    stages = {name: {"state": "done" if name in timings else "pending", "done": None,
                     "total": None} for name in (*known, *timings)}
    return {"stage": None, "stages": stages}


def pipeline_stages(kind: str) -> tuple[str, ...]:
    """The stages a run of this kind goes through ((): a kind without a pipeline)."""
    # Imported here: the stage lists are the pipelines' own, and showing a finished run
    # (`crase show`) should not load both pipelines for them.
    from crase.api.runs import STAGES

    return tuple(STAGES.get(kind, ()))


def tracked_record(tracked: "TrackedRun") -> dict[str, Any]:
    """A run as this server tracks it, for a run without a readable Run node (queued, or
    the database away)."""
    return {"id": tracked.id, "kind": tracked.kind, "query": tracked.query,
            "status": tracked.status, "started": None, "finished": None,
            "error": tracked.error, "params": tracked.params, "backends": {},
            "plan": [], "counts": {}, "timings": {}, "usage": {}}


def describe_run(graph: Graph, run_id: str, tracked: "TrackedRun | None") -> dict[str, Any]:
    """The whole run: state, parameters, plan, counts, timings, seeds and results."""
    # The worker's word is taken before the node is read: a run that closes in between is
    # then shown as still running, never as done with the node's state from before its
    # close (no timings, no counts).
    status, error = (tracked.status, tracked.error) if tracked is not None else ("", None)
    try:
        record = read_run_record(graph, run_id)
    except DatabaseError:
        # With the database away, a tracked run that did not finish well is told from the
        # registry alone (its failure is the news); a done run's results are in the graph.
        if tracked is None or tracked.status in WITH_RESULTS:
            raise
        return {**live_view(tracked_record(tracked), tracked, status, error), "outcome": None,
                "seeds": [], "results": [], "prior_works": [], "derivative_works": []}
    if record is None and tracked is None:
        raise RunNotFound(f"no run with id {run_id!r}")
    if tracked is not None:
        view = live_view(record or tracked_record(tracked), tracked, status, error)
    else:
        assert record is not None
        view = {**record, "submitted": record["started"],
                "progress": recorded_progress(record), "tracked": False}
    view["outcome"] = read_outcome(graph, run_id) if record is not None else None
    view["seeds"] = graph.read("read_run_seeds", run_id=run_id)
    view["given_papers"] = given_papers(view)
    view["results"] = read_results(graph, run_id, run_weighting(record or view))
    with_lists = view["kind"] == "search" and view["status"] in WITH_RESULTS
    view.update(related_works(graph, run_id, len(view["results"])) if with_lists else
                {"prior_works": [], "derivative_works": []})
    return view


def given_papers(view: dict[str, Any]) -> list[dict[str, Any]]:
    """The papers a search started from (its request's given_papers, each once, in order),
    with their titles where the run has seeded them."""
    params = view.get("params", {})
    # Runs made before the field was renamed hold it as seed_ids.
    ids = params.get("given_papers") or params.get("seed_ids") or []
    if not isinstance(ids, list):  # a summary (past STORED_ITEMS): the seeds name them
        ids = [seed["paper_id"] for seed in view.get("seeds", [])]
    titles = {seed["paper_id"]: seed["title"] for seed in view.get("seeds", [])}
    return [{"id": paper, "title": titles.get(paper)} for paper in dict.fromkeys(ids)
            if isinstance(paper, str)]


def read_outcome(graph: Graph, run_id: str) -> str | None:
    """An idea run's outcome as the idea pipeline records it on the Run (`done`, `partial`,
    `ranking_failed`, `failed`, `cancelled`); None for a search, or before it is known."""
    rows = graph.read("read_run_outcome", id=run_id)
    return rows[0]["outcome"] if rows else None


def live_view(record: dict[str, Any], tracked: "TrackedRun", status: str,
              error: str | None) -> dict[str, Any]:
    # The worker's word (its status and error, as read before the node) is newer than the
    # node's while the run lives, and it is the only record of a failure the pipeline could
    # not write down.
    return {**record, "status": status, "error": record["error"] or error,
            "submitted": tracked.submitted, "progress": tracked.progress_json(),
            "tracked": True}


def read_results(graph: Graph, run_id: str, weighting: str) -> list[dict[str, Any]]:
    """The run's papers, best first, each with its evidence worded by the run's weighting
    (`weighed_evidence`)."""
    return [{**shown_paper(row),
             "evidence": weighed_evidence(parse_json(row["evidence"], None), weighting)}
            for row in graph.read("read_run_results", run_id=run_id)]


def related_works(graph: Graph, run_id: str, returned: int,
                  limit: int = RELATED_LIMIT) -> dict[str, list[dict[str, Any]]]:
    """Connected Papers' two lists over the run's evidence graph: `prior_works`, the papers
    the returned papers cite most (the foundations they share, returned or not), and
    `derivative_works`, the papers that cite most of the returned papers (later work on
    the whole set); each paper with its count, the ranks behind it, and why in words."""
    lists = {}
    for name, query, verb in (("prior_works", "read_run_prior_works", "cited by"),
                              ("derivative_works", "read_run_derivative_works", "cites")):
        rows = graph.read(query, run_id=run_id, min_count=RELATED_MIN_COUNT, limit=limit)
        lists[name] = [related_work(row, returned, verb) for row in rows]
    return lists


def related_work(row: dict[str, Any], returned: int, verb: str) -> dict[str, Any]:
    ranks = sorted(row["by_ranks"])
    shown = ", ".join(str(rank) for rank in ranks[:RANKS_NAMED])
    more = f" and {len(ranks) - RANKS_NAMED} more" if len(ranks) > RANKS_NAMED else ""
    why = f"{verb} {row['count']} of the {returned} returned papers (ranks {shown}{more})"
    if row["rank"] is not None:
        why += f"; itself returned at rank {row['rank']}"
    paper = {k: v for k, v in row.items() if k != "by_ranks"}
    return {**shown_paper(paper), "by_ranks": ranks, "of": returned, "why": why}


def shown_paper(row: dict[str, Any]) -> dict[str, Any]:
    """A paper row as every view shows it: its links, and its authors as the loader repairs
    them (a graph loaded before that repair still holds "and Jorge Zanelli")."""
    return {**row, "authors": shown_authors(row.get("authors")), "links": paper_links(row)}


def shown_authors(authors: list[str] | None) -> list[str]:
    repaired = repair_authors(authors or [])
    # The loader's repair is being reworked to always succeed (no `problem` any more); a
    # list it could not repair is shown as the corpus has it.
    problem = getattr(repaired, "problem", None)
    return repaired.names if problem is None else list(authors or [])


def require_finished(graph: Graph, run_id: str, tracked: "TrackedRun | None",
                     ) -> dict[str, Any]:
    """The Run record of a run that finished well; else RunNotFound or RunNotFinished."""
    record = read_run_record(graph, run_id)
    if record is None:
        if tracked is None:
            raise RunNotFound(f"no run with id {run_id!r}")
        raise RunNotFinished(f"run {run_id} is {tracked.status}; try again when it is done")
    status = tracked.status if tracked is not None and tracked.status in FINISHED else (
        record["status"])
    if status not in WITH_RESULTS:
        detail = f" ({record['error']})" if record["error"] else ""
        raise RunNotFinished(f"run {run_id} is {status}{detail}; only a finished run has "
                             "results and an evidence graph")
    return record


# The order of each edge's values in `read_run_graph_edges`'s one row.
EDGE_FIELDS = ("citing", "cited", "delta", "theta", "scorer", "scorer_version", "matrix",
               "rows", "cols", "influential")


def evidence_graph(graph: Graph, run_id: str, tracked: "TrackedRun | None") -> dict[str, Any]:
    """Every paper the run considered and the citation edges among them, each edge with
    Delta at the run's theta and whether it was retained (or why it was pruned)."""
    record = require_finished(graph, run_id, tracked)
    if record["kind"] != "search":
        raise InvalidRequest(f"run {run_id} is an {record['kind']} run; the evidence graph "
                             f"belongs to searches (an idea run's record: /ideas/{run_id}/audit)")
    params = record["params"].get("params", {})
    theta, tau = float(params.get("theta", 0.0)), float(params.get("tau", 0.0))
    scorer, version = split_backend(record["backends"].get("entailment", ""))
    nodes = graph.read("read_run_graph_nodes", run_id=run_id)
    kept = {node["id"] for node in nodes if node["kept"]}
    [listed] = graph.read("read_run_graph_edges", run_id=run_id, theta=theta,
                          one_hop=params.get("hops") == "1")
    rows = [dict(zip(EDGE_FIELDS, edge, strict=True)) for edge in listed["edges"]]
    weighting = str(params.get("weighting", "coverage"))
    edges = [judge_edge(row, theta, tau, scorer, version, kept, weighting == "coverage")
             for row in rows]
    return {"run_id": run_id, "query": record["query"], "theta": theta, "tau": tau,
            "weighting": weighting, "edge_weight": EDGE_WEIGHTS.get(weighting, DELTA_EDGE),
            "influential_weight": float(params.get("influential_weight", 1.0))
            if weighting == "influential" else None,
            "scorer": f"{scorer}@{version}" if scorer else None,
            "counts": {"nodes": len(nodes), "nodes_kept": len(kept), "edges": len(edges),
                       "edges_retained": sum(1 for e in edges if e["retained"])},
            "nodes": nodes, "edges": edges}


def weighed_graph(view: dict[str, Any]) -> dict[str, Any]:
    """`evidence_graph` as a reader sees it: a run without Delta scored nothing, so it
    names no scorer and no edge shows a Delta, even one another run stored (the tools that
    judge stored scores, such as edge validation, read `evidence_graph` itself); the
    publisher's mark is shown where the run weighed by it."""
    if view["weighting"] == "coverage":
        return {**view, "edges": [{**e, "influential": None} for e in view["edges"]]}
    marks = view["weighting"] == "influential"
    return {**view, "scorer": None,
            "edges": [{**e, "delta": None, "influential": e["influential"] if marks else None}
                      for e in view["edges"]]}


def split_backend(name: str) -> tuple[str, str]:
    scorer, _, version = name.rpartition("@")
    return (scorer, version) if scorer else (name, "")


def judge_edge(row: dict[str, Any], theta: float, tau: float, scorer: str, version: str,
               kept: set[str], pruned_by_delta: bool = True) -> dict[str, Any]:
    """One edge of the view: Delta at the run's theta and the prune rule's verdict on it;
    retained only when both its papers were kept by the run as well. The uniform walk
    (`pruned_by_delta` False) prunes no edge: it walked every edge among its papers."""
    foreign = foreign_score(row, scorer, version)
    delta = None if foreign or row["scorer"] is None else stored_delta_at(row, theta)
    if not pruned_by_delta:
        verdict = EdgeVerdict(True, RETAINED)
    else:
        verdict = EdgeVerdict(False, foreign) if foreign else judge_delta(delta, tau)
    retained = verdict.kept and row["citing"] in kept and row["cited"] in kept
    return {"citing": row["citing"], "cited": row["cited"],
            "delta": None if delta is None else round(delta, 6),
            "retained": retained, "reason": verdict.reason,
            "influential": row.get("influential")}


def foreign_score(row: dict[str, Any], scorer: str, version: str) -> str | None:
    """Why the edge's stored score does not count for the run: another scorer (or version)
    wrote it. None when the run's scorer did, or when nothing did."""
    if row["scorer"] is None or (row["scorer"], row["scorer_version"]) == (scorer, version):
        return None
    return f"scored by {row['scorer']}@{row['scorer_version']}, not the run's scorer"


def stored_delta_at(row: dict[str, Any], theta: float) -> float:
    """Delta at the run's theta: as stored when scored at that theta (the query then sends no
    matrix), else from the stored matrix."""
    if row["matrix"] is None:
        return float(row["delta"])
    return stored_coverage_affinity(row["matrix"], row["rows"], row["cols"], theta)
