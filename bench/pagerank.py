"""Personalized PageRank in numpy, following the rules Neo4j GDS uses: the oracle the
tests and the rank-stage benchmark (bench/rank_stage.py) hold GDS to. Search itself ranks
in GDS, so no product code imports this.

Measured against `gds.pageRank.stream` 2.13 (tests/bench/test_pagerank.py):
- each source node receives teleport mass (1 - d), not (1 - d) / |sources|;
- a node with no outgoing edge (dangling) passes nothing on: its mass leaks, it is not
  spread over the graph or sent back to the sources;
- edge weights are normalised by the source node's total outgoing weight;
- so scores do not sum to 1 (they sum to at most |sources|). Divide by the sum if a
  distribution is wanted; the ranking is the same.
"""

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def transition_matrix(weights: FloatArray) -> FloatArray:
    """Row-normalise a weighted adjacency matrix; dangling rows stay zero."""
    out_weight = weights.sum(axis=1, keepdims=True)
    return np.divide(weights, out_weight, out=np.zeros_like(weights), where=out_weight > 0)


def personalized_pagerank(
    weights: FloatArray,
    sources: list[int],
    damping: float = 0.85,
    max_iterations: int = 100,
    tolerance: float = 1e-10,
    source_weights: list[float] | None = None,
) -> FloatArray:
    """Scores for a dense weighted adjacency matrix `weights[i, j]` = weight of i -> j.
    `source_weights` (one per source) scale each source's teleport mass."""
    teleport = np.zeros(weights.shape[0])
    if source_weights is None:
        teleport[sources] = 1.0 - damping
    else:
        np.add.at(teleport, sources, (1.0 - damping) * np.asarray(source_weights))
    step = transition_matrix(weights).T
    scores = teleport.copy()
    for _ in range(max_iterations):
        updated = teleport + damping * (step @ scores)
        if np.abs(updated - scores).max() < tolerance:
            return updated
        scores = updated
    return scores


def sparse_personalized_pagerank(
    size: int,
    sources: IntArray,
    targets: IntArray,
    weights: FloatArray,
    teleport: FloatArray,
    damping: float = 0.85,
    max_iterations: int = 100,
    tolerance: float = 1e-10,
) -> FloatArray:
    """The same rules over an edge list (edge i: sources[i] -> targets[i] with weights[i]),
    for graphs too large for a dense matrix; `teleport` is each node's restart mass (the
    dense version's 1 - d at each source)."""
    out_weight = np.bincount(sources, weights=weights, minlength=size)
    share = weights / out_weight[sources]
    scores = teleport.copy()
    for _ in range(max_iterations):
        passed = np.bincount(targets, weights=share * scores[sources], minlength=size)
        updated = teleport + damping * passed
        if np.abs(updated - scores).max() < tolerance:
            return updated
        scores = updated
    return scores
