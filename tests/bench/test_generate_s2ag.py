"""The synthetic Semantic Scholar datasets read back through the dataset reader as they
were planned: the benchmark's filter keeps exactly the planned papers, and every citation
planned inside the kept set becomes an edge (with its signals) or a reject."""

from pathlib import Path

from crase.bench.generate_s2ag import generate
from crase.ingest.dataset_filter import DatasetFilter
from crase.ingest.records import DEFAULT_LIMITS
from crase.ingest.s2ag import stage_s2ag


def test_the_benchmark_filter_keeps_the_planned_papers_and_citations(tmp_path: Path) -> None:
    stats = generate(tmp_path / "datasets", works=400, references=8.0, inside_share=2 / 3)
    recent_cs = DatasetFilter.build(from_year=2016, fields=["Computer Science"],
                                    require_abstract=True)
    report = stage_s2ag(tmp_path / "datasets", tmp_path / "staged", recent_cs,
                        DEFAULT_LIMITS, 1_000_000)
    assert report.kept == stats["kept_works"] and report.records == 400
    # A kept paper may cite itself or the same paper twice: a reject, not an edge.
    assert report.edges_kept + report.rejected == stats["citations_inside_kept"]
    assert report.edges_kept > 0.95 * stats["citations_inside_kept"]
    signals = (tmp_path / "staged" / "citation_signals.jsonl").read_text().splitlines()
    assert len(signals) == report.edges_kept
