"""Choose the default theta of the offline entailment scorer from citation data.

    .venv/bin/python -m crase.bench.calibrate_theta [corpus] [--edges 2000] [--seed 7]

Samples real citation edges and as many non-citing pairs (same citing paper, a random
older paper it does not cite, see `citation_pairs`), extracts claims with the offline
extractor, scores every pair with the offline scorer and compares the best-match scores
(row maxima of M: the quantity theta thresholds) of citing claims on real edges against
those on non-citing pairs. theta is the threshold that maximises Youden's J = TPR - FPR at
the claim level; the F1-best threshold (balanced samples) and the edge-level consequences
(Delta, share of edges pruned at tau = 0, AUC) are printed next to it. Deterministic for a
given corpus, sample size and seed.
"""

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from crase.bench.citation_pairs import (
    Corpus,
    add_sample_arguments,
    read_corpus,
    sample_edges,
    sample_non_citing,
)
from crase.scoring.claims import Claim
from crase.scoring.delta import coverage_affinity
from crase.search.roles.cosine_entailment import CosineEntailmentScorer
from crase.search.roles.offline_claims import OfflineClaimExtractor

FloatArray = NDArray[np.float64]
GRID = np.round(np.arange(0.0, 1.0001, 0.01), 2)
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


@dataclass(frozen=True)
class Sample:
    row_max: FloatArray  # best match of every citing claim, over all pairs
    edge_max: FloatArray  # largest entry per pair
    matrices: list[FloatArray]


def score_pairs(corpus: Corpus, pairs: list[tuple[str, str]],
                claims: dict[str, list[Claim]], scorer: CosineEntailmentScorer) -> Sample:
    usable = [(u, v) for u, v in pairs if claims.get(u) and claims.get(v)]
    matrices = [m for m in scorer.score([(claims[u], claims[v]) for u, v in usable])
                if m is not None]
    row_max = np.concatenate([m.max(axis=1) for m in matrices])
    edge_max = np.array([m.max() for m in matrices])
    return Sample(row_max, edge_max, matrices)


def auc(positive: FloatArray, negative: FloatArray) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    values = np.concatenate([positive, negative])
    order = values.argsort(kind="mergesort")
    ranks = np.empty(len(values))
    sorted_values = values[order]
    # Average ranks over ties.
    start = 0
    for end in range(1, len(values) + 1):
        if end == len(values) or sorted_values[end] != sorted_values[start]:
            ranks[order[start:end]] = (start + end + 1) / 2.0
            start = end
    n_pos, n_neg = len(positive), len(negative)
    return float((ranks[:n_pos].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def threshold_table(positive: FloatArray, negative: FloatArray) -> list[dict[str, float]]:
    rows = []
    for theta in GRID:
        tpr = float((positive >= theta).mean())
        fpr = float((negative >= theta).mean())
        true_pos, false_pos = tpr * len(positive), fpr * len(negative)
        precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else 0.0
        f1 = 2 * precision * tpr / (precision + tpr) if precision + tpr else 0.0
        rows.append({"theta": float(theta), "tpr": tpr, "fpr": fpr, "j": tpr - fpr, "f1": f1})
    return rows


def edge_deltas(sample: Sample, theta: float) -> FloatArray:
    return np.array([coverage_affinity(m, theta) for m in sample.matrices])


def quantiles(values: FloatArray) -> dict[str, float]:
    return {f"q{int(q * 100):02d}": round(float(np.quantile(values, q)), 4) for q in QUANTILES}


def calibrate(folder: Path, edge_count: int, seed: int) -> dict[str, object]:
    corpus = read_corpus(folder)
    edges = sample_edges(corpus, edge_count, seed)
    non_citing = sample_non_citing(corpus, edges, seed)
    needed = sorted({p for pair in (*edges, *non_citing) for p in pair})
    started = time.perf_counter()
    claims = OfflineClaimExtractor().extract([corpus.papers[p] for p in needed])
    scorer = CosineEntailmentScorer()
    positive = score_pairs(corpus, edges, claims, scorer)
    negative = score_pairs(corpus, non_citing, claims, scorer)
    elapsed = time.perf_counter() - started
    table = threshold_table(positive.row_max, negative.row_max)
    best_j = max(table, key=lambda r: (r["j"], -r["theta"]))
    best_f1 = max(table, key=lambda r: (r["f1"], -r["theta"]))
    edge_table = threshold_table(positive.edge_max, negative.edge_max)
    best_edge_j = max(edge_table, key=lambda r: (r["j"], -r["theta"]))
    theta = best_j["theta"]
    pos_deltas, neg_deltas = edge_deltas(positive, theta), edge_deltas(negative, theta)
    return {
        "corpus": str(folder), "seed": seed, "seconds": round(elapsed, 1),
        "citation_edges": len(positive.matrices), "non_citing_pairs": len(negative.matrices),
        "papers": len(needed), "claims": sum(len(c) for c in claims.values()),
        "citing_claims_on_edges": len(positive.row_max),
        "citing_claims_on_non_citing": len(negative.row_max),
        "row_max_edges": quantiles(positive.row_max),
        "row_max_non_citing": quantiles(negative.row_max),
        "claim_auc": round(auc(positive.row_max, negative.row_max), 4),
        "theta_youden": theta, "youden_j": round(best_j["j"], 4),
        "tpr": round(best_j["tpr"], 4), "fpr": round(best_j["fpr"], 4),
        "theta_f1": best_f1["theta"], "f1": round(best_f1["f1"], 4),
        "theta_edge_youden": best_edge_j["theta"],
        "edge_max_auc": round(auc(positive.edge_max, negative.edge_max), 4),
        "delta_auc": round(auc(pos_deltas, neg_deltas), 4),
        "mean_delta_edges": round(float(pos_deltas.mean()), 4),
        "mean_delta_non_citing": round(float(neg_deltas.mean()), 4),
        "pruned_tau0_edges": round(float((pos_deltas == 0).mean()), 4),
        "pruned_tau0_non_citing": round(float((neg_deltas == 0).mean()), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_sample_arguments(parser)
    parser.add_argument("--output", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    report = calibrate(args.corpus, args.edges, args.seed)
    text = json.dumps(report, indent=2)
    print(text)
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
