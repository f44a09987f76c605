"""The learned ranking: one model per query form over the candidates' features
(search/order/features.py), trained from a corpus's own citations
(search/order/training.py): LightGBM's LambdaRank (models/lambdarank.py), or a linear
model of the previous release kept where it measured better (search/order/linear_ranking.py).

Queries come in forms (search/request.py: query_form): `text` (a title and two sentences,
or any query of MIN_QUERY_WORDS words and more), `words` (fewer words: a title, a few
keywords, a short question), `papers` (the user starts from papers, with or without text)
and `idea` (one sentence describing an idea, as the idea workflow asks; only a caller that
says so asks in this form). A model is a folder: `model.json` names the format, each
form's learner and file, the features it ranks by and a description of its training
data; a `<form>.txt` is LightGBM's own text format, a `<form>.json` a linear model. A
folder without a form's model leaves that form's queries in the walk's order.

A candidate's score is the model's; its SHAP values (LambdaRank) or terms (linear), each
feature's share of the score, say which evidence placed each result.
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from crase.errors import OrderModelInvalid, RankingModelInvalid
from crase.models import lambdarank
from crase.models.lambdarank import RankingModel
from crase.search.order import linear_ranking
from crase.search.order.features import FEATURES, Candidates
from crase.search.order.linear_ranking import LinearRanking
from crase.search.request import ORDER_FORMS

# The model `crase search` uses unless settings name another: trained on hep-th papers
# published before 2003 only (docs/retrieval-quality.md).
SHIPPED_MODEL = Path(__file__).resolve().parent / "shipped" / "hepth-pre2003"
FORMAT = "crase-order-model/2"
LINEAR_FILE_FORMAT = "crase-linear-ranker/1"  # the previous release's one-file models
MANIFEST = "model.json"
# Each learner's file suffix and reader.
Reader = Callable[[str, Sequence[str], str], "RankingModel | LinearRanking"]
LEARNERS: dict[str, tuple[str, Reader]] = {"lambdarank": (".txt", lambdarank.from_text),
                                           "linear": (".json", linear_ranking.from_text)}
SHOWN_CONTRIBUTIONS = 5  # features listed per result, largest contribution first
# A model file's size past which it is not read: the shipped ones are a few hundred KB.
MAX_MODEL_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class OrderModel:
    """One query form's model."""

    name: str
    form: str
    ranking: RankingModel | LinearRanking
    description: dict[str, Any] = field(default_factory=dict)

    @property
    def features(self) -> tuple[str, ...]:
        return self.ranking.features

    @property
    def learner(self) -> str:
        return "linear" if isinstance(self.ranking, LinearRanking) else "lambdarank"

    def values(self, candidates: Candidates) -> np.ndarray:
        """The candidates' rows of this model's features."""
        return candidates.values[:, [FEATURES.index(name) for name in self.features]]

    def summary(self) -> dict[str, Any]:
        """What a Run records about the model that ordered its list."""
        training = {key: value for key, value in self.description.items()
                    if key != "sources"}  # the source list stays in the model file
        return {"name": self.name, "form": self.form, "learner": self.learner,
                "features": list(self.features), "training": training}


@dataclass(frozen=True)
class OrderModels:
    """A model folder: one model per query form it was trained for."""

    name: str
    forms: dict[str, OrderModel]

    def for_form(self, form: str) -> OrderModel | None:
        """The model that orders queries of `form`; None where the folder has none."""
        return self.forms.get(form)


@dataclass(frozen=True)
class Placed:
    id: str
    score: float
    contributions: dict[str, float]  # the largest shares of the score, by absolute value


def order_candidates(model: OrderModel, candidates: Candidates, k: int) -> list[Placed]:
    """The top k candidates by the model's score (ties by id), each with its largest
    feature contributions."""
    if not candidates.ids:
        return []
    values = model.values(candidates)
    scores = model.ranking.scores(values)
    order = sorted(range(len(candidates.ids)), key=lambda i: (-scores[i], candidates.ids[i]))
    top = order[:k]
    shares = model.ranking.contributions(values[top])
    placed = []
    for row, i in enumerate(top):
        largest = sorted(range(len(model.features)), key=lambda j: -abs(shares[row, j]))
        placed.append(Placed(candidates.ids[i], float(scores[i]),
                             {model.features[j]: round(float(shares[row, j]), 4)
                              for j in largest[:SHOWN_CONTRIBUTIONS]}))
    return placed


def save_models(models: OrderModels, folder: Path) -> None:
    """The manifest and one model file per form; a form no longer in `models` (or now of
    another learner) leaves no file behind."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {form: f"{form}{LEARNERS[model.learner][0]}" for form, model in models.forms.items()}
    for stale in [*folder.glob("*.txt"), *folder.glob("*.json")]:
        if stale.name != MANIFEST and stale.name not in files.values():
            stale.unlink()
    forms: dict[str, dict[str, object]] = {}
    manifest = {"format": FORMAT, "forms": forms}
    for form, model in sorted(models.forms.items()):
        (folder / files[form]).write_text(model.ranking.text, encoding="utf-8")
        forms[form] = {"learner": model.learner, "file": files[form],
                       "features": list(model.features), "description": model.description}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n",
                                   encoding="utf-8")


def manifest_path(path: Path) -> Path:
    """The manifest of a model folder (the folder itself or its model.json may be named)."""
    return path if path.name == MANIFEST else path / MANIFEST


def load_models(path: Path) -> OrderModels:
    """The model folder at `path` (or a previous release's one-file linear model); refuses
    one that is not of this format, or a form whose file is missing, unreadable, or ranks
    by features the search does not compute."""
    if path.is_file() and path.name != MANIFEST:
        return linear_file_models(path)
    manifest = manifest_path(path)
    data = read_json(manifest)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise OrderModelInvalid(f"{manifest} is not a {FORMAT} model: train one with "
                                "`crase train-order`")
    forms = data.get("forms")
    if not isinstance(forms, dict) or not forms or set(forms) - set(ORDER_FORMS):
        raise OrderModelInvalid(f"{manifest}: forms must be a mapping from {ORDER_FORMS}")
    name = manifest.parent.name  # a model is named by its folder, as a user names it
    return OrderModels(name, {form: form_model(manifest.parent, name, form, entry)
                              for form, entry in forms.items()})


def linear_file_models(path: Path) -> OrderModels:
    """A model file of the previous release (LINEAR_FILE_FORMAT: one JSON file, the text
    form's linear model at its top and the other forms' under `forms`), read as linear
    forms: such a file keeps ordering searches as it did."""
    data = read_json(path)
    if not isinstance(data, dict) or data.get("format") != LINEAR_FILE_FORMAT:
        raise OrderModelInvalid(f"{path} is neither a {FORMAT} model folder nor a "
                                f"{LINEAR_FILE_FORMAT} file: train one with `crase train-order`")
    entries = {str(data.get("form", "text")): data, **(data.get("forms") or {})}
    if set(entries) - set(ORDER_FORMS):
        raise OrderModelInvalid(f"{path}: forms must be a mapping from {ORDER_FORMS}")
    forms = {}
    for form, entry in entries.items():
        try:
            ranking = linear_ranking.from_text(json.dumps(
                {**entry, "format": linear_ranking.FORMAT}), entry.get("features", []),
                f"{path} ({form})")
        except (AttributeError, RankingModelInvalid) as err:
            raise OrderModelInvalid(f"{path}: the {form} model is not a linear model "
                                    f"({err})") from err
        if any(f not in FEATURES for f in ranking.features):
            raise OrderModelInvalid(f"{path}: the {form} model ranks by features the search "
                                    "does not compute")
        forms[form] = OrderModel(path.stem, form, ranking, dict(entry.get("description") or {}))
    return OrderModels(path.stem, forms)


def read_json(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_MODEL_BYTES:
            raise OrderModelInvalid(f"{path} is over {MAX_MODEL_BYTES} bytes: not a model")
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise OrderModelInvalid(f"cannot read the order model {path}: {err}") from err


def form_model(folder: Path, name: str, form: str, entry: Any) -> OrderModel:
    """One form's model from its manifest entry and its learner's file."""
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
        raise OrderModelInvalid(f"{folder / MANIFEST}: the {form} entry names no file")
    learner = entry.get("learner", "lambdarank")
    if learner not in LEARNERS:
        raise OrderModelInvalid(f"{folder / MANIFEST}: the {form} model's learner "
                                f"{learner!r} is not one of {sorted(LEARNERS)}")
    features = entry.get("features")
    if (not isinstance(features, list) or not features
            or any(f not in FEATURES for f in features)):
        raise OrderModelInvalid(f"{folder / MANIFEST}: the {form} model ranks by features "
                                "the search does not compute: train it again with this "
                                "version")
    path = folder / Path(entry["file"]).name  # never a path outside the folder
    try:
        if path.stat().st_size > MAX_MODEL_BYTES:
            raise OrderModelInvalid(f"{path} is over {MAX_MODEL_BYTES} bytes: not a model")
        text = path.read_text(encoding="utf-8")
        ranking = LEARNERS[learner][1](text, features, str(path))
    except (OSError, UnicodeDecodeError) as err:
        raise OrderModelInvalid(f"cannot read the order model {path}: {err}") from err
    except RankingModelInvalid as err:
        raise OrderModelInvalid(str(err)) from err
    return OrderModel(name, form, ranking, dict(entry.get("description") or {}))


@cache
def model_at(path: Path | None) -> OrderModels:
    """The models in `path` (None: the shipped ones), read once per process."""
    return load_models(path or SHIPPED_MODEL)
