"""Two idea_eval runs on the same queries side by side: Hit@5 with a paired interval, the
stage times and model tokens from each run's audit, and where the two experts placed the
same relevant work differently.

    .venv/bin/python -m crase.bench.idea_compare --queries Q.jsonl A.json B.json

A.json and B.json are `crase.bench.idea_eval` summaries (for instance the model in every
role against the offline backends, with the same settings); each query's audit is read
from `<var_dir>/runs/<run id>/audit.json`, so run this where the benchmarks ran.
"""

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from crase.bench.idea_eval import read_queries
from crase.bench.significance import mean_difference
from crase.settings import Settings

STAGES = ("structure", "discovery", "selection", "assessment", "neighbours", "shortlist",
          "pdf", "expert", "record")


def read_run(summary_path: Path, runs_dir: Path) -> dict[str, dict[str, Any]]:
    """Per query id: the bench's outcome and the run's audit."""
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    runs = {}
    for outcome in summary["per_query"]:
        audit_path = runs_dir / outcome["run_id"] / "audit.json"
        runs[outcome["query_id"]] = {**outcome,
                                     "audit": json.loads(audit_path.read_text("utf-8"))}
    return runs


def stage_seconds(runs: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Mean seconds per stage over the runs."""
    totals: dict[str, float] = defaultdict(float)
    for run in runs.values():
        for stage, seconds in run["audit"]["timings"].items():
            totals[stage] += seconds
    return {stage: totals[stage] / len(runs) for stage in STAGES if stage in totals}


def prompt_rows(runs: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per prompt over all runs: calls, failed, repaired, tokens and seconds."""
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for run in runs.values():
        for entry in run["audit"]["usage"]["models"]:
            row = rows[entry["prompt"]]
            for name in ("calls", "failed", "repaired", "prompt_tokens", "completion_tokens",
                         "seconds"):
                row[name] += entry[name]
    return rows


def top_five(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """paper id -> the returned work (rank, title, the expert's reason)."""
    return {entry["paper_id"]: entry for entry in run["audit"]["final_ranking"]}


def placed_differently(query: dict[str, Any], a: dict[str, Any], b: dict[str, Any]
                       ) -> list[tuple[str, int | None, int | None]]:
    """(paper, rank by A, rank by B) for the relevant works both runs shortlisted that the
    two experts returned at different places (None: not among the five)."""
    relevant = set(query["relevant_ids"])
    both = relevant & set(a["audit"]["shortlist"]) & set(b["audit"]["shortlist"])
    top_a, top_b = top_five(a), top_five(b)
    ranks = [(paper, (top_a.get(paper) or {}).get("rank"), (top_b.get(paper) or {}).get("rank"))
             for paper in sorted(both)]
    return [row for row in ranks if row[1] != row[2]]


def print_top_five(name: str, run: dict[str, Any], relevant: set[str]) -> None:
    for paper, entry in sorted(top_five(run).items(), key=lambda item: item[1]["rank"]):
        mark = "*" if paper in relevant else " "
        print(f"  {name} {entry['rank']}{mark} [{paper}] {entry['title'][:70]}\n"
              f"      {entry['reason'][:160]}")


def print_report(queries: list[dict[str, Any]], a: dict[str, dict[str, Any]],
                 b: dict[str, dict[str, Any]], names: tuple[str, str]) -> None:
    shared = [q for q in queries if q["query_id"] in a and q["query_id"] in b]
    hits_a = [float(a[q["query_id"]]["hit"]) for q in shared]
    hits_b = [float(b[q["query_id"]]["hit"]) for q in shared]
    diff = mean_difference(hits_a, hits_b)
    print(f"{len(shared)} queries; Hit@5 {names[0]} {sum(hits_a):.0f}/{len(shared)}, {names[1]} "
          f"{sum(hits_b):.0f}/{len(shared)}; difference {diff.value:+.3f} "
          f"[{diff.low:+.3f}, {diff.high:+.3f}] (paired bootstrap, 95%)")
    print(f"\n{'query':<28} {'first relevant A':>16} {'first relevant B':>16}")
    for q in shared:
        ra, rb = (r[q["query_id"]]["first_relevant_rank"] or "-" for r in (a, b))
        print(f"{q['query_id']:<28} {ra!s:>16} {rb!s:>16}")
    for name, runs in zip(names, (a, b), strict=True):
        seconds = stage_seconds(runs)
        print(f"\n{name}: mean seconds per idea {sum(seconds.values()):.1f}: " + ", ".join(
            f"{stage} {value:.1f}" for stage, value in seconds.items()))
        rows = prompt_rows(runs)
        if rows:
            print(f"{'prompt':<28} {'calls':>5} {'repaired':>8} {'failed':>6} "
                  f"{'prompt tok':>10} {'compl tok':>9} {'s/call':>7}")
        for prompt, row in sorted(rows.items()):
            print(f"{prompt:<28} {row['calls']:>5.0f} {row['repaired']:>8.0f} "
                  f"{row['failed']:>6.0f} {row['prompt_tokens']:>10.0f} "
                  f"{row['completion_tokens']:>9.0f} {row['seconds'] / row['calls']:>7.1f}")
    print("\nRelevant works both runs shortlisted that the experts placed differently "
          "(rank among the five returned, - = not returned; * = relevant):")
    for q in shared:
        cases = placed_differently(q, a[q["query_id"]], b[q["query_id"]])
        if not cases:
            continue
        print(f"\n{q['query_id']}: " + "; ".join(
            f"[{paper}] {names[0]} {ra or '-'}, {names[1]} {rb or '-'}"
            for paper, ra, rb in cases))
        for name, runs in zip(names, (a, b), strict=True):
            print_top_five(name, runs[q["query_id"]], set(q["relevant_ids"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crase.bench.idea_compare",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=Path, required=True, help="queries.jsonl")
    parser.add_argument("a", type=Path, help="idea_eval summary A")
    parser.add_argument("b", type=Path, help="idea_eval summary B")
    parser.add_argument("--names", nargs=2, default=("A", "B"), help="labels of A and B")
    args = parser.parse_args(argv)
    runs_dir = Settings().var_dir / "runs"
    try:
        a, b = (read_run(path, runs_dir) for path in (args.a, args.b))
    except (OSError, KeyError, json.JSONDecodeError) as err:
        print(f"idea_compare: cannot read a run ({err}): pass idea_eval summaries and run "
              "this where they ran", file=sys.stderr)
        return 2
    print_report(read_queries(args.queries), a, b, tuple(args.names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
