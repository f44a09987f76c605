"""The learned ranking: a linear model over the candidates' features
(search/candidate_features.py), trained from a corpus's own citations
(search/order_training.py) and stored as JSON with the description of its training data.

A candidate's score is sum_j w_j (x_j - mean_j) / scale_j; each term is that feature's
contribution, so every result can show which evidence placed it. A model may use a subset
of the features (the ablations train without one group at a time).
"""

import json
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from crase.errors import OrderModelInvalid
from crase.search.candidate_features import FEATURES, Candidates

# The model `crase search` uses unless settings name another: trained on hep-th papers
# published before 2003 only (docs/retrieval-quality.md).
SHIPPED_MODEL = Path(__file__).resolve().parent / "order_models" / "hepth-pre2003.json"
FORMAT = "crase-linear-ranker/1"
SHOWN_CONTRIBUTIONS = 5  # features listed per result, largest contribution first
# The shortest query the order applies to: it is trained and measured on a title and two
# abstract sentences (16 words and more in every dev set), not on keyword queries.
MIN_QUERY_WORDS = 12


@dataclass(frozen=True)
class OrderModel:
    name: str
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    description: dict[str, Any] = field(default_factory=dict)

    def contributions(self, candidates: Candidates) -> NDArray[np.float64]:
        """One row per candidate: each feature's term of the score."""
        columns = [FEATURES.index(name) for name in self.features]
        z = (candidates.values[:, columns] - np.array(self.mean)) / np.array(self.scale)
        return z * np.array(self.weights)

    def summary(self) -> dict[str, Any]:
        """What a Run records about the model that ordered its list."""
        training = {key: value for key, value in self.description.items()
                    if key != "sources"}  # the source list stays in the model file
        return {"name": self.name, "features": list(self.features), "training": training}


@dataclass(frozen=True)
class Placed:
    id: str
    score: float
    contributions: dict[str, float]  # the largest terms, by absolute value


def order_candidates(model: OrderModel, candidates: Candidates, k: int) -> list[Placed]:
    """The top k candidates by the model's score (ties by id), each with its largest
    feature contributions."""
    if not candidates.ids:
        return []
    terms = model.contributions(candidates)
    scores = terms.sum(axis=1)
    order = sorted(range(len(candidates.ids)), key=lambda i: (-scores[i], candidates.ids[i]))
    placed = []
    for i in order[:k]:
        largest = sorted(range(len(model.features)), key=lambda j: -abs(terms[i, j]))
        placed.append(Placed(candidates.ids[i], float(scores[i]),
                             {model.features[j]: round(float(terms[i, j]), 4)
                              for j in largest[:SHOWN_CONTRIBUTIONS]}))
    return placed


def save_model(model: OrderModel, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"format": FORMAT, **asdict(model)}, indent=1) + "\n",
                    encoding="utf-8")


def load_model(path: Path) -> OrderModel:
    """The model stored at `path`; refuses a file that is not one, or one whose features
    the search does not compute."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise OrderModelInvalid(f"cannot read the order model {path}: {err}") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise OrderModelInvalid(f"{path} is not a {FORMAT} model")
    unknown = [name for name in data.get("features", []) if name not in FEATURES]
    sizes = {len(data.get(key, [])) for key in ("features", "mean", "scale", "weights")}
    if unknown or len(sizes) != 1 or not data.get("features"):
        raise OrderModelInvalid(f"{path}: features the search does not compute "
                                 f"({unknown}) or lists of different lengths")
    return OrderModel(str(data.get("name", path.stem)), tuple(data["features"]),
                       tuple(map(float, data["mean"])), tuple(map(float, data["scale"])),
                       tuple(map(float, data["weights"])), dict(data.get("description", {})))


@cache
def model_at(path: Path | None) -> OrderModel:
    """The model in `path` (None: the shipped one), read once per process."""
    return load_model(path or SHIPPED_MODEL)

