"""The bulk import's Arrow path for edges refuses exactly what the line reader refuses."""

import io
from pathlib import Path

import pytest

from crase.ingest.batches import ValidatedCorpus
from crase.ingest.corpus import locate_corpus
from crase.ingest.edge_table import write_checked_edges
from crase.ingest.rejects import RejectLog, read_rejects
from crase.settings import IngestSettings

PAPERS = "".join(f'{{"id": "p{i}", "title": "P{i}"}}\n' for i in range(6))


def corpus_with(tmp_path: Path, citations: bytes) -> ValidatedCorpus:
    (tmp_path / "papers.jsonl").write_text(PAPERS)
    (tmp_path / "citations.csv").write_bytes(citations)
    corpus = ValidatedCorpus(locate_corpus(tmp_path), RejectLog(tmp_path / "r.jsonl"),
                             IngestSettings(), batch_size=3)
    assert sum(len(batch.rows) for batch in corpus.paper_batches()) == 6
    return corpus


def by_line_reader(corpus: ValidatedCorpus) -> tuple[list[tuple[str, str]], list[object]]:
    edges = [(e.citing, e.cited) for batch in corpus.edge_batches() for e in batch.rows]
    corpus.rejects.flush()
    return edges, [(r.line, r.kind, r.reason) for r in read_rejects(corpus.rejects.path)]


@pytest.mark.parametrize("header", [b"citing_id,cited_id\n", b"cited_id,citing_id\n"])
def test_both_paths_agree(tmp_path: Path, header: bytes) -> None:
    body = (b"p1,p0\np2,p0\np1,p0\np3,p3\np4,nowhere\nghost,p1\np5,p2\r\np5,p3\n"
            b"p2,\np0,p1\np2,p0\n")
    corpus = corpus_with(tmp_path, header + body)
    out = io.BytesIO()
    fast = write_checked_edges(tmp_path / "citations.csv", corpus.papers, out)
    assert fast is not None
    fast_edges = [tuple(line.split(",")) for line in out.getvalue().decode().splitlines()]
    fast_edges = [(a.strip('"'), b.strip('"')) for a, b in fast_edges]  # Arrow quotes all
    slow_edges, slow_rejects = by_line_reader(corpus)
    if header.startswith(b"cited"):
        slow_edges = [(b, a) for a, b in slow_edges]
        fast_edges = [(b, a) for a, b in fast_edges]
    assert fast_edges == slow_edges
    assert [(r.line, r.kind, r.reason) for r in fast.rejects] == slow_rejects
    assert fast.accepted == len(slow_edges) == 5


@pytest.mark.parametrize("citations", [
    b"p1,p0\np2,p0\n",                        # no header
    b"citing_id,cited_id\np1,p0\n\np2,p0\n",  # a blank line
    b"citing_id,cited_id\n# note\np1,p0\n",   # a comment
    b"citing_id,cited_id\np1,p0,p2\n",        # three fields
    b"citing_id,cited_id\np1,caf\xe9\n",      # not UTF-8
    b"",                                      # empty
    # Something to interpret, which only the line reader (Python's csv) does:
    b"citing_id,cited_id\n p1 , p0 \n",        # spaces
    b'citing_id,cited_id\n"p1","p0"\n',        # quotes
    b"citing_id,cited_id\np1\t,p0\n",          # a tab
    "citing_id,cited_id\np1\u00a0,p0\n".encode(),  # a non-breaking space
    b"citing_id,cited_id\np1,p0\rp2,p0\n",     # a carriage return that ends no line
])
def test_irregular_files_go_to_the_line_reader(tmp_path: Path, citations: bytes) -> None:
    corpus = corpus_with(tmp_path, citations)
    assert write_checked_edges(tmp_path / "citations.csv", corpus.papers, io.BytesIO()) is None
