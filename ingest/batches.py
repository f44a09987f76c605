"""A corpus as batches of validated rows, the same for the incremental and the bulk load.

Papers come first (every paper of the input), then citations, which are checked against
those papers. Every refused row goes to the rejects log. A batch knows the line and byte
offset it ends at, which is what a checkpoint records.

Resuming: lines up to `done_lines[file]` were handled by an earlier run. They are read
again to rebuild the registries (ids, edges seen), but come back as `replay` batches that
the caller does not write, and their rejects are neither logged nor counted again.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from crase.errors import CorpusError
from crase.ingest.corpus import (
    EDGE_HEADER,
    CorpusFiles,
    first_edge_line,
    ids_in_papers,
    is_header,
    read_citations,
    read_papers,
)
from crase.ingest.records import EdgeRow, Limits, Paper, Reject
from crase.ingest.registry import CitationRegistry, PaperRegistry, Resolver
from crase.ingest.rejects import RejectLog
from crase.settings import IngestSettings

RowT = TypeVar("RowT", Paper, EdgeRow)
PAPER_OVERHEAD_BYTES = 200  # ids, authors, dates: what a row adds besides its texts


@dataclass
class Batch(Generic[RowT]):
    rows: list[RowT]
    file: str
    end_line: int
    end_offset: int
    replay: bool = False
    rejects_offset: int = 0  # size of the rejects file when the batch was cut


@dataclass
class FileCounts:
    accepted: int = 0
    rejected: int = 0

    @property
    def read(self) -> int:
        return self.accepted + self.rejected


@dataclass
class ValidatedCorpus:
    files: CorpusFiles
    rejects: RejectLog
    settings: IngestSettings
    batch_size: int
    resolve: Resolver | None = None  # where to look up ids missing from the input
    done_lines: dict[str, int] = field(default_factory=dict)
    papers: PaperRegistry = field(default_factory=PaperRegistry)
    counts: dict[str, FileCounts] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.citations = CitationRegistry(self.papers, self.resolve)
        self.limits = Limits.from_settings(self.settings)

    def count(self, file: str) -> FileCounts:
        return self.counts.setdefault(file, FileCounts())

    def reject(self, reject: Reject, replay: bool) -> None:
        if not replay:
            self.rejects.add(reject)
            self.count(reject.file).rejected += 1

    def paper_batches(self) -> Iterator[Batch[Paper]]:
        self.check_edge_header()
        path = self.files.papers
        file, done = path.name, self.done_lines.get(path.name, 0)
        rows: list[Paper] = []
        size, line, offset, previous_offset, replay = 0, 0, 0, 0, done > 0
        for line, offset, item in read_papers(path, self.files.format, self.limits,
                                              self.settings.max_line_bytes):
            if replay and line > done:
                yield self.cut(rows, file, line - 1, previous_offset, replay=True)
                rows, size, replay = [], 0, False
            previous_offset = offset
            if isinstance(item, Reject):
                self.reject(item, replay)
                self.papers.refuse(item)  # also on replay: the registry is rebuilt
            elif item is not None:
                refused = self.papers.admit(item, file, line)
                if refused is not None:
                    self.reject(refused, replay)
                    continue
                rows.append(item)
                if not replay:
                    self.count(file).accepted += 1
                size += paper_bytes(item)
                if len(rows) >= self.batch_size or size >= self.settings.batch_bytes:
                    yield self.cut(rows, file, line, offset, replay)
                    rows, size = [], 0
        yield self.cut(rows, file, line, offset, replay)

    def edge_batches(self) -> Iterator[Batch[EdgeRow]]:
        path = self.files.citations
        if path is None:
            return
        file, done = path.name, self.done_lines.get(path.name, 0)
        pending: list[EdgeRow] = []
        line, offset, replay = 0, 0, done > 0
        previous_offset = 0
        for line, offset, item in read_citations(path, self.settings.max_line_bytes):
            if replay and line > done:
                yield self.checked(pending, file, line - 1, previous_offset, replay=True)
                pending, replay = [], False
            previous_offset = offset
            if isinstance(item, Reject):
                self.reject(item, replay)
            elif item is not None:
                pending.append(item)
                if len(pending) >= self.batch_size:
                    yield self.checked(pending, file, line, offset, replay)
                    pending = []
        yield self.checked(pending, file, line, offset, replay)

    def checked(self, rows: list[EdgeRow], file: str, line: int, offset: int,
                replay: bool) -> Batch[EdgeRow]:
        accepted, refused = self.citations.admit(rows, file)
        for reject in refused:
            self.reject(reject, replay)
        if not replay:
            self.count(file).accepted += len(accepted)
        return self.cut(accepted, file, line, offset, replay)

    def check_edge_header(self) -> None:
        """Refuse, before any row is handed on to be written, an edge file whose first
        line is a header with the wrong column names (`source,target`): one that is no
        header (any case) and links no paper of the input or the graph."""
        path = self.files.citations
        fields = first_edge_line(path) if path is not None else None
        if path is None or fields is None or len(fields) != 2 or is_header(fields):
            return
        named = set(fields)
        if ids_in_papers(self.files.papers, named, self.settings.max_line_bytes) \
                or (self.resolve is not None and self.resolve(named)):
            return
        shown = f"{fields[0][:40]},{fields[1][:40]}"
        raise CorpusError(
            f"{path.name} line 1 is {shown!r}: not the header {','.join(EDGE_HEADER)!r}, and "
            f"neither id is a known paper; make the first line {','.join(EDGE_HEADER)} "
            "and load again")

    def cut(self, rows: list[RowT], file: str, line: int, offset: int,
            replay: bool) -> Batch[RowT]:
        return Batch(rows, file, line, offset, replay, rejects_offset=self.rejects.flush())


def paper_bytes(paper: Paper) -> int:
    return (len(paper.title) + len(paper.abstract) + len(paper.intro or "")
            + PAPER_OVERHEAD_BYTES)
