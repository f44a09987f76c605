"""Learned rankings in one library: LightGBM's LambdaRank, fit on groups of candidates
(one group per query) and stored in LightGBM's own text model format.

Two learned models use it, so it stays below both of their homes: the search's learned
order (search/order/model.py) for the forms where it measured best, and the idea
workflow's final order (idea/final_order/model.py). A model file is the text LightGBM writes
(`Booster.model_to_string`), readable by LightGBM's own tools; it names its features, and
`from_text` refuses a file whose features are not the ones its caller computes, in that
order. Nothing is pickled.

Training is deterministic: a fixed number of threads, LightGBM's `deterministic` mode and
fixed seeds, so the same groups and parameters give the same bytes (tests of the trainers
build twice and compare).
Scoring runs on one thread too: a server answers several searches at once, each on its
own core, and a few hundred candidates are scored in about a millisecond.

LightGBM is imported where a model is fit or read, not with this module: it brings scipy
(about 0.5 s), which commands that rank nothing never pay.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from crase.errors import RankingModelInvalid

if TYPE_CHECKING:
    import lightgbm

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class LambdaRankParams:
    """LambdaRank's settings. The defaults were chosen on the hep-th training and dev
    queries (docs/retrieval-quality.md, "The learned order"): small trees, many of them,
    and the lambda gradients taken over a list as deep as the results people read."""

    trees: int = 300
    leaves: int = 15
    learning_rate: float = 0.05
    min_data_in_leaf: int = 50
    feature_fraction: float = 0.8
    truncation_level: int = 50  # the depth of the list whose order the gradients weigh
    l2: float = 1.0
    seed: int = 0
    threads: int = 2  # fixed, not the machine's count: LightGBM's result depends on it
    # Per feature: 1 where the score may only rise with it, -1 only fall, 0 free; empty:
    # every feature free.
    monotone: tuple[int, ...] = ()

    def lightgbm(self) -> dict[str, Any]:
        return {
            "objective": "lambdarank", "metric": "ndcg", "eval_at": [self.truncation_level],
            "lambdarank_truncation_level": self.truncation_level,
            "num_leaves": self.leaves, "learning_rate": self.learning_rate,
            "min_data_in_leaf": self.min_data_in_leaf,
            "feature_fraction": self.feature_fraction, "lambda_l2": self.l2,
            "seed": self.seed, "deterministic": True, "force_col_wise": True,
            "num_threads": self.threads, "verbosity": -1,
        } | ({"monotone_constraints": list(self.monotone),
              "monotone_constraints_method": "advanced"} if self.monotone else {})


DEFAULT_PARAMS = LambdaRankParams()


@dataclass(frozen=True)
class Group:
    """One query's candidates: a row of features each, and a relevance label each."""

    values: FloatArray
    labels: FloatArray


@dataclass(frozen=True)
class RankingModel:
    """A fitted LambdaRank model over `features`, with the text it was read from."""

    features: tuple[str, ...]
    text: str
    booster: "lightgbm.Booster" = field(repr=False, compare=False)

    def scores(self, values: FloatArray) -> FloatArray:
        """One score per row; a higher score ranks first."""
        if not len(values):
            return np.zeros(0)
        return np.asarray(self.booster.predict(values, num_threads=1), dtype=np.float64)

    def contributions(self, values: FloatArray) -> FloatArray:
        """Each feature's share of each row's score (SHAP values, LightGBM's pred_contrib;
        the last column, the model's expected value, is left out)."""
        if not len(values):
            return np.zeros((0, len(self.features)))
        shares = self.booster.predict(values, pred_contrib=True, num_threads=1)
        return np.asarray(shares, dtype=np.float64)[:, :-1]

    def importances(self) -> dict[str, float]:
        """Each feature's share of the model's total split gain."""
        gains = self.booster.feature_importance(importance_type="gain")
        total = float(np.sum(gains)) or 1.0
        return {name: round(float(gain) / total, 4)
                for name, gain in zip(self.features, gains, strict=True)}


def fit(groups: Sequence[Group], features: Sequence[str],
        params: LambdaRankParams = DEFAULT_PARAMS) -> RankingModel:
    """The model fit on every group that holds a relevant candidate (the others teach
    LambdaRank nothing)."""
    import lightgbm

    useful = [g for g in groups if g.labels.sum() > 0 and len(g.labels) > 1]
    if not useful:
        raise ValueError("no training query has a relevant paper among its candidates")
    data = lightgbm.Dataset(np.vstack([g.values for g in useful]),
                            label=np.concatenate([g.labels for g in useful]),
                            group=[len(g.labels) for g in useful],
                            feature_name=list(features), free_raw_data=True,
                            params={"verbosity": -1})
    booster = lightgbm.train(params.lightgbm(), data, num_boost_round=params.trees)
    return from_text(booster.model_to_string(), features, "the fitted model")


def from_text(text: str, features: Sequence[str], where: str) -> RankingModel:
    """The model in LightGBM's text `text`; refuses text that is not a LightGBM model or
    one over other features than `features` (in that order)."""
    import lightgbm

    try:
        booster = lightgbm.Booster(model_str=text)
    except lightgbm.basic.LightGBMError as err:
        raise RankingModelInvalid(f"{where} is not a LightGBM model ({err}): train it again "
                                  "with the command that wrote it") from err
    stored = tuple(booster.feature_name())
    if stored != tuple(features):
        missing = sorted(set(features) - set(stored))
        unknown = sorted(set(stored) - set(features))
        raise RankingModelInvalid(
            f"{where} ranks by other features than this version computes (missing "
            f"{missing or 'none'}, unknown {unknown or 'none'}, or another order): "
            "train it again with this version")
    return RankingModel(tuple(features), text, booster)
