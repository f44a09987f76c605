"""SALSA against small cases worked out by hand, and against the dense implementation it
replaced (tests/scoring/dense_salsa.py), float for float, on random graphs."""

import numpy as np
import pytest

from crase.scoring.salsa import (
    edge_list,
    personalized_salsa,
    salsa_authority,
    salsa_hub,
    salsa_scores,
)
from tests.scoring import dense_salsa
from tests.scoring.dense_salsa import as_edge_list

# Nodes: 0 s, 1 t, 2 a, 3 b, 4 c, 5 u, 6 d.
# Edges (citing -> cited, weight): s->a 1, s->b 3, t->b 1, t->c 1, u->d 2.
TWO_COMPONENTS = np.zeros((7, 7))
for i, j, w in [(0, 2, 1.0), (0, 3, 3.0), (1, 3, 1.0), (1, 4, 1.0), (5, 6, 2.0)]:
    TWO_COMPONENTS[i, j] = w
TWO = as_edge_list(TWO_COMPONENTS)
FIVE = as_edge_list(TWO_COMPONENTS[:5, :5])  # s, t, a, b, c


def test_standard_salsa_by_hand() -> None:
    # Authorities (in-weight > 0): a 1, b 4, c 1, d 2; |A| = 4.
    # a, b, c are linked through co-citation (s cites a and b, t cites b and c): one
    # component with 3 of the 4 authorities and in-weight 1 + 4 + 1 = 6; d is alone.
    #   a = 3/4 * 1/6 = 0.125    b = 3/4 * 4/6 = 0.5    c = 3/4 * 1/6 = 0.125
    #   d = 1/4 * 2/2 = 0.25     s, t, u (never cited) = 0
    expected = np.array([0.0, 0.0, 0.125, 0.5, 0.125, 0.0, 0.25])
    np.testing.assert_allclose(salsa_authority(TWO), expected, atol=1e-15)
    np.testing.assert_allclose(salsa_scores(TWO), expected, atol=1e-15)
    np.testing.assert_allclose(salsa_scores(TWO, []), expected, atol=1e-15)


def test_standard_salsa_hubs_by_hand() -> None:
    # Hubs (out-weight > 0): s 4, t 2, u 2; s and t share b, so {s, t} hold 2 of 3 hubs.
    #   s = 2/3 * 4/6 = 4/9    t = 2/3 * 2/6 = 2/9    u = 1/3
    expected = np.array([4 / 9, 2 / 9, 0, 0, 0, 1 / 3, 0])
    np.testing.assert_allclose(salsa_hub(TWO), expected, atol=1e-15)


def test_standard_salsa_matches_the_two_step_chain() -> None:
    # The closed form equals iterating the authority chain C R from uniform authorities.
    w = TWO_COMPONENTS
    forward = np.divide(w, w.sum(1, keepdims=True), out=np.zeros_like(w),
                        where=w.sum(1, keepdims=True) > 0)
    backward = np.divide(w, w.sum(0, keepdims=True), out=np.zeros_like(w),
                         where=w.sum(0, keepdims=True) > 0)
    chain = backward.T @ forward  # chain[j, k]: authority j -> hub -> authority k
    scores = (w.sum(0) > 0) / (w.sum(0) > 0).sum()
    for _ in range(500):
        scores = scores @ chain
    np.testing.assert_allclose(scores, salsa_authority(TWO), atol=1e-12)


def test_personalized_salsa_by_hand() -> None:
    # Nodes 0 s, 1 t, 2 a, 3 b, 4 c; edges s->a 1, s->b 3, t->b 1, t->c 1; seed s;
    # alpha = 1/2. Hub mass lives on s and t only (a, b, c cite nothing).
    # Forward from a hub mix (h_s, h_t):  a = h_s/4,  b = 3 h_s/4 + h_t/2,  c = h_t/2.
    # Backward: a -> s; b -> s with 3/4, t with 1/4; c -> t.
    # Stationary h_t = (1 - alpha) * (b/4 + c) = 1/2 * (3 h_s/16 + h_t/8 + h_t/2)
    #   with h_s = 1 - h_t:  h_t = 3/32 + 7 h_t/32  =>  h_t = 3/25 = 0.12, h_s = 0.88.
    # Authorities: a = 0.22, b = 0.66 + 0.06 = 0.72, c = 0.06 (sum 1).
    w = FIVE
    expected = np.array([0.0, 0.0, 0.22, 0.72, 0.06])
    np.testing.assert_allclose(personalized_salsa(w, [0], alpha=0.5), expected, atol=1e-10)
    np.testing.assert_allclose(salsa_scores(w, [0], alpha=0.5), expected, atol=1e-10)


def test_personalized_salsa_stays_near_its_seeds() -> None:
    # Seeded on u, all authority mass is d; seeded on t, nothing reaches d.
    by_u = salsa_scores(TWO, [5])
    np.testing.assert_allclose(by_u, np.eye(7)[6], atol=1e-12)
    by_t = salsa_scores(TWO, [1])
    assert by_t[6] == 0 and by_t.sum() == pytest.approx(1.0)
    assert by_t[3] > by_t[2]  # b is shared with s; a only reachable through s


def test_a_seed_that_cites_nothing_restarts_and_scores_stay_finite() -> None:
    # Seed a (cites nothing) and s: a's hub mass restarts at the seeds each round.
    scores = salsa_scores(FIVE, [2, 0], alpha=0.15)
    assert np.isfinite(scores).all() and scores.sum() == pytest.approx(1.0)
    assert salsa_scores(as_edge_list(np.zeros((3, 3))), [0]).sum() == 0.0
    assert salsa_authority(as_edge_list(np.zeros((3, 3)))).sum() == 0.0


def test_personalized_salsa_equals_the_dense_fixed_point_on_a_random_graph() -> None:
    # One round maps hubs h to  (1 - alpha) C R^T h + (alpha * 1_cites + 1_dangling)^T h * p,
    # a column-stochastic matrix; the stationary h is its eigenvector for eigenvalue 1.
    rng = np.random.default_rng(3)
    n, alpha = 30, 0.2
    w = np.where(rng.random((n, n)) < 0.08, rng.random((n, n)), 0.0)
    np.fill_diagonal(w, 0.0)
    seeds = [0, 4, 7]
    out_w, in_w = w.sum(1), w.sum(0)
    r_t = np.divide(w, out_w[:, None], out=np.zeros_like(w), where=out_w[:, None] > 0).T
    c = np.divide(w, in_w[None, :], out=np.zeros_like(w), where=in_w[None, :] > 0)
    p = np.zeros(n)
    p[seeds] = 1 / 3
    cites = (out_w > 0).astype(float)
    step = (1 - alpha) * c @ r_t + np.outer(p, alpha * cites + (1 - cites))
    values, vectors = np.linalg.eig(step)
    h = np.real(vectors[:, np.argmin(np.abs(values - 1))])
    h /= h.sum()
    expected = r_t @ h
    expected /= expected.sum()
    np.testing.assert_allclose(personalized_salsa(as_edge_list(w), seeds, alpha=alpha), expected,
                               atol=1e-9)


def test_weighted_restart_mixes_the_walks_of_its_seeds() -> None:
    # Seeds s (0) and t (1) on the 5-node graph: equal weights give the uniform restart;
    # all weight on s gives the walk seeded on s alone; in between, t's share grows c.
    w = FIVE
    np.testing.assert_allclose(salsa_scores(w, [0, 1], seed_weights=[1.0, 1.0]),
                               salsa_scores(w, [0, 1]), atol=1e-12)
    np.testing.assert_allclose(salsa_scores(w, [0, 1], 0.5, seed_weights=[1.0, 0.0]),
                               salsa_scores(w, [0], 0.5), atol=1e-10)
    more_t = salsa_scores(w, [0, 1], seed_weights=[0.2, 0.8])
    less_t = salsa_scores(w, [0, 1], seed_weights=[0.8, 0.2])
    assert more_t[4] > less_t[4] and more_t.sum() == pytest.approx(1.0)


def random_steps(rng: np.random.Generator, n: int, m: int) -> tuple[np.ndarray, ...]:
    """m steps among n nodes, some repeated (the walk's 'both' orientation can take a step
    twice), some self-loops and some of weight 0, in no particular order."""
    sources, targets = rng.integers(0, n, m), rng.integers(0, n, m)
    weights = rng.random(m) * rng.choice([1e-3, 1.0, 50.0], m)
    weights[rng.random(m) < 0.05] = 0.0
    twice = rng.random(m) < 0.2
    return (np.concatenate([sources, sources[twice]]), np.concatenate([targets, targets[twice]]),
            np.concatenate([weights, rng.random(int(twice.sum()))]))


def dense(n: int, sources: np.ndarray, targets: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The matrix the old ranking built from the streamed steps, one += per step."""
    w = np.zeros((n, n))
    for i, j, x in zip(sources.tolist(), targets.tolist(), weights.tolist(), strict=True):
        w[i, j] += x
    return w


@pytest.mark.parametrize("seed", range(12))
def test_the_edge_list_gives_the_dense_versions_floats_exactly(seed: int) -> None:
    # The oracle is the n x n implementation this module replaced (tests/scoring/dense_salsa);
    # equal means the same bits, not close.
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 4, 9, 40, 150, 600]))
    steps = random_steps(rng, n, int(rng.integers(0, 4 * n + 2)))
    edges, w = edge_list(n, *steps), dense(n, *steps)
    seeds = sorted(rng.choice(n, size=min(n, int(rng.integers(1, 6))), replace=False).tolist())
    weights = (rng.random(len(seeds)) + 0.01).tolist()
    alpha = float(rng.choice([0.15, 0.5]))
    assert np.array_equal(salsa_authority(edges), dense_salsa.salsa_authority(w))
    assert np.array_equal(salsa_scores(edges, seeds, alpha),
                          dense_salsa.salsa_scores(w, seeds, alpha))
    assert np.array_equal(salsa_scores(edges, seeds, alpha, seed_weights=weights),
                          dense_salsa.salsa_scores(w, seeds, alpha, seed_weights=weights))
    # Hubs sum each row, which the dense version did along the matrix's fast axis
    # (numpy's pairwise sum), so they agree to rounding only; no ranking uses them.
    np.testing.assert_allclose(salsa_hub(edges), dense_salsa.salsa_hub(w), rtol=1e-13,
                               atol=1e-300)


def test_the_edge_list_sums_repeated_steps_and_drops_zero_weights() -> None:
    edges = edge_list(3, [2, 0, 2, 1, 0], [1, 2, 1, 1, 0], [0.5, 1.0, 0.25, 0.0, 2.0])
    assert edges.hubs.tolist() == [0, 0, 2] and edges.cited.tolist() == [0, 2, 1]
    assert edges.weight.tolist() == [2.0, 1.0, 0.75]
    empty = edge_list(4, [], [], [])
    assert empty.n == 4 and empty.hubs.size == empty.cited.size == empty.weight.size == 0
    assert salsa_scores(empty, [0]).tolist() == [0.0] * 4
