"""POST /papers/batch: a JSON batch of papers and citations, loaded by the ingest package.

The batch is written out in the corpus format (`papers.jsonl`, `citations.csv`) and handed
to the same incremental loader `crase load` uses, so every row meets the same checks
(`crase.ingest.records`, `crase.ingest.registry`) and the same idempotent MERGE writes.
A refused row is reported with its place in the request (`papers[3]`, `citations[0]`),
its kind and the reason; it never stops the rest of the batch.
"""

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crase.graph import Graph
from crase.ingest.corpus import CITATIONS_FILE, EDGE_HEADER, PAPERS_FILE, locate_corpus
from crase.ingest.loader import LoadReport, load_corpus
from crase.ingest.records import RejectKind
from crase.settings import Settings


@dataclass(frozen=True)
class BatchOutcome:
    report: LoadReport
    rejects: list[dict[str, Any]]
    papers_received: int
    citations_received: int

    def as_json(self) -> dict[str, Any]:
        r = self.report
        return {
            "papers": {"received": self.papers_received,
                       "accepted": r.papers.accepted, "rejected": r.papers.rejected,
                       "written": r.papers_written},
            "citations": {"received": self.citations_received,
                          "accepted": r.citations.accepted, "rejected": r.citations.rejected,
                          "written": r.citations_written},
            "rejects": self.rejects,
            "graph": r.graph_after,
        }


def load_batch(graph: Graph, settings: Settings, papers: list[Any],
               citations: list[tuple[str, str]]) -> BatchOutcome:
    """Load one batch; `citations` are (citing_id, cited_id) pairs."""
    settings.var_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="api-batch-", dir=settings.var_dir) as folder:
        root = Path(folder)
        write_corpus(root, papers, citations)
        files = locate_corpus(root)
        rejects_path = root / "rejects.jsonl"
        report = load_corpus(graph, files, settings, rejects_path=rejects_path,
                             restart=True, show_progress=False)
        rejects = read_rejects(rejects_path, skip_empty_papers=not papers)
    return BatchOutcome(report, rejects, len(papers), len(citations))


def write_corpus(root: Path, papers: list[Any], citations: list[tuple[str, str]]) -> None:
    # One JSON value per line, as given: a row that is not a paper is refused by the
    # loader's own checks, with the same kinds and reasons a file load reports.
    with (root / PAPERS_FILE).open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(paper, ensure_ascii=False) + "\n" for paper in papers)
    if citations:
        with (root / CITATIONS_FILE).open("w", encoding="utf-8") as handle:
            handle.write(",".join(EDGE_HEADER) + "\n")
            handle.writelines(f"{citing},{cited}\n" for citing, cited in citations)


def read_rejects(path: Path, skip_empty_papers: bool) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rejects = []
    for line in path.read_text(encoding="utf-8").splitlines():
        reject = json.loads(line)
        if skip_empty_papers and reject["kind"] == RejectKind.EMPTY_FILE.value:
            continue  # a batch of citations only: no papers file is not a problem
        rejects.append({"item": request_position(reject["file"], reject["line"]),
                        "kind": reject["kind"], "reason": reject["reason"]})
    return rejects


def request_position(file: str, line: int) -> str:
    """Where a rejected row sat in the request: papers.jsonl line n is papers[n - 1];
    citations.csv has its header on line 1, so line n is citations[n - 2]."""
    if file == PAPERS_FILE:
        return f"papers[{line - 1}]"
    if file == CITATIONS_FILE:
        return f"citations[{line - 2}]"
    return f"{file}:{line}"
