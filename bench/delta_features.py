"""Claim-level Delta on citation edges as features of the learned order, measured apart
from the search: does the evidence on the edges between a candidate and the search's
anchors (its given papers, or else its seeds) help LambdaRank order the candidates?

    CRASE_MODELS__ENTAILMENT_SCORER=classifier crase score          # each corpus, once
    CRASE_MODELS__ENTAILMENT_SCORER=classifier python -m crase.bench.delta_features \\
        edges --theta 0.49 --out hepth-edges.npz                     # each corpus
    python -m crase.bench.delta_features evaluate --train train.npz --train-edges \\
        hepth-edges.npz --dev dev-hepth-full.npz hepth-edges.npz \\
        --dev dev-cs768-full.npz cs768-edges.npz

`edges` reads every edge the settings' entailment scorer has scored (`crase score`) and
keeps, per edge, Delta at `--theta` (the classifier's calibrated cut is 0.49; the default,
the search's theta, is the cosine scorer's) and the mean of each citing claim's best
match. `evaluate` adds six columns to the gathered candidates of `python -m
crase.bench.learned_order collect` and fits, per query form, LambdaRank with the default
features, with Delta's four and with all six, on the same training queries, then prints
each dev file's figures and the paired differences (R@50, MAP@50) against the default
features.

Delta is not a feature of the shipped order: measured this way it did not earn its place
(docs/retrieval-quality.md, "Claim-level Delta as features"). Nothing here leaks a dev
query: a Delta is read from the texts of an edge's two papers, and a query's source paper
is never a candidate or an anchor.
"""

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from crase.bench.learned_order import Gathered, K, figures, read_gathered, versus
from crase.graph import Graph
from crase.models import lambdarank
from crase.models.lambdarank import Group, RankingModel
from crase.scoring.delta import stored_coverage_affinity
from crase.search.order.features import FEATURES
from crase.search.order.training import DEFAULT_FEATURES
from crase.settings import Settings

DELTA = ("delta_anchor_cites", "delta_cites_anchor", "delta_from_neighbours",
         "delta_to_neighbours")
CLAIM_MATCH = ("claim_match_anchors", "claim_match_from_neighbours")
COLUMNS = DELTA + CLAIM_MATCH
VARIANTS = {"+ delta": DELTA, "+ delta + claim match": COLUMNS}

# One edge's evidence: (Delta, mean best match of the citing claims).
Evidence = tuple[float, float]


class EdgeEvidence:
    """The scored edges of one corpus, by citing and by cited paper."""

    def __init__(self, citing: Sequence[str], cited: Sequence[str],
                 delta: Sequence[float], match: Sequence[float]) -> None:
        self.out: dict[str, dict[str, Evidence]] = defaultdict(dict)
        self.into: dict[str, dict[str, Evidence]] = defaultdict(dict)
        for u, v, d, m in zip(citing, cited, delta, match, strict=True):
            self.out[u][v] = self.into[v][u] = (float(d), float(m))

    @classmethod
    def read(cls, path: Path) -> "EdgeEvidence":
        with np.load(path, allow_pickle=False) as data:
            return cls(data["citing"].tolist(), data["cited"].tolist(),
                       data["delta"].tolist(), data["match"].tolist())


def edge_row(flat: Sequence[float], rows: int, cols: int, cut: float) -> Evidence:
    """Delta at `cut` (scoring/delta.py's rule) and the mean best match of the citing
    claims; 0, 0 for an empty matrix."""
    if not rows or not cols:
        return 0.0, 0.0
    best = np.asarray(flat, dtype=np.float64).reshape(rows, cols).max(axis=1)
    return stored_coverage_affinity(flat, rows, cols, cut), float(best.mean())


def anchors_of(item: Gathered) -> set[str]:
    """The papers the search starts from: the given papers, or else the seeds among the
    candidates."""
    query, candidates = item.example.query, item.example.candidates
    if query.given:
        return set(query.given)
    seeds = candidates.values[:, FEATURES.index("is_seed")]
    return {paper for paper, seed in zip(candidates.ids, seeds, strict=True) if seed > 0}


def delta_columns(item: Gathered, edges: EdgeEvidence) -> NDArray[np.float64]:
    """COLUMNS for each candidate: its edges with the anchors (largest Delta each way,
    largest claim match either way) and with every other paper of the list (mean Delta
    each way, mean claim match of those citing it); 0 where there is no scored edge."""
    anchors = anchors_of(item)
    ids = item.example.candidates.ids
    near = set(ids) | anchors
    out = np.zeros((len(ids), len(COLUMNS)))
    for row, paper in enumerate(ids):
        into, cites = edges.into.get(paper, {}), edges.out.get(paper, {})
        from_anchors = [e for a, e in into.items() if a in anchors]
        to_anchors = [e for a, e in cites.items() if a in anchors]
        from_near = [e for a, e in into.items() if a in near]
        to_near = [e for a, e in cites.items() if a in near]
        out[row] = (largest(from_anchors, 0), largest(to_anchors, 0), mean(from_near, 0),
                    mean(to_near, 0), largest(from_anchors + to_anchors, 1),
                    mean(from_near, 1))
    return out


def largest(evidence: list[Evidence], field: int) -> float:
    return max((e[field] for e in evidence), default=0.0)


def mean(evidence: list[Evidence], field: int) -> float:
    return float(np.mean([e[field] for e in evidence])) if evidence else 0.0


class Rows:
    """Each gathered query's default features with its Delta columns, computed once."""

    def __init__(self) -> None:
        self.memo: dict[int, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}

    def of(self, item: Gathered, edges: EdgeEvidence, extra: Sequence[str]
           ) -> NDArray[np.float64]:
        if id(item) not in self.memo:
            base = item.example.candidates.values[:, [FEATURES.index(f)
                                                      for f in DEFAULT_FEATURES]]
            self.memo[id(item)] = (base, delta_columns(item, edges))
        base, columns = self.memo[id(item)]
        return np.hstack([base, columns[:, [COLUMNS.index(c) for c in extra]]])


Variant = tuple[RankingModel, tuple[str, ...]]  # a model and the columns it adds


def ranked(models: dict[str, Variant], dev: list[Gathered], edges: EdgeEvidence,
           rows: Rows) -> list[list[str]]:
    """Each dev query's top K by its own form's model; the search's own list where a gate
    keeps a model from ordering it (as bench/learned_order.py)."""
    out = []
    for item in dev:
        if item.gated_order is not None:
            out.append(item.gated_order)
            continue
        model, extra = models[item.example.query.form]
        scores = model.scores(rows.of(item, edges, extra))
        ids = item.example.candidates.ids
        out.append([ids[i] for i in np.lexsort((np.arange(len(ids)), -scores))[:K]])
    return out


def write_edges(args: argparse.Namespace) -> None:
    from crase.search.roles.from_settings import build_search_backends

    settings = Settings()
    scorer = build_search_backends(settings).scorer
    cut = settings.search.theta if args.theta is None else args.theta
    graph = Graph.connect(settings.database)
    try:
        found = graph.read("read_scored_edges", timeout_s=600, scorer=scorer.name,
                           version=scorer.version)
    finally:
        graph.close()
    values = [edge_row(r["matrix"], r["rows"], r["cols"], cut) for r in found]
    np.savez_compressed(args.out, citing=np.array([r["citing"] for r in found], dtype=str),
                        cited=np.array([r["cited"] for r in found], dtype=str),
                        delta=np.array([v[0] for v in values]),
                        match=np.array([v[1] for v in values]),
                        scorer=np.array(f"{scorer.name}@{scorer.version}"),
                        cut=np.array(cut))
    print(f"{len(found)} edges scored by {scorer.name}, Delta at {cut:g}: {args.out}")
    if not found:
        print("no edge is scored by this scorer: run `crase score` first", file=sys.stderr)


def evaluate(args: argparse.Namespace) -> None:
    train = read_gathered(args.train)
    train_edges = EdgeEvidence.read(args.train_edges)
    devs = [(path, read_gathered(path), EdgeEvidence.read(edges)) for path, edges in args.dev]
    rows = Rows()
    forms = sorted({item.example.query.form for _, dev, _ in devs for item in dev})
    # variant -> form -> that form's model, fit on that form's training queries alone
    models: dict[str, dict[str, Variant]] = {name: {} for name in ("default", *VARIANTS)}
    for form in forms:
        examples = [item for item in train if item.example.query.form == form]
        print(f"form {form}: {len(examples)} training queries")
        for name, extra in {"default": (), **VARIANTS}.items():
            groups = [Group(rows.of(item, train_edges, extra), item.example.labels)
                      for item in examples]
            model = lambdarank.fit(groups, DEFAULT_FEATURES + extra)
            models[name][form] = (model, extra)
            if extra:
                gains = model.importances()
                print(f"  gain {name}: " + ", ".join(f"{c} {gains[c]:.3f}" for c in extra))
    for path, dev, edges in devs:
        relevant = [item.example.query.answer for item in dev]
        lists = {name: ranked(by_form, dev, edges, rows) for name, by_form in models.items()}
        for name, mine in lists.items():
            shown = figures(mine, relevant)
            against = ("" if name == "default"
                       else f"  | {versus(mine, lists['default'], relevant)}")
            print(f"{path.name} {name}: " + "  ".join(
                f"{key} {shown[key]:.3f}" for key in ("R@5", "R@20", "R@50", "MAP@50",
                                                      "Hit@5")) + against)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m crase.bench.delta_features")
    actions = parser.add_subparsers(dest="action", required=True)
    dump = actions.add_parser("edges", help="the scored edges of the settings' database")
    dump.add_argument("--out", type=Path, required=True, help="the .npz file to write")
    dump.add_argument("--theta", type=float,
                      help="the cut a claim is grounded at (default: the search's theta, "
                           "calibrated for the cosine scorer; the classifier's is 0.49)")
    dump.set_defaults(handler=write_edges)
    measure = actions.add_parser("evaluate", help="LambdaRank with and without Delta")
    measure.add_argument("--train", type=Path, required=True,
                         help="a file `learned_order collect --train` wrote")
    measure.add_argument("--train-edges", type=Path, required=True,
                         help="the training corpus's file `edges` wrote")
    measure.add_argument("--dev", type=Path, nargs=2, action="append", required=True,
                         metavar=("GATHERED", "EDGES"),
                         help="a file `learned_order collect --queries` wrote and its "
                              "corpus's edges file; repeat")
    measure.set_defaults(handler=evaluate)
    args = parser.parse_args(argv)
    args.handler(args)


if __name__ == "__main__":
    main()
