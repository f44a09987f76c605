"""The learned ranking measured apart from the search: candidates and features are gathered
once per query (the slow part), then models are fit and compared in minutes.

    python -m crase.bench.learned_order collect --queries Q.jsonl --out dev.npz
    python -m crase.bench.learned_order collect --train 1500 --from-year 2002 \\
        --before-year 2003 --hold-out Q.jsonl --forms text words papers idea --out train.npz
    python -m crase.bench.learned_order evaluate --train train.npz --dev dev.npz
    python -m crase.bench.learned_order compare --dev dev.npz --model OLD --model NEW

`collect --queries` gathers a benchmark query set (each source paper hidden with its
edges); `collect --train` draws training queries from the corpus's own citations
(search/order/training.py: the graph as of --before-year, never a held-out set's source
paper). A gathered file is numpy's .npz (no pickle: nothing in it can run code) with the
feature names it was gathered with; a file of another version's features is refused.

`evaluate` fits the default model (DEFAULT_FEATURES, as `crase train-order` does) and one
per row of the ablation table (`--ablations`: without each feature group; with only the
features of the search before the new signals, and each new group added to them alone),
and prints each one's Recall@K, MAP@K and Hit@5 on the dev file next to the walk's own
order (the previous default) with paired bootstrap intervals against the default model.
The candidate pool bounds every model: the `pool` row is the recall of the whole candidate
set. The figures of record come from `crase bench quality`; this tool chooses the model
and the features on the same dev queries. `evaluate --save-ablations DIR` writes every model
of its table as a model folder, DIR/<name>/, each described by its training data, for
`crase bench quality --order-ablations DIR` to measure in the search.

`compare` orders each gathered dev file's candidates by each model given (a model folder,
or a previous release's one-file linear model) and prints their figures and each later
model against the first, paired per query: models compared on the same candidates, in
seconds.
"""

import argparse
import json
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from crase.bench.metrics import CUTOFFS, average_precision_at_k, hit_at_k, hits_at_k
from crase.bench.quality import resolve_queries
from crase.bench.significance import mean_difference, pooled_difference
from crase.errors import EvaluationError, OrderModelInvalid
from crase.graph import Graph
from crase.models.lambdarank import LambdaRankParams
from crase.search.order.features import FEATURE_GROUPS, FEATURES, Candidates
from crase.search.order.model import OrderModels, load_models, order_candidates, save_models
from crase.search.order.training import (
    DEFAULT_FEATURES,
    TrainingExample,
    TrainingQuery,
    hidden_as_of,
    how_drawn,
    in_forms,
    labelled,
    read_training_queries,
    train_order_model,
    training_example,
    training_search,
)
from crase.search.query_sets import read_query_file, source_paper_ids
from crase.search.request import ORDER_FORMS, QUERY_FORMS
from crase.search.stages import (
    Search,
    SearchState,
    candidates_of,
    filled_ordering,
    order_list,
    thin_graph_gate,
    walk_ordering,
)
from crase.settings import Settings

K = 50
FILE_FORMAT = "crase-order-evidence/2"
# The feature groups the search had before the corpus-wide signals: the ablation table's
# "before" row, and the base each new group is added to alone.
NEW_GROUPS = ("anchor_links", "anchor_text", "authors", "citation_age")


@dataclass
class Gathered:
    """One query's candidates and labels; for a dev query also the previous default's
    list and the search's own list where a gate keeps the model from ordering it."""

    example: TrainingExample
    walk_order: list[str] | None = None
    gated_order: list[str] | None = None


def collect(args: argparse.Namespace) -> None:
    settings = Settings()
    from crase.search.roles.from_settings import build_search_backends

    backends = build_search_backends(settings)
    params = settings.search.model_copy(update={"k": K})
    graph = Graph.connect(settings.database)
    started = time.perf_counter()
    items: list[Gathered] = []
    try:
        if args.queries:
            queries, _, _ = resolve_queries(graph, read_query_file(args.queries))
            queries = queries[: args.limit] if args.limit else queries
            for done, q in enumerate(queries, start=1):
                tq = TrainingQuery(q.source_id, q.text, q.year, q.relevant, q.seed_ids,
                                   asked_as=args.asked_as)
                search, state = training_search(graph, backends, params, q.text,
                                                [q.source_id], q.seed_ids)
                items.append(Gathered(labelled(candidates_of(search, state), tq),
                                      walk_order(search, state), gated_order(search, state)))
                report(done, len(queries), started)
        else:
            held = source_paper_ids(args.hold_out)
            hidden = hidden_as_of(graph, args.before_year)
            train = in_forms(read_training_queries(graph, args.before_year, args.train,
                                                   args.seed, held_out=held,
                                                   from_year=args.from_year),
                             args.forms, args.seed)
            for done, tq in enumerate(train, start=1):
                example = training_example(graph, backends, params, tq, hidden)
                if example is not None:
                    items.append(Gathered(example))
                report(done, len(train), started)
    finally:
        graph.close()
    write_gathered(items, args.out)


def report(done: int, total: int, started: float) -> None:
    if done % 25 == 0 or done == total:
        per = (time.perf_counter() - started) / done
        print(f"{done}/{total} queries, {per:.2f} s/query", file=sys.stderr, flush=True)


def walk_order(search: Search, state: SearchState) -> list[str]:
    """The walk's top K and the text fill: the search's own order and fill stages under
    order "walk" (search/stages.py)."""
    return ids_of(filled_ordering(search, state, walk_ordering(search, state)).ranked)


def gated_order(search: Search, state: SearchState) -> list[str] | None:
    """The search's own list where the thin-graph gate keeps any model from ordering it
    (the query's text order); None where a model orders it."""
    if thin_graph_gate(search, state) is None:
        return None
    return ids_of(filled_ordering(search, state, order_list(search, state)).ranked)


def ids_of(ranked: list[tuple[str, float]]) -> list[str]:
    return [paper for paper, _ in ranked]


def write_gathered(items: list[Gathered], path: Path) -> None:
    """The gathered queries as one .npz: every candidate's row of FEATURES, its label and
    id, each query's size, and the queries' fields as JSON text."""
    queries = [{"source_id": g.example.query.source_id, "text": g.example.query.text,
                "year": g.example.query.year, "answer": sorted(g.example.query.answer),
                "given": list(g.example.query.given), "asked_as": g.example.query.asked_as,
                "walk_order": g.walk_order, "gated_order": g.gated_order} for g in items]
    examples = [g.example for g in items]
    with path.open("wb") as out:
        np.savez_compressed(
            out, format=np.array(FILE_FORMAT), features=np.array(FEATURES),
            values=(np.vstack([e.candidates.values for e in examples]) if examples
                    else np.zeros((0, len(FEATURES)))),
            labels=np.concatenate([e.labels for e in examples]) if examples else np.zeros(0),
            ids=np.array([p for e in examples for p in e.candidates.ids], dtype=str),
            sizes=np.array([len(e.candidates.ids) for e in examples], dtype=np.int64),
            queries=np.array(json.dumps(queries)))


def read_gathered(path: Path) -> list[Gathered]:
    """The queries of a file `write_gathered` wrote with this version's features; refuses
    any other file by name."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["format"]) != FILE_FORMAT:
                raise EvaluationError(f"{path} is not a {FILE_FORMAT} file: gather it with "
                                      "`python -m crase.bench.learned_order collect`")
            if tuple(data["features"].tolist()) != FEATURES:
                raise EvaluationError(f"{path} was gathered with other features than this "
                                      "version computes: gather it again")
            values, labels = data["values"], data["labels"]
            ids, sizes = data["ids"].tolist(), data["sizes"].tolist()
            queries = json.loads(str(data["queries"]))
    except (OSError, KeyError, ValueError, json.JSONDecodeError) as err:
        raise EvaluationError(f"cannot read {path} ({err}): gather it again") from err
    items, start = [], 0
    for size, q in zip(sizes, queries, strict=True):
        query = TrainingQuery(q["source_id"], q["text"], q["year"], frozenset(q["answer"]),
                              tuple(q["given"]), asked_as=q["asked_as"])
        end = start + size
        example = TrainingExample(query, Candidates(ids[start:end], values[start:end]),
                                  labels[start:end])
        items.append(Gathered(example, q["walk_order"], q["gated_order"]))
        start = end
    return items


def figures(rankings: list[list[str]], relevants: list[frozenset[str]]) -> dict[str, float]:
    total = sum(len(r) for r in relevants)
    pairs = list(zip(rankings, relevants, strict=True))
    out = {f"R@{k}": sum(hits_at_k(r, set(rel), k) for r, rel in pairs) / total
           for k in CUTOFFS}
    for k in (5, 50):
        out[f"MAP@{k}"] = float(np.mean([average_precision_at_k(r, set(rel), k)
                                         for r, rel in pairs]))
    out["Hit@5"] = float(np.mean([hit_at_k(r, set(rel), 5) for r, rel in pairs]))
    return out


def versus(a: list[list[str]], b: list[list[str]], relevants: list[frozenset[str]]) -> str:
    pairs = list(zip(a, b, relevants, strict=True))
    recall = pooled_difference([hits_at_k(x, set(rel), K) for x, _, rel in pairs],
                               [hits_at_k(y, set(rel), K) for _, y, rel in pairs],
                               [len(rel) for _, _, rel in pairs])
    ap = mean_difference([average_precision_at_k(x, set(rel), K) for x, _, rel in pairs],
                         [average_precision_at_k(y, set(rel), K) for _, y, rel in pairs])
    return (f"R@50 {recall.value:+.3f} [{recall.low:+.3f}, {recall.high:+.3f}]  "
            f"MAP@50 {ap.value:+.3f} [{ap.low:+.3f}, {ap.high:+.3f}]")


def model_rankings(models: OrderModels, dev: list[Gathered], form: str | None = None
                   ) -> list[list[str]]:
    """The model's top K (the model of `form`, or else of each query's own form) where the
    search's gates let a model order the list; elsewhere the search's own list
    (search/stages.py)."""
    rankings = []
    for q in dev:
        model = models.for_form(form or q.example.query.form) or models.for_form("text")
        if q.gated_order is not None or model is None:
            rankings.append(q.gated_order or q.walk_order or [])
        else:
            rankings.append([p.id for p in order_candidates(model, q.example.candidates, K)])
    return rankings


def variant_features(ablations: bool) -> dict[str, tuple[str, ...]]:
    """Model name -> its features: the default; with --ablations also the default less
    each group, the features before the new signals, and those plus each new group."""
    variants = {"default": DEFAULT_FEATURES}
    if not ablations:
        return variants
    before = tuple(f for f in DEFAULT_FEATURES
                   if not any(f in FEATURE_GROUPS[g] for g in NEW_GROUPS))
    variants["before-new-signals"] = before
    variants |= {f"before+{group}": tuple(f for f in DEFAULT_FEATURES
                                          if f in before or f in FEATURE_GROUPS[group])
                 for group in NEW_GROUPS}
    variants |= {f"without-{group}": tuple(f for f in DEFAULT_FEATURES if f not in names)
                 for group, names in FEATURE_GROUPS.items()
                 if any(f in DEFAULT_FEATURES for f in names)}
    return variants


def training_description(args: argparse.Namespace, train: list[TrainingExample]
                         ) -> dict[str, Any]:
    """How the training queries were drawn, for the description of a saved model (the
    same as `crase train-order` writes for the same draw); refuses a training query from
    `before_year` on."""
    if any(year is None or year >= args.before_year
           for year in (e.query.year for e in train)):
        raise SystemExit(f"a training query is not from before {args.before_year}")
    return how_drawn(args.corpus, args.queries, args.before_year, args.from_year, args.seed,
                     args.forms, args.held_out_names)


def evaluate(args: argparse.Namespace) -> None:
    dev = read_gathered(args.dev)
    # Only the forms the dev queries are ordered in are fit: each form's model is fit on
    # its own queries alone, so the others would change nothing here.
    # A saved model holds the forms of --forms, as `crase train-order` would fit them.
    saving = bool(args.save or args.save_ablations)
    forms = ({args.as_form} if args.as_form else {g.example.query.form for g in dev}
             ) if not saving else set(args.forms)
    train = [g.example for g in read_gathered(args.train) if g.example.query.form in forms]
    settings = training_description(args, train) if saving else {}
    params = replace(LambdaRankParams(), **json.loads(args.params or "{}"))
    relevants = [g.example.query.answer for g in dev]
    pool = [[p for p, label in zip(g.example.candidates.ids, g.example.labels, strict=True)
             if label] for g in dev]
    rows = {"previous default (walk order)": [g.walk_order or [] for g in dev]}
    models = {}
    ablations = args.ablations or args.save_ablations is not None
    for name, features in variant_features(ablations).items():
        started = time.perf_counter()
        models[name] = train_order_model(train, name, args.corpus, settings, features, params)
        rows[f"lambdarank, {name}"] = model_rankings(models[name], dev, args.as_form)
        print(f"{name}: fit in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    print(f"{len(train)} training queries, {len(dev)} dev queries; candidate pool recall "
          f"{sum(len(p) for p in pool) / sum(len(r) for r in relevants):.3f}; {params}")
    default = rows["lambdarank, default"]
    header = list(figures(default, relevants))
    print("| system | " + " | ".join(header) + " | vs the default model |")
    print("|---|" + "---:|" * len(header) + "---|")
    for label, rankings in rows.items():
        values = figures(rankings, relevants)
        against = "" if rankings is default else versus(rankings, default, relevants)
        print(f"| {label} | " + " | ".join(f"{values[h]:.3f}" for h in header)
              + f" | {against} |")
    for form, model in models["default"].forms.items():
        gains = sorted(model.ranking.importances().items(), key=lambda item: -item[1])
        print(f"gain, {form}:", ", ".join(f"{f} {g:.3f}" for f, g in gains))
    if args.save:
        save_models(replace(models["default"], name=args.save.name), args.save)
        print(f"model: {args.save}")
    if args.save_ablations:  # the default model is the one --save writes
        rows_saved = {name: m for name, m in models.items() if name != "default"}
        for name, m in rows_saved.items():
            save_models(m, args.save_ablations / name)
        print(f"models: {args.save_ablations}/*/ ({len(rows_saved)})")


def compare(args: argparse.Namespace) -> None:
    """Each model folder (or previous release's model file) ordering each dev file's
    candidates, and the later models against the first, paired per query."""
    models = [(str(path), load_models(path)) for path in args.model]
    for path in args.dev:
        dev = read_gathered(path)
        relevants = [frozenset(q.example.query.answer) for q in dev]
        rankings = [model_rankings(m, dev, args.as_form) for _, m in models]
        print(f"{path.name}: {len(dev)} queries, "
              f"{sum(q.gated_order is not None for q in dev)} ordered by a gate")
        for (name, _), ranking in zip(models, rankings, strict=True):
            shown = figures(ranking, relevants)
            print(f"  {name}: " + "  ".join(f"{key} {shown[key]:.3f}" for key in
                                            ("R@5", "R@20", "R@50", "MAP@50", "Hit@5")))
        for (name, _), ranking in zip(models[1:], rankings[1:], strict=True):
            print(f"  {name} - {models[0][0]}: {versus(ranking, rankings[0], relevants)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m crase.bench.learned_order")
    actions = parser.add_subparsers(dest="action", required=True)
    gather = actions.add_parser("collect")
    gather.add_argument("--queries", type=Path, help="a benchmark query set (dev)")
    gather.add_argument("--asked-as", choices=["idea"],
                        help="the form the dev queries are asked in where query_form does "
                             "not tell it (idea: one sentence)")
    gather.add_argument("--limit", type=int)
    gather.add_argument("--train", type=int, default=0, help="training queries to draw")
    gather.add_argument("--before-year", type=int, default=2003)
    gather.add_argument("--from-year", type=int, help="draw only papers from this year on")
    gather.add_argument("--seed", type=int, default=0)
    gather.add_argument("--hold-out", type=Path, action="append", default=[])
    gather.add_argument("--forms", nargs="+", choices=ORDER_FORMS, default=["text"],
                        help="the query forms each training paper is asked in (default: "
                             "text; search/order/training.py in_forms)")
    gather.add_argument("--out", type=Path, required=True, help="the .npz file to write")
    gather.set_defaults(handler=collect)
    measure = actions.add_parser("evaluate")
    measure.add_argument("--train", type=Path, required=True)
    measure.add_argument("--dev", type=Path, required=True)
    measure.add_argument("--as-form", choices=ORDER_FORMS,
                         help="order every dev query by this form's model (default: each "
                              "query's own form)")
    measure.add_argument("--ablations", action="store_true",
                         help="also fit the ablation table's models (one per row)")
    measure.add_argument("--params", help="LambdaRank settings as JSON, e.g. "
                                          "'{\"trees\": 500}' (models/lambdarank.py)")
    measure.add_argument("--save", type=Path, metavar="DIR",
                         help="write the default model, trained on --train, as a model folder")
    measure.add_argument("--save-ablations", type=Path, metavar="DIR",
                         help="write every model of the ablation table, trained on --train, "
                              "as DIR/<name>/ (for crase bench quality --order-ablations DIR)")
    measure.add_argument("--corpus", default="", help="the training corpus's name")
    measure.add_argument("--before-year", type=int, default=2003)
    measure.add_argument("--from-year", type=int)
    measure.add_argument("--seed", type=int, default=0)
    measure.add_argument("--queries", type=int, default=0,
                         help="source papers `collect --train` drew (for the description)")
    measure.add_argument("--forms", nargs="+", choices=ORDER_FORMS, default=list(QUERY_FORMS),
                         help="forms `collect --train` asked them in (for the description)")
    measure.add_argument("--held-out-names", nargs="*", default=[],
                         help="names of the query files held out of the draw")
    measure.set_defaults(handler=evaluate)
    side = actions.add_parser(
        "compare", help="order gathered dev queries by each model and compare them")
    side.add_argument("--dev", type=Path, nargs="+", required=True,
                      help="files `collect --queries` wrote")
    side.add_argument("--model", type=Path, action="append", required=True,
                      help="a model folder, or a previous release's model file; repeat "
                           "(the later ones are compared with the first)")
    side.add_argument("--as-form", choices=ORDER_FORMS,
                      help="order every dev query by this form's model (default: each "
                           "query's own form)")
    side.set_defaults(handler=compare)
    args = parser.parse_args(argv)
    try:
        args.handler(args)
    except (EvaluationError, OrderModelInvalid) as err:
        raise SystemExit(f"error: {err}") from None


if __name__ == "__main__":
    main()
