"""The claim-pair classifier: a small head over frozen sentence vectors that says how a
cited claim (the premise) relates to a citing claim (the hypothesis), in SciNLI's four
classes (entailment, reasoning, contrasting, neutral).

Each claim is embedded once by the frozen encoder the model names (the int8 MiniLM of the
offline scorer) and tokenised once; a pair then costs only the head:

- dense features of the pair: [u, v, u*v, |u-v|, cos(u, v)] of the hypothesis vector u and
  the premise vector v, and word-overlap features (`overlap_features`), standardised with
  the training set's mean and scale;
- a hidden ReLU layer over them (none in a linear model), then four logits;
- plus a "wide" linear term per claim: hashed words, word pairs and opening words of the
  hypothesis and of the premise (`hashed_words`), each with a weight per class. It is
  computed once per claim, so a claim matrix pays it n + m times, not n x m.

The probability that the cited claim grounds the citing claim is P(entailment) +
P(reasoning), the two-class reading of the Crase paper's Table 6; the threshold for a
grounded verdict was chosen on the dev sets and is stored with the weights.

Everything is numpy in float64 from weights stored as float32: the same claims and vectors
give the same probabilities to the last digit. The file is JSON (the learned order's
habit) with each array as base64 of its little-endian bytes, written by
`research/claim_pair_training.py` (`crase train-entailment`).
"""

import base64
import json
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from crase.errors import EntailmentModelInvalid

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

FORMAT = "crase-claim-pair-classifier/1"
LABELS = ("entailment", "reasoning", "contrasting", "neutral")
GROUNDED = (0, 1)  # entailment and reasoning: the cited claim grounds the citing one
# The model `crase score` and the search use unless told otherwise (docs/entailment.md).
SHIPPED_MODEL = (Path(__file__).resolve().parent / "claim_pair_models"
                 / "minilm-int8-scinli.json")
WORD = re.compile(r"[a-z0-9]+")
MAX_WORDS = 200  # a claim is a sentence; a longer text counts its first 200 words
OPENING_WORDS = 3  # the hypothesis's first words carry what its linking phrase implied
OVERLAP_FEATURES = ("hypothesis_words_in_premise", "premise_words_in_hypothesis",
                    "shared_words_jaccard", "log_hypothesis_words", "log_premise_words",
                    "shared_numbers", "negation_in_hypothesis")
NEGATIONS = frozenset("not no never cannot neither nor without fail fails failed lack "
                      "lacks unable".split())
ARRAYS = ("mean", "scale", "hidden_weights", "hidden_bias", "out_weights", "out_bias",
          "wide_hypothesis", "wide_premise")


def claim_words(text: str) -> list[str]:
    return WORD.findall(text.lower())[:MAX_WORDS]


def hashed_words(words: Sequence[str], buckets: int) -> tuple[IntArray, FloatArray]:
    """Bucket indices and weights (unit length) of a claim's words, adjacent word pairs and
    opening words. crc32, not Python's salted hash: the same bucket in every process."""
    terms = [*words, *(f"{a} {b}" for a, b in zip(words, words[1:], strict=False)),
             *(f"^{i} {w}" for i, w in enumerate(words[:OPENING_WORDS]))]
    if not terms:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    counts: dict[int, float] = {}
    for term in terms:
        bucket = zlib.crc32(term.encode("utf-8")) % buckets
        counts[bucket] = counts.get(bucket, 0.0) + 1.0
    index = np.array(sorted(counts), dtype=np.int64)
    weight = np.array([counts[i] for i in index.tolist()])
    return index, weight / np.sqrt(weight @ weight)


def overlap_features(hypothesis: Sequence[str], premise: Sequence[str]) -> list[float]:
    """Word overlap of one pair, in the order of OVERLAP_FEATURES."""
    h, p = set(hypothesis), set(premise)
    shared = len(h & p)
    numbers_h = {w for w in h if w.isdigit()}
    return [shared / max(1, len(h)), shared / max(1, len(p)), shared / max(1, len(h | p)),
            float(np.log1p(len(hypothesis))), float(np.log1p(len(premise))),
            float(len(numbers_h & p) > 0), float(bool(h & NEGATIONS))]


@dataclass(frozen=True)
class ClaimSide:
    """What a set of claims contributes to every pair it is in, computed once."""

    vectors: FloatArray  # unit vectors, one row per claim
    words: list[list[str]]
    wide: FloatArray  # claims x classes: the wide term of each claim


@dataclass
class ClaimPairClassifier:
    """Weights of the head, the encoder whose vectors it reads, its stored threshold."""

    encoder: str
    buckets: int
    threshold: float
    arrays: dict[str, FloatArray]
    description: dict[str, Any] = field(default_factory=dict)
    name: str = "minilm-int8-scinli"

    @property
    def hidden_units(self) -> int:
        return int(self.arrays["hidden_bias"].shape[0])

    def side(self, vectors: NDArray[np.floating[Any]], texts: Sequence[str],
             role: str) -> ClaimSide:
        """`role` is "hypothesis" (citing claims) or "premise" (cited claims)."""
        table = self.arrays[f"wide_{role}"]
        words = [claim_words(text) for text in texts]
        wide = np.zeros((len(texts), len(LABELS)))
        for row, claim in enumerate(words):
            index, weight = hashed_words(claim, self.buckets)
            wide[row] = weight @ table[index] if index.size else 0.0
        return ClaimSide(np.asarray(vectors, dtype=np.float64), words, wide)

    def dense_features(self, citing: ClaimSide, cited: ClaimSide) -> FloatArray:
        """(n x m) x features, rows in citing-major order, before standardisation."""
        return pair_features(citing.vectors, cited.vectors, citing.words, cited.words)

    def logits(self, citing: ClaimSide, cited: ClaimSide) -> FloatArray:
        """n x m x classes."""
        x = (self.dense_features(citing, cited) - self.arrays["mean"]) / self.arrays["scale"]
        if self.hidden_units:
            x = np.maximum(x @ self.arrays["hidden_weights"] + self.arrays["hidden_bias"], 0.0)
        out = x @ self.arrays["out_weights"] + self.arrays["out_bias"]
        n, m = len(citing.words), len(cited.words)
        return (out.reshape(n, m, len(LABELS)) + citing.wide[:, None, :]
                + cited.wide[None, :, :])

    def probabilities(self, citing: ClaimSide, cited: ClaimSide) -> FloatArray:
        """n x m x classes, each row summing to 1 (classes in LABELS order)."""
        return softmax(self.logits(citing, cited))


def pair_features(u: FloatArray, v: FloatArray, hypothesis_words: Sequence[Sequence[str]],
                  premise_words: Sequence[Sequence[str]]) -> FloatArray:
    """Every (hypothesis i, premise j) pair's dense features, row i * m + j."""
    n, m = u.shape[0], v.shape[0]
    uu = np.repeat(u, m, axis=0)
    vv = np.tile(v, (n, 1))
    cosine = np.sum(uu * vv, axis=1, keepdims=True)
    overlap = np.array([overlap_features(h, p) for h in hypothesis_words
                        for p in premise_words]).reshape(n * m, len(OVERLAP_FEATURES))
    return np.hstack([uu, vv, uu * vv, np.abs(uu - vv), cosine, overlap])


def softmax(logits: FloatArray) -> FloatArray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def encode_array(array: FloatArray) -> dict[str, Any]:
    data = np.ascontiguousarray(array, dtype="<f4")
    return {"shape": list(data.shape), "dtype": "<f4",
            "data": base64.b64encode(data.tobytes()).decode("ascii")}


def decode_array(stored: dict[str, Any]) -> FloatArray:
    raw = np.frombuffer(base64.b64decode(stored["data"]), dtype=stored["dtype"])
    return raw.astype(np.float64).reshape(stored["shape"])


def model_json(model: ClaimPairClassifier) -> str:
    """The file's text: the same model always gives the same bytes."""
    return json.dumps({"format": FORMAT, "name": model.name, "encoder": model.encoder,
                       "labels": list(LABELS), "buckets": model.buckets,
                       "threshold": model.threshold, "description": model.description,
                       "arrays": {k: encode_array(model.arrays[k]) for k in ARRAYS}},
                      indent=1, sort_keys=True) + "\n"


def save_classifier(model: ClaimPairClassifier, path: Path) -> None:
    path.write_text(model_json(model), encoding="utf-8")


def round_weights(model: ClaimPairClassifier) -> ClaimPairClassifier:
    """The model as it will be read back: every array through float32, as stored."""
    arrays = {k: np.asarray(v, dtype="<f4").astype(np.float64) for k, v in model.arrays.items()}
    return ClaimPairClassifier(model.encoder, model.buckets, model.threshold, arrays,
                               model.description, model.name)


def load_classifier(path: Path | None = None) -> ClaimPairClassifier:
    """The model in `path` (default: the shipped one); EntailmentModelInvalid says what is
    wrong with a file that is not one."""
    path = path or SHIPPED_MODEL
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise EntailmentModelInvalid(
            f"{path} does not exist; give a file `crase train-entailment` wrote") from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise EntailmentModelInvalid(
            f"{path} is not a claim-pair model ({error}); retrain it with "
            "`crase train-entailment`") from error
    if not isinstance(stored, dict) or stored.get("format") != FORMAT:
        raise EntailmentModelInvalid(
            f"{path} is not a {FORMAT} file; retrain it with `crase train-entailment`")
    if tuple(stored.get("labels", ())) != LABELS:
        raise EntailmentModelInvalid(f"{path} has classes {stored.get('labels')}, not "
                                     f"{list(LABELS)}; retrain it with `crase train-entailment`")
    try:
        arrays = {k: decode_array(stored["arrays"][k]) for k in ARRAYS}
        return ClaimPairClassifier(str(stored["encoder"]), int(stored["buckets"]),
                                   float(stored["threshold"]), arrays,
                                   dict(stored.get("description", {})), str(stored["name"]))
    except (KeyError, TypeError, ValueError) as error:
        raise EntailmentModelInvalid(
            f"{path} lacks part of a model ({error}); retrain it with "
            "`crase train-entailment`") from error
