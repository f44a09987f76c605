"""Training the claim-pair classifier (models/claim_pair/classifier.py): multinomial
logistic regression fit by scikit-learn's L-BFGS.

Data: the human-labelled SciNLI training pairs, and optionally pairs mined from corpus
abstracts by their linking phrases (research/linked_sentences.py), weighted below the human
ones. The dev sets (SciNLI dev, MSciNLI dev) only choose the stored threshold and report
figures; the test sets are never read.

Every distinct sentence is embedded once by the frozen encoder the search uses for claims,
in sorted order and one call, so a rerun sees the same vectors. The head is a linear
softmax over the standardised dense pair features and each side's hashed words, with an L2
penalty, fit to convergence in one thread: the same data, encoder and options give the same
file to the last byte (tests/models/claim_pair/test_training.py).
"""

import math
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from crase.errors import ClaimPairFitFailed, NliDataInvalid, TrainingFlagInvalid
from crase.models.claim_pair.classifier import (
    GROUNDED,
    LABELS,
    ClaimPairClassifier,
    ClaimSide,
    claim_words,
    hashed_words,
    pair_features,
    round_weights,
)
from crase.models.claim_pair.metrics import f1_score, macro_f1
from crase.models.minilm import SentenceEncoder

if TYPE_CHECKING:
    from scipy import sparse

# scikit-learn, scipy and threadpoolctl (a second to import) are imported where a head is
# fit, as this module's other users (the entailment bench) need none of them.

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class TrainingOptions:
    """The head's options; the shipped model's are `crase train-entailment`'s defaults
    (api/commands/entailment_training.py)."""

    # L2 penalty per unit of the weighted mean loss: scikit-learn's C = 1 / (l2 x the
    # pairs' total weight), so a value means the same whatever the number of pairs.
    l2: float
    mined_weight: float  # a mined pair counts this much of a human-labelled one
    buckets: int = 2**15
    seed: int = 0  # the out-of-fold draw (--dev-folds) and scikit-learn's random_state
    max_iterations: int = 2000
    tolerance: float = 1e-6

    def __post_init__(self) -> None:
        check_positive("--l2", self.l2)
        check_positive("--mined-weight", self.mined_weight)
        if not 0 <= self.seed < 2**32:
            # numpy's and scikit-learn's generators take no other seed.
            raise TrainingFlagInvalid(f"--seed must be between 0 and 2**32 - 1, got "
                                      f"{self.seed}; rerun with such a seed")


def check_positive(flag: str, value: float) -> None:
    """A penalty or weight must be a finite number above 0: anything else fits a head of
    NaN or infinite weights, or none."""
    if not (math.isfinite(value) and value > 0):
        raise TrainingFlagInvalid(f"{flag} must be a finite number above 0, got {value}; "
                                  "rerun with such a value")


@dataclass(frozen=True)
class LabelledPair:
    """One sentence pair and its SciNLI class: a training file's row, or a pair mined from
    abstracts (research/linked_sentences.py)."""

    premise: str  # sentence1: plays the cited claim
    hypothesis: str  # sentence2: plays the citing claim
    label: str  # entailment, reasoning, contrasting or neutral
    source: str  # where it comes from: a file name, or "mined:<corpus>"


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
    # The features scoring computes (models/claim_pair/classifier.py), by the same function.
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
    """(pair position, bucket, weight) of every hashed word of the texts."""
    starts, ends = table.word_start[text_rows], table.word_start[text_rows + 1]
    lengths = ends - starts
    position = np.repeat(np.arange(len(text_rows)), lengths)
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    at = np.repeat(starts, lengths) + offsets
    return position, table.word_index[at], table.word_weight[at]


def wide_columns(table: PairTable, text_rows: IntArray, buckets: int) -> "sparse.csr_matrix":
    """One side's hashed words as a sparse pairs x buckets block (a text's buckets are
    distinct, so no entry is summed)."""
    from scipy import sparse

    position, bucket, weight = gather_words(table, text_rows)
    return sparse.csr_matrix((weight, (position, bucket)), shape=(len(text_rows), buckets))


def design_matrix(table: PairTable, mean: FloatArray, scale: FloatArray,
                  buckets: int) -> "sparse.csr_matrix":
    """[standardised dense features | hypothesis words | premise words], one row a pair:
    the columns whose weights are the stored out_weights, wide_hypothesis, wide_premise."""
    from scipy import sparse

    dense = sparse.csr_matrix((table.dense - mean) / scale)
    return sparse.hstack([dense, wide_columns(table, table.hypothesis, buckets),
                          wide_columns(table, table.premise, buckets)], format="csr")


def fit_head(table: PairTable, mean: FloatArray, scale: FloatArray,
             options: TrainingOptions) -> tuple[dict[str, FloatArray], int]:
    """Multinomial logistic regression by L-BFGS (scikit-learn) over the design matrix,
    one thread: (the head's arrays, L-BFGS iterations). `l2` is the penalty per unit of
    the weighted mean loss, so it means the same whatever the number of pairs."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    present = sorted(set(table.labels.tolist()))
    if present != list(range(len(LABELS))):
        raise NliDataInvalid(
            f"the training pairs hold only {[LABELS[i] for i in present]}; give pairs of "
            f"all four classes ({', '.join(LABELS)})")
    x = design_matrix(table, mean, scale, options.buckets)
    head = LogisticRegression(C=1.0 / (options.l2 * float(table.weights.sum())),
                              max_iter=options.max_iterations, tol=options.tolerance,
                              random_state=options.seed)
    # One thread: a sum split over threads may round differently from one machine to the
    # next, and the file must be the same bytes everywhere.
    with threadpool_limits(limits=1), warnings.catch_warnings():
        # The file records the iterations (33 at the shipped --l2, of 2,000 allowed).
        warnings.simplefilter("ignore", ConvergenceWarning)
        head.fit(x, table.labels, sample_weight=table.weights)
    coef = np.asarray(head.coef_, dtype=np.float64)
    if not np.all(np.isfinite(coef)) or not np.all(np.isfinite(head.intercept_)):
        raise ClaimPairFitFailed(
            "the fitted claim-pair head has weights that are not finite; check the "
            "training files' sentences and retrain with another --l2")
    dense, buckets = len(mean), options.buckets
    params = {"out_weights": coef[:, :dense].T.copy(),
              "out_bias": np.asarray(head.intercept_, dtype=np.float64),
              "wide_hypothesis": coef[:, dense:dense + buckets].T.copy(),
              "wide_premise": coef[:, dense + buckets:].T.copy()}
    return params, int(np.max(head.n_iter_))


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
    macro = macro_f1(labels, probabilities.argmax(axis=1), range(len(LABELS)))
    return Evaluation(len(labels), float(np.mean(truth == said)), f1_score(truth, said), macro)


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
    params, iterations = fit_head(train, mean, scale, options)
    return round_weights(ClaimPairClassifier(
        encoder, options.buckets, 0.5, {"mean": mean, "scale": scale, **params},
        {**description, "options": asdict(options), "iterations": iterations,
         "learner": "scikit-learn LogisticRegression (multinomial, lbfgs)"}))


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
    """Each dev pair's probabilities from the model whose training left its fold out. The
    folds are stratified by label within each set (SciNLI dev is sorted by label)."""
    fold_of = {name: stratified_folds(tables[name].labels, folds, options.seed)
               for name in dev}
    out = {name: np.zeros((len(pairs), len(LABELS))) for name, pairs in dev.items()}
    for fold in range(folds):
        kept = [pair for name, pairs in dev.items()
                for pair, f in zip(pairs, fold_of[name].tolist(), strict=True) if f != fold]
        model = fit_classifier([*training, *kept], texts, vectors, encoder, options, {})
        for name, table in tables.items():
            held = fold_of[name] == fold
            out[name][held] = predict(model, texts, vectors, table)[held]
    return out


def stratified_folds(labels: IntArray, folds: int, seed: int) -> IntArray:
    """The fold of each pair: `folds` folds, each class spread evenly over them, drawn with
    `seed`."""
    from sklearn.model_selection import StratifiedKFold

    fold_of = np.zeros(len(labels), dtype=np.int64)
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    try:
        for fold, (_, held) in enumerate(splitter.split(np.zeros(len(labels)), labels)):
            fold_of[held] = fold
    except ValueError as error:
        raise TrainingFlagInvalid(
            f"--dev-folds {folds} is more folds than a dev set's classes have pairs "
            f"({error}); rerun with fewer folds") from error
    return fold_of
