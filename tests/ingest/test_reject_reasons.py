"""Where two rows clash, the reject says where both are: the shard (or file) and line of
the refused row and of the kept one, on every load path."""

import gzip
import io
import json
from pathlib import Path

import numpy as np

from crase.ingest.batches import ValidatedCorpus
from crase.ingest.corpus import locate_corpus
from crase.ingest.dataset_filter import DatasetFilter
from crase.ingest.edge_table import write_checked_edges
from crase.ingest.records import DEFAULT_LIMITS
from crase.ingest.registry import EdgeSet
from crase.ingest.rejects import RejectLog, read_rejects
from crase.ingest.s2ag import stage_s2ag
from crase.settings import IngestSettings
from tests.ingest.test_s2ag_shapes import paper_row


def test_a_repeated_citation_across_shards_says_where_the_first_was(
        s2ag_datasets: Path, tmp_path: Path) -> None:
    report = stage_s2ag(s2ag_datasets, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                        1_000_000)
    repeated = [r for r in read_rejects(report.rejects_path) if r.kind.value == "duplicate_edge"]
    assert [(r.file, r.line) for r in repeated] == [("citations/part-1.gz", 3)]
    assert "was given before, on citations/part-0.gz line 1" in repeated[0].reason


def test_a_conflict_across_shards_names_the_shard_and_line_of_both_rows(
        tmp_path: Path) -> None:
    first, second = paper_row(11, "One title", "10.1/same"), paper_row(12, "Another", "10.1/same")
    for number, row in enumerate((first, second)):
        (tmp_path / "s2ag" / "papers").mkdir(parents=True, exist_ok=True)
        with gzip.open(tmp_path / "s2ag" / "papers" / f"part-{number}.gz", "wt") as out:
            out.write(json.dumps(paper_row(90 + number, "Filler", f"10.1/{number}")) + "\n"
                      + json.dumps(row) + "\n")
    report = stage_s2ag(tmp_path / "s2ag", tmp_path / "staged", DatasetFilter(),
                        DEFAULT_LIMITS, 1_000_000)
    [conflict] = read_rejects(report.rejects_path)
    assert (conflict.file, conflict.line, conflict.kind.value) == (
        "papers/part-1.gz", 2, "conflicting_paper")
    assert "papers/part-1.gz line 2" in conflict.reason
    assert "papers/part-0.gz line 2" in conflict.reason


def test_a_repeated_edge_says_where_the_first_was_on_both_edge_paths(tmp_path: Path) -> None:
    (tmp_path / "papers.jsonl").write_text("".join(
        f'{{"id": "p{i}", "title": "P{i}"}}\n' for i in range(3)))
    (tmp_path / "citations.csv").write_text("citing_id,cited_id\np1,p0\np2,p0\np1,p0\n")
    reasons = []
    for fast in (True, False):
        corpus = ValidatedCorpus(locate_corpus(tmp_path), RejectLog(tmp_path / f"{fast}.jsonl"),
                                 IngestSettings(), batch_size=2)
        list(corpus.paper_batches())
        if fast:
            checked = write_checked_edges(tmp_path / "citations.csv", corpus.papers,
                                          io.BytesIO())
            assert checked is not None
            reasons += [reject.reason for reject in checked.rejects]
        else:
            list(corpus.edge_batches())
            corpus.rejects.flush()
            reasons += [reject.reason for reject in read_rejects(corpus.rejects.path)]
    assert reasons == ["p1 -> p0 was given before, on citations.csv line 2; the first is kept"
                       ] * 2


def test_the_edge_set_keeps_where_each_edge_was_first_given() -> None:
    rng = np.random.default_rng(5)
    edges, first_seen = EdgeSet(), dict[int, int]()
    for batch in range(80):  # more batches than are kept apart, so compaction runs
        keys = rng.integers(0, 3_000, size=rng.integers(0, 200)).astype(np.int64)
        where = np.arange(len(keys), dtype=np.int64) + batch * 1_000
        duplicate, first = edges.add(keys, where)
        for key, place, is_duplicate, was in zip(keys.tolist(), where.tolist(),
                                                 duplicate.tolist(), first.tolist(),
                                                 strict=True):
            assert is_duplicate == (key in first_seen)
            assert was == first_seen.setdefault(key, place)
