"""SALSA (Lempel & Moran 2001) on a weighted directed graph, in numpy.

The graph is an edge list (`edge_list`): edge i -> j with its weight, over nodes 0..n-1.
Evidence graphs are sparse (a few thousand steps among a few thousand papers), so no
n x n matrix is ever built; every round is O(|E|). Every paper has a hub copy (its out-edges)
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

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class EdgeList:
    """A weighted directed graph on nodes 0..n-1, one entry per edge `hubs[e] -> cited[e]`
    of weight `weight[e]`: parallel edges summed, zero weights left out, sorted by (hub,
    cited). Build it with `edge_list`."""

    n: int
    hubs: IntArray
    cited: IntArray
    weight: FloatArray


def edge_list(n: int, sources: ArrayLike, targets: ArrayLike, weights: ArrayLike) -> EdgeList:
    """The graph of the edges sources[e] -> targets[e] of weight weights[e] on n nodes.

    Parallel edges are summed in the order given and the result is sorted by (source,
    target) with zero weights dropped: the edges, weights and order a dense n x n matrix
    filled with `+=` and read back with np.nonzero would give, so the sums below add the
    same numbers in the same order as the dense version this replaced did."""
    source = np.asarray(sources, dtype=np.int64)
    target = np.asarray(targets, dtype=np.int64)
    weight = np.asarray(weights, dtype=np.float64)
    if source.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return EdgeList(n, empty, empty.copy(), np.zeros(0))
    pair, inverse = np.unique(source * n + target, return_inverse=True)
    summed = np.bincount(inverse.ravel(), weights=weight, minlength=pair.size)
    kept = summed != 0
    return EdgeList(n, pair[kept] // n, pair[kept] % n, summed[kept])


def salsa_authority(edges: EdgeList) -> FloatArray:
    """Standard SALSA authority scores (sum 1 when the graph has an edge; zeros otherwise)."""
    in_weight = np.bincount(edges.cited, weights=edges.weight, minlength=edges.n)
    authorities = np.flatnonzero(in_weight > 0)
    scores = np.zeros(edges.n)
    if authorities.size == 0:
        return scores
    component = authority_components(edges)
    for label in np.unique(component[authorities]):
        members = authorities[component[authorities] == label]
        share = members.size / authorities.size
        scores[members] = share * in_weight[members] / in_weight[members].sum()
    return scores


def salsa_hub(edges: EdgeList) -> FloatArray:
    """Standard SALSA hub scores: authority scores of the reversed graph."""
    return salsa_authority(edge_list(edges.n, edges.cited, edges.hubs, edges.weight))


def authority_components(edges: EdgeList) -> IntArray:
    """Component label per node; authorities cited by a common hub share a label."""
    hubs_of, cited = edges.hubs, edges.cited  # sorted by hub: its citations are adjacent
    same_hub = hubs_of[1:] == hubs_of[:-1]
    parent = list(range(edges.n))

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
    return np.array([find(node) for node in range(edges.n)])


def restart_vector(n: int, seeds: Sequence[int],
                   seed_weights: Sequence[float] | None) -> FloatArray:
    """p over n nodes: uniform over the seeds, or in proportion to `seed_weights`."""
    restart = np.zeros(n)
    if seed_weights is None:
        restart[sorted(set(seeds))] = 1.0
    else:
        np.add.at(restart, list(seeds), np.asarray(seed_weights, dtype=np.float64))
    restart /= restart.sum()
    return restart


def personalized_salsa(
    edges: EdgeList,
    seeds: Sequence[int],
    alpha: float = 0.15,
    max_iterations: int = 200,
    tolerance: float = 1e-12,
    seed_weights: Sequence[float] | None = None,
) -> FloatArray:
    """Authority scores of the seed-restarting SALSA walk (module doc), summing to 1
    (zeros when no seed reaches an edge). `seed_weights` (one per seed) makes p the
    weighted restart vector instead of the uniform one. O(|E|) a round."""
    n = edges.n
    restart = restart_vector(n, seeds, seed_weights)
    hubs_of, cited, edge_weight = edges.hubs, edges.cited, edges.weight
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
    edges: EdgeList,
    seeds: Sequence[int] | None = None,
    alpha: float = 0.15,
    max_iterations: int = 200,
    tolerance: float = 1e-12,
    seed_weights: Sequence[float] | None = None,
) -> FloatArray:
    """Authority scores: personalised by `seeds` (weighted by `seed_weights`, if given)
    when any are given, standard otherwise."""
    if seeds:
        return personalized_salsa(edges, seeds, alpha, max_iterations, tolerance,
                                  seed_weights)
    return salsa_authority(edges)
