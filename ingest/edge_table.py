"""Citation checks for a whole edge file at once, with Arrow: the bulk import's fast path.

A plain two-column CSV with a header (the normal case, tens of millions of lines) is read
by Arrow's multi-threaded CSV reader in blocks, and every check of the line reader is
done on whole columns: empty id, too long an id, self-citation, unknown paper, duplicate
(first one kept). The result, accepted edges and rejects with line numbers, is the same as
`ValidatedCorpus.edge_batches` gives; the tests compare the two.

It only takes a file in which there is nothing to interpret: printable ASCII ids, one
comma, no quote, no whitespace at all (a carriage return only before a line feed). There
Arrow's CSV and the line reader's (`crase.ingest.corpus.read_citations`, Python's csv
module) cannot differ; a file with quotes, spaces, tabs or any non-ASCII byte goes to the
line reader, the one reader of everything else. So does anything unusual that Arrow
refuses (no header, blank or comment lines, a wrong field count): the line reader
reports each such line precisely. Nothing is logged or counted until the whole file has
passed, so the fallback starts clean.
"""

import mmap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from numpy.typing import NDArray

from crase.ingest.corpus import SHOWN_CHARS, edge_fields, header_swaps, is_header
from crase.ingest.records import MAX_ID_CHARS, Reject, RejectKind, long_id_reason
from crase.ingest.registry import INDEX_BITS, EdgeSet, PaperRegistry, repeated_edge_reason

BLOCK_BYTES = 1 << 24
# Layouts the line reader handles and Arrow would read differently (or refuse slowly).
IRREGULAR = (b"\n\n", b"\r\n\r\n", b"\n#")
# Bytes that leave something to interpret: whitespace and control characters (Python's
# strip removes some of them), the quote, and every non-ASCII byte (the non-breaking and
# the other Unicode spaces among them). The line break and a carriage return are counted
# apart.
NOT_PLAIN = np.ones(256, dtype=bool)
NOT_PLAIN[0x21:0x7F] = False
NOT_PLAIN[[ord("\n"), ord("\r")]] = False
NOT_PLAIN[ord('"')] = True


@dataclass
class EdgeTable:
    accepted: int = 0
    rejects: list[Reject] = field(default_factory=list)


def header_of(path: Path) -> bool | None:
    """None unless the first line is the header; else whether the columns are swapped."""
    with path.open("rb") as handle:
        first = handle.readline(1000).decode("utf-8", errors="replace").lstrip("\ufeff")
    fields = edge_fields(first.strip())
    if isinstance(fields, str) or not is_header(fields):
        return None
    return header_swaps(fields)


def count_regular_lines(path: Path) -> int | None:
    """The number of lines, or None if the file needs the line reader: an irregular
    layout, or something to interpret (see NOT_PLAIN)."""
    if path.stat().st_size == 0:
        return None
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        if any(m.find(pattern) != -1 for pattern in IRREGULAR):
            return None
        lines, returns, crlf, start = 0, 0, 0, 0
        while start < len(m):
            # Blocks overlap by one byte, so a CR LF across a border is seen whole.
            block = m[start:start + BLOCK_BYTES + 1]
            body = block[:BLOCK_BYTES]
            if NOT_PLAIN[np.frombuffer(body, dtype=np.uint8)].any():
                return None
            lines += body.count(b"\n")
            returns += body.count(b"\r")
            crlf += block.count(b"\r\n")
            start += BLOCK_BYTES
        return lines if returns == crlf else None


def write_checked_edges(path: Path, papers: PaperRegistry, out: BinaryIO,
                        progress: Callable[[float, int], None] | None = None,
                        ) -> EdgeTable | None:
    """Check the edges of `path` and write the accepted ones as `citing,cited` CSV rows
    to `out`; None (and nothing useful written) if the file needs the line reader."""
    swap = header_of(path)
    total_lines = count_regular_lines(path) if swap is not None else None
    if swap is None or total_lines is None:
        return None
    ids = pa.array(list(papers.index), type=pa.string())  # position = registry index
    result, edges, rows_seen = EdgeTable(), EdgeSet(), 0
    size = path.stat().st_size
    try:
        reader = pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(skip_rows=1, column_names=["a", "b"],
                                           block_size=BLOCK_BYTES),
            parse_options=pacsv.ParseOptions(newlines_in_values=False,
                                             ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types={"a": pa.string(), "b": pa.string()},
                strings_can_be_null=False, quoted_strings_can_be_null=False))
        writer = pacsv.CSVWriter(out, pa.schema([("a", pa.string()), ("b", pa.string())]),
                                 write_options=pacsv.WriteOptions(include_header=False))
        for batch in reader:
            # No trimming: a plain file has no whitespace (count_regular_lines).
            citing, cited = (batch["b"], batch["a"]) if swap else (batch["a"], batch["b"])
            keep = check_block(citing, cited, ids, papers, edges, rows_seen, path.name,
                               result)
            writer.write_batch(pa.record_batch([citing.filter(keep), cited.filter(keep)],
                                               names=["a", "b"]))
            result.accepted += int(np.count_nonzero(keep))
            rows_seen += batch.num_rows
            if progress is not None:
                progress(size * min(1.0, (rows_seen + 1) / max(1, total_lines)), rows_seen)
        writer.close()
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    result.rejects.sort(key=lambda reject: reject.line)
    return result


def check_block(citing: pa.Array, cited: pa.Array, ids: pa.Array, papers: PaperRegistry,
                edges: EdgeSet, first_row: int, file: str,
                result: EdgeTable) -> NDArray[np.bool_]:
    """The keep-mask of one block; its rejects are added to `result`."""
    empty = (pc.equal(pc.utf8_length(citing), 0).to_numpy(zero_copy_only=False)
             | pc.equal(pc.utf8_length(cited), 0).to_numpy(zero_copy_only=False))
    too_long = (pc.greater(pc.utf8_length(citing), MAX_ID_CHARS).to_numpy(zero_copy_only=False)
                | pc.greater(pc.utf8_length(cited), MAX_ID_CHARS).to_numpy(zero_copy_only=False)
                ) & ~empty
    same = pc.equal(citing, cited).to_numpy(zero_copy_only=False) & ~empty & ~too_long
    citing_index = pc.index_in(citing, value_set=ids).fill_null(-1).to_numpy()
    cited_index = pc.index_in(cited, value_set=ids).fill_null(-1).to_numpy()
    unknown = ((citing_index < 0) | (cited_index < 0)) & ~empty & ~too_long & ~same
    valid = ~(empty | too_long | same | unknown)
    positions = np.nonzero(valid)[0]
    keys = (citing_index[positions].astype(np.int64) << INDEX_BITS) \
        | cited_index[positions].astype(np.int64)
    # Line numbers: the header is line 1, so row r of the file body is line r + 2.
    lines = np.arange(first_row + 2, first_row + 2 + len(valid), dtype=np.int64)
    duplicate = np.zeros(len(valid), dtype=bool)
    first_line = np.zeros(len(valid), dtype=np.int64)
    # One file: an edge's place is its line.
    duplicate[positions], first_line[positions] = edges.add(keys, lines[positions])
    for mask, kind in ((empty, RejectKind.MALFORMED_EDGE), (too_long, RejectKind.ID_TOO_LONG),
                       (same, RejectKind.SELF_CITATION),
                       (unknown, RejectKind.UNKNOWN_PAPER),
                       (duplicate, RejectKind.DUPLICATE_EDGE)):
        for row in np.nonzero(mask)[0].tolist():
            result.rejects.append(edge_reject(file, int(lines[row]), kind,
                                              citing[row].as_py(), cited[row].as_py(),
                                              bool(citing_index[row] < 0), papers,
                                              int(first_line[row])))
    return valid & ~duplicate


def edge_reject(file: str, line: int, kind: RejectKind, citing: str, cited: str,
                citing_unknown: bool, papers: PaperRegistry, first_line: int) -> Reject:
    text = f"{citing},{cited}"
    if kind == RejectKind.MALFORMED_EDGE:
        return Reject(file, line, kind, "an id is empty", text)
    if kind == RejectKind.ID_TOO_LONG:
        return Reject(file, line, kind, long_id_reason(citing, cited) or "",
                      text[:SHOWN_CHARS])
    if kind == RejectKind.SELF_CITATION:
        return Reject(file, line, kind, f"paper {citing} cites itself", text)
    if kind == RejectKind.UNKNOWN_PAPER:
        absent = citing if citing_unknown else cited
        return Reject(file, line, kind, papers.unknown_reason(absent), text)
    return Reject(file, line, kind, repeated_edge_reason(citing, cited, file, first_line), text)
