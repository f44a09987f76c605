"""`crase train-order`: the learned order's model, trained on the loaded corpus's own
citations (search/order_training.py)."""

import argparse
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crase.search.request import QUERY_FORMS
from crase.settings import Settings

ORDER = 85  # place in `crase --help` (api/cli.py): before `bench`


# The command's name before this release, read until the next one, with a message.
OLD_NAME = "train-ranker"


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    add_train_command(subparsers, "train-order",
                      "train the learned order from the corpus's own citations",
                      run_train_order)
    add_train_command(subparsers, OLD_NAME, "deprecated: the old name of train-order",
                      run_old_name)


def add_train_command(subparsers: argparse._SubParsersAction, name: str, summary: str,
                      handler: Callable[[argparse.Namespace, Settings], int]) -> None:
    train = subparsers.add_parser(
        name, help=summary,
        description="Draws source papers published before --before-year, runs each one's "
                    "title and first two abstract sentences as a search with the paper and "
                    "its edges hidden, and fits a linear model that ranks its in-corpus "
                    "references first. Writes the model with a description of its training "
                    "data; set CRASE_ORDER_MODEL to the file to search with it (the "
                    "learned order is the default).")
    train.add_argument("--out", type=Path, required=True, help="the model file (JSON)")
    train.add_argument("--corpus", required=True,
                       help="the corpus's name, stored in the description (e.g. hep-th)")
    train.add_argument("--before-year", type=int, required=True,
                       help="train only on papers published before this year")
    train.add_argument("--from-year", type=int,
                       help="draw only papers published in this year or later (the shipped "
                            "model: 2002, the year before its benchmark's queries)")
    train.add_argument("--queries", type=int, default=400,
                       help="training queries drawn (default 400)")
    train.add_argument("--seed", type=int, default=0, help="the draw's random seed")
    train.add_argument("--forms", nargs="+", choices=QUERY_FORMS, default=list(QUERY_FORMS),
                       help="query forms to train a model for, each source paper asked in "
                            "every one (text: title and two sentences; words: the title "
                            "alone; papers: 3 of its references given); default: all")
    train.add_argument("--hold-out", type=Path, action="append", default=[], metavar="FILE",
                       help="a query set (queries.jsonl) whose source papers are never drawn")
    train.set_defaults(handler=handler)


def run_old_name(args: argparse.Namespace, settings: Settings) -> int:
    warnings.warn(f"`crase {OLD_NAME}` is now `crase train-order`; the old name works until "
                  "the next release", FutureWarning, stacklevel=2)
    return run_train_order(args, settings)


def run_train_order(args: argparse.Namespace, settings: Settings) -> int:
    from crase.bench.query_sets import source_paper_ids
    from crase.graph import Graph
    from crase.search.order_model import save_model
    from crase.search.order_training import (
        gather_examples,
        in_forms,
        read_training_queries,
        train_order_model,
    )
    from crase.search.roles.from_settings import build_search_backends

    held = source_paper_ids(args.hold_out)

    def progress(done: int, total: int) -> None:
        if done % 50 == 0 or done == total:
            print(f"{done}/{total} training queries", file=sys.stderr, flush=True)

    with Graph.connect(settings.database) as graph:
        queries = in_forms(read_training_queries(graph, args.before_year, args.queries,
                                                 args.seed, held_out=held,
                                                 from_year=args.from_year),
                           args.forms, args.seed)
        examples = gather_examples(graph, build_search_backends(settings), settings.search,
                                   queries, progress)
    model = train_order_model(examples, args.out.stem, args.corpus, training_settings(
        args, outside=len(queries) - len(examples)))
    save_model(model, args.out)
    for form in args.forms:
        trained = model.for_form(form)
        if trained is not None:
            print(f"model: {args.out}, {form} form: {trained.description['queries']} queries, "
                  f"{trained.description['queries_with_a_relevant_candidate']} with a "
                  "relevant candidate")
    return 0


def held_out_name(path: Path) -> str:
    """A query set as its folder and file name (hepth/queries.jsonl): the file name alone
    is the same for every corpus."""
    return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


def training_settings(args: argparse.Namespace, outside: int) -> dict[str, Any]:
    """How the training queries were drawn, and the command that drew them, for the
    model's description."""
    held = [held_out_name(path) for path in args.hold_out]
    from_year = f" --from-year {args.from_year}" if args.from_year is not None else ""
    return {"before_year": args.before_year, "from_year": args.from_year, "seed": args.seed,
            "held_out_query_files": held,
            "queries_the_search_orders_otherwise": outside,
            "command": f"crase train-order --corpus {args.corpus} --queries {args.queries} "
                       f"--before-year {args.before_year}{from_year} --seed {args.seed} "
                       f"--forms {' '.join(args.forms)}"
                       + "".join(f" --hold-out {name}" for name in held)}
