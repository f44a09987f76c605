"""The claim-pair scorers' figures, one definition for the trainer and the benchmark."""

import numpy as np
import pytest

from crase.models.claim_pair.metrics import f1_score, macro_f1


def test_macro_f1_over_the_four_labels() -> None:
    truth = ["entailment", "reasoning", "contrasting", "neutral"]
    assert macro_f1(truth, truth) == 1.0
    assert macro_f1(truth, ["entailment"] * 4) == pytest.approx((2 / 5) / 4)


def test_the_trainer_s_class_indices_give_the_same_macro_f1() -> None:
    truth = np.array([0, 1, 2, 3])
    assert macro_f1(truth, np.zeros(4, dtype=np.int64), range(4)) == pytest.approx((2 / 5) / 4)


def test_f1_is_zero_where_no_verdict_is_right() -> None:
    assert f1_score(np.array([True, False]), np.array([False, True])) == 0.0
    assert f1_score(np.array([True, True]), np.array([True, False])) == pytest.approx(2 / 3)
