"""One table per query form and dev set, from `crase bench quality` runs of the form files
(bench/query_forms.py writes them):

    python -m crase.bench.form_report REPORT_DIR [REPORT_DIR ...] [--before DIR ...] > tables.md

Each REPORT_DIR is one benchmark's --out folder of one form file; its per-query file
(`per_query_<set>.csv`) gives every system's hits and AP per query. Folders of the same
set and form add up, a later folder's system replacing an earlier one's (the baselines
from one run, the shipped search from another); a `--before` folder's shipped search is
shown as "shipped before", with the shipped search's paired difference from it.

For each system: R@5, R@20, R@50 (pooled over the queries), MAP@50 and Hit@5, each with
its 95% bootstrap interval (queries resampled); then the shipped search against the best
baseline of that metric (the highest of the baselines present: BM25, dense, the unweighted
walk, co-citation + coupling), the paired difference with its interval, and for R@50 the
ratio. A system a folder lacks is left out.
"""

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from crase.bench.significance import RESAMPLES, mean_difference, pooled_difference

BEFORE = "shipped before"
BASELINES = {"bm25": "BM25", "dense": "dense MiniLM", "ppr-unweighted": "unweighted walk",
             "cocitation": "co-citation + coupling"}
SHIPPED = "shipped"
METRICS = ("R@5", "R@20", "R@50", "MAP@50", "Hit@5")

Rows = dict[str, dict[str, dict[str, float]]]  # system -> query -> column -> value


def read_per_query(path: Path) -> Rows:
    rows: Rows = defaultdict(dict)
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            rows[row["system"]][row["query_id"]] = {
                key: float(value) for key, value in row.items()
                if key not in ("system", "query_id")}
    return rows


def columns(rows: Rows, system: str, queries: list[str], metric: str
            ) -> tuple[list[float], list[float] | None]:
    """A metric's per-query values (hits for a recall, with the relevant-set sizes)."""
    entries = [rows[system][q] for q in queries]
    if metric.startswith("R@"):
        k = metric[2:]
        return [e[f"hits@{k}"] for e in entries], [e["relevant"] for e in entries]
    key = "ap@50" if metric == "MAP@50" else "hit@5"
    return [e[key] for e in entries], None


def measured(rows: Rows, system: str, queries: list[str], metric: str,
             against: str | None = None) -> tuple[float, float, float]:
    """The metric (or its difference from `against`) with its 95% interval."""
    values, sizes = columns(rows, system, queries, metric)
    base = columns(rows, against, queries, metric)[0] if against else [0.0] * len(values)
    if sizes is not None:
        d = pooled_difference([int(v) for v in values], [int(v) for v in base],
                              [int(s) for s in sizes], RESAMPLES)
    else:
        d = mean_difference(values, base, RESAMPLES)
    return d.value, d.low, d.high


def table(rows: Rows, title: str) -> list[str]:
    systems = [s for s in (*BASELINES, BEFORE, SHIPPED) if s in rows]
    queries = sorted(set.intersection(*(set(rows[s]) for s in systems)))
    # BM25 and dense rank nothing for a query without text (the seeds form): no row.
    systems = [s for s in systems if any(rows[s][q]["hits@50"] for q in queries)]
    lines = [f"#### {title} ({len(queries)} queries)", "",
             "| system | " + " | ".join(METRICS) + " |",
             "|---|" + "---:|" * len(METRICS)]
    for system in systems:
        cells = [cell(*measured(rows, system, queries, m)) for m in METRICS]
        name = BASELINES.get(system, BEFORE if system == BEFORE else "**shipped**")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    baselines = [s for s in BASELINES if s in rows]
    if SHIPPED in rows and baselines:
        best = {m: max(baselines, key=lambda s: measured(rows, s, queries, m)[0])
                for m in METRICS}
        lines.append("| shipped minus the best baseline | " + " | ".join(
            signed(*measured(rows, SHIPPED, queries, m, best[m])) + f" ({short(best[m])})"
            for m in METRICS) + " |")
        ratio = (measured(rows, SHIPPED, queries, "R@50")[0]
                 / max(measured(rows, best["R@50"], queries, "R@50")[0], 1e-12))
        if BEFORE in rows:
            lines.append("| shipped minus shipped before | " + " | ".join(
                signed(*measured(rows, SHIPPED, queries, m, BEFORE)) for m in METRICS) + " |")
        lines += ["", f"R@50: shipped / best baseline ({BASELINES[best['R@50']]}) = "
                      f"{ratio:.2f} x"]
    return lines + [""]


def form_of(rows: Rows) -> str:
    """The form of a folder's queries: their ids end in `-<form>` (bench/query_forms.py);
    a dev set's own queries are the `full` form."""
    query = next(iter(next(iter(rows.values()))))
    known = ("title-seeds", "title", "keyphrase", "seeds", "question")
    return next((form for form in known if query.endswith(f"-{form}")), "full")


def cell(value: float, low: float, high: float) -> str:
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def signed(value: float, low: float, high: float) -> str:
    clear = " *" if low > 0 or high < 0 else ""
    return f"{value:+.3f} [{low:+.3f}, {high:+.3f}]{clear}"


def short(system: str) -> str:
    return {"bm25": "BM25", "dense": "dense", "ppr-unweighted": "walk",
            "cocitation": "co-cit."}[system]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path,
                        help="`crase bench quality --out` folders, one per form file")
    parser.add_argument("--before", nargs="*", type=Path, default=[], metavar="DIR",
                        help="folders whose shipped search is shown as 'shipped before'")
    args = parser.parse_args(argv)
    tables: dict[tuple[str, str], Rows] = {}
    for folder, before in [(f, False) for f in args.reports] + [(f, True) for f in args.before]:
        for path in sorted(folder.glob("per_query_*.csv")):
            rows = read_per_query(path)
            if before:
                rows = {BEFORE: rows[SHIPPED]} if SHIPPED in rows else {}
            tables.setdefault((path.stem.removeprefix("per_query_"), form_of(rows)),
                              {}).update(rows)
    out = []
    for (name, form), rows in tables.items():
        out += table(rows, f"{name}, {form}")
    print("\n".join(out))
    print("Intervals: 95% bootstrap over queries; * marks a difference whose interval "
          "leaves out zero.", file=sys.stdout)
    return 0


if __name__ == "__main__":
    np.seterr(all="raise")
    sys.exit(main())
