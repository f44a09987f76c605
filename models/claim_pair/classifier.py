"""The claim-pair classifier: a small head over frozen sentence vectors that says how a
cited claim (the premise) relates to a citing claim (the hypothesis), in SciNLI's four
classes (entailment, reasoning, contrasting, neutral).

Each claim is embedded once by the frozen encoder the model names (the int8 MiniLM of the
offline scorer) and tokenised once; a pair then costs only the head:

- dense features of the pair: [u, v, u*v, |u-v|, cos(u, v)] of the hypothesis vector u and
  the premise vector v, and word-overlap features (`overlap_features`), standardised with
  the training set's mean and scale;
- a linear map of them to four logits;
- plus a "wide" linear term per claim: hashed words, word pairs and opening words of the
  hypothesis and of the premise (`hashed_words`), each with a weight per class. It is
  computed once per claim, so a claim matrix pays it n + m times, not n x m.

The probability that the cited claim grounds the citing claim is P(entailment) +
P(reasoning), the two-class reading of the Crase paper's Table 6; the threshold for a
grounded verdict was chosen on the dev sets and is stored with the weights.

The weights are a multinomial logistic regression fit by scikit-learn
(`models/claim_pair/training.py`, `crase train-entailment`); scoring needs numpy alone.
Everything is numpy in float64 from weights stored as float32: the same claims and vectors
give the same probabilities to the last digit. The file is plain JSON (no pickle) with
each array as base64 of its little-endian bytes. A file of the earlier format (a hand-fit
head, possibly with a hidden layer) is refused with EntailmentModelOutdated.
"""

import base64
import binascii
import json
import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from crase.errors import EntailmentModelInvalid, EntailmentModelOutdated
from crase.user_files import read_user_text

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

FORMAT = "crase-claim-pair-classifier/2"
OUTDATED_FORMATS = ("crase-claim-pair-classifier/1",)
MAX_MODEL_BYTES = 256_000_000  # the shipped model has 1.4 MB; 2**20 buckets would be 45 MB
MAX_BUCKETS = 1 << 24
LABELS = ("entailment", "reasoning", "contrasting", "neutral")
GROUNDED = (0, 1)  # entailment and reasoning: the cited claim grounds the citing one
# The model `crase score` and the search use unless told otherwise (docs/entailment.md).
SHIPPED_MODEL = Path(__file__).resolve().parent / "shipped" / "minilm-int8-scinli.json"
WORD = re.compile(r"[a-z0-9]+")
PAIR_CHUNK = 4096  # pairs whose features are held at once (4096 x 1544 floats: 50 MB)
MAX_WORDS = 200  # a claim is a sentence; a longer text counts its first 200 words
OPENING_WORDS = 3  # the hypothesis's first words carry what its linking phrase implied
OVERLAP_FEATURES = ("hypothesis_words_in_premise", "premise_words_in_hypothesis",
                    "shared_words_jaccard", "log_hypothesis_words", "log_premise_words",
                    "shared_numbers", "negation_in_hypothesis")
NEGATIONS = frozenset("not no never cannot neither nor without fail fails failed lack "
                      "lacks unable".split())
ARRAYS = ("mean", "scale", "out_weights", "out_bias", "wide_hypothesis", "wide_premise")


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

    def claim_terms(self, texts: Sequence[str]) -> tuple[list[list[str]], FloatArray,
                                                         FloatArray]:
        """Each claim's words and its wide term as a hypothesis and as a premise
        (claims x classes each): what a claim brings to every pair it is in."""
        words = [claim_words(text) for text in texts]
        wide = np.zeros((2, len(texts), len(LABELS)))
        tables = (self.arrays["wide_hypothesis"], self.arrays["wide_premise"])
        for row, claim in enumerate(words):
            index, weight = hashed_words(claim, self.buckets)
            if index.size:
                for side, table in enumerate(tables):
                    wide[side, row] = weight @ table[index]
        return words, wide[0], wide[1]

    def sides(self, vectors: NDArray[np.floating[Any]], texts: Sequence[str]
              ) -> tuple[ClaimSide, ClaimSide]:
        """Every claim of a batch as a hypothesis and as a premise."""
        return claim_sides(vectors, *self.claim_terms(texts))

    def pair_probabilities(self, hypotheses: ClaimSide, premises: ClaimSide,
                           hypothesis_rows: IntArray, premise_rows: IntArray) -> FloatArray:
        """Class probabilities (pairs x classes, LABELS order) of the pairs (hypothesis
        row k, premise row k), in chunks of PAIR_CHUNK pairs."""
        out = np.zeros((len(hypothesis_rows), len(LABELS)))
        for start in range(0, len(hypothesis_rows), PAIR_CHUNK):
            h = hypothesis_rows[start:start + PAIR_CHUNK]
            p = premise_rows[start:start + PAIR_CHUNK]
            dense = pair_features(hypotheses, premises, h, p)
            out[start:start + len(h)] = softmax(
                self.dense_logits(dense) + hypotheses.wide[h] + premises.wide[p])
        return out

    def dense_logits(self, dense: FloatArray) -> FloatArray:
        x = (dense - self.arrays["mean"]) / self.arrays["scale"]
        return x @ self.arrays["out_weights"] + self.arrays["out_bias"]


def claim_sides(vectors: NDArray[np.floating[Any]], words: list[list[str]],
                hypothesis: FloatArray, premise: FloatArray) -> tuple[ClaimSide, ClaimSide]:
    """Claims as hypotheses and as premises, from their vectors and their terms
    (ClaimPairClassifier.claim_terms)."""
    unit = np.asarray(vectors, dtype=np.float64)
    return ClaimSide(unit, words, hypothesis), ClaimSide(unit, words, premise)


def pair_features(hypotheses: ClaimSide, premises: ClaimSide, hypothesis_rows: IntArray,
                  premise_rows: IntArray) -> FloatArray:
    """The dense features of the pairs (hypothesis row k, premise row k), before
    standardisation: the one function training and scoring both use."""
    u, v = hypotheses.vectors[hypothesis_rows], premises.vectors[premise_rows]
    overlap = np.array([overlap_features(hypotheses.words[h], premises.words[p])
                        for h, p in zip(hypothesis_rows.tolist(), premise_rows.tolist(),
                                        strict=True)]).reshape(len(u), len(OVERLAP_FEATURES))
    return np.hstack([u, v, u * v, np.abs(u - v), np.sum(u * v, axis=1, keepdims=True),
                      overlap])


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
    """The model's file; a model no scorer could use (a weight that is not a finite
    number, after an L2 penalty of NaN) is refused rather than written."""
    problem = model_problem(model)
    if problem is not None:
        raise EntailmentModelInvalid(f"the trained model is not written to {path}: "
                                     f"{problem}; check the training options")
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
        stored = json.loads(read_user_text(path, "the claim-pair model", MAX_MODEL_BYTES))
    except FileNotFoundError as error:
        raise EntailmentModelInvalid(
            f"{path} does not exist; give a file `crase train-entailment` wrote") from error
    except RecursionError as error:
        raise EntailmentModelInvalid(f"{path} is JSON nested too deeply to be a claim-pair "
                                     "model; retrain it with `crase train-entailment`") from error
    except ValueError as error:  # not UTF-8, not JSON, an integer past Python's digit limit
        raise EntailmentModelInvalid(
            f"{path} is not a claim-pair model ({one_line(error)}); retrain it with "
            "`crase train-entailment`") from error
    if isinstance(stored, dict) and stored.get("format") in OUTDATED_FORMATS:
        raise EntailmentModelOutdated(
            f"{path} is a {stored['format']} model, which this version no longer reads; "
            "retrain it with `crase train-entailment`, or unset "
            "CRASE_MODELS__ENTAILMENT_MODEL to use the shipped model")
    if not isinstance(stored, dict) or stored.get("format") != FORMAT:
        raise EntailmentModelInvalid(
            f"{path} is not a {FORMAT} file; retrain it with `crase train-entailment`")
    if tuple(stored.get("labels", ())) != LABELS:
        raise EntailmentModelInvalid(f"{path} has classes {stored.get('labels')}, not "
                                     f"{list(LABELS)}; retrain it with `crase train-entailment`")
    try:
        arrays = {k: decode_array(stored["arrays"][k]) for k in ARRAYS}
        model = ClaimPairClassifier(str(stored["encoder"]), int(stored["buckets"]),
                                    float(stored["threshold"]), arrays,
                                    dict(stored.get("description", {})), str(stored["name"]))
    except (KeyError, TypeError, ValueError, binascii.Error) as error:
        raise EntailmentModelInvalid(
            f"{path} lacks part of a model ({one_line(error)}); retrain it with "
            "`crase train-entailment`") from error
    problem = model_problem(model)
    if problem is not None:
        raise EntailmentModelInvalid(f"{path}: {problem}; retrain it with "
                                     "`crase train-entailment`")
    return model


def model_problem(model: ClaimPairClassifier) -> str | None:
    """What makes the weights unusable (a threshold or a weight that is not a finite
    number, buckets that no word can fall in, tables of other shapes), or None."""
    if not 1 <= model.buckets <= MAX_BUCKETS:
        return f"buckets is {model.buckets}, not 1 to {MAX_BUCKETS:,}"
    if not math.isfinite(model.threshold) or not 0 <= model.threshold <= 1:
        return f"threshold is {model.threshold}, not a probability from 0 to 1"
    for name, array in model.arrays.items():
        if not np.all(np.isfinite(array)):
            return f"the weights {name} hold values that are not finite numbers"
    for name in ("wide_hypothesis", "wide_premise"):
        if model.arrays[name].shape != (model.buckets, len(LABELS)):
            return (f"the table {name} has shape {model.arrays[name].shape}, not "
                    f"({model.buckets}, {len(LABELS)})")
    return None


def one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:200]
