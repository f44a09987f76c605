"""The learned ranking measured apart from the search: candidates and features are gathered
once per query (the slow part), then models are fit and compared in seconds.

    python -m crase.bench.learned_order collect --queries Q.jsonl --out dev.npz
    python -m crase.bench.learned_order collect --train 600 --before-year 2003 \\
        --hold-out Q.jsonl --out train.npz
    python -m crase.bench.learned_order evaluate --train train.npz --dev dev.npz

`collect --queries` gathers a benchmark query set (each source paper hidden with its
edges); `collect --train` draws training queries from the corpus's own citations
(search/order_training.py), never a held-out set's source paper. `evaluate` fits the
default model (DEFAULT_FEATURES, as `crase train-order` does), one on every feature and
one without each feature group on the training file, and prints each one's
Recall@K, MAP@K and Hit@5 on the dev file next to the walk's own order (the previous
default: the walk's top k, its empty places filled from the fused text ranking), with
paired bootstrap intervals against it. The candidate pool bounds every model: the
`pool` row is the recall of the whole candidate set.

The figures of record come from `crase bench quality` (shipped against previous-default);
this tool is for choosing the model and the ablations on the same dev queries.
`evaluate --save-ablations DIR` writes every model of its table, each described by its
training data, for `crase bench quality --order-ablations DIR` to measure in the search.

A gathered file is numpy's .npz, read without pickle (nothing in it can run code), with
the feature names it was gathered with; a file of another version's features, or any
other file, is refused by name (EvaluationError).
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
from crase.bench.query_sets import read_query_file
from crase.bench.significance import mean_difference, pooled_difference
from crase.errors import EvaluationError
from crase.graph import Graph
from crase.search.candidate_features import FEATURE_GROUPS, FEATURES, Candidates
from crase.search.order_model import OrderModel, order_candidates, save_model
from crase.search.order_training import (
    DEFAULT_FEATURES,
    TrainingExample,
    TrainingQuery,
    in_forms,
    labelled,
    read_training_queries,
    train_order_model,
    training_example,
    training_search,
)
from crase.search.request import QUERY_FORMS
from crase.search.stages import (
    Search,
    SearchState,
    candidates_of,
    filled_ordering,
    learned_order_gate,
    order_list,
    walk_ordering,
)
from crase.settings import Settings

K = 50


@dataclass
class DevQuery:
    example: TrainingExample
    walk_order: list[str]  # the previous default's list: the walk's top K, then text
    # The search's list where a gate keeps the model from ordering it (a thin graph: the
    # text order; a query form the model file has no model for: the walk's order); None
    # where the model orders it.
    gated_order: list[str] | None = None


FILE_FORMAT = "crase-order-evidence/1"


def write_gathered(items: list[DevQuery], path: Path) -> None:
    """The gathered queries as one .npz: every candidate's row of FEATURES, its label and
    id, each query's size, and the queries' fields as JSON text (a training query has no
    walk order)."""
    queries = [{"source_id": q.example.query.source_id, "text": q.example.query.text,
                "year": q.example.query.year, "answer": sorted(q.example.query.answer),
                "given": list(q.example.query.given), "title": q.example.query.title,
                "walk_order": q.walk_order, "gated_order": q.gated_order} for q in items]
    examples = [q.example for q in items]
    with path.open("wb") as out:
        np.savez_compressed(
            out, format=np.array(FILE_FORMAT), features=np.array(FEATURES),
            values=(np.vstack([e.candidates.values for e in examples]) if examples
                    else np.zeros((0, len(FEATURES)))),
            labels=np.concatenate([e.labels for e in examples]) if examples else np.zeros(0),
            ids=np.array([p for e in examples for p in e.candidates.ids], dtype=str),
            sizes=np.array([len(e.candidates.ids) for e in examples], dtype=np.int64),
            queries=np.array(json.dumps(queries)))


def read_gathered(path: Path) -> list[DevQuery]:
    """The queries of a file `write_gathered` wrote with this version's features; refuses
    any other file by name, and never unpickles."""
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
                              tuple(q["given"]), q["title"])
        end = start + size
        example = TrainingExample(query, Candidates(ids[start:end], values[start:end]),
                                  labels[start:end])
        items.append(DevQuery(example, q["walk_order"], q["gated_order"]))
        start = end
    return items


def collect(args: argparse.Namespace) -> None:
    settings = Settings()
    from crase.search.roles.from_settings import build_search_backends

    backends = build_search_backends(settings)
    params = settings.search.model_copy(update={"k": K})
    graph = Graph.connect(settings.database)
    started = time.perf_counter()
    try:
        if args.queries:
            rows = read_query_file(args.queries)
            queries, _, _ = resolve_queries(graph, rows)
            queries = queries[: args.limit] if args.limit else queries
            items: list[Any] = []
            for done, q in enumerate(queries, start=1):
                tq = TrainingQuery(q.source_id, q.text, q.year, q.relevant, q.seed_ids)
                search, state = training_search(graph, backends, params, q.text,
                                                [q.source_id], q.seed_ids)
                items.append(DevQuery(labelled(candidates_of(search, state), tq),
                                      walk_order(search, state), gated_order(search, state)))
                report(done, len(queries), started)
        else:
            held = frozenset(row["source_paper_id"] for path in args.hold_out
                             for row in read_query_file(path))
            train = in_forms(read_training_queries(graph, args.before_year, args.train,
                                                   args.seed, held_out=held,
                                                   from_year=args.from_year),
                             args.forms, args.seed)
            items = []
            for done, tq in enumerate(train, start=1):
                if (example := training_example(graph, backends, params, tq)) is not None:
                    items.append(example)
                report(done, len(train), started)
    finally:
        graph.close()
    write_gathered([item if isinstance(item, DevQuery) else DevQuery(item, [])
                    for item in items], args.out)


def report(done: int, total: int, started: float) -> None:
    if done % 25 == 0 or done == total:
        per = (time.perf_counter() - started) / done
        print(f"{done}/{total} queries, {per:.2f} s/query", file=sys.stderr, flush=True)


def walk_order(search: Search, state: SearchState) -> list[str]:
    """The walk's top K and the text fill: the search's own order and fill stages under
    order "walk" (search/stages.py)."""
    return ids_of(filled_ordering(search, state, walk_ordering(search, state)).ranked)


def gated_order(search: Search, state: SearchState) -> list[str] | None:
    """The search's own list where a gate keeps the model from ordering it; None where
    the model orders it."""
    if learned_order_gate(search, state) is None:
        return None
    return ids_of(filled_ordering(search, state, order_list(search, state)).ranked)


def ids_of(ranked: list[tuple[str, float]]) -> list[str]:
    return [paper for paper, _ in ranked]


def figures(rankings: list[list[str]], relevants: list[frozenset[str]]) -> dict[str, float]:
    total = sum(len(r) for r in relevants)
    out = {f"R@{k}": sum(hits_at_k(r, set(rel), k) for r, rel in zip(rankings, relevants,
                                                                      strict=True)) / total
           for k in CUTOFFS}
    for k in (5, 50):
        out[f"MAP@{k}"] = float(np.mean([average_precision_at_k(r, set(rel), k)
                                         for r, rel in zip(rankings, relevants, strict=True)]))
    out["Hit@5"] = float(np.mean([hit_at_k(r, set(rel), 5)
                                  for r, rel in zip(rankings, relevants, strict=True)]))
    return out


def versus(a: list[list[str]], b: list[list[str]], relevants: list[frozenset[str]]) -> str:
    sizes = [len(r) for r in relevants]
    recall = pooled_difference([hits_at_k(r, set(rel), K) for r, rel in zip(a, relevants,
                                                                             strict=True)],
                               [hits_at_k(r, set(rel), K) for r, rel in zip(b, relevants,
                                                                             strict=True)],
                               sizes)
    ap = mean_difference([average_precision_at_k(r, set(rel), K)
                          for r, rel in zip(a, relevants, strict=True)],
                         [average_precision_at_k(r, set(rel), K)
                          for r, rel in zip(b, relevants, strict=True)])
    return (f"R@50 {recall.value:+.3f} [{recall.low:+.3f}, {recall.high:+.3f}]  "
            f"MAP@50 {ap.value:+.3f} [{ap.low:+.3f}, {ap.high:+.3f}]")


def model_rankings(model: OrderModel, dev: list[DevQuery]) -> list[list[str]]:
    """The model's top K where the search's gates let the model order the list; elsewhere
    the search's own list (search/stages.py)."""
    return [[p.id for p in order_candidates(form_model(model, q), q.example.candidates, K)]
            if q.gated_order is None else q.gated_order for q in dev]


def form_model(model: OrderModel, query: DevQuery) -> OrderModel:
    """The model of the dev query's form (the text model where the file has none)."""
    return model.for_form(query.example.query.form) or model


def variant_features() -> dict[str, tuple[str, ...]]:
    """Model name -> its features: the default features (the shipped model's), every
    feature, then one model without each group of the default ones."""
    variants = {"default": DEFAULT_FEATURES, "all-features": FEATURES}
    variants |= {f"without-{group}": tuple(f for f in DEFAULT_FEATURES if f not in names)
                 for group, names in FEATURE_GROUPS.items()}
    return variants


def variant_label(name: str) -> str:
    return {"default": "learned, default features",
            "all-features": "learned, all features"}.get(
        name, f"learned, {name.replace('-', ' ', 1)}")


def training_description(args: argparse.Namespace, train: list[TrainingExample]
                         ) -> dict[str, Any]:
    """How the training queries were drawn, for the description of every saved model;
    refuses a training query from `before_year` on."""
    if any(year is None or year >= args.before_year
           for year in (e.query.year for e in train)):
        raise SystemExit(f"a training query is not from before {args.before_year}")
    return {"before_year": args.before_year, "from_year": args.from_year, "seed": args.seed,
            "held_out_query_files": args.held_out_names,
            "command": "python -m crase.bench.learned_order collect --train "
                       f"{len(train)} --from-year {args.from_year} --before-year "
                       f"{args.before_year} --seed {args.seed}"}


def evaluate(args: argparse.Namespace) -> None:
    train = [q.example for q in read_gathered(args.train)]
    dev = read_gathered(args.dev)
    saving = bool(args.save or args.save_ablations)
    settings = training_description(args, train) if saving else {}
    relevants = [q.example.query.answer for q in dev]
    baseline = [q.walk_order for q in dev]
    pool = [[p for p, label in zip(q.example.candidates.ids, q.example.labels, strict=True)
             if label] for q in dev]
    rows = {"previous default (walk order)": baseline}
    models = {}
    for name, features in variant_features().items():
        models[name] = train_order_model(train, name, args.corpus if saving else "dev", settings,
                                    features)
        rows[variant_label(name)] = model_rankings(models[name], dev)
    print(f"{len(train)} training queries, {len(dev)} dev queries; candidate pool recall "
          f"{sum(len(p) for p in pool) / sum(len(r) for r in relevants):.3f}")
    header = list(figures(baseline, relevants))
    print("| system | " + " | ".join(header) + " | vs previous default |")
    for label, rankings in rows.items():
        values = figures(rankings, relevants)
        against = "" if rankings is baseline else versus(rankings, baseline, relevants)
        print(f"| {label} | " + " | ".join(f"{values[h]:.3f}" for h in header)
              + f" | {against} |")
    full = models["default"]
    print("weights (standardised):", {f: round(w, 3) for f, w in zip(full.features,
                                                                        full.weights,
                                                                        strict=True)})
    if args.save:
        save_model(replace(full, name=args.save.stem), args.save)
        print(f"model: {args.save}")
    if args.save_ablations:  # the default model is the one --save writes
        ablations = {name: model for name, model in models.items() if name != "default"}
        for name, model in ablations.items():
            save_model(model, args.save_ablations / f"{name}.json")
        print(f"models: {args.save_ablations}/*.json ({len(ablations)})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m crase.bench.learned_order")
    actions = parser.add_subparsers(dest="action", required=True)
    gather = actions.add_parser("collect")
    gather.add_argument("--queries", type=Path, help="a benchmark query set (dev)")
    gather.add_argument("--limit", type=int)
    gather.add_argument("--train", type=int, default=0, help="training queries to draw")
    gather.add_argument("--before-year", type=int, default=2003)
    gather.add_argument("--from-year", type=int, help="draw only papers from this year on")
    gather.add_argument("--seed", type=int, default=0)
    gather.add_argument("--hold-out", type=Path, action="append", default=[])
    gather.add_argument("--forms", nargs="+", choices=QUERY_FORMS, default=["text"],
                        help="the query forms each training paper is asked in (default: "
                             "text; search/order_training.py in_forms)")
    gather.add_argument("--out", type=Path, required=True)
    gather.set_defaults(handler=collect)
    measure = actions.add_parser("evaluate")
    measure.add_argument("--train", type=Path, required=True)
    measure.add_argument("--dev", type=Path, required=True)
    measure.add_argument("--save", type=Path, help="write the full model, trained on --train")
    measure.add_argument("--save-ablations", type=Path, metavar="DIR",
                         help="write every model of the table, trained on --train, as "
                              "DIR/all-features.json and DIR/without-<group>.json "
                              "(for crase bench quality --order-ablations DIR)")
    measure.add_argument("--corpus", default="", help="the training corpus's name")
    measure.add_argument("--before-year", type=int, default=2003)
    measure.add_argument("--from-year", type=int)
    measure.add_argument("--seed", type=int, default=0)
    measure.add_argument("--held-out-names", nargs="*", default=[],
                         help="names of the query files held out of the draw")
    measure.set_defaults(handler=evaluate)
    args = parser.parse_args(argv)
    try:
        args.handler(args)
    except EvaluationError as err:
        raise SystemExit(f"error: {err}") from None


if __name__ == "__main__":
    main()
