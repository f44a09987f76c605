"""`crase bench quality`: the retrieval benchmark (systems, ablations, seed corruption,
cost) on loaded corpora, written as a Markdown report with plots."""

import argparse
import shlex
import sys
from pathlib import Path

from crase.errors import EvaluationError
from crase.settings import DatabaseSettings, Settings

# The names only: importing the benchmark itself (numpy, the encoder) waits for the command.
SYSTEMS = ("bm25", "dense", "ppr-unweighted", "paper-default", "previous-default",
           "learned-order", "shipped", "crase-ppr",
           "uniform-edges", "crase-salsa", "recency", "hybrid")
ABLATIONS = ("weighting", "seed_weights", "query_seeds", "sub_queries", "seed_rule", "hops",
             "tau", "beta", "theta", "orientation", "ranker", "age", "delta")



ORDER = 90  # place in `crase --help` (api/cli.py)


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    bench = subparsers.add_parser("bench", help="benchmarks on a loaded corpus")
    actions = bench.add_subparsers(dest="action", required=True, metavar="ACTION")
    quality = actions.add_parser(
        "quality", help="Recall@K / MAP@K of every system, ablations, seed corruption, cost",
        description="Runs every system on every query (resumable: a rerun skips finished "
                    "queries), then writes report.md, plots, results.json and per-query "
                    "outputs into --out.")
    quality.add_argument("--queries", action="append", required=True, type=Path,
                         metavar="FILE", help="queries.jsonl (repeat for several corpora)")
    quality.add_argument("--database", action="append", default=[], metavar="HOME:PORT",
                         help="the server holding the corpus of the --queries at the same "
                              "position: its home folder (password file) and Bolt port; "
                              "default: the configured database for every file")
    quality.add_argument("--out", required=True, type=Path, metavar="DIR",
                         help="report folder (per-query outputs go to DIR/runs)")
    quality.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS),
                         help="systems of the main table (default: all)")
    quality.add_argument("--limit", type=int, help="only the first N queries of each file")
    quality.add_argument("--ablations", nargs="*", choices=ABLATIONS, metavar="NAME",
                         help=f"one-setting-at-a-time ablations on the subset; no name: all "
                              f"of {', '.join(ABLATIONS)}")
    quality.add_argument("--corruption", action="store_true",
                         help="seed-corruption stress test (distractor and random seeds)")
    quality.add_argument("--subset", type=int, default=50, metavar="N",
                         help="queries (the first N) for ablations and corruption (default 50)")
    quality.add_argument("--ranker-ablations", type=Path, metavar="DIR",
                         help="run the learned order once per model file DIR/*.json, on "
                              "every query, against the search's own model and the previous "
                              "default (write DIR with python -m crase.bench.learned_ranking "
                              "evaluate --save-ablations DIR)")
    quality.set_defaults(handler=run_quality_bench)


def database_for(spec: str, settings: Settings) -> DatabaseSettings:
    home, sep, port = spec.rpartition(":")
    if not sep or not home or not port.isdigit():
        raise EvaluationError(f"--database wants HOME:PORT, got {spec!r}")
    return settings.database.model_copy(update={
        "home": Path(home).resolve(), "bolt_port": int(port), "uri": None, "password": None})


def dataset_specs(args: argparse.Namespace, settings: Settings) -> list:
    from crase.bench.quality import DatasetSpec

    if args.database and len(args.database) != len(args.queries):
        raise EvaluationError("give one --database per --queries, or none")
    specs, names = [], set()
    for i, path in enumerate(args.queries):
        name = path.resolve().parent.name or f"queries{i}"
        while name in names:
            name = f"{name}-{i}"
        names.add(name)
        database = database_for(args.database[i], settings) if args.database else \
            settings.database
        specs.append(DatasetSpec(name, path, database))
    return specs


def run_quality_bench(args: argparse.Namespace, settings: Settings) -> int:
    from crase.bench.quality import Options, run_quality

    ablations = () if args.ablations is None else tuple(args.ablations or ABLATIONS)
    options = Options(systems=tuple(args.systems), limit=args.limit, ablations=ablations,
                      corruption=args.corruption, subset=args.subset,
                      ranker_ablations=args.ranker_ablations)
    command = shlex.join(["crase", *sys.argv[1:]])
    report = run_quality(settings, dataset_specs(args, settings), args.out, options, command)
    print(f"report: {report}")
    return 0
