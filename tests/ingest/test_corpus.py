"""The readers: positions, encodings, huge lines, both formats, and the registries."""

import json
from pathlib import Path

import numpy as np
import pytest

from crase.errors import CorpusError
from crase.ingest.corpus import locate_corpus, map_arxiv_record, read_citations, read_papers
from crase.ingest.records import EdgeRow, Paper, Reject, RejectKind
from crase.ingest.registry import CitationRegistry, EdgeSet, PaperRegistry

FIXTURES = Path(__file__).parent / "fixtures"


def snapshot_records() -> list[dict[str, object]]:
    lines = (FIXTURES / "arxiv_snapshot.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_arxiv_records_map_to_papers() -> None:
    paper = Paper.model_validate(map_arxiv_record(snapshot_records()[0]))
    assert paper.id == paper.arxiv_id == "0801.0042"
    assert paper.title == "Counting Widgets in Two Dimensions"
    assert paper.abstract == "We count widgets on a torus and find that their number is finite."
    assert paper.authors == ["A. Example", "B. Sample", "C. -D. Person"]
    assert (paper.year, paper.date) == (2008, "2008-01-02")  # the first version's date
    assert paper.categories == ["hep-th", "math-ph"]
    assert paper.doi == "10.9999/jws.2008.001"  # the first of two, in one spelling
    assert paper.journal_ref == "J. Widget Stud. 3 (2008) 1-12"


def test_arxiv_snapshot_reader(tmp_path: Path) -> None:
    items = [item for _, _, item in read_papers(FIXTURES / "arxiv_snapshot.jsonl", "arxiv")]
    old = items[1]
    assert isinstance(old, Paper) and old.id == "hep-th/9905123" and old.year == 1999
    assert old.authors == ["E. Old", "F. Older Jr"]
    assert isinstance(items[2], Reject) and items[2].kind == RejectKind.MISSING_TITLE


def test_arxiv_record_without_versions_takes_the_update_year() -> None:
    record = {"id": "hep-th/9901001", "title": "T", "authors": "A. One and B. Two",
              "update_date": "1999-01-05", "categories": "hep-th gr-qc"}
    paper = Paper.model_validate(map_arxiv_record(record))
    assert paper.year == 1999 and paper.date is None
    assert paper.authors == ["A. One", "B. Two"]
    assert paper.categories == ["hep-th", "gr-qc"]


def test_positions_are_line_numbers_and_byte_offsets(tmp_path: Path) -> None:
    lines = [b'\xef\xbb\xbf{"id": "a", "title": "Caf\xc3\xa9"}', b"", b'{"id": "b", "title": "B"}']
    path = tmp_path / "papers.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    items = list(read_papers(path))
    assert [(line, end) for line, end, _ in items] == [(1, 33), (2, 34), (3, 60)]
    assert items[0][2] == Paper(id="a", title="Café")  # the byte-order mark is dropped
    assert items[1][2] is None


def test_huge_lines_are_skipped_without_reading_them_whole(tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    big = json.dumps({"id": "big", "title": "T", "abstract": "x" * 50_000})
    path.write_text(f'{{"id": "a", "title": "A"}}\n{big}\n{{"id": "b", "title": "B"}}\n')
    items = list(read_papers(path, max_line_bytes=10_000))
    assert isinstance(items[1][2], Reject) and items[1][2].kind == RejectKind.HUGE_ROW
    assert items[1][1] == path.stat().st_size - len('{"id": "b", "title": "B"}\n')
    assert items[2][2] == Paper(id="b", title="B")


def test_bad_encoding_is_one_reject(tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    path.write_bytes('{"id": "a", "title": "Café"}\n'.encode("latin-1")
                     + b'{"id": "b", "title": "B"}\n')
    items = [item for _, _, item in read_papers(path)]
    assert isinstance(items[0], Reject) and items[0].kind == RejectKind.BAD_ENCODING
    assert items[1] == Paper(id="b", title="B")


def test_empty_files_are_rejected_as_such(tmp_path: Path) -> None:
    (tmp_path / "papers.jsonl").write_bytes(b"")
    (tmp_path / "citations.csv").write_bytes(b"")
    for items in (list(read_papers(tmp_path / "papers.jsonl")),
                  list(read_citations(tmp_path / "citations.csv"))):
        assert len(items) == 1
        assert isinstance(items[0][2], Reject) and items[0][2].kind == RejectKind.EMPTY_FILE


@pytest.mark.parametrize("text", [
    "citing_id,cited_id\na,b\nc,d\n",
    "cited_id,citing_id\nb,a\nd,c\n",
    "# SNAP style\n# FromNodeId\tToNodeId\na\tb\nc d\n",
    "a,b\nc,d\n",
])
def test_edge_list_styles(tmp_path: Path, text: str) -> None:
    path = tmp_path / "edges.csv"
    path.write_text(text)
    edges = [(item.citing, item.cited) for _, _, item in read_citations(path)
             if isinstance(item, EdgeRow)]
    assert edges == [("a", "b"), ("c", "d")]


def test_locate_corpus(tmp_path: Path) -> None:
    (tmp_path / "papers.jsonl").write_text("")
    files = locate_corpus(tmp_path)
    assert files.citations is None and files.name == tmp_path.name
    with pytest.raises(CorpusError):
        locate_corpus(tmp_path / "missing")
    with pytest.raises(CorpusError):
        locate_corpus(tmp_path, citations=tmp_path / "nope.csv")


def test_edge_set_agrees_with_a_python_set() -> None:
    rng = np.random.default_rng(3)
    edges, seen = EdgeSet(), set()
    for _ in range(80):  # more batches than are kept apart, so compaction runs
        keys = rng.integers(0, 5_000, size=rng.integers(0, 300)).astype(np.int64)
        duplicate, _ = edges.add(keys, np.zeros(len(keys), dtype=np.int64))
        expected = []
        for key in keys.tolist():
            expected.append(key in seen)
            seen.add(key)
        assert duplicate.tolist() == expected
    assert len(edges) == len(seen)


def test_citation_registry_checks_ends_and_repeats() -> None:
    papers = PaperRegistry()
    for paper_id in ("a", "b", "c"):
        assert papers.admit(Paper(id=paper_id, title=paper_id), "papers.jsonl", 1) is None
    repeat = papers.admit(Paper(id="a", title="a"), "papers.jsonl", 9)
    conflict = papers.admit(Paper(id="a", title="other"), "papers.jsonl", 10)
    assert repeat is not None and repeat.kind == RejectKind.DUPLICATE_PAPER
    assert conflict is not None and conflict.kind == RejectKind.CONFLICTING_PAPER
    lookups: list[set[str]] = []

    def resolve(ids: set[str]) -> set[str]:
        lookups.append(ids)
        return {"in-graph"} & ids

    registry = CitationRegistry(papers, resolve)
    rows = [EdgeRow(1, "a", "b"), EdgeRow(2, "a", "b"), EdgeRow(3, "b", "x"),
            EdgeRow(4, "c", "in-graph")]
    accepted, rejects = registry.admit(rows, "citations.csv")
    assert [row.line for row in accepted] == [1, 4]
    assert [(r.line, r.kind) for r in rejects] == [(2, RejectKind.DUPLICATE_EDGE),
                                                   (3, RejectKind.UNKNOWN_PAPER)]
    registry.admit([EdgeRow(5, "a", "x")], "citations.csv")
    assert lookups == [{"x", "in-graph"}]  # a missing id is looked up once
