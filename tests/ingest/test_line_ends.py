"""Line ends as files come: LF, CRLF and CR alone (old Mac editors and some exports), each
ending a line wherever it appears, on every reader of lines."""

import gzip
import io
import json
from pathlib import Path

import pytest

from crase.ingest.corpus import HugeLine, read_citations, read_lines, read_papers
from crase.ingest.dataset_filter import DatasetFilter
from crase.ingest.openalex import stage_openalex
from crase.ingest.records import DEFAULT_LIMITS, Paper

ROWS = [json.dumps({"id": f"p{n}", "title": f"Paper {n}"}) for n in range(4)]
BREAKS = {"LF": "\n", "CRLF": "\r\n", "CR": "\r"}


class Trickle(io.RawIOBase):
    """A stream that hands out at most 7 bytes a read, as a slow pipe would."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        piece = self.data[self.at:self.at + min(7, len(buffer))]
        buffer[:len(piece)] = piece
        self.at += len(piece)
        return len(piece)


def lines_of(data: bytes, max_bytes: int = 1_000) -> list[tuple[int, int, object]]:
    return list(read_lines(io.BufferedReader(Trickle(data), 7), max_bytes))


@pytest.mark.parametrize("name", BREAKS)
def test_every_line_end_reads_as_one_line_each(name: str, tmp_path: Path) -> None:
    text = BREAKS[name].join(ROWS) + BREAKS[name]
    (tmp_path / "papers.jsonl").write_bytes(text.encode())
    read = list(read_papers(tmp_path / "papers.jsonl"))
    assert [(line, item.id) for line, _, item in read if isinstance(item, Paper)] == [
        (1, "p0"), (2, "p1"), (3, "p2"), (4, "p3")]
    # Each line's end offset is just past its break: the file's size at the last.
    assert [end for _, end, _ in read] == [
        len((BREAKS[name].join(ROWS[:n + 1]) + BREAKS[name]).encode()) for n in range(4)]


def test_mixed_breaks_split_where_each_one_is() -> None:
    data = b"a\rb\r\nc\nd\r\re"
    assert [(n, end, line) for n, end, line in lines_of(data)] == [
        (1, 2, b"a"), (2, 5, b"b"), (3, 7, b"c"), (4, 9, b"d"), (5, 10, b""), (6, 11, b"e")]


def test_a_crlf_split_across_reads_is_one_break() -> None:
    # The 7-byte buffer ends between the CR and the LF of a break.
    data = b"abcde\r\nfgh\r\rijk\r"
    assert [line for _, _, line in lines_of(data)] == [b"abcde", b"fgh", b"", b"ijk"]


def test_a_huge_line_in_a_cr_file_is_skipped_and_the_next_line_read() -> None:
    data = b"short\r" + b"x" * 5_000 + b"\rafter\r"
    read = lines_of(data, max_bytes=100)
    assert read[0][2] == b"short" and read[2] == (3, len(data), b"after")
    huge = read[1][2]
    assert isinstance(huge, HugeLine) and huge.size == 5_000 and read[1][1] == 5_007


def test_an_edge_file_with_cr_breaks_reads_every_edge(tmp_path: Path) -> None:
    (tmp_path / "citations.csv").write_bytes(b"citing_id,cited_id\rp1,p0\rp2,p0\r")
    edges = [(row.citing, row.cited) for _, _, row in read_citations(tmp_path / "citations.csv")
             if row is not None]
    assert edges == [("p1", "p0"), ("p2", "p0")]


def test_a_dataset_shard_with_cr_breaks_keeps_every_work(tmp_path: Path) -> None:
    works = [json.dumps({"id": f"https://openalex.org/W{n}", "title": f"Work {n}"})
             for n in range(4)]
    (tmp_path / "works").mkdir()
    with gzip.open(tmp_path / "works" / "part_000.gz", "wb") as out:
        out.write("\r".join(works).encode())
    report = stage_openalex(tmp_path / "works", tmp_path / "staged", DatasetFilter(),
                            DEFAULT_LIMITS, 1_000_000)
    assert (report.kept, report.rejected) == (4, 0)


def test_a_cr_file_whose_first_line_is_huge_reads_the_lines_after_it() -> None:
    data = b"x" * 5_000 + b"\rafter\rnext\r"
    read = lines_of(data, max_bytes=100)
    assert [(n, end) for n, end, _ in read] == [(1, 5_001), (2, 5_007), (3, 5_012)]
    assert isinstance(read[0][2], HugeLine) and read[0][2].size == 5_000
    assert [line for _, _, line in read[1:]] == [b"after", b"next"]
