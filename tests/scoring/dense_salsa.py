"""The dense SALSA that crase.scoring.salsa replaced (weights as an n x n matrix), kept
verbatim as the oracle the edge-list version is compared with, float for float, in
tests/scoring/test_salsa.py and tests/search/test_walk_projection.py. Not product code."""

import numpy as np
from numpy.typing import NDArray

from crase.scoring.salsa import EdgeList, edge_list

FloatArray = NDArray[np.float64]


def salsa_authority(weights: FloatArray) -> FloatArray:
    """Standard SALSA authority scores (sum 1 when the graph has an edge; zeros otherwise)."""
    w = np.asarray(weights, dtype=np.float64)
    in_weight = w.sum(axis=0)
    authorities = np.flatnonzero(in_weight > 0)
    scores = np.zeros(w.shape[0])
    if authorities.size == 0:
        return scores
    component = authority_components(w, authorities)
    for label in np.unique(component[authorities]):
        members = authorities[component[authorities] == label]
        share = members.size / authorities.size
        scores[members] = share * in_weight[members] / in_weight[members].sum()
    return scores


def salsa_hub(weights: FloatArray) -> FloatArray:
    """Standard SALSA hub scores: authority scores of the reversed graph."""
    return salsa_authority(np.asarray(weights, dtype=np.float64).T)


def authority_components(weights: FloatArray, authorities: NDArray[np.int64]) -> NDArray[np.int64]:
    """Component label per node; authorities cited by a common hub share a label."""
    hubs_of, cited = np.nonzero(weights)  # row-major: each hub's citations are adjacent
    same_hub = hubs_of[1:] == hubs_of[:-1]
    parent = list(range(weights.shape[0]))

    def find(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    # Linking each citation to the hub's previous one joins all of the hub's authorities.
    for a, b in zip(cited[:-1][same_hub].tolist(), cited[1:][same_hub].tolist(), strict=True):
        root_a, root_b = find(a), find(b)
        if root_a != root_b:
            parent[root_b] = root_a
    return np.array([find(node) for node in range(weights.shape[0])])


def personalized_salsa(
    weights: FloatArray,
    seeds: list[int],
    alpha: float = 0.15,
    max_iterations: int = 200,
    tolerance: float = 1e-12,
    seed_weights: list[float] | None = None,
) -> FloatArray:
    """Authority scores of the seed-restarting SALSA walk (module doc), summing to 1
    (zeros when no seed reaches an edge). `seed_weights` (one per seed) makes p the
    weighted restart vector instead of the uniform one. Iterates over the edge list,
    O(|E|) a round."""
    w = np.asarray(weights, dtype=np.float64)
    n = w.shape[0]
    restart = np.zeros(n)
    if seed_weights is None:
        restart[sorted(set(seeds))] = 1.0
    else:
        np.add.at(restart, seeds, np.asarray(seed_weights, dtype=np.float64))
    restart /= restart.sum()
    hubs_of, cited = np.nonzero(w)
    edge_weight = w[hubs_of, cited]
    out_weight = np.bincount(hubs_of, weights=edge_weight, minlength=n)
    in_weight = np.bincount(cited, weights=edge_weight, minlength=n)
    forward = edge_weight / out_weight[hubs_of]  # hub -> authority, per edge
    backward = edge_weight / in_weight[cited]  # authority -> hub, per edge
    dangling = out_weight == 0
    hubs = restart.copy()
    authority = np.bincount(cited, weights=forward * hubs[hubs_of], minlength=n)
    for _ in range(max_iterations):
        reset = alpha * authority.sum() + hubs[dangling].sum()
        returned = np.bincount(hubs_of, weights=backward * authority[cited], minlength=n)
        updated = (1.0 - alpha) * returned + reset * restart
        authority = np.bincount(cited, weights=forward * updated[hubs_of], minlength=n)
        converged = np.abs(updated - hubs).sum() < tolerance
        hubs = updated
        if converged:
            break
    total = authority.sum()
    scores: FloatArray = authority / total if total > 0 else authority.astype(np.float64)
    return scores


def salsa_scores(
    weights: FloatArray,
    seeds: list[int] | None = None,
    alpha: float = 0.15,
    max_iterations: int = 200,
    tolerance: float = 1e-12,
    seed_weights: list[float] | None = None,
) -> FloatArray:
    """Authority scores: personalised by `seeds` (weighted by `seed_weights`, if given)
    when any are given, standard otherwise."""
    if seeds:
        return personalized_salsa(weights, seeds, alpha, max_iterations, tolerance,
                                  seed_weights)
    return salsa_authority(weights)


def as_edge_list(weights: FloatArray) -> EdgeList:
    """The dense matrix as crase.scoring.salsa's edge list (its nonzero entries)."""
    w = np.asarray(weights, dtype=np.float64)
    hubs, cited = np.nonzero(w)
    return edge_list(w.shape[0], hubs, cited, w[hubs, cited])
