"""SALSA (Lempel & Moran 2001) on a weighted directed graph, in numpy.

`weights[i, j]` is the weight of edge i -> j. Every paper has a hub copy (its out-edges)
and an authority copy (its in-edges); SALSA walks the bipartite hub/authority graph,
alternating a step forward along an out-edge and a step backward along an in-edge, each
chosen in proportion to edge weight.

Standard SALSA (`salsa_authority`, no seeds). The two-step authority chain is a walk on
an undirected weighted bipartite graph, so its stationary distribution is proportional to
weighted in-degree inside each connected component (authorities linked by a common
citer); started uniform over authorities, a component keeps the share of authorities it
holds. So, exactly, for authority j in component c with authority set A_c:

    a(j) = |A_c| / |A| * in(j) / sum(in(k) for k in A_c)

The Crase paper lists SALSA among "standard personalized graph-ranking methods" but does
not define its personalization. `personalized_salsa` is this module's definition, built
like the paper's personalized PageRank: the walk restarts at the seeds.

- From hub i: step forward to authority k with probability w(i, k) / out(i); a hub with
  no out-edge restarts instead (the PageRank rule for dangling rows).
- From authority k: with probability alpha restart at a seed (as a hub, so the walk goes
  on to what the seed cites), else step back to hub i with probability w(i, k) / in(k).

With h the hub distribution and p uniform over the seeds, one round is

    a = R^T h          (R: rows normalised by out-weight; dangling rows zero)
    h' = (1 - alpha) C a + (alpha * sum(a) + dangling mass of h) * p
         (C[i, k] = w(i, k) / in(k))

a contraction with rate (1 - alpha), iterated from h = p. Authority scores are the
stationary a, normalised to sum 1. With no seeds, `salsa_scores` returns standard SALSA.
"""

import numpy as np
from numpy.typing import NDArray

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
