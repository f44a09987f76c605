"""Paired bootstrap intervals for the difference between two systems on the same queries.

Queries are resampled with replacement and the statistic recomputed for both systems on
each resample. For pooled Recall@k the statistic is a ratio of sums (hits over relevant
papers, as the paper pools it), so the resample keeps each query's hits and relevant-set
size together; for MAP@k it is the plain mean of per-query AP@k.
"""

from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
GENERATOR_SEED = 20030101


@dataclass(frozen=True)
class Difference:
    value: float  # statistic of A minus statistic of B on the real queries
    low: float  # 2.5th percentile of the resampled differences
    high: float  # 97.5th percentile

    @property
    def clear(self) -> bool:
        """The 95% interval leaves out zero."""
        return self.low > 0 or self.high < 0


def pooled_difference(hits_a: list[int], hits_b: list[int], sizes: list[int],
                      resamples: int = RESAMPLES) -> Difference:
    """Pooled recall of A minus pooled recall of B (per-query hits, |Rel(q)| as weights)."""
    a, b, n = (np.asarray(x, dtype=float) for x in (hits_a, hits_b, sizes))
    picks = _picks(len(n), resamples)
    diffs = (a[picks].sum(axis=1) - b[picks].sum(axis=1)) / n[picks].sum(axis=1)
    return _difference((a.sum() - b.sum()) / n.sum(), diffs)


def mean_difference(values_a: list[float], values_b: list[float],
                    resamples: int = RESAMPLES) -> Difference:
    """Mean of A minus mean of B (per-query values such as AP@k)."""
    delta = np.asarray(values_a, dtype=float) - np.asarray(values_b, dtype=float)
    picks = _picks(len(delta), resamples)
    return _difference(float(delta.mean()), delta[picks].mean(axis=1))


def _picks(count: int, resamples: int) -> np.ndarray:
    generator = np.random.default_rng(GENERATOR_SEED)
    return generator.integers(0, count, size=(resamples, count))


def _difference(value: float, resampled: np.ndarray) -> Difference:
    low, high = np.percentile(resampled, [2.5, 97.5])
    return Difference(float(value), float(low), float(high))
