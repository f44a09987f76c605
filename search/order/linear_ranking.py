"""A linear ranking read from its JSON text: score = sum_j w_j (x_j - mean_j) / scale_j.

The learned order's `text` and `words` forms keep the linear models of the previous
release: on cs768, which no model was trained on, LambdaRank lost to them on full queries
(R@50 -0.011) and on titles (MAP@50 -0.012), so only the `papers` form changed learner
(docs/retrieval-quality.md). Those models were fit by the previous release's trainer
(`crase train-order` at e6b9ce2: listwise softmax, full-batch Adam); this version reads
them and orders with them, and trains LambdaRank only (models/lambdarank.py).

Each term of the sum is that feature's contribution, so every result can show which
evidence placed it, as LambdaRank's SHAP values do.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from crase.errors import RankingModelInvalid

FloatArray = NDArray[np.float64]
FORMAT = "crase-linear-ranking/1"


@dataclass(frozen=True)
class LinearRanking:
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]

    @property
    def text(self) -> str:
        """The model as the JSON text `from_text` reads."""
        return json.dumps({"format": FORMAT, "features": list(self.features),
                           "mean": list(self.mean), "scale": list(self.scale),
                           "weights": list(self.weights)}, indent=1) + "\n"

    def contributions(self, values: FloatArray) -> FloatArray:
        """Each feature's term of each row's score."""
        z = (values - np.array(self.mean)) / np.array(self.scale)
        return np.asarray(z * np.array(self.weights), dtype=np.float64)

    def scores(self, values: FloatArray) -> FloatArray:
        """One score per row; a higher score ranks first."""
        return self.contributions(values).sum(axis=1) if len(values) else np.zeros(0)

    def importances(self) -> dict[str, float]:
        """Each feature's share of the weights' absolute sum (features are standardised)."""
        total = float(np.abs(self.weights).sum()) or 1.0
        return {name: round(abs(w) / total, 4)
                for name, w in zip(self.features, self.weights, strict=True)}


def from_text(text: str, features: Sequence[str], where: str) -> LinearRanking:
    """The model in `text`; refuses text that is not one, or one over other features than
    `features` (in that order)."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as err:
        raise RankingModelInvalid(f"{where} is not a linear ranking ({err})") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RankingModelInvalid(f"{where} is not a {FORMAT} model")
    try:
        model = LinearRanking(tuple(map(str, data["features"])),
                              tuple(map(float, data["mean"])), tuple(map(float, data["scale"])),
                              tuple(map(float, data["weights"])))
    except (KeyError, TypeError, ValueError) as err:
        raise RankingModelInvalid(f"{where}: a list is missing or not numbers ({err})") from err
    lengths = {len(model.features), len(model.mean), len(model.scale), len(model.weights)}
    if len(lengths) != 1 or not model.features:
        raise RankingModelInvalid(f"{where}: features, mean, scale and weights differ in length")
    if any(not np.isfinite(v) for v in (*model.mean, *model.scale, *model.weights)) \
            or any(s <= 0 for s in model.scale):
        raise RankingModelInvalid(f"{where}: a mean, scale or weight is not a finite number "
                                  "(or a scale is not positive)")
    if model.features != tuple(features):
        raise RankingModelInvalid(f"{where} ranks by other features than its manifest names")
    return model
