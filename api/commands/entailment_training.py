"""`crase train-entailment`: the claim-pair classifier of the classifier entailment scorer,
trained on this machine from the SciNLI files and corpus abstracts
(research/claim_pair_training.py; docs/entailment.md)."""

import argparse
import sys
from pathlib import Path

from crase.api.commands.search import finite_number, whole_number
from crase.errors import NliDataInvalid
from crase.settings import Settings

ORDER = 86  # place in `crase --help` (api/cli.py): after train-order
# Where the SciNLI / MSciNLI files sit under --nli (the layout of ../shared/data/nli).
TRAINING_FILES = ("scinli/train_1.tsv", "scinli/train_2.tsv")
DEV_FILES = {"scinli_dev": "scinli/dev.csv", "mscinli_dev": "mscinli/dev.csv"}
# The shipped model's options (models/claim_pair_models/minilm-int8-scinli.json); the
# flags' defaults, so the documented command rebuilds that file byte for byte.
SHIPPED = {"hidden_units": 64, "epochs": 8, "l2": 1e-3, "mined_weight": 0.3,
           "neutral_share": 0.3, "seed": 0}


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    train = subparsers.add_parser(
        "train-entailment", help="train the claim-pair classifier (entailment scorer)",
        description="Embeds every sentence once with the int8 MiniLM claim encoder and "
                    "fits a small head (linear, or one hidden layer) over pair features "
                    "on the SciNLI human-labelled training pairs and, with --mine, on "
                    "pairs mined from corpus abstracts by their linking phrases. The dev "
                    "sets choose the stored threshold and give the printed figures. "
                    "Seeded: the same inputs and flags write the same file.")
    train.add_argument("--out", type=Path, required=True, help="the model file (JSON)")
    train.add_argument("--nli", type=Path, required=True, metavar="DIR",
                       help="the folder holding scinli/ and mscinli/ (../shared/data/nli)")
    train.add_argument("--mine", type=Path, action="append", default=[], metavar="FILE",
                       help="a corpus's papers.jsonl whose abstracts give linked pairs "
                            "(repeat for several corpora)")
    train.add_argument("--hidden-units", type=whole_number(0, 4096),
                       default=SHIPPED["hidden_units"],
                       help="units of the hidden layer; 0 = a linear head (default "
                            f"{SHIPPED['hidden_units']})")
    train.add_argument("--epochs", type=whole_number(1, 1000), default=SHIPPED["epochs"],
                       help=f"passes over the training pairs (default {SHIPPED['epochs']})")
    train.add_argument("--l2", type=finite_number(0, None), default=SHIPPED["l2"],
                       help=f"L2 penalty on the dense weights (default {SHIPPED['l2']})")
    train.add_argument("--mined-weight", type=finite_number(0, None),
                       default=SHIPPED["mined_weight"],
                       help="weight of a mined pair against a human-labelled one (default "
                            f"{SHIPPED['mined_weight']})")
    train.add_argument("--neutral-share", type=finite_number(0, 1),
                       default=SHIPPED["neutral_share"],
                       help="share of abstracts that give a neutral pair (default "
                            f"{SHIPPED['neutral_share']})")
    train.add_argument("--seed", type=whole_number(0, None), default=SHIPPED["seed"],
                       help="seed of the minibatch order and the neutral draw")
    train.add_argument("--dev-folds", type=whole_number(0, 100), default=0, metavar="K",
                       help="train on the dev pairs too: K-fold out-of-fold predictions "
                            "choose the threshold and give the printed figures, and the "
                            "model is fit on every pair (default 0: dev only chooses)")
    train.add_argument("--limit", type=whole_number(1, None), default=None,
                       help="read only the first N pairs of each file and N abstracts of "
                            "each corpus (a quick check, not a model to ship)")
    train.set_defaults(handler=run_train_entailment)


def run_train_entailment(args: argparse.Namespace, settings: Settings) -> int:
    import itertools

    from crase.models.claim_pair_classifier import save_classifier
    from crase.research.claim_pair_training import TrainingOptions, train_classifier
    from crase.research.entailment_data import read_labelled_pairs
    from crase.research.linked_sentences import LabelledPair, mine_pairs, read_abstracts
    from crase.search.roles.offline_entailment import claim_encoder

    if args.dev_folds == 1:
        raise NliDataInvalid("--dev-folds 1 leaves no pair out of its fold; give 0 (dev only "
                             "chooses) or 2 or more")
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
    options = TrainingOptions(hidden_units=args.hidden_units, epochs=args.epochs, l2=args.l2,
                              mined_weight=args.mined_weight, seed=args.seed)
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
