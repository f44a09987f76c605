"""The learned ranking: a linear model over the candidates' features
(search/candidate_features.py), trained from a corpus's own citations
(search/order_training.py) and stored as JSON with the description of its training data.

A candidate's score is sum_j w_j (x_j - mean_j) / scale_j; each term is that feature's
contribution, so every result can show which evidence placed it. A model may use a subset
of the features (the ablations train without one group at a time).

Queries come in three forms (search/request.py: query_form), and one model file holds a
model for each form it was trained on: `text` (a title and two sentences, or any query of
MIN_QUERY_WORDS words and more: the file's own model), `words` (fewer words: a title, a
few keywords, a short question) and `papers` (the user starts from papers, with or without
text); the two others sit under the file's `forms`. A file without a form's model (any file written
before forms existed) leaves that form's queries in the walk's order.
"""

import json
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from crase.errors import OrderModelInvalid
from crase.search.candidate_features import FEATURES, Candidates
from crase.search.request import QUERY_FORMS

# The model `crase search` uses unless settings name another: trained on hep-th papers
# published before 2003 only (docs/retrieval-quality.md).
SHIPPED_MODEL = Path(__file__).resolve().parent / "order_models" / "hepth-pre2003.json"
FORMAT = "crase-linear-ranker/1"
SHOWN_CONTRIBUTIONS = 5  # features listed per result, largest contribution first


@dataclass(frozen=True)
class OrderModel:
    name: str
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    description: dict[str, Any] = field(default_factory=dict)
    form: str = "text"
    forms: dict[str, "OrderModel"] = field(default_factory=dict)  # the other forms' models

    def for_form(self, form: str) -> "OrderModel | None":
        """The model that orders queries of `form`; None where the file has none."""
        return self if form == self.form else self.forms.get(form)

    def contributions(self, candidates: Candidates) -> NDArray[np.float64]:
        """One row per candidate: each feature's term of the score."""
        columns = [FEATURES.index(name) for name in self.features]
        z = (candidates.values[:, columns] - np.array(self.mean)) / np.array(self.scale)
        return z * np.array(self.weights)

    def summary(self) -> dict[str, Any]:
        """What a Run records about the model that ordered its list."""
        training = {key: value for key, value in self.description.items()
                    if key != "sources"}  # the source list stays in the model file
        return {"name": self.name, "form": self.form, "features": list(self.features),
                "training": training}


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
    """The model and its other forms' models, as one JSON file."""
    data = {"format": FORMAT, **model_json(model),
            "forms": {form: model_json(other) for form, other in model.forms.items()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def model_json(model: OrderModel) -> dict[str, Any]:
    return {key: value for key, value in asdict(replace(model, forms={})).items()
            if key != "forms"}


def load_model(path: Path) -> OrderModel:
    """The model stored at `path`, with its other forms' models; refuses a file that is not
    one, or one whose features the search does not compute."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise OrderModelInvalid(f"cannot read the order model {path}: {err}") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise OrderModelInvalid(f"{path} is not a {FORMAT} model")
    forms = data.get("forms") or {}
    if not isinstance(forms, dict) or set(forms) - set(QUERY_FORMS):
        raise OrderModelInvalid(f"{path}: forms must be a mapping from {QUERY_FORMS}")
    model = model_from(data, path, str(data.get("form", "text")))
    return replace(model, forms={form: model_from(entry, path, form)
                                 for form, entry in forms.items()})


def model_from(data: Any, path: Path, form: str) -> OrderModel:
    """One form's model from its JSON object."""
    if not isinstance(data, dict) or form not in QUERY_FORMS:
        raise OrderModelInvalid(f"{path}: the {form} model is not one of {QUERY_FORMS}")
    unknown = [name for name in data.get("features", []) if name not in FEATURES]
    sizes = {len(data.get(key, [])) for key in ("features", "mean", "scale", "weights")}
    if unknown or len(sizes) != 1 or not data.get("features"):
        raise OrderModelInvalid(f"{path}: features the search does not compute "
                                 f"({unknown}) or lists of different lengths ({form})")
    return OrderModel(str(data.get("name", path.stem)), tuple(data["features"]),
                      tuple(map(float, data["mean"])), tuple(map(float, data["scale"])),
                      tuple(map(float, data["weights"])), dict(data.get("description", {})),
                      form)


@cache
def model_at(path: Path | None) -> OrderModel:
    """The model in `path` (None: the shipped one), read once per process."""
    return load_model(path or SHIPPED_MODEL)

