"""`crase bench quality`: the retrieval benchmark (systems, ablations, seed corruption,
cost) on loaded corpora, written as a Markdown report with plots. `crase bench entailment`:
an entailment scorer on labelled claim pairs (SciNLI / MSciNLI), two- and four-class."""

import argparse
import shlex
import sys
from pathlib import Path

from crase.api.commands.search import whole_number
from crase.errors import EvaluationError
from crase.settings import DatabaseSettings, Settings

# The names only: importing the benchmark itself (numpy, the encoder) waits for the command.
SYSTEMS = ("bm25", "dense", "cocitation", "ppr-unweighted", "paper-default",
           "previous-default", "learned-order", "shipped", "crase-ppr",
           "uniform-edges", "crase-salsa", "recency", "hybrid")
ABLATIONS = ("weighting", "seed_weights", "query_seeds", "sub_queries", "seed_rule", "hops",
             "tau", "beta", "theta", "orientation", "walk", "age", "delta")
# `crase bench entailment --scorer` names (bench/entailment_pairs.py SCORERS, which a test
# holds this to): spelled here so the help needs no import of the scorers.
ENTAILMENT_SCORERS = ("shipped", "offline-minilm-cosine", "offline-minilm-int8-cosine",
                      "classifier", "model:qwen2.5-coder-1.5b", "model:qwen2.5-coder-0.5b",
                      "model:smollm2-135m")



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
    quality.add_argument("--order-ablations", type=Path, metavar="DIR",
                         help="run the learned order once per model folder DIR/*/, on "
                              "every query, against the search's own model and the previous "
                              "default (write DIR with python -m crase.bench.learned_order "
                              "evaluate --save-ablations DIR)")
    quality.set_defaults(handler=run_quality_bench)
    add_entailment_command(actions)


def add_entailment_command(actions: argparse._SubParsersAction) -> None:
    entailment = actions.add_parser(
        "entailment", help="an entailment scorer on SciNLI / MSciNLI claim pairs",
        description="Scores each pair as the search would (citing claim = sentence2, cited "
                    "claim = sentence1, a 1 x 1 matrix) and prints two-class F1 and accuracy "
                    "at the scorer's stored threshold (grounded = entailment or reasoning), "
                    "four-class macro F1 where the scorer names four classes, pairs/s and "
                    "the load average (docs/entailment.md).")
    entailment.add_argument("--pairs", type=Path, required=True, metavar="FILE",
                            help="a SciNLI / MSciNLI file: CSV (id, sentence1, sentence2, "
                                 "label[, domain]; a leading index column is ignored), TSV "
                                 "or JSON lines")
    entailment.add_argument("--scorer", required=True, choices=ENTAILMENT_SCORERS,
                            metavar="NAME", help=f"one of {', '.join(ENTAILMENT_SCORERS)}; "
                            "shipped = what the search uses by the settings")
    entailment.add_argument("--limit", type=whole_number(1, None), metavar="N",
                            help="score N pairs drawn evenly over the four labels (seeded)")
    entailment.add_argument("--seed", type=whole_number(0, None), default=0,
                            help="seed of the --limit draw")
    entailment.add_argument("--json", type=Path, metavar="OUT", help="also write the figures")
    entailment.set_defaults(handler=bench_entailment)


def bench_entailment(args: argparse.Namespace, settings: Settings) -> int:
    import json

    from crase.bench.entailment_pairs import run_entailment_bench

    figures = run_entailment_bench(args.pairs, args.scorer, settings, args.limit, args.seed)
    text = json.dumps(figures)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    return 0


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
                      order_ablations=args.order_ablations)
    command = shlex.join(["crase", *sys.argv[1:]])
    report = run_quality(settings, dataset_specs(args, settings), args.out, options, command)
    print(f"report: {report}")
    return 0
