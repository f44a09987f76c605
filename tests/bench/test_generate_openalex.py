"""The synthetic OpenAlex snapshot reads back through the dataset reader as it was planned:
the benchmark's filter keeps exactly the works planned as kept, and every reference
planned inside the kept set becomes an edge or a reject."""

import json
from pathlib import Path

from crase.bench.generate_openalex import generate
from crase.ingest.dataset_filter import DatasetFilter
from crase.ingest.openalex import stage_openalex
from crase.ingest.records import DEFAULT_LIMITS


def test_the_benchmark_filter_keeps_the_planned_works_and_edges(tmp_path: Path) -> None:
    stats = generate(tmp_path / "snapshot", works=400, references=8.0, inside_share=2 / 3)
    assert stats["references_inside_kept"] > stats["references"] // 5
    recent_cs = DatasetFilter.build(from_year=2016, fields=["Computer Science"])
    report = stage_openalex(tmp_path / "snapshot" / "works", tmp_path / "staged", recent_cs,
                            DEFAULT_LIMITS, 1_000_000)
    assert report.kept == stats["kept_works"] and report.records == 400
    # A kept work may cite itself or the same work twice: a reject, not an edge.
    assert report.edges_kept + report.rejected == stats["references_inside_kept"]
    assert report.edges_kept > 0.95 * stats["references_inside_kept"]
    assert json.loads((tmp_path / "snapshot" / "stats.json").read_text()) == stats
