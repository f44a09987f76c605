"""How a claim-pair scorer's verdicts are measured, by the trainer on the dev sets and by
the entailment benchmark (bench/entailment_pairs.py) alike: two-class F1 (grounded or
not) and four-class macro F1 over SciNLI's classes.
"""

from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from crase.models.claim_pair.classifier import LABELS


def f1_score(truth: NDArray[np.bool_], said: NDArray[np.bool_]) -> float:
    """F1 of the verdicts `said` against `truth`; 0 where no verdict is right."""
    hits = float(np.sum(truth & said))
    return 2 * hits / float(np.sum(truth) + np.sum(said)) if hits else 0.0


def macro_f1(truth: ArrayLike, said: ArrayLike, labels: Iterable[object] = LABELS) -> float:
    """Mean F1 over the classes `labels` (by default SciNLI's four, by name)."""
    truth_array, said_array = np.asarray(truth), np.asarray(said)
    return float(np.mean([f1_score(truth_array == label, said_array == label)
                          for label in labels]))
