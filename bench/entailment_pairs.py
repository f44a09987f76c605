"""`crase bench entailment`: how well, and how fast, an entailment scorer tells a grounded
claim pair from one that is not, on the SciNLI / MSciNLI pairs (docs/entailment.md).

    crase bench entailment --pairs FILE.csv --scorer NAME [--limit N] [--seed S] [--json OUT]
    python -m crase.bench.entailment_pairs calibrate --pairs DEV.csv [--pairs DEV2.csv]

Each pair is one edge with one claim on each side, scored through the EntailmentScorer
protocol exactly as the search asks it: ([citing claim = sentence2], [cited claim =
sentence1]) -> a 1 x 1 matrix. Two classes as the Crase paper's Table 6: grounded =
entailment or reasoning, not = contrasting or neutral; a pair is called grounded where its
score reaches the scorer's stored threshold. That threshold is chosen on the dev sets and
stored with the scorer (the cosine scorers' table in search/roles/cosine_entailment.py,
written by `calibrate`; the classifier's in its model file; 0.5 on the model prompt's
scale), never on the file being scored. Four-class macro F1 only for a scorer that names
the four classes (the classifier); null for the others.

Scorers: `shipped` (what the search builds from the settings), `offline-minilm-cosine`,
`offline-minilm-int8-cosine`, `classifier`, and `model:<packaged model>` (the local
llama.cpp server through the project's own client; started unless it already serves that
model, stopped again only if started here). `--limit N` scores a sample balanced over the
four labels, seeded, in file order; the model scorer on a CPU needs one.
"""

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import numpy as np
from numpy.typing import NDArray

from crase.errors import EvaluationError, LocalModelUnavailable
from crase.models.claim_encoders import claim_encoder
from crase.models.claim_pair.classifier import GROUNDED, LABELS
from crase.models.claim_pair.metrics import f1_score, macro_f1
from crase.models.claim_pair.training import choose_threshold
from crase.research.entailment_data import read_labelled_pairs
from crase.scoring.claims import Claim
from crase.search.roles.cosine_entailment import CosineEntailmentScorer
from crase.search.roles.protocols import EntailmentScorer
from crase.settings import ClaimEncoderChoice, LocalModelName, Settings

Pair = tuple[str, str, str]  # (sentence1 = cited claim, sentence2 = citing claim, label)
GROUNDED_LABELS = frozenset(LABELS[i] for i in GROUNDED)  # entailment, reasoning
# Cosine scorer name -> the claim encoder choice that gives it (ClaimEncoderChoice).
COSINE_ENCODERS: dict[str, ClaimEncoderChoice] = {
    "offline-minilm-cosine": "numpy", "offline-minilm-int8-cosine": "onnx-int8"}
COSINE_SCORERS = tuple(COSINE_ENCODERS)
MODEL_PREFIX = "model:"
MODEL_SCORERS = tuple(f"{MODEL_PREFIX}{name}" for name in get_args(LocalModelName))
SCORERS = ("shipped", *COSINE_SCORERS, "classifier", *MODEL_SCORERS)
DIGITS = 4  # figures are rounded to this many decimals


@dataclass
class ScorerUnderTest:
    scorer: EntailmentScorer
    threshold: float
    # (sentence1, sentence2) -> one of LABELS per pair; None: two classes only.
    four_class: Callable[[list[tuple[str, str]]], list[str]] | None = None
    close: Callable[[], None] = lambda: None


def is_grounded(label: str) -> bool:
    return label in GROUNDED_LABELS


def balanced_sample(pairs: Sequence[Pair], limit: int, seed: int) -> list[Pair]:
    """`limit` pairs, as even over the four labels as the file allows (the first labels
    take the remainder), drawn with `seed`, in file order."""
    if limit < 1:
        raise EvaluationError(f"--limit must be at least 1, got {limit}")
    rng = random.Random(seed)
    chosen: list[int] = []
    by_label = {label: [i for i, pair in enumerate(pairs) if pair[2] == label]
                for label in LABELS}
    wanted = {label: limit // len(LABELS) + (i < limit % len(LABELS))
              for i, label in enumerate(LABELS)}
    for label in LABELS:
        rows = by_label[label]
        chosen.extend(rng.sample(rows, min(wanted[label], len(rows))))
    return [pairs[i] for i in sorted(chosen)]


def claim_of(text: str) -> Claim:
    # The claim type is not part of the scorers' input; the text is.
    return Claim(text, "EMPIRICAL", text)


def score_pairs(scorer: EntailmentScorer, pairs: Sequence[Pair]
                ) -> tuple[NDArray[np.float64], int, float]:
    """(each pair's score, pairs whose matrix failed, seconds), in one batched call. A
    failed pair counts as not grounded (score -inf): the search would not ground it."""
    batch = [([claim_of(citing)], [claim_of(cited)]) for cited, citing, _ in pairs]
    started = time.perf_counter()
    matrices = scorer.score(batch)
    seconds = time.perf_counter() - started
    scores = np.array([-np.inf if m is None else float(m[0, 0]) for m in matrices])
    return scores, sum(m is None for m in matrices), seconds


def two_class_figures(scores: NDArray[np.float64], truth: NDArray[np.bool_],
                      threshold: float) -> dict[str, float]:
    said = scores >= threshold
    return {"f1": round(f1_score(truth, said), DIGITS),
            "accuracy": round(float(np.mean(said == truth)), DIGITS),
            "threshold": threshold}


def load_figures() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def measure(under_test: ScorerUnderTest, pairs: Sequence[Pair]) -> dict[str, Any]:
    """The figures of one scorer on `pairs`, in the benchmark's keys."""
    scores, failed, seconds = score_pairs(under_test.scorer, pairs)
    if failed:
        print(f"{failed} of {len(pairs)} pairs got no matrix (counted as not grounded)",
              file=sys.stderr)
    truth = np.array([is_grounded(label) for _, _, label in pairs])
    four_class = None
    if under_test.four_class is not None:
        said = under_test.four_class([(cited, citing) for cited, citing, _ in pairs])
        four_class = round(macro_f1([label for _, _, label in pairs], said), DIGITS)
    return {"scorer": under_test.scorer.name, "pairs": len(pairs),
            "two_class": two_class_figures(scores, truth, under_test.threshold),
            "four_class": {"macro_f1": four_class},
            "pairs_per_s": round(len(pairs) / max(seconds, 1e-9), 3),
            "load": load_figures()}


def warm_up(scorer: EntailmentScorer) -> None:
    """Load the weights (or reach the server) before the clock starts."""
    scorer.score([([claim_of("The method converges.")], [claim_of("We prove convergence.")])])


def stored_threshold(scorer: EntailmentScorer) -> float:
    threshold = getattr(scorer, "threshold", None)
    if not isinstance(threshold, float):
        raise EvaluationError(
            f"the scorer {scorer.name} stores no two-class threshold; calibrate it on the dev "
            "sets first (`python -m crase.bench.entailment_pairs calibrate`)")
    return threshold


def offline_cosine(name: str) -> CosineEntailmentScorer:
    return CosineEntailmentScorer(claim_encoder(COSINE_ENCODERS[name]))


def cosine_scorer(name: str) -> ScorerUnderTest:
    scorer = offline_cosine(name)
    return ScorerUnderTest(scorer, stored_threshold(scorer))


def classifier_scorer(settings: Settings) -> ScorerUnderTest:
    """The classifier of CRASE_MODELS__ENTAILMENT_MODEL (unset: the shipped model), as the
    search builds it."""
    try:
        from crase.search.roles.classifier_entailment import ClassifierEntailmentScorer
    except ModuleNotFoundError as error:
        if error.name != "crase.search.roles.classifier_entailment":
            raise
        raise EvaluationError(
            "no claim-pair classifier in this installation (search/roles/"
            "classifier_entailment.py); choose another --scorer") from error
    scorer = ClassifierEntailmentScorer(settings.models.entailment_model)
    return ScorerUnderTest(scorer, scorer.threshold, scorer.four_class)


def model_scorer(settings: Settings, model: str) -> ScorerUnderTest:
    """The packaged model on the local server, every call through the project's client,
    nothing cached (each pair asks the model)."""
    from crase.models.chat import ModelRunner
    from crase.models.local_server import LocalModelServer, local_endpoint, served_name
    from crase.search.roles.model import ModelEntailmentScorer
    from crase.usage import ModelLedger

    local = settings.local_model.model_copy(update={"model": model})
    settings = settings.model_copy(update={"local_model": local})
    server = LocalModelServer(settings)
    status = server.status()
    if status.running and status.model != served_name(local):
        raise LocalModelUnavailable(
            f"the local model server already serves {status.model}, not {served_name(local)}; "
            "wait for its work to end and stop it (`crase models stop`), or bench that model")
    started_here = not status.running
    server.start()
    scorer = ModelEntailmentScorer(local_endpoint(local), ModelRunner(ModelLedger(), None))

    def close() -> None:
        if started_here:
            server.stop()

    return ScorerUnderTest(scorer, stored_threshold(scorer), close=close)


def shipped_scorer(settings: Settings) -> ScorerUnderTest:
    from crase.search.roles.from_settings import build_search_backends

    scorer = build_search_backends(settings).scorer
    print(f"shipped: {scorer.name}@{scorer.version}", file=sys.stderr)
    return ScorerUnderTest(scorer, stored_threshold(scorer),
                           getattr(scorer, "four_class", None))


def build_scorer(name: str, settings: Settings) -> ScorerUnderTest:
    """The scorer a --scorer name stands for (SCORERS), with its stored threshold."""
    if name == "shipped":
        return shipped_scorer(settings)
    if name in COSINE_SCORERS:
        return cosine_scorer(name)
    if name == "classifier":
        return classifier_scorer(settings)
    if name in MODEL_SCORERS:
        return model_scorer(settings, name.removeprefix(MODEL_PREFIX))
    raise EvaluationError(f"no entailment scorer {name!r}; choose one of {', '.join(SCORERS)}")


def run_entailment_bench(pairs_file: Path, scorer_name: str, settings: Settings,
                         limit: int | None = None, seed: int = 0) -> dict[str, Any]:
    """Read the file, build and warm the scorer, score every pair (or the balanced sample)."""
    pairs = read_labelled_pairs(pairs_file)
    if limit is not None:
        pairs = balanced_sample(pairs, limit, seed)
    under_test = build_scorer(scorer_name, settings)
    try:
        warm_up(under_test.scorer)
        return measure(under_test, pairs)
    finally:
        under_test.close()


def calibrate(scorer: EntailmentScorer, files: Sequence[Path]) -> dict[str, Any]:
    """The two-class threshold chosen on the pairs of all `files` together (the best
    accuracy, models/claim_pair/training.py's rule), and each file's figures at it."""
    scored = {}
    for path in files:
        pairs = read_labelled_pairs(path)
        scores, _, _ = score_pairs(scorer, pairs)
        scored[path] = (scores, np.array([is_grounded(label) for _, _, label in pairs]))
    threshold = choose_threshold(np.concatenate([s for s, _ in scored.values()]),
                                 np.concatenate([t for _, t in scored.values()]))
    return {"scorer": scorer.name, "threshold": threshold,
            "dev": {str(path): two_class_figures(scores, truth, threshold)
                    for path, (scores, truth) in scored.items()},
            "load": load_figures()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    actions = parser.add_subparsers(dest="action", required=True)
    calibration = actions.add_parser(
        "calibrate", help="choose each cosine scorer's two-class threshold on dev pairs "
        "(the values of TWO_CLASS_THRESHOLDS in search/roles/cosine_entailment.py)")
    calibration.add_argument("--pairs", type=Path, action="append", required=True,
                             metavar="FILE", help="a dev file (repeat: SciNLI and MSciNLI dev)")
    calibration.add_argument("--scorer", choices=COSINE_SCORERS, action="append",
                             help="default: both cosine scorers")
    args = parser.parse_args(argv)
    for name in args.scorer or COSINE_SCORERS:
        print(json.dumps(calibrate(offline_cosine(name), args.pairs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
