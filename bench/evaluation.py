"""From per-query outputs to the figures of the report: metrics at every cutoff, per-query
values (for tracing and for the paired bootstrap), graph sizes and cost per query.

A query a system failed on (its record holds an error) counts as an empty ranking: a
failure is never left out of the denominator. How many failed is reported next to the
figures.

The papers a query gives (`seed_ids`) are never counted as found: Scored.from_records, the
one place a system's stored list becomes the list that is scored, takes them out (the
record keeps the list as the system returned it), and resolve_queries (bench/quality.py)
has already taken them out of the relevant set.
"""

import statistics
from dataclasses import dataclass
from typing import Any

from crase.bench.metrics import (
    CUTOFFS,
    average_precision_at_k,
    hit_at_k,
    hits_at_k,
    map_at_k,
    mean_hit_at_k,
    recall_at_k,
)
from crase.bench.run_store import Record
from crase.bench.significance import mean_difference, pooled_difference
from crase.bench.systems import BenchQuery

STAGES = ("plan", "seeds", "expand", "claims", "entailment", "prune", "rank", "evidence",
          "record")


@dataclass(frozen=True)
class Scored:
    """One system on one query set: rankings aligned with the queries."""

    queries: list[BenchQuery]
    rankings: list[list[str]]
    failed: int
    missing: int

    @classmethod
    def from_records(cls, records: dict[str, Record], queries: list[BenchQuery]) -> "Scored":
        rankings, failed, missing = [], 0, 0
        for query in queries:
            record = records.get(query.id)
            if record is None:
                missing += 1
            elif record.get("error"):
                failed += 1
            rankings.append(scored_ranking(record["ranking"], query)
                            if record and not record.get("error") else [])
        return cls(queries, rankings, failed, missing)

    @property
    def relevants(self) -> list[set[str]]:
        return [set(q.relevant) for q in self.queries]


def scored_ranking(ranking: list[str], query: BenchQuery) -> list[str]:
    """A system's list as it is scored: without the papers the query gave."""
    given = set(query.seed_ids)
    return [paper for paper in ranking if paper not in given]


def evaluate(scored: Scored) -> dict[str, Any]:
    """Recall@K and MAP@K at every cutoff, Hit@5 over all queries and over single-target
    queries (|Rel(q)| = 1), and how many queries the figures cover."""
    relevants = scored.relevants
    single = [i for i, rel in enumerate(relevants) if len(rel) == 1]
    return {
        "queries": len(scored.queries), "failed": scored.failed, "missing": scored.missing,
        "recall": {k: recall_at_k(scored.rankings, relevants, k) for k in CUTOFFS},
        "map": {k: map_at_k(scored.rankings, relevants, k) for k in CUTOFFS},
        "hit5": mean_hit_at_k(scored.rankings, relevants, 5),
        "single_target_queries": len(single),
        "single_target_hit5": (mean_hit_at_k([scored.rankings[i] for i in single],
                                             [relevants[i] for i in single], 5)
                               if single else None),
    }


def per_query_rows(scored: Scored, system: str) -> list[dict[str, Any]]:
    """One row per query: |Rel(q)|, hits and AP at each cutoff (the per-query CSV)."""
    rows = []
    for query, ranking in zip(scored.queries, scored.rankings, strict=True):
        relevant = set(query.relevant)
        row: dict[str, Any] = {"query_id": query.id, "system": system,
                               "relevant": len(relevant)}
        for k in CUTOFFS:
            row[f"hits@{k}"] = hits_at_k(ranking, relevant, k)
        for k in CUTOFFS:
            row[f"ap@{k}"] = round(average_precision_at_k(ranking, relevant, k), 6)
        row["hit@5"] = int(hit_at_k(ranking, relevant, 5))
        rows.append(row)
    return rows


def compare(a: Scored, b: Scored, k: int = 50) -> dict[str, Any]:
    """A minus B at cutoff k with paired-bootstrap 95% intervals (same queries, same order)."""
    relevants = a.relevants
    recall = pooled_difference([hits_at_k(r, rel, k) for r, rel in zip(a.rankings, relevants,
                                                                         strict=True)],
                               [hits_at_k(r, rel, k) for r, rel in zip(b.rankings, relevants,
                                                                         strict=True)],
                               [len(rel) for rel in relevants])
    ap = mean_difference(
        [average_precision_at_k(r, rel, k) for r, rel in zip(a.rankings, relevants, strict=True)],
        [average_precision_at_k(r, rel, k) for r, rel in zip(b.rankings, relevants, strict=True)])
    return {"k": k,
            "recall": {"diff": recall.value, "low": recall.low, "high": recall.high,
                       "clear": recall.clear},
            "map": {"diff": ap.value, "low": ap.low, "high": ap.high, "clear": ap.clear}}


def summarize_cost(records: list[Record], walk: bool, coverage: bool) -> dict[str, Any]:
    """Per-query cost: wall time (median, mean), median time per pipeline stage, graph sizes,
    model calls made in the run and the calls a cold run needs (1 plan call when planned,
    plus one claim call per paper and one entailment call per edge for the coverage
    weighting: the paper's 1 + |V| + |E|), and model tokens."""
    ok = [r for r in records if not r.get("error")]
    if not ok:
        return {"queries": 0}
    seconds = [float(r["seconds"]) for r in ok]
    summary: dict[str, Any] = {
        "queries": len(ok),
        "seconds_median": statistics.median(seconds),
        "seconds_mean": statistics.fmean(seconds),
        "results_mean": statistics.fmean(len(r["ranking"]) for r in ok),
    }
    if not walk:
        summary.update({"model_calls_mean": 0.0, "cold_calls_mean": 0.0, "tokens_mean": 0.0})
        return summary
    summary["stages_median"] = {
        stage: statistics.median(float(r["timings"].get(stage, 0.0)) for r in ok)
        for stage in STAGES}
    for count in ("seeds", "nodes", "edges", "retained_nodes", "retained_edges",
                  "edges_pruned", "edges_scored_now", "edges_reused"):
        values = [int(r["counts"].get(count, 0)) for r in ok]
        summary[f"{count}_median"] = statistics.median(values)
        summary[f"{count}_mean"] = statistics.fmean(values)
    calls = [sum(int(u.get("made", 0)) for u in r["usage"].values()) for r in ok]
    tokens = [sum(int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0))
                  for u in r["usage"].values()) for r in ok]
    cold = [(1 if r["plan"] else 0)
            + ((int(r["counts"]["nodes"]) + int(r["counts"]["edges"])) if coverage else 0)
            for r in ok]
    summary.update({
        "model_calls_mean": statistics.fmean(calls),
        "cold_calls_mean": statistics.fmean(cold),
        "cold_calls_median": statistics.median(cold),
        "tokens_mean": statistics.fmean(tokens),
        "backends": sorted({f"{role}={name}" for r in ok
                            for role, name in r.get("backends", {}).items()}),
    })
    return summary
