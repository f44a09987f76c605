"""What clicking an edge of the evidence graph shows: Delta at the run's theta, the prune
verdict, the entailment matrix between the two papers' claims and its claim pairs; for a
run without Delta, what the edge was: unweighted (uniform weighting), or weighed by the
publisher's influential mark."""

from typing import Any

from crase.api.run_views import evidence_graph, read_run_record, split_backend, weighed_graph
from crase.api.runs import TrackedRun
from crase.errors import PaperNotFound
from crase.graph import Graph

PAIRS_SHOWN = 5


def edge_details(graph: Graph, run_id: str, tracked: TrackedRun | None, citing: str,
                 cited: str) -> dict[str, Any]:
    view = weighed_graph(evidence_graph(graph, run_id, tracked))
    edge = next((e for e in view["edges"] if (e["citing"], e["cited"]) == (citing, cited)),
                None)
    if edge is None:
        raise PaperNotFound(f"run {run_id} has no edge {citing} -> {cited}; pick an edge "
                            "from its evidence graph")
    titles = {n["id"]: n["title"] for n in view["nodes"]}
    record = read_run_record(graph, run_id) or {}
    # A uniform run compared no claims: another run's matrix is not its evidence.
    backends = record.get("backends", {}) if view["weighting"] == "coverage" else {}
    matrix, citing_claims, cited_claims = read_grounding(graph, backends, citing, cited)
    return {**edge, "run_id": run_id, "theta": view["theta"], "tau": view["tau"],
            "weighting": view["weighting"], "influential_weight": view["influential_weight"],
            "scorer": view["scorer"], "citing_title": titles.get(citing, citing),
            "cited_title": titles.get(cited, cited), "matrix": matrix,
            "citing_claims": citing_claims, "cited_claims": cited_claims,
            "pairs": claim_pairs(matrix, citing_claims, cited_claims, view["theta"])}


def read_grounding(graph: Graph, backends: dict[str, str], citing: str, cited: str,
                   ) -> tuple[list[list[float]] | None, list[str], list[str]]:
    """The run's scorer's matrix for the edge (rows: citing claims) and both claim lists
    of the run's extractor; None and empty lists where the run scored nothing."""
    scorer, version = split_backend(backends.get("entailment", ""))
    extractor = backends.get("claims", "")
    claims = {row["paper_id"]: [c["text"] for c in row["claims"]]
              for row in graph.read("read_claims", ids=[citing, cited], extractor=extractor)}
    rows = graph.read("read_edge_matrices", edges=[[citing, cited]], scorer=scorer,
                      version=version) if scorer else []
    matrix = None
    if rows and rows[0]["matrix"] is not None:
        flat, cols = rows[0]["matrix"], rows[0]["cols"]
        matrix = [flat[i:i + cols] for i in range(0, len(flat), cols)]
    return matrix, claims.get(citing, []), claims.get(cited, [])


def claim_pairs(matrix: list[list[float]] | None, citing_claims: list[str],
                cited_claims: list[str], theta: float) -> list[dict[str, Any]]:
    """The strongest claim pairs, best first; each says whether it clears theta."""
    if not matrix:
        return []
    cells = [(score, i, j) for i, row in enumerate(matrix) for j, score in enumerate(row)
             if i < len(citing_claims) and j < len(cited_claims)]
    cells.sort(key=lambda cell: (-cell[0], cell[1], cell[2]))
    return [{"citing_claim": citing_claims[i], "cited_claim": cited_claims[j],
             "score": score, "above_theta": score >= theta}
            for score, i, j in cells[:PAIRS_SHOWN]]
