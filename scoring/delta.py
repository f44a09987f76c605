"""Coverage affinity Delta, pruning and edge weights of the evidence graph.

Definitions follow the Crase method: for a citation edge u -> v with entailment matrix
M (rows: claims of the citing paper u, columns: claims of the cited paper v),

- claim i of u is grounded by v when max_j M[i, j] >= theta;
- Delta(u, v) is the share of u's claims that v grounds, in [0, 1];
- an edge with Delta <= tau is pruned, and so is every node left without an edge;
- a kept edge weighs w(u -> v) = Delta(u, v) * age(v) ** -beta.
"""

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def coverage_affinity(matrix: FloatArray, theta: float) -> float:
    """Share of rows (citing claims) whose best match over the columns reaches `theta`.

    A matrix without rows or without columns grounds nothing: 0.0.
    """
    values = np.asarray(matrix, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] == 0 or values.shape[1] == 0:
        return 0.0
    grounded = values.max(axis=1) >= theta
    return float(grounded.mean())


def best_claim_pair(matrix: FloatArray) -> tuple[int, int, float]:
    """(citing claim i, cited claim j, M[i, j]) of the largest entry; the first one in
    row-major order on ties. Raises ValueError on an empty matrix."""
    values = np.asarray(matrix, dtype=np.float64)
    if values.size == 0:
        raise ValueError("an empty entailment matrix has no best claim pair")
    flat = int(np.argmax(values))
    i, j = divmod(flat, values.shape[1])
    return i, j, float(values[i, j])


@dataclass(frozen=True)
class EvidenceEdge:
    citing: str
    cited: str
    delta: float


@dataclass(frozen=True)
class PrunedEdges:
    kept: list[EvidenceEdge]
    dropped: list[EvidenceEdge]
    nodes: set[str]  # papers with at least one kept edge
    dropped_nodes: set[str]  # papers known to the input that kept no edge


def prune_edges(edges: Iterable[EvidenceEdge], tau: float,
                nodes: Iterable[str] = ()) -> PrunedEdges:
    """Drop every edge with delta <= tau, then every node left with no edge.

    `nodes` may name papers that had no edge to begin with; they are dropped too, since a
    node off every evidential path cannot be ranked.
    """
    kept: list[EvidenceEdge] = []
    dropped: list[EvidenceEdge] = []
    known = set(nodes)
    for edge in edges:
        known.update((edge.citing, edge.cited))
        (kept if edge.delta > tau else dropped).append(edge)
    alive = {paper for edge in kept for paper in (edge.citing, edge.cited)}
    return PrunedEdges(kept, dropped, alive, known - alive)


def paper_age(cited_year: int, reference_year: int) -> int:
    """Age in years counting the reference year itself, at least 1.

    The +1 makes a paper from the reference year age 1 rather than 0 (0 ** -beta is
    infinite); a cited year after the reference year (a later query year, bad metadata)
    is clamped to age 1 as well.
    """
    return max(1, reference_year - cited_year + 1)


def edge_weight(delta: float, cited_year: int, reference_year: int, beta: float) -> float:
    """w(u -> v) = Delta(u, v) * age(v) ** -beta."""
    return float(delta) * paper_age(cited_year, reference_year) ** -float(beta)
