"""Training the claim-pair classifier (models/claim_pair_classifier.py) with numpy alone.

Data: the human-labelled SciNLI training pairs, and optionally pairs mined from corpus
abstracts by their linking phrases (research/linked_sentences.py), weighted below the human
ones. The dev sets (SciNLI dev, MSciNLI dev) only choose the stored threshold and report
figures; the test sets are never read.

Every distinct sentence is embedded once by the frozen encoder the search uses for claims,
in sorted order and one call, so a rerun sees the same vectors. The head is fit by
minibatch Adam on the softmax cross-entropy over the four classes, with an L2 penalty; the
minibatch order comes from a seeded generator, so the same data, encoder and options give
the same file to the last byte (tests/research/test_claim_pair_training.py).
"""

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from crase.errors import NliDataInvalid
from crase.models.claim_pair_classifier import (
    GROUNDED,
    LABELS,
    ClaimPairClassifier,
    ClaimSide,
    claim_words,
    hashed_words,
    pair_features,
    round_weights,
    softmax,
)
from crase.models.minilm import SentenceEncoder
from crase.research.linked_sentences import LabelledPair

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class TrainingOptions:
    hidden_units: int = 0  # 0: a linear head
    epochs: int = 20
    batch_size: int = 256
    learning_rate: float = 1e-3
    l2: float = 1e-4  # on the dense weights
    wide_l2: float = 1e-5  # on the hashed-word weights
    mined_weight: float = 0.5  # a mined pair counts this much of a human-labelled one
    buckets: int = 2**15
    seed: int = 0


@dataclass
class PairTable:
    """Pairs as arrays: dense features, each side's hashed words (as CSR over the
    distinct texts), labels and weights."""

    dense: FloatArray
    hypothesis: IntArray  # text row of each pair's hypothesis
    premise: IntArray
    labels: IntArray
    weights: FloatArray
    word_start: IntArray  # CSR over texts: text t's buckets are word_index[start[t]:start[t+1]]
    word_index: IntArray
    word_weight: FloatArray


@dataclass
class Evaluation:
    pairs: int
    accuracy: float
    f1: float
    macro_f1: float

    def rounded(self) -> dict[str, float | int]:
        return {"pairs": self.pairs, "accuracy": round(self.accuracy, 4),
                "f1": round(self.f1, 4), "macro_f1": round(self.macro_f1, 4)}


@dataclass
class TrainingReport:
    training_pairs: dict[str, int] = field(default_factory=dict)
    dev: dict[str, dict[str, float | int]] = field(default_factory=dict)
    threshold: float = 0.5
    seconds_embedding: float = 0.0
    seconds_fitting: float = 0.0


def label_index(label: str) -> int:
    try:
        return LABELS.index(label)
    except ValueError as error:
        raise NliDataInvalid(f"label {label!r} is not one of {', '.join(LABELS)}") from error


def embed_texts(encoder: SentenceEncoder, pair_sets: Sequence[Sequence[LabelledPair]]
                ) -> tuple[list[str], FloatArray]:
    """Every distinct sentence of the sets, sorted, and its vector (one encoder call)."""
    texts = sorted({text for pairs in pair_sets for p in pairs
                    for text in (p.premise, p.hypothesis)})
    return texts, np.asarray(encoder.encode(texts), dtype=np.float64)


def pair_table(pairs: Sequence[LabelledPair], texts: list[str], vectors: FloatArray,
               buckets: int, mined_weight: float) -> PairTable:
    row = {text: i for i, text in enumerate(texts)}
    hypothesis = np.array([row[p.hypothesis] for p in pairs], dtype=np.int64)
    premise = np.array([row[p.premise] for p in pairs], dtype=np.int64)
    used = {*hypothesis.tolist(), *premise.tolist()}
    words = [claim_words(text) if i in used else [] for i, text in enumerate(texts)]
    # The features scoring computes (models/claim_pair_classifier.py), by the same function.
    claims = ClaimSide(vectors, words, np.zeros((len(texts), len(LABELS))))
    dense = pair_features(claims, claims, hypothesis, premise)
    start, index, weight = [0], [], []
    for t in range(len(texts)):
        found = hashed_words(words[t], buckets) if t in used else (np.zeros(0), np.zeros(0))
        index.append(found[0])
        weight.append(found[1])
        start.append(start[-1] + len(found[0]))
    return PairTable(
        dense, hypothesis, premise,
        np.array([label_index(p.label) for p in pairs], dtype=np.int64),
        np.array([mined_weight if p.source.startswith("mined:") else 1.0 for p in pairs]),
        np.array(start, dtype=np.int64), np.concatenate(index).astype(np.int64),
        np.concatenate(weight).astype(np.float64))


def gather_words(table: PairTable, text_rows: IntArray) -> tuple[IntArray, IntArray, FloatArray]:
    """(pair position in the batch, bucket, weight) of every hashed word of the texts."""
    starts, ends = table.word_start[text_rows], table.word_start[text_rows + 1]
    lengths = ends - starts
    position = np.repeat(np.arange(len(text_rows)), lengths)
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    at = np.repeat(starts, lengths) + offsets
    return position, table.word_index[at], table.word_weight[at]


class Adam:
    """Adam over a dict of arrays, updated in place."""

    def __init__(self, params: dict[str, FloatArray], rate: float) -> None:
        self.rate, self.step = rate, 0
        self.first = {k: np.zeros_like(v) for k, v in params.items()}
        self.second = {k: np.zeros_like(v) for k, v in params.items()}

    def update(self, params: dict[str, FloatArray], grads: dict[str, FloatArray]) -> None:
        self.step += 1
        b1, b2 = 0.9, 0.999
        for k, grad in grads.items():
            self.first[k] = b1 * self.first[k] + (1 - b1) * grad
            self.second[k] = b2 * self.second[k] + (1 - b2) * grad * grad
            m = self.first[k] / (1 - b1 ** self.step)
            s = self.second[k] / (1 - b2 ** self.step)
            params[k] -= self.rate * m / (np.sqrt(s) + 1e-8)


def initial_params(features: int, options: TrainingOptions,
                   rng: np.random.Generator) -> dict[str, FloatArray]:
    classes, hidden = len(LABELS), options.hidden_units
    params = {"hidden_weights": rng.normal(0, np.sqrt(2 / features), (features, hidden)),
              "hidden_bias": np.zeros(hidden),
              "out_weights": rng.normal(0, np.sqrt(1 / max(hidden or features, 1)),
                                        (hidden or features, classes)) * 0.1,
              "out_bias": np.zeros(classes),
              "wide_hypothesis": np.zeros((options.buckets, classes)),
              "wide_premise": np.zeros((options.buckets, classes))}
    return params


Gathered = tuple[IntArray, IntArray, FloatArray]


def forward(params: dict[str, FloatArray], x: FloatArray, table: PairTable,
            rows: IntArray) -> tuple[FloatArray, FloatArray, list[Gathered]]:
    """(logits, hidden activations, each side's gathered words) of the batch's pairs."""
    hidden: FloatArray = (np.maximum(x @ params["hidden_weights"] + params["hidden_bias"], 0.0)
              if params["hidden_bias"].size else x)
    logits = hidden @ params["out_weights"] + params["out_bias"]
    sides: list[Gathered] = []
    for name, text_rows in (("wide_hypothesis", table.hypothesis[rows]),
                            ("wide_premise", table.premise[rows])):
        position, bucket, weight = gather_words(table, text_rows)
        np.add.at(logits, position, weight[:, None] * params[name][bucket])
        sides.append((position, bucket, weight))
    return logits, hidden, sides


def fit_head(table: PairTable, mean: FloatArray, scale: FloatArray,
             options: TrainingOptions) -> dict[str, FloatArray]:
    rng = np.random.default_rng(options.seed)
    x_all = (table.dense - mean) / scale
    params = initial_params(x_all.shape[1], options, rng)
    adam = Adam(params, options.learning_rate)
    onehot = np.eye(len(LABELS))[table.labels]
    for _ in range(options.epochs):
        order = rng.permutation(len(table.labels))
        for start in range(0, len(order), options.batch_size):
            rows = order[start:start + options.batch_size]
            grads = head_gradients(params, x_all[rows], table, rows, onehot[rows],
                                   table.weights[rows], options)
            adam.update(params, grads)
    return params


def head_gradients(params: dict[str, FloatArray], x: FloatArray, table: PairTable,
                   rows: IntArray, targets: FloatArray, weights: FloatArray,
                   options: TrainingOptions) -> dict[str, FloatArray]:
    logits, hidden, sides = forward(params, x, table, rows)
    g = (softmax(logits) - targets) * (weights / weights.sum())[:, None]
    grads = {"out_weights": hidden.T @ g + options.l2 * params["out_weights"],
             "out_bias": g.sum(axis=0)}
    if params["hidden_bias"].size:
        back = (g @ params["out_weights"].T) * (hidden > 0)
        grads["hidden_weights"] = x.T @ back + options.l2 * params["hidden_weights"]
        grads["hidden_bias"] = back.sum(axis=0)
    for name, (position, bucket, weight) in zip(("wide_hypothesis", "wide_premise"), sides,
                                                strict=True):
        grad = options.wide_l2 * params[name]
        np.add.at(grad, bucket, weight[:, None] * g[position])
        grads[name] = grad
    return grads


def predict(model: ClaimPairClassifier, texts: list[str], vectors: FloatArray,
            table: PairTable) -> FloatArray:
    """Class probabilities of every pair of a table, by the scorer's own path
    (`ClaimPairClassifier.pair_probabilities`), so the figures are those a search gets."""
    hypotheses, premises = model.sides(vectors, texts)
    return model.pair_probabilities(hypotheses, premises, table.hypothesis, table.premise)


def evaluate(probabilities: FloatArray, labels: IntArray, threshold: float) -> Evaluation:
    """Two-class accuracy and F1 (grounded = entailment or reasoning, at `threshold`) and
    four-class macro F1 (the most probable class)."""
    truth = np.isin(labels, GROUNDED)
    said = probabilities[:, list(GROUNDED)].sum(axis=1) >= threshold
    chosen = probabilities.argmax(axis=1)
    macro = float(np.mean([f1_score(labels == c, chosen == c) for c in range(len(LABELS))]))
    return Evaluation(len(labels), float(np.mean(truth == said)), f1_score(truth, said), macro)


def f1_score(truth: NDArray[np.bool_], said: NDArray[np.bool_]) -> float:
    hits = float(np.sum(truth & said))
    return 2 * hits / float(np.sum(truth) + np.sum(said)) if hits else 0.0


def choose_threshold(grounded: FloatArray, truth: NDArray[np.bool_]) -> float:
    """The cut on P(grounded) with the best accuracy on the given pairs; among equals the
    one nearest 0.5. Candidates are a 0.005 grid, so the stored value is a round number."""
    grid = np.round(np.arange(0.05, 0.9501, 0.005), 3)
    accuracy = np.array([np.mean((grounded >= t) == truth) for t in grid])
    best = grid[accuracy >= accuracy.max() - 1e-12]
    return float(best[np.argmin(np.abs(best - 0.5))])


def fit_classifier(training: Sequence[LabelledPair], texts: list[str], vectors: FloatArray,
                   encoder: str, options: TrainingOptions,
                   description: dict[str, Any]) -> ClaimPairClassifier:
    """The head fit on `training` (threshold 0.5 until one is chosen), weights as stored."""
    train = pair_table(training, texts, vectors, options.buckets, options.mined_weight)
    mean = train.dense.mean(axis=0)
    scale = np.where(train.dense.std(axis=0) > 1e-6, train.dense.std(axis=0), 1.0)
    params = fit_head(train, mean, scale, options)
    return round_weights(ClaimPairClassifier(
        encoder, options.buckets, 0.5, {"mean": mean, "scale": scale, **params},
        {**description, "options": asdict(options)}))


def count_sources(pairs: Sequence[LabelledPair]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pair in pairs:
        kind = "mined" if pair.source.startswith("mined:") else "human"
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def set_threshold(model: ClaimPairClassifier, probabilities: Mapping[str, FloatArray],
                  labels: Mapping[str, IntArray], report: TrainingReport) -> None:
    """The cut with the best accuracy on all dev pairs together, and each set's figures."""
    if probabilities:
        pooled = np.concatenate([p[:, list(GROUNDED)].sum(axis=1)
                                 for p in probabilities.values()])
        truth = np.concatenate([np.isin(labels[name], GROUNDED) for name in probabilities])
        model.threshold = choose_threshold(pooled, truth)
    report.threshold = model.threshold
    report.dev = {name: evaluate(probabilities[name], labels[name], model.threshold).rounded()
                  for name in probabilities}


def train_classifier(training: Sequence[LabelledPair],
                     dev: Mapping[str, Sequence[LabelledPair]],
                     encoder: SentenceEncoder, options: TrainingOptions,
                     description: dict[str, Any],
                     dev_folds: int = 0) -> tuple[ClaimPairClassifier, TrainingReport]:
    """Fit on `training`, choose the threshold on all dev pairs together, report each dev set.

    With `dev_folds` k > 1 the dev pairs are trained on too: each fold's pairs are predicted
    by a model fit on the training pairs and the other folds (out-of-fold), the threshold
    and the reported figures come from those predictions, and the stored model is fit on
    the training pairs and every dev pair."""
    report = TrainingReport(training_pairs=count_sources(training))
    clock = time.perf_counter()
    texts, vectors = embed_texts(encoder, [training, *dev.values()])
    report.seconds_embedding = time.perf_counter() - clock
    clock = time.perf_counter()
    tables = {name: pair_table(pairs, texts, vectors, options.buckets, options.mined_weight)
              for name, pairs in dev.items()}
    labels = {name: table.labels for name, table in tables.items()}
    if dev_folds > 1:
        probabilities = out_of_fold(training, dev, tables, texts, vectors, encoder.name,
                                    options, dev_folds)
        everything = [*training, *(pair for pairs in dev.values() for pair in pairs)]
        model = fit_classifier(everything, texts, vectors, encoder.name, options, description)
        report.training_pairs["human"] = (report.training_pairs.get("human", 0)
                                          + sum(len(pairs) for pairs in dev.values()))
    else:
        model = fit_classifier(training, texts, vectors, encoder.name, options, description)
        probabilities = {name: predict(model, texts, vectors, table)
                         for name, table in tables.items()}
    report.seconds_fitting = time.perf_counter() - clock
    set_threshold(model, probabilities, labels, report)
    model.description = {**model.description, "training_pairs": report.training_pairs,
                         "dev": report.dev, "threshold_chosen_on": sorted(dev),
                         **({"dev_folds": dev_folds} if dev_folds > 1 else {})}
    return model, report


def out_of_fold(training: Sequence[LabelledPair], dev: Mapping[str, Sequence[LabelledPair]],
                tables: Mapping[str, PairTable], texts: list[str], vectors: FloatArray,
                encoder: str, options: TrainingOptions, folds: int) -> dict[str, FloatArray]:
    """Each dev pair's probabilities from the model whose training left its fold out."""
    rng = np.random.default_rng(options.seed)
    fold_of = {name: rng.integers(0, folds, len(pairs)) for name, pairs in dev.items()}
    out = {name: np.zeros((len(pairs), len(LABELS))) for name, pairs in dev.items()}
    for fold in range(folds):
        kept = [pair for name, pairs in dev.items()
                for pair, f in zip(pairs, fold_of[name].tolist(), strict=True) if f != fold]
        model = fit_classifier([*training, *kept], texts, vectors, encoder, options, {})
        for name, table in tables.items():
            held = fold_of[name] == fold
            out[name][held] = predict(model, texts, vectors, table)[held]
    return out
