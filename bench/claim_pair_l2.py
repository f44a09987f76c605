"""The claim-pair head's L2 penalty, chosen by measurement (docs/entailment.md):

    python -m crase.bench.claim_pair_l2 --nli ../shared/data/nli --l2 0.001 --l2 0.01 ...

For each `--l2`, stratified 5-fold cross-validation on the SciNLI human training pairs:
each fold's pairs are predicted by a head fit on the other four (research/
claim_pair_training.py's own fit), and the pooled out-of-fold predictions give two-class
accuracy at their best cut, four-class macro F1 and log loss. The dev sets are not used to
choose; each value's dev figures (a head fit on all training pairs, the threshold chosen
on both dev sets together, as `crase train-entailment` does) are printed beside them.
Every sentence is embedded once, in one sorted call, as the trainer does. One JSON line
per value.
"""

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from crase.models.claim_encoders import claim_encoder
from crase.models.claim_pair.classifier import GROUNDED, ClaimPairClassifier
from crase.models.claim_pair.recipe import DEV_FILES, SHIPPED, TRAINING_FILES
from crase.models.claim_pair.training import (
    FloatArray,
    IntArray,
    LabelledPair,
    TrainingOptions,
    TrainingReport,
    choose_threshold,
    embed_texts,
    evaluate,
    fit_classifier,
    pair_table,
    predict,
    set_threshold,
    stratified_folds,
)
from crase.research.entailment_data import read_labelled_pairs

FOLDS = 5
DIGITS = 4


def read_pairs(nli: Path, relative: str) -> list[LabelledPair]:
    return [LabelledPair(p, h, label, relative)
            for p, h, label in read_labelled_pairs(nli / relative)]


def log_loss(probabilities: FloatArray, labels: IntArray) -> float:
    chosen = probabilities[np.arange(len(labels)), labels]
    return float(-np.mean(np.log(np.clip(chosen, 1e-12, 1.0))))


def cross_validate(training: list[LabelledPair], texts: list[str], vectors: FloatArray,
                   options: TrainingOptions) -> dict[str, Any]:
    """Pooled out-of-fold figures of the head on the training pairs."""
    table = pair_table(training, texts, vectors, options.buckets, options.mined_weight)
    fold_of = stratified_folds(table.labels, FOLDS, options.seed)
    out = np.zeros((len(training), 4))
    iterations = []
    for fold in range(FOLDS):
        kept = [pair for pair, f in zip(training, fold_of.tolist(), strict=True) if f != fold]
        model = fit_classifier(kept, texts, vectors, "cv", options, {})
        iterations.append(model.description["iterations"])
        out[fold_of == fold] = predict(model, texts, vectors, table)[fold_of == fold]
    grounded = out[:, list(GROUNDED)].sum(axis=1)
    threshold = choose_threshold(grounded, np.isin(table.labels, GROUNDED))
    figures = evaluate(out, table.labels, threshold).rounded()
    return {**figures, "threshold": threshold,
            "log_loss": round(log_loss(out, table.labels), DIGITS),
            "iterations": max(iterations)}


def dev_figures(training: list[LabelledPair], dev: dict[str, list[LabelledPair]],
                texts: list[str], vectors: FloatArray,
                options: TrainingOptions) -> dict[str, Any]:
    model: ClaimPairClassifier = fit_classifier(training, texts, vectors, "dev", options, {})
    tables = {name: pair_table(pairs, texts, vectors, options.buckets, options.mined_weight)
              for name, pairs in dev.items()}
    report = TrainingReport()
    set_threshold(model, {name: predict(model, texts, vectors, table)
                          for name, table in tables.items()},
                  {name: table.labels for name, table in tables.items()}, report)
    return {"threshold": report.threshold, **report.dev}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nli", type=Path, required=True, metavar="DIR")
    parser.add_argument("--l2", type=float, action="append", required=True,
                        help="a penalty to measure (repeat)")
    args = parser.parse_args(argv)
    training = [pair for name in TRAINING_FILES for pair in read_pairs(args.nli, name)]
    dev = {name: read_pairs(args.nli, relative) for name, relative in DEV_FILES.items()}
    texts, vectors = embed_texts(claim_encoder("onnx-int8"), [training, *dev.values()])
    for l2 in args.l2:
        options = TrainingOptions(l2=l2, mined_weight=float(SHIPPED["mined_weight"]),
                                  seed=int(SHIPPED["seed"]))
        print(json.dumps({"l2": l2,
                          "cross_validation": cross_validate(training, texts, vectors,
                                                             options),
                          "dev": dev_figures(training, dev, texts, vectors, options)}),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
