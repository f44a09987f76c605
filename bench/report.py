"""The benchmark report: Markdown tables and small PNG plots from `results.json`.

Everything here is rendering; every figure comes from the results the runner computed, and
every row names the per-query output file (`runs/<dataset>/<key>.jsonl`) it comes from.
"""

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

from crase.bench.metrics import CUTOFFS  # noqa: E402

SYSTEM_NAMES = {
    "bm25": "BM25 (full-text index)",
    "dense": "Dense (MiniLM cosine)",
    "ppr-unweighted": "PPR, unweighted (paper's seeds)",
    "paper-default": "Paper's default (paper's seeds, Delta walk, fill)",
    "previous-default": "Previous default (the walk's order, then the text fill)",
    "learned-order": "Learned order (walk and text candidates, LambdaRank)",
    "shipped": "**Shipped** (crase search as it runs by default)",
    "crase-ppr": "Crase-PPR (shipped seeds, walk only)",
    "uniform-edges": "Shipped seeds, uniform edges (no Delta)",
    "crase-salsa": "Crase-SALSA (shipped seeds)",
    "recency": "Recency (query-year ages)",
    "hybrid": "Hybrid: RRF(Crase-PPR, BM25)",
}
PLOT_DPI = 72


def write_report(results: dict[str, Any], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    lines = header(results)
    for name, data in results["datasets"].items():
        lines += dataset_section(name, data, results, out)
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def header(results: dict[str, Any]) -> list[str]:
    shipped = results["shipped"]
    settings = ", ".join(f"{k}={v}" for k, v in shipped.items()
                         if k not in ("age", "seeds") and v is not None)
    return [
        "# Retrieval benchmark",
        "",
        f"Generated {results['generated']} by:",
        "",
        "```",
        results["command"],
        "```",
        "",
        f"Settings of every graph walk unless a row says otherwise: {settings}; k = "
        f"{results['depth']}; ages from {results['current_year']} (this year) except for "
        "Recency, which measures them from the query's source-paper year.",
        "",
        "Metrics as the Crase paper defines them: Recall@K pooled over the queries (hits "
        "summed over queries divided by the summed sizes of the relevant sets); AP@K divided "
        "by |Rel(q)| (so AP@5 is at most 5/|Rel(q)|) and MAP@K its mean over queries; Hit@5 "
        "the share of queries with a relevant paper in the top 5. Each query's source paper "
        "and all its edges are excluded from every system. Per-query outputs: "
        "`runs/<dataset>/<key>.jsonl`; per-query hits and AP: `per_query_<dataset>.csv`.",
        "",
    ]


def dataset_section(name: str, data: dict[str, Any], results: dict[str, Any],
                    out: Path) -> list[str]:
    lines = [f"## {name}", "", dataset_summary(data), ""]
    if data["main"]:
        lines += ["### Main table", "", *metrics_table(data["main"], label_of), ""]
        lines += [f"![Recall@K and MAP@K, {name}](curves_{name}.png)", ""]
        plot_curves(data["main"], f"{name}: all {data['queries']} queries",
                    out / f"curves_{name}.png")
        lines += ["### Compared with the shipped search at K = 50 (paired bootstrap, 95% "
                  "interval)", "",
                  *comparison_table(data["main"] + data["fusions"]), ""]
        lines += previous_default_table(data["main"])
    if data["fusions"]:
        lines += ["### Other fusions, for context", "",
                  "Reciprocal-rank fusions of two or three systems, and backfill: the "
                  "walk's own list with its empty places filled by BM25 hits (the shipped "
                  "search fills from the query's own fused text ranking instead; the walk "
                  "rows above other than shipped, the defaults and the learned order are the "
                  "walk's own list, `fill=none`).", "",
                  *metrics_table(data["fusions"], lambda e: e["system"]), ""]
    lines += ["### Cost per query", "", *cost_table(data["main"]), ""]
    lines += stage_table(data["main"])
    if "ablations" in data:
        lines += [f"### Ablations (first {data['subset']} queries)", "",
                  "One setting changed at a time from the shipped configuration (marked *; "
                  "tau, beta and theta act on Delta only, so their tables vary the "
                  "Delta-weighted walk, and their * row is that walk). "
                  "|V|, |E|: median neighbourhood size before pruning; retained: after. "
                  "Cold calls: model calls a run with nothing stored needs (1 plan call + "
                  "one claim call per paper + one entailment call per edge); relative cost: "
                  "cold calls over the shipped setting's.", ""]
        for label, rows in data["ablations"].items():
            lines += [f"#### {label}", "", *ablation_table(rows), ""]
    if "corruption" in data:
        lines += [f"### Seed corruption (first {data['subset']} queries)", "",
                  "Each query's seeds are replaced by as many corrupted ones (equal "
                  "restart weights); expansion and the shipped walk run unchanged.", "",
                  *corruption_table(data["corruption"]), "",
                  f"![Seed corruption, {name}](corruption_{name}.png)", ""]
        plot_curves([{"system": row["seeds"], "metrics": row["metrics"]}
                     for row in data["corruption"]],
                    f"{name}: seed corruption, first {data['subset']} queries",
                    out / f"corruption_{name}.png", label=lambda e: e["system"])
    if "order_ablations" in data:
        lines += order_ablation_section(data, results["options"].get("order_ablations"))
    return lines


def dataset_summary(data: dict[str, Any]) -> str:
    dropped = ", ".join(f"{n} ({why})" for why, n in data["dropped"].items() if n) or "none"
    years = data["source_years"]
    span = f"{years[0]}-{years[-1]}" if len(years) > 1 else (str(years[0]) if years else "?")
    return (f"`{data['queries_file']}`: {data['queries']} queries evaluated (dropped: "
            f"{dropped}); {data['relevant_mean']:.1f} relevant papers per query on average "
            f"({data['relevant_outside_graph']} relevant ids not in the graph were removed); "
            f"source papers from {span}. Ablations and the corruption test use the first "
            f"{data['subset']} queries.")


def label_of(entry: dict[str, Any]) -> str:
    return SYSTEM_NAMES.get(entry["system"], entry["system"])


def metrics_table(entries: list[dict[str, Any]], label: Any) -> list[str]:
    columns = [("recall", k) for k in CUTOFFS] + [("map", k) for k in CUTOFFS]
    best = {col: max(e["metrics"][col[0]][k_key(e, col)] for e in entries) for col in columns}
    best_hit = max(e["metrics"]["hit5"] for e in entries)
    head = ("| System | " + " | ".join(f"R@{k}" for k in CUTOFFS) + " | "
            + " | ".join(f"MAP@{k}" for k in CUTOFFS) + " | Hit@5 | n |")
    rule = "|---|" + "---:|" * (2 * len(CUTOFFS) + 2)
    rows = [head, rule]
    for entry in entries:
        m = entry["metrics"]
        cells = [bold(m[kind][k_key(entry, (kind, k))], best[(kind, k)]) for kind, k in columns]
        note = f" ({m['failed']} failed)" if m.get("failed") else ""
        note += f" ({m['missing']} missing)" if m.get("missing") else ""
        rows.append(f"| {label(entry)}{note} | " + " | ".join(cells)
                    + f" | {bold(m['hit5'], best_hit)} | {m['queries']} |")
    single = [e for e in entries if e["metrics"].get("single_target_queries")]
    if single:
        n = single[0]["metrics"]["single_target_queries"]
        values = ", ".join(f"{label(e)} {e['metrics']['single_target_hit5']:.2f}" for e in single)
        rows += ["", f"Hit@5 on the {n} single-target queries (|Rel| = 1): {values}."]
    return rows


def k_key(entry: dict[str, Any], column: tuple[str, int]) -> Any:
    """Cutoff keys are ints when computed and strings after a JSON round trip."""
    table = entry["metrics"][column[0]]
    return column[1] if column[1] in table else str(column[1])


def bold(value: float, best: float) -> str:
    text = f"{value:.4f}"
    return f"**{text}**" if abs(value - best) < 1e-12 and best > 0 else text


def comparison_table(entries: list[dict[str, Any]]) -> list[str]:
    rows = ["| System | R@50 minus shipped [95% CI] | MAP@50 minus shipped [95% CI] |",
            "|---|---:|---:|"]
    for entry in entries:
        diff = entry.get("vs_shipped")
        if not diff:
            continue
        rows.append(f"| {label_of(entry)} | {interval(diff['recall'])} | "
                    f"{interval(diff['map'])} |")
    return rows


def previous_default_table(entries: list[dict[str, Any]]) -> list[str]:
    """Recall@K minus the previous default's, at every K (paired bootstrap, 95%)."""
    compared = [e for e in entries if e.get("vs_previous_default")]
    if not compared:
        return []
    cutoffs = list(compared[0]["vs_previous_default"])
    rows = ["### Compared with the previous default at every K (Recall and MAP, paired "
            "bootstrap, 95% interval)", "",
            "| System | " + " | ".join(f"R@{k}" for k in cutoffs) + " | "
            + " | ".join(f"MAP@{k}" for k in cutoffs) + " |",
            "|---|" + "---:|" * (2 * len(cutoffs))]
    for entry in compared:
        diffs = entry["vs_previous_default"]
        rows.append(f"| {label_of(entry)} | "
                    + " | ".join(interval(diffs[k]["recall"]) for k in cutoffs) + " | "
                    + " | ".join(interval(diffs[k]["map"]) for k in cutoffs) + " |")
    return [*rows, ""]


def interval(d: dict[str, Any]) -> str:
    mark = " (clear)" if d["clear"] else ""
    return f"{d['diff']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]{mark}"


def cost_table(entries: list[dict[str, Any]]) -> list[str]:
    rows = ["| System | papers returned (mean) | wall s (median) | wall s (mean) | "
            "model calls made (mean) | "
            "cold calls 1+\\|V\\|+\\|E\\| (mean) | tokens (mean) | \\|V\\| | \\|E\\| | "
            "retained \\|V\\| | retained \\|E\\| |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for entry in entries:
        c = entry.get("cost")
        if not c or not c.get("queries"):
            continue
        sizes = [c.get(f"{name}_median") for name in ("nodes", "edges", "retained_nodes",
                                                      "retained_edges")]
        rows.append(
            f"| {label_of(entry)} | {c['results_mean']:.1f} | {c['seconds_median']:.2f} | "
            f"{c['seconds_mean']:.2f} | "
            f"{c['model_calls_mean']:.0f} | {c['cold_calls_mean']:.0f} | "
            f"{c['tokens_mean']:.0f} | "
            + " | ".join("-" if v is None else f"{v:.0f}" for v in sizes) + " |")
    backends = sorted({b for e in entries for b in (e.get("cost") or {}).get("backends", [])})
    if backends:
        rows += ["", "Backends: " + ", ".join(f"`{b}`" for b in backends) + ". Offline backends "
                 "send no tokens; a model call is then a local computation (one claim "
                 "extraction per paper, one claim matrix per edge). Calls made counts only "
                 "what was not stored yet: Delta is computed once per edge and reused."]
    return rows


def stage_table(entries: list[dict[str, Any]]) -> list[str]:
    walks = [e for e in entries if (e.get("cost") or {}).get("stages_median")]
    if not walks:
        return []
    stages = list(walks[0]["cost"]["stages_median"])
    rows = ["Median seconds per stage:", "",
            "| System | " + " | ".join(stages) + " |", "|---|" + "---:|" * len(stages)]
    for entry in walks:
        values = entry["cost"]["stages_median"]
        rows.append(f"| {label_of(entry)} | "
                    + " | ".join(f"{values[s]:.2f}" for s in stages) + " |")
    return rows + [""]


def ablation_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| value | R@20 | R@50 | MAP@20 | MAP@50 | R@50 minus shipped [95% CI] | "
             "MAP@50 minus shipped [95% CI] | papers returned (mean) | "
             "\\|V\\| | \\|E\\| | retained \\|V\\| | retained \\|E\\| | cold calls | "
             "relative cost | wall s (median) | n |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        m, c = row["metrics"], row["cost"]
        if not c.get("queries"):
            lines.append(f"| {row['value']} | not run |" + " |" * 14)
            continue
        relative = "-" if row["relative_cost"] is None else f"{row['relative_cost']:.2f}x"
        r20, r50 = (m["recall"][k_key(row, ("recall", k))] for k in (20, 50))
        m20, m50 = (m["map"][k_key(row, ("map", k))] for k in (20, 50))
        lines.append(
            f"| {row['value']}{' *' if row['shipped'] else ''} | {r20:.4f} | {r50:.4f} | "
            f"{m20:.4f} | {m50:.4f} | "
            f"{interval(row['vs_shipped']['recall']) if row.get('vs_shipped') else '-'} | "
            f"{interval(row['vs_shipped']['map']) if row.get('vs_shipped') else '-'} | "
            f"{c['results_mean']:.1f} | {c['nodes_median']:.0f} | {c['edges_median']:.0f} | "
            f"{c['retained_nodes_median']:.0f} | {c['retained_edges_median']:.0f} | "
            f"{c['cold_calls_mean']:.0f} | {relative} | {c['seconds_median']:.2f} | "
            f"{m['queries'] - m['missing']} |")
    return lines


def order_ablation_section(data: dict[str, Any], folder: str | None) -> list[str]:
    reference = data["order_ablation_reference"]
    if not any(row["applied"] for row in [reference, *data["order_ablations"]]):
        # Every list kept the walk's or the text's order: the rows would all be the same.
        return ["### Learned order: feature groups removed", "",
                f"No model ordered any of the {data['queries']} queries (every search's "
                "walk was too thin for the learned order, or every query too short), so "
                "removing a feature group changes nothing here.", ""]
    own = ", ".join(f"`{name}`" for name in reference["models"]) or "none applied"
    lines = ["### Learned order: feature groups removed", "",
             f"The learned order with each model file of `{folder}`, on all "
             f"{data['queries']} queries, against the learned order with the search's own "
             f"model ({own}; marked *) and the previous default (paired bootstrap, 95% "
             "interval). Ordered: queries whose list the model ordered; the others keep "
             "the walk's order and the text fill, the same for every model.", "",
             *order_ablation_table(reference, data["order_ablations"]), "",
             "Training data of each model:", ""]
    lines += [f"- `{row['model']}`: {training_note(row)}" for row in data["order_ablations"]]
    return [*lines, ""]


RANKER_COLUMNS = (("recall", 5), ("recall", 10), ("recall", 20), ("recall", 50), ("map", 50))


def order_ablation_table(reference: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| model | R@5 | R@10 | R@20 | R@50 | MAP@50 | Hit@5 | R@50 minus * [95% CI] | "
             "MAP@50 minus * [95% CI] | R@50 minus previous default [95% CI] | ordered | n |",
             "|---|" + "---:|" * 11]
    for row in [{**reference, "model": "the search's own model *"}, *rows]:
        m = row["metrics"]
        cells = [f"{m[kind][k_key(row, (kind, k))]:.4f}" for kind, k in RANKER_COLUMNS]
        shipped = row.get("vs_shipped_model")
        previous = (row.get("vs_previous_default") or {}).get("50")
        lines.append(
            f"| {row['model']} | " + " | ".join(cells) + f" | {m['hit5']:.4f} | "
            + (f"{interval(shipped['recall'])} | {interval(shipped['map'])}" if shipped
               else "- | -")
            + f" | {interval(previous['recall']) if previous else '-'} | {row['applied']} | "
            f"{m['queries'] - m['missing']} |")
    return lines


def training_note(row: dict[str, Any]) -> str:
    """What a model was trained on, from its description (search/order/training.py)."""
    t = row["training"]
    years = f"{t.get('source_year_min')}-{t.get('source_year_max')}"
    return (f"corpus {t.get('corpus') or '?'}, {t.get('queries')} queries "
            f"({t.get('queries_with_a_relevant_candidate')} with a relevant candidate), "
            f"source papers {years} (before {t.get('before_year')}, from "
            f"{t.get('from_year')}), seed {t.get('seed')}; {len(row['features'])} features")


def corruption_table(rows: list[dict[str, Any]]) -> list[str]:
    clean = rows[0]["metrics"]
    lines = ["| seeds | " + " | ".join(f"R@{k}" for k in CUTOFFS) + " | MAP@50 | "
             "share of clean R@50 | share of clean MAP@50 | retained \\|V\\| |",
             "|---|" + "---:|" * (len(CUTOFFS) + 4)]
    for row in rows:
        m = row["metrics"]
        r50, m50 = m["recall"][k_key(row, ("recall", 50))], m["map"][k_key(row, ("map", 50))]
        c50 = clean["recall"][k_key(rows[0], ("recall", 50))]
        cm50 = clean["map"][k_key(rows[0], ("map", 50))]
        size = row["cost"].get("retained_nodes_median")
        lines.append(
            f"| {row['seeds']} | "
            + " | ".join(f"{m['recall'][k_key(row, ('recall', k))]:.4f}" for k in CUTOFFS)
            + f" | {m50:.4f} | {share(r50, c50)} | {share(m50, cm50)} | "
            + ("-" if size is None else f"{size:.0f}") + " |")
    return lines


def share(value: float, reference: float) -> str:
    return f"{value / reference:.0%}" if reference else "-"


def plot_curves(entries: list[dict[str, Any]], title: str, path: Path,
                label: Any = label_of) -> None:
    """Recall@K (left) and MAP@K (right) against K, one line per system."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), dpi=PLOT_DPI)
    for entry in entries:
        m = entry["metrics"]
        left.plot(CUTOFFS, [m["recall"][k_key(entry, ("recall", k))] for k in CUTOFFS],
                  marker="o", markersize=3, label=label(entry))
        right.plot(CUTOFFS, [m["map"][k_key(entry, ("map", k))] for k in CUTOFFS],
                   marker="o", markersize=3)
    for axis, name in ((left, "Recall@K (pooled)"), (right, "MAP@K")):
        axis.set_xlabel("K")
        axis.set_ylabel(name)
        axis.set_xticks(list(CUTOFFS))
        axis.grid(alpha=0.3)
    figure.suptitle(title, fontsize=10)
    figure.legend(loc="lower center", ncol=4, fontsize=7, frameon=False)
    figure.tight_layout(rect=(0, 0.12, 1, 1))
    figure.savefig(path, dpi=PLOT_DPI)
    plt.close(figure)
