"""`crase train-entailment`: the claim-pair classifier of the classifier entailment scorer,
trained on this machine from the SciNLI files and corpus abstracts
(models/claim_pair/training.py; docs/entailment.md)."""

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from crase.errors import NliDataInvalid, TrainingFlagInvalid
from crase.models.claim_pair.recipe import DEV_FILES, SHIPPED, TRAINING_FILES
from crase.settings import Settings

if TYPE_CHECKING:
    from crase.models.claim_pair.training import TrainingOptions

ORDER = 86  # place in `crase --help` (api/cli.py): after train-order


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    train = subparsers.add_parser(
        "train-entailment", help="train the claim-pair classifier (entailment scorer)",
        description="Embeds every sentence once with the int8 MiniLM claim encoder and "
                    "fits a multinomial logistic regression (scikit-learn, L-BFGS) over "
                    "pair features on the SciNLI human-labelled training pairs and, with "
                    "--mine, on pairs mined from corpus abstracts by their linking phrases. "
                    "The dev sets choose the stored threshold and give the printed figures. "
                    "Deterministic: the same inputs and flags write the same file.")
    train.add_argument("--out", type=Path, required=True, help="the model file (JSON)")
    train.add_argument("--nli", type=Path, required=True, metavar="DIR",
                       help="the folder holding scinli/ and mscinli/ (../shared/data/nli)")
    train.add_argument("--mine", type=Path, action="append", default=[], metavar="FILE",
                       help="a corpus's papers.jsonl whose abstracts give linked pairs "
                            "(repeat for several corpora)")
    train.add_argument("--l2", type=float, default=SHIPPED["l2"],
                       help="L2 penalty per unit of the mean training loss, a finite number "
                            "above 0 (scikit-learn's C = 1 / (l2 x the pairs' total weight); "
                            f"default {SHIPPED['l2']})")
    train.add_argument("--mined-weight", type=float, default=SHIPPED["mined_weight"],
                       help="weight of a mined pair against a human-labelled one, above 0 "
                            f"(default {SHIPPED['mined_weight']})")
    train.add_argument("--neutral-share", type=float, default=SHIPPED["neutral_share"],
                       help="share of abstracts that give a neutral pair, 0 to 1 (default "
                            f"{SHIPPED['neutral_share']})")
    train.add_argument("--seed", type=int, default=SHIPPED["seed"],
                       help="seed of the neutral draw and of the --dev-folds folds")
    train.add_argument("--dev-folds", type=int, default=0, metavar="K",
                       help="train on the dev pairs too: K-fold (K >= 2, stratified by "
                            "label) out-of-fold predictions "
                            "choose the threshold and give the printed figures, and the "
                            "model is fit on every pair (default 0: dev only chooses)")
    train.add_argument("--limit", type=int, default=None,
                       help="read only the first N (N >= 1) pairs of each file and N "
                            "abstracts of each corpus (a quick check, not a model to ship)")
    train.set_defaults(handler=run_train_entailment)


def run_train_entailment(args: argparse.Namespace, settings: Settings) -> int:
    import itertools

    from crase.models.claim_encoders import claim_encoder
    from crase.models.claim_pair.classifier import save_classifier
    from crase.models.claim_pair.training import LabelledPair, train_classifier
    from crase.research.entailment_data import read_labelled_pairs
    from crase.research.linked_sentences import mine_pairs, read_abstracts

    options = checked_options(args)
    if not args.nli.is_dir():
        raise NliDataInvalid(f"{args.nli} is not a folder; give --nli the folder holding "
                             "scinli/ and mscinli/")

    def read(relative: str) -> list[LabelledPair]:
        rows = read_labelled_pairs(args.nli / relative)[:args.limit]
        return [LabelledPair(p, h, label, relative) for p, h, label in rows]

    training = [pair for name in TRAINING_FILES for pair in read(name)]
    dev = {name: read(relative) for name, relative in DEV_FILES.items()}
    for papers in args.mine:
        abstracts = itertools.islice(read_abstracts(papers), args.limit)
        training += mine_pairs(abstracts, f"mined:{papers.parent.name}", args.neutral_share,
                               args.seed)
    description = {"training_files": list(TRAINING_FILES),
                   "mined_from": [f"{p.parent.name}/{p.name}" for p in args.mine],
                   "neutral_share": args.neutral_share, "limit": args.limit}
    model, report = train_classifier(training, dev, claim_encoder("onnx-int8"), options,
                                     description, args.dev_folds)
    save_classifier(model, args.out)
    print(f"model: {args.out} (threshold {report.threshold}; pairs {report.training_pairs}; "
          f"embedding {report.seconds_embedding:.0f} s, fitting {report.seconds_fitting:.0f} s)",
          file=sys.stderr)
    for name, figures in report.dev.items():
        print(f"{name}: {figures}")
    return 0


def checked_options(args: argparse.Namespace) -> "TrainingOptions":
    """The head's options from the flags; a flag outside its range is a TrainingFlagInvalid
    before any data is read, so no run ends in a file of NaN weights."""
    from crase.models.claim_pair.training import TrainingOptions

    if args.limit is not None and args.limit < 1:
        raise TrainingFlagInvalid(f"--limit must be at least 1, got {args.limit}; rerun with "
                                  "a positive count, or without --limit for every pair")
    if args.dev_folds == 1 or args.dev_folds < 0:
        raise TrainingFlagInvalid(f"--dev-folds must be 0 (dev only chooses) or at least 2, "
                                  f"got {args.dev_folds}; rerun with such a count")
    if not 0 <= args.neutral_share <= 1:
        raise TrainingFlagInvalid(f"--neutral-share must be between 0 and 1, got "
                                  f"{args.neutral_share}; rerun with such a share")
    return TrainingOptions(l2=args.l2, mined_weight=args.mined_weight, seed=args.seed)
