"""`crase train-order`: the learned order's model, trained on the loaded corpus's own
citations (search/order/training.py)."""

import argparse
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from crase.search.request import ORDER_FORMS, QUERY_FORMS
from crase.settings import Settings

if TYPE_CHECKING:
    from crase.search.order.model import OrderModel

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
        description="Draws source papers published before --before-year, asks each one in "
                    "every query form of --forms (title and two abstract sentences, the "
                    "title, three of its references given) as a search over the "
                    "graph as it was before --before-year, the paper hidden with its "
                    "edges, and fits one LambdaRank model per form (LightGBM) that ranks "
                    "its in-corpus references first. Writes a model folder (model.json "
                    "and one model file per form) with a description of its training "
                    "data; an existing folder keeps the models of the forms not trained "
                    "this time (the shipped folder's text and words forms are the previous "
                    "release's linear models). Set CRASE_MODELS__ORDER_MODEL to the folder "
                    "to search with it (the learned order is the default).")
    train.add_argument("--out", type=Path, required=True,
                       help="the model folder (model.json and <form>.txt); the forms it "
                            "holds and --forms does not name are kept")
    train.add_argument("--corpus", required=True,
                       help="the corpus's name, stored in the description (e.g. hep-th)")
    train.add_argument("--before-year", type=int, required=True,
                       help="train only on papers published before this year")
    train.add_argument("--from-year", type=int,
                       help="draw only papers published in this year or later (the shipped "
                            "model: 2002, the year before its benchmark's queries)")
    train.add_argument("--queries", type=int, default=600,
                       help="source papers drawn (default 600, as the shipped model)")
    train.add_argument("--seed", type=int, default=0, help="the draw's random seed")
    train.add_argument("--forms", nargs="+", choices=ORDER_FORMS, default=list(QUERY_FORMS),
                       help="query forms to train a model for, each source paper asked in "
                            "every one (text: title and two sentences; words: the title "
                            "alone; papers: 3 of its references given; idea: one abstract "
                            "sentence, for measurement: no search asks in it, as it did not "
                            "beat the text model on one-sentence queries); default: text "
                            "words papers")
    train.add_argument("--hold-out", type=Path, action="append", default=[], metavar="FILE",
                       help="a query set (queries.jsonl) whose source papers are never drawn")
    train.set_defaults(handler=handler)


def run_old_name(args: argparse.Namespace, settings: Settings) -> int:
    warnings.warn(f"`crase {OLD_NAME}` is now `crase train-order`; the old name works until "
                  "the next release", FutureWarning, stacklevel=2)
    return run_train_order(args, settings)


def run_train_order(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.progress import CountProgress
    from crase.search.order.model import OrderModels, save_models
    from crase.search.order.training import (
        gather_examples,
        hidden_as_of,
        how_drawn,
        in_forms,
        read_training_queries,
        train_order_model,
    )
    from crase.search.query_sets import source_paper_ids
    from crase.search.roles.from_settings import build_search_backends

    held = source_paper_ids(args.hold_out)
    existing = existing_models(args.out)

    with Graph.connect(settings.database) as graph:
        queries = in_forms(read_training_queries(graph, args.before_year, args.queries,
                                                 args.seed, held_out=held,
                                                 from_year=args.from_year),
                           args.forms, args.seed)
        counter = CountProgress()
        examples = gather_examples(
            graph, build_search_backends(settings), settings.search, queries,
            hidden_as_of(graph, args.before_year),
            lambda done, total: counter.update("training queries", done, total))
    held_out = [held_out_name(path) for path in args.hold_out]
    models = train_order_model(examples, args.out.name, args.corpus, how_drawn(
        args.corpus, args.queries, args.before_year, args.from_year, args.seed, args.forms,
        held_out))
    kept = {form: model for form, model in existing.items() if form not in models.forms}
    save_models(OrderModels(models.name, {**kept, **models.forms}), args.out)
    for form, model in sorted(kept.items()):
        print(f"model: {args.out}, {form} form kept ({model.learner})")
    for form in args.forms:
        trained = models.for_form(form)
        if trained is not None:
            print(f"model: {args.out}, {form} form: {trained.description['queries']} queries, "
                  f"{trained.description['queries_with_a_relevant_candidate']} with a "
                  "relevant candidate")
    return 0


def held_out_name(path: Path) -> str:
    """A query set as its folder and file name (hepth/queries.jsonl): the file name alone
    is the same for every corpus."""
    return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


def existing_models(folder: Path) -> "dict[str, OrderModel]":
    """The models already in `folder` (none where it holds no model); a folder whose model
    cannot be read stops the command before anything is trained over it."""
    from crase.search.order.model import MANIFEST, load_models

    return dict(load_models(folder).forms) if (folder / MANIFEST).is_file() else {}
