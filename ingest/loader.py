"""The incremental load: validated batches into a running Neo4j with `UNWIND $rows ... MERGE`.

Idempotent (MERGE by paper id; MERGE of the edge between two matched papers) and
resumable (a checkpoint after every committed batch, see `crase.ingest.checkpoint`).
Loading unchanged input into the same database a second time is skipped, once its own
papers and edges are found in the graph.
"""

import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Literal, NamedTuple, TypeVar

from crase.graph import Graph
from crase.ingest.batches import Batch, FileCounts, ValidatedCorpus
from crase.ingest.checkpoint import Checkpoint, fingerprint_files, load_key
from crase.ingest.corpus import CorpusFiles
from crase.ingest.progress import ProgressBar
from crase.ingest.records import VALIDATION_VERSION, EdgeRow, Paper
from crase.ingest.rejects import NoteLog, RejectLog
from crase.settings import Settings

LOOKUP_CHUNK = 10_000  # ids per query when looking up edge ends missing from the input
RowT = TypeVar("RowT", Paper, EdgeRow)


class ResumePoint(NamedTuple):
    """Where a resumed load picked up: its phase and the last line done in that file."""

    phase: Literal["papers", "citations"]
    file: str
    line: int

    def describe(self) -> str:
        if self.line == 0:
            return f"resumed at the start of the {self.phase} phase ({self.file})"
        return f"resumed in the {self.phase} phase after line {self.line:,} of {self.file}"


@dataclass
class LoadReport:
    corpus: str
    target: str
    status: Literal["loaded", "resumed", "unchanged"]
    rejects_path: Path
    checkpoint_path: Path
    notes_path: Path | None = None
    papers: FileCounts = field(default_factory=FileCounts)
    citations: FileCounts = field(default_factory=FileCounts)
    rejects: dict[str, int] = field(default_factory=dict)
    repaired: int = 0  # papers loaded after a repair (their notes are in notes_path)
    papers_written: int = 0  # this run only (a resumed run skips what was written before)
    citations_written: int = 0
    papers_seconds: float = 0.0
    citations_seconds: float = 0.0
    graph_before: dict[str, int] = field(default_factory=dict)
    graph_after: dict[str, int] = field(default_factory=dict)
    resumed_from: dict[str, int] = field(default_factory=dict)
    resume_point: ResumePoint | None = None

    @property
    def papers_per_s(self) -> float:
        return self.papers_written / self.papers_seconds if self.papers_seconds else 0.0

    @property
    def citations_per_s(self) -> float:
        return self.citations_written / self.citations_seconds if self.citations_seconds else 0.0


def default_rejects_path(settings: Settings, files: CorpusFiles, target: str) -> Path:
    key = load_key(corpus_paths(files), target)
    return settings.var_dir / "loads" / f"{files.name}-{key}.rejects.jsonl"


def checkpoint_path_for(rejects_path: Path) -> Path:
    return rejects_path.with_suffix(".checkpoint.json")


def notes_path_for(rejects_path: Path) -> Path:
    return rejects_path.with_suffix(".notes.jsonl")


def corpus_paths(files: CorpusFiles) -> list[Path]:
    return [files.papers] + ([files.citations] if files.citations else [])


def graph_totals(graph: Graph) -> dict[str, int]:
    row = graph.read("count_papers_and_citations")[0]
    return {"papers": int(row["papers"]), "citations": int(row["citations"])}


def find_existing_ids(graph: Graph, ids: set[str]) -> set[str]:
    ordered = sorted(ids)
    found: set[str] = set()
    for start in range(0, len(ordered), LOOKUP_CHUNK):
        rows = graph.read("match_paper_ids", ids=ordered[start:start + LOOKUP_CHUNK])
        found |= {row["id"] for row in rows}
    return found


def load_corpus(graph: Graph, files: CorpusFiles, settings: Settings,
                rejects_path: Path | None = None, batch_size: int | None = None,
                restart: bool = False, show_progress: bool = True,
                dataset_rejects: Path | None = None) -> LoadReport:
    """Load a corpus into `graph`; rerun after an interruption to resume. A corpus staged
    from a dataset names its staging's rejects (`dataset_rejects`): a fresh load's rejects
    file starts with them, so it holds every row refused on the way."""
    target = f"{settings.database.bolt_uri()}/{graph.database}"
    rejects_path = rejects_path or default_rejects_path(settings, files, target)
    checkpoint_path = checkpoint_path_for(rejects_path)
    graph.apply_schema()
    before = graph_totals(graph)
    fingerprint = fingerprint_files(corpus_paths(files))
    previous = None if restart else Checkpoint.read(checkpoint_path)
    report = LoadReport(files.name, target, "loaded", rejects_path, checkpoint_path,
                        notes_path_for(rejects_path), graph_before=before)
    if previous is not None and is_unchanged(previous, fingerprint, target) \
            and corpus_in_graph(graph, files, settings, previous):
        return finished_report(report, previous, before)
    if previous is not None and can_resume(previous, fingerprint, target, before):
        checkpoint = previous
        rejects = RejectLog(rejects_path, resume_at=previous.rejects_offset,
                            counts=previous.rejects)
        notes = NoteLog(notes_path_for(rejects_path),
                        resume_at=previous.counts.get("notes_bytes", 0),
                        repaired=previous.counts.get("papers_repaired", 0))
        report.status = "resumed"
        report.resumed_from = {name: p.line for name, p in previous.files.items()}
        report.resume_point = resume_point(previous, files)
    else:
        checkpoint = Checkpoint(fingerprint=fingerprint, target=target)
        rejects = RejectLog(rejects_path)
        rejects.add_from(dataset_rejects)
        notes = NoteLog(notes_path_for(rejects_path))
    try:
        corpus = ValidatedCorpus(
            files, rejects, settings.ingest, batch_size or settings.ingest.batch_size,
            resolve=lambda ids: find_existing_ids(graph, ids),
            done_lines={name: p.line for name, p in checkpoint.files.items()})
        restore_counts(corpus, checkpoint)
        with InterruptGuard() as interrupts:
            write_corpus(graph, corpus, Progress(checkpoint, checkpoint_path,
                                                 show_progress and settings.ingest.progress,
                                                 notes, interrupts), report)
    finally:
        rejects.close()
        notes.close()
    checkpoint.completed = True
    checkpoint.graph_after = graph_totals(graph)
    checkpoint.save(checkpoint_path)
    report.graph_after = checkpoint.graph_after
    fill_counts(report, checkpoint)
    return report


def resume_point(previous: Checkpoint, files: CorpusFiles) -> ResumePoint:
    """The phase a resumed load goes on with: citations once the papers are done (or once
    some citation is), else papers; the line is the last one done in that phase's file."""
    papers = previous.files.get(files.papers.name)
    if files.citations is not None:
        citations = previous.files.get(files.citations.name)
        if (papers is not None and papers.done) or (citations is not None and citations.line):
            return ResumePoint("citations", files.citations.name,
                               citations.line if citations else 0)
    return ResumePoint("papers", files.papers.name, papers.line if papers else 0)


class InterruptGuard:
    """Ctrl-C during a load: the first one stops the load after the batch in flight, with
    its checkpoint saved; a second one stops it at once.

    The default handler raises KeyboardInterrupt wherever the main thread is, and inside
    a destructor (the driver's `Workspace.__del__`) Python prints "Exception ignored" and
    carries on: the load went on. A flag, checked between batches, cannot be swallowed.
    Signals reach the main thread only, so elsewhere (an API worker) this does nothing."""

    def __init__(self) -> None:
        self.requests = 0
        self.previous: Any = None
        self.installed = False

    def __enter__(self) -> "InterruptGuard":
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self.handle)
            self.installed = True
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.installed:
            signal.signal(signal.SIGINT, self.previous if self.previous is not None
                          else signal.default_int_handler)

    def handle(self, signum: int, frame: FrameType | None) -> None:
        self.requests += 1
        if self.requests > 1:
            raise KeyboardInterrupt  # if a destructor swallows it, check() still stops

    def check(self) -> None:
        """Stop here (between batches, checkpoint saved) if Ctrl-C was pressed."""
        if self.requests:
            raise KeyboardInterrupt


@dataclass
class Progress:
    """Where the load records its progress (the checkpoint file, the bars), and whether
    it was asked to stop."""

    checkpoint: Checkpoint
    path: Path
    show: bool
    notes: NoteLog
    interrupts: InterruptGuard = field(default_factory=InterruptGuard)

    def bar(self, file: Path, label: str) -> ProgressBar:
        done = self.checkpoint.files.get(file.name)
        return ProgressBar(label, file.stat().st_size, enabled=self.show,
                           start_position=done.offset if done else 0)


def write_corpus(graph: Graph, corpus: ValidatedCorpus, progress: Progress,
                 report: LoadReport) -> None:
    files = corpus.files
    started = time.monotonic()
    report.papers_written = write_batches(graph, "merge_papers", corpus.paper_batches(),
                                          paper_rows, files.papers, corpus, progress, "papers",
                                          written_hook=progress.notes.add_repairs)
    report.papers_seconds = time.monotonic() - started
    if files.citations is not None:
        started = time.monotonic()
        report.citations_written = write_batches(graph, "merge_citations",
                                                 corpus.edge_batches(), edge_rows,
                                                 files.citations, corpus, progress, "citations")
        report.citations_seconds = time.monotonic() - started


def is_unchanged(previous: Checkpoint, fingerprint: dict[str, Any], target: str) -> bool:
    # Input loaded under older validation rules is loaded again under the new ones.
    return (previous.completed and previous.fingerprint == fingerprint
            and previous.target == target and same_rules(previous))


def corpus_in_graph(graph: Graph, files: CorpusFiles, settings: Settings,
                    previous: Checkpoint) -> bool:
    """Whether every paper (with every property the load set) and every edge that the
    finished load accepted is in the graph now. The totals cannot tell: a bigger corpus
    imported since holds more papers and none of these, and a property removed since
    changes no total. The input is checked again (into a throwaway rejects file) and its
    rows looked up; that costs a read of the input, much less than loading it again."""
    with tempfile.TemporaryDirectory(prefix="crase-check-") as folder:
        rejects = RejectLog(Path(folder) / "rejects.jsonl")
        try:
            corpus = ValidatedCorpus(files, rejects, settings.ingest, LOOKUP_CHUNK,
                                     resolve=lambda ids: find_existing_ids(graph, ids))
            papers = sum(int(graph.read("count_present_papers",
                                        rows=paper_keys(batch.rows))[0]["present"])
                         for batch in corpus.paper_batches() if batch.rows)
            if papers < previous.counts.get("papers_accepted", 0):
                return False
            edges = sum(int(graph.read("count_present_citations",
                                       rows=edge_rows(batch.rows))[0]["present"])
                        for batch in corpus.edge_batches() if batch.rows)
        finally:
            rejects.close()
    return edges >= previous.counts.get("citations_accepted", 0)


def paper_keys(papers: list[Paper]) -> list[dict[str, Any]]:
    """Each paper's id and the names of the properties the load sets on it."""
    return [{"id": paper.id, "keys": list(paper.graph_properties())} for paper in papers]


def can_resume(previous: Checkpoint, fingerprint: dict[str, Any], target: str,
               now: dict[str, int]) -> bool:
    written = previous.counts.get("papers_accepted", 0)
    return (not previous.completed and previous.fingerprint == fingerprint
            and previous.target == target and now["papers"] >= written
            and same_rules(previous))


def same_rules(previous: Checkpoint) -> bool:
    return previous.counts.get("validation_version") == VALIDATION_VERSION


def restore_counts(corpus: ValidatedCorpus, checkpoint: Checkpoint) -> None:
    for name, kind in (("papers", corpus.files.papers), ("citations", corpus.files.citations)):
        if kind is not None:
            counts = corpus.count(kind.name)
            counts.accepted = checkpoint.counts.get(f"{name}_accepted", 0)
            counts.rejected = checkpoint.counts.get(f"{name}_rejected", 0)


def paper_rows(papers: list[Paper]) -> list[dict[str, Any]]:
    return [{"id": paper.id, "props": paper.graph_properties()} for paper in papers]


def edge_rows(edges: list[EdgeRow]) -> list[dict[str, Any]]:
    """One row per citing paper with the list of papers it cites (see merge_citations)."""
    grouped: dict[str, list[str]] = {}
    for edge in edges:
        grouped.setdefault(edge.citing, []).append(edge.cited)
    return [{"citing": citing, "cited": cited} for citing, cited in grouped.items()]


def write_batches(graph: Graph, query: str, batches: Iterator[Batch[RowT]],
                  to_rows: Callable[[list[RowT]], list[dict[str, Any]]], file: Path,
                  corpus: ValidatedCorpus, progress: Progress, label: str,
                  written_hook: Callable[[str, list[RowT]], None] | None = None) -> int:
    """Write every live batch, checkpointing after each commit; returns rows written.
    `written_hook(file, rows)` runs after each commit, before the checkpoint is saved."""
    written = 0
    bar = progress.bar(file, label)
    for batch in batches:
        if not batch.replay:
            if batch.rows:
                graph.write(query, rows=to_rows(batch.rows))
                written += len(batch.rows)
                if written_hook is not None:
                    written_hook(batch.file, batch.rows)
            record_batch(progress.checkpoint, batch, corpus, progress.notes)
            progress.checkpoint.save(progress.path)
            bar.update(batch.end_offset, written)
        progress.interrupts.check()
    progress.checkpoint.progress(file.name).done = True
    # Saved now, so a load stopped before its first citation batch resumes in citations.
    progress.checkpoint.save(progress.path)
    bar.close()
    return written


def record_batch(checkpoint: Checkpoint, batch: Batch[Any], corpus: ValidatedCorpus,
                 notes: NoteLog) -> None:
    position = checkpoint.progress(batch.file)
    position.line, position.offset = batch.end_line, batch.end_offset
    checkpoint.rejects_offset = batch.rejects_offset
    checkpoint.rejects = corpus.rejects.counts_by_kind()
    files = corpus.files
    checkpoint.counts = {
        "papers_accepted": corpus.count(files.papers.name).accepted,
        "papers_rejected": corpus.count(files.papers.name).rejected,
        "papers_repaired": notes.repaired, "notes_bytes": notes.flush(),
        "validation_version": VALIDATION_VERSION,
    }
    if files.citations is not None:
        checkpoint.counts["citations_accepted"] = corpus.count(files.citations.name).accepted
        checkpoint.counts["citations_rejected"] = corpus.count(files.citations.name).rejected


def fill_counts(report: LoadReport, checkpoint: Checkpoint) -> None:
    counts = checkpoint.counts
    report.papers = FileCounts(counts.get("papers_accepted", 0), counts.get("papers_rejected", 0))
    report.citations = FileCounts(counts.get("citations_accepted", 0),
                                  counts.get("citations_rejected", 0))
    report.rejects = dict(checkpoint.rejects)
    report.repaired = counts.get("papers_repaired", 0)


def finished_report(report: LoadReport, previous: Checkpoint,
                    now: dict[str, int]) -> LoadReport:
    report.status = "unchanged"
    report.graph_after = now
    fill_counts(report, previous)
    return report
