"""`crase train-idea-order`: the idea workflow's learned final order, trained on the loaded
corpus's own citations (idea/final_order/training.py)."""

import argparse
from pathlib import Path

from crase.settings import Settings

ORDER = 86  # place in `crase --help` (api/cli.py): after train-order


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    train = subparsers.add_parser(
        "train-idea-order", help="train the idea workflow's final order from the corpus's "
                                 "own citations",
        description="Draws source papers published before --before-year, runs the idea "
                    "workflow (offline backends) on one sentence of each abstract with "
                    "the paper excluded and only papers up to its year eligible, and fits "
                    "a LambdaRank model (LightGBM) that ranks the paper's references first "
                    "in its shortlist, by the offline expert's fused score, the idea-abstract "
                    "cosine and the citation links to the idea's seeds. About 1-20 s per "
                    "idea on hep-th. "
                    "Writes one LightGBM text file; set CRASE_MODELS__IDEA_ORDER_MODEL to "
                    "it to rank with it (the shipped model is the default).")
    train.add_argument("--out", type=Path, required=True,
                       help="the model file to write (<name>.txt; the name goes in the audit)")
    train.add_argument("--before-year", type=int, required=True,
                       help="draw only papers published before this year")
    train.add_argument("--from-year", type=int,
                       help="draw only papers published in this year or later (the shipped "
                            "model: 2002)")
    train.add_argument("--queries", type=int, default=300,
                       help="source papers drawn (default 300, as the shipped model)")
    train.add_argument("--ideas", type=int,
                       help="run only the first N ideas of the draw, in paper-id order "
                            "(default: all)")
    train.add_argument("--seed", type=int, default=7, help="the draw's random seed")
    train.add_argument("--hold-out", type=Path, action="append", default=[], metavar="FILE",
                       help="a query set (queries.jsonl) whose source papers are never drawn")
    train.set_defaults(handler=run_train_idea_order)


def run_train_idea_order(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.idea.final_order.model import fit_final_order
    from crase.idea.final_order.training import gather_groups, training_ideas
    from crase.idea.roles.from_settings import build_idea_backends
    from crase.progress import CountProgress
    from crase.search.order.training import read_training_queries
    from crase.search.query_sets import source_paper_ids

    held = source_paper_ids(args.hold_out)
    backends = build_idea_backends(settings, final_order=False)
    with Graph.connect(settings.database) as graph:
        ideas = training_ideas(read_training_queries(
            graph, args.before_year, args.queries, args.seed, held_out=held,
            from_year=args.from_year), args.seed)[: args.ideas]
        counter = CountProgress()
        groups = gather_groups(graph, backends, settings.idea, ideas,
                               lambda done, total: counter.update("training ideas", done,
                                                                  total))
    model = fit_final_order(groups, args.out.stem)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(model.ranking.text, encoding="utf-8")
    useful = sum(bool(group.labels.sum()) for group in groups)
    print(f"model: {args.out}: {len(ideas)} ideas, {len(groups)} shortlists, {useful} with "
          "a reference of the idea's paper")
    return 0
