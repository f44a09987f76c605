"""POST /papers/batch: a JSON batch of papers and citations, loaded by the ingest package.

The batch is written out in the corpus format (`papers.jsonl`, `citations.csv`) and handed
to the same incremental loader `crase load` uses, so every row meets the same checks
(`crase.ingest.records`, `crase.ingest.registry`) and the same idempotent MERGE writes.
A refused row is reported with its place in the request (`papers[3]`, `citations[0]`),
its kind and the reason; it never stops the rest of the batch.
"""

import csv
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from crase.graph import Graph
from crase.ingest.corpus import (
    CITATIONS_FILE,
    EDGE_HEADER,
    PAPERS_FILE,
    TOO_DEEP_REASON,
    huge_number_reason,
    locate_corpus,
)
from crase.ingest.loader import LoadReport, load_corpus
from crase.ingest.records import RejectKind
from crase.ingest.rejects import read_rejects
from crase.settings import Settings

LINE_BREAKS = ("\n", "\r")  # what ends a citations.csv line (the reader splits at "\n")


@dataclass(frozen=True)
class BatchOutcome:
    report: LoadReport
    rejects: list[dict[str, Any]]
    papers_received: int
    citations_received: int
    papers_refused: int = 0  # refused before the load: no papers.jsonl line can hold them
    citations_refused: int = 0  # likewise for citations.csv

    def as_json(self) -> dict[str, Any]:
        r = self.report
        return {
            "papers": {"received": self.papers_received,
                       "accepted": r.papers.accepted,
                       "rejected": r.papers.rejected + self.papers_refused,
                       "written": r.papers_written},
            "citations": {"received": self.citations_received,
                          "accepted": r.citations.accepted,
                          "rejected": r.citations.rejected + self.citations_refused,
                          "written": r.citations_written},
            "rejects": self.rejects,
            "graph": r.graph_after,
        }


class PlacedReject(NamedTuple):
    """A refused row at its place in the request: `papers[3]` is (PAPERS_FILE, 3)."""

    file: str
    position: int
    kind: str
    reason: str

    def as_json(self) -> dict[str, Any]:
        section = "papers" if self.file == PAPERS_FILE else "citations"
        return {"item": f"{section}[{self.position}]", "kind": self.kind, "reason": self.reason}


def load_batch(graph: Graph, settings: Settings, papers: list[Any],
               citations: list[tuple[str, str]]) -> BatchOutcome:
    """Load one batch; `citations` are (citing_id, cited_id) pairs."""
    settings.var_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="api-batch-", dir=settings.var_dir) as folder:
        root = Path(folder)
        refused = write_corpus(root, papers, citations)
        files = locate_corpus(root)
        rejects_path = root / "rejects.jsonl"
        report = load_corpus(graph, files, settings, rejects_path=rejects_path,
                             restart=True, show_progress=False)
        rejects = sorted([*refused, *placed_rejects(rejects_path)], key=request_order)
    return BatchOutcome(report, [reject.as_json() for reject in rejects], len(papers),
                        len(citations), sum(r.file == PAPERS_FILE for r in refused),
                        sum(r.file == CITATIONS_FILE for r in refused))


def write_corpus(root: Path, papers: list[Any],
                 citations: list[tuple[str, str]]) -> list[PlacedReject]:
    """Write the batch as a corpus; returns the papers and citations no line can hold,
    whose lines are left blank (so every other row keeps its line number)."""
    # One JSON value per line, as given: a row that is not a paper is refused by the
    # loader's own checks, with the same kinds and reasons a file load reports.
    refused = []
    lines = []
    for index, paper in enumerate(papers):
        line = paper_line(paper)
        if isinstance(line, tuple):
            refused.append(PlacedReject(PAPERS_FILE, index, line[0].value, line[1]))
            line = ""
        lines.append(line + "\n")
    with (root / PAPERS_FILE).open("w", encoding="utf-8") as handle:
        # A batch of citations only still gets a line: an empty file would be a reject.
        handle.writelines(lines or ["\n"])
    if citations:
        refused += write_citations(root / CITATIONS_FILE, citations)
    return refused


def write_citations(path: Path, citations: list[tuple[str, str]]) -> list[PlacedReject]:
    """citations.csv as RFC 4180 CSV (an id may hold a comma or a quote), one line per
    citation; an id with a line break cannot be one line and is refused here."""
    refused = []
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(EDGE_HEADER)
        for index, (citing, cited) in enumerate(citations):
            if any(mark in citing or mark in cited for mark in LINE_BREAKS):
                refused.append(PlacedReject(CITATIONS_FILE, index,
                                            RejectKind.MALFORMED_EDGE.value,
                                            "an id holds a line break"))
                handle.write("\n")
            else:
                writer.writerow((citing, cited))
    return refused


def paper_line(paper: Any) -> str | tuple[RejectKind, str]:
    """One papers.jsonl line, or why the value cannot be one. The framework parses bodies
    somewhat deeper than json.dumps can write (their stacks differ), and an int past the
    int-to-str digit limit cannot be written at all."""
    try:
        return json.dumps(paper, ensure_ascii=False)
    except RecursionError:
        return RejectKind.TOO_DEEP, TOO_DEEP_REASON
    except ValueError:
        return RejectKind.HUGE_NUMBER, huge_number_reason()


def placed_rejects(path: Path) -> list[PlacedReject]:
    if not path.exists():
        return []
    return [PlacedReject(reject.file, request_index(reject.file, reject.line),
                         reject.kind.value, reject.reason) for reject in read_rejects(path)]


def request_index(file: str, line: int) -> int:
    """Where a rejected row sat in the request: papers.jsonl line n is papers[n - 1];
    citations.csv has its header on line 1, so line n is citations[n - 2]."""
    return line - 1 if file == PAPERS_FILE else line - 2


def request_order(reject: PlacedReject) -> tuple[int, int]:
    return (0 if reject.file == PAPERS_FILE else 1, reject.position)
