"""The per-form tables: metrics from a benchmark's per-query file, a later folder's system
replacing an earlier one's, the best baseline per metric and the `--before` rows."""

import csv
from pathlib import Path

import pytest

from crase.bench.form_report import main

COLUMNS = ["query_id", "system", "relevant", "hits@5", "hits@10", "hits@20", "hits@30",
           "hits@40", "hits@50", "ap@5", "ap@10", "ap@20", "ap@30", "ap@40", "ap@50", "hit@5"]


def write(folder: Path, rows: list[tuple[str, str, int, int, float]]) -> Path:
    """rows: (query, system, relevant, hits at every cutoff, AP@50); Hit@5 from the hits."""
    folder.mkdir()
    with (folder / "per_query_hepth.csv").open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(COLUMNS)
        for query, system, relevant, hits, ap in rows:
            out.writerow([query, system, relevant, *[hits] * 6, *[ap] * 6, int(hits > 0)])
    return folder


def test_a_table_per_set_and_form(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = [f"q{i:04d}-title" for i in range(4)]
    baselines = write(tmp_path / "base", [
        *[(q, "bm25", 4, 1, 0.1) for q in queries],
        *[(q, "ppr-unweighted", 4, 2, 0.2) for q in queries],
        *[(q, "shipped", 4, 0, 0.0) for q in queries]])  # replaced by the next folder
    shipped = write(tmp_path / "new", [(q, "shipped", 4, 3, 0.3) for q in queries])
    before = write(tmp_path / "old", [(q, "shipped", 4, 2, 0.25) for q in queries])

    assert main([str(baselines), str(shipped), "--before", str(before)]) == 0
    text = capsys.readouterr().out
    assert "#### hepth, title (4 queries)" in text
    rows = {line.split(" | ")[0].strip("| *"): line for line in text.splitlines()
            if line.startswith("| ")}
    assert rows["shipped"].split(" | ")[3].startswith("0.750")  # R@50: 12 of 16
    assert rows["shipped before"].split(" | ")[3].startswith("0.500")
    assert "+0.250" in rows["shipped minus the best baseline"]  # against the walk's 0.500
    assert "(walk)" in rows["shipped minus the best baseline"]
    assert rows["shipped minus shipped before"].split(" | ")[4].startswith("+0.050")  # MAP
    assert "R@50: shipped / best baseline (unweighted walk) = 1.50 x" in text
