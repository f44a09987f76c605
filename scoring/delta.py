"""The Crase method's rules on the evidence graph, one home each: Delta, pruning and the
age weight.

For a citation edge u -> v with entailment matrix M (rows: claims of the citing paper u,
columns: claims of the cited paper v):

- claim i of u is grounded by v when max_j M[i, j] >= theta;
- Delta(u, v) is the share of u's claims that v grounds, in [0, 1] (`coverage_affinity`);
- an edge with Delta <= tau, or without a Delta, is pruned (`judge_delta`), and so is every
  node left without an edge, except a seed that never had a citation edge (`prune`);
- a kept edge weighs w(u -> v) = Delta(u, v) * age(v) ** -beta with
  age = max(1, reference_year - year + 1), a paper without a year counting as age 1
  (`edge_weight`).

Two of these rules are also computed in Cypher, where they sit on a hot path next to the
data: Delta at a theta other than the stored one (cypher/read_edge_scores.cypher, from the
matrix stored flattened on the edge); and the age weight is computed here and projected into
GDS as each step's weight (cypher/project_evidence_graph.cypher). The functions here are the
reference: tests/scoring/test_rules_in_cypher.py reads both back from the database.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
Edge = tuple[str, str]  # (citing id, cited id), as crase.search.expansion.Edge

# The reasons recorded on the Run and shown by the evidence-graph view.
RETAINED = "retained"
NOT_SCORED = "not scored"
NO_EDGE_LEFT = "no edge left after pruning"


def coverage_affinity(matrix: FloatArray, theta: float) -> float:
    """Share of rows (citing claims) whose best match over the columns reaches `theta`.

    A matrix without rows or without columns grounds nothing: 0.0.
    """
    values = np.asarray(matrix, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] == 0 or values.shape[1] == 0:
        return 0.0
    grounded = values.max(axis=1) >= theta
    return float(grounded.mean())


def stored_coverage_affinity(flat: Sequence[float], rows: int, cols: int,
                             theta: float) -> float:
    """Delta from a matrix stored flattened row by row, as `set_edge_scores` writes it."""
    matrix = np.asarray(flat, dtype=np.float64).reshape(rows, cols)
    return coverage_affinity(matrix, theta)


def best_claim_pair(matrix: FloatArray) -> tuple[int, int, float]:
    """(citing claim i, cited claim j, M[i, j]) of the largest entry; the first one in
    row-major order on ties. Raises ValueError on an empty matrix."""
    values = np.asarray(matrix, dtype=np.float64)
    if values.size == 0:
        raise ValueError("an empty entailment matrix has no best claim pair")
    flat = int(np.argmax(values))
    i, j = divmod(flat, values.shape[1])
    return i, j, float(values[i, j])


class EdgeVerdict(NamedTuple):
    kept: bool
    reason: str  # RETAINED when kept, else why the edge was cut


def judge_delta(delta: float | None, tau: float) -> EdgeVerdict:
    """The prune rule for one edge: kept when Delta > tau; an edge without a Delta (never
    scored, or scoring failed) is cut, since nothing shows it carries evidence."""
    if delta is None:
        return EdgeVerdict(False, NOT_SCORED)
    if delta <= tau:
        return EdgeVerdict(False, f"delta {delta:.3f} <= tau {tau:g}")
    return EdgeVerdict(True, RETAINED)


@dataclass(frozen=True)
class PrunedGraph:
    edges: dict[Edge, float]  # retained edge -> Delta
    nodes: list[str]  # nodes with at least one retained edge
    seeds: list[str]  # seeds that survived pruning
    pruned_edges: dict[Edge, str]  # cut edge -> reason
    dropped_nodes: dict[str, str]  # cut node -> reason


def prune(nodes: list[str], edges: list[Edge], delta: dict[Edge, float], seeds: list[str],
          tau: float) -> PrunedGraph:
    """Cut the edges `judge_delta` cuts, then the nodes left with no edge. A seed that had no
    citation edge to begin with stays: nothing speaks against it (a corpus without
    citations), and the walk ranks it by its own restart mass."""
    retained, cut = split_edges(edges, delta, tau)
    alive = {paper for edge in retained for paper in edge} | never_linked(seeds, edges)
    return PrunedGraph(
        edges=retained, nodes=[n for n in nodes if n in alive],
        seeds=[s for s in seeds if s in alive], pruned_edges=cut,
        dropped_nodes={n: NO_EDGE_LEFT for n in nodes if n not in alive})


def split_edges(edges: list[Edge], delta: dict[Edge, float],
                tau: float) -> tuple[dict[Edge, float], dict[Edge, str]]:
    """(retained edge -> Delta, cut edge -> reason), each in the order of `edges`."""
    retained: dict[Edge, float] = {}
    cut: dict[Edge, str] = {}
    for edge in edges:
        verdict = judge_delta(delta.get(edge), tau)
        if verdict.kept:
            retained[edge] = delta[edge]
        else:
            cut[edge] = verdict.reason
    return retained, cut


def never_linked(seeds: list[str], edges: list[Edge]) -> set[str]:
    """The seeds on no edge of the neighbourhood, before any pruning."""
    on_an_edge = {paper for edge in edges for paper in edge}
    return {seed for seed in seeds if seed not in on_an_edge}


def keep_all_edges(nodes: list[str], edges: list[Edge], seeds: list[str],
                   weights: dict[Edge, float] | None = None) -> PrunedGraph:
    """The graph of a walk without Delta: every edge of the neighbourhood kept with its
    weight in `weights` (default 1, the uniform walk), then, as in `prune`, papers without
    an edge dropped."""
    weights = weights or {}
    return prune(nodes, edges, {edge: weights.get(edge, 1.0) for edge in edges}, seeds,
                 tau=0.0)


def influential_weights(edges: list[Edge], influential: dict[Edge, bool],
                        weight: float) -> dict[Edge, float]:
    """The `influential` weighting: `weight` on each edge the publisher marks influential,
    1 on any other (unmarked, or a corpus without the mark)."""
    return {edge: weight if influential.get(edge) else 1.0 for edge in edges}


def paper_age(year: int | None, reference_year: int) -> int:
    """Age in years counting the reference year itself, at least 1.

    The +1 makes a paper from the reference year age 1 rather than 0 (0 ** -beta is
    infinite); a year after the reference year (a later query year, bad metadata) is
    clamped to age 1 as well, and so is a paper without a year: no recency either way.
    """
    if year is None:
        return 1
    return max(1, reference_year - year + 1)


def edge_weight(delta: float, target_year: int | None, reference_year: int,
                beta: float) -> float:
    """w = Delta * age(target) ** -beta, the target being the paper the walk's step leads
    to (the cited paper when the walk follows references)."""
    return float(delta) * paper_age(target_year, reference_year) ** -float(beta)
