"""A publisher's bulk dataset staged as a corpus of our own format, which `crase load` and
`crase db import` then read like any other (`crase.ingest.openalex`, `crase.ingest.s2ag`
say what each dataset's records become).

Shards are gzipped JSON lines, read line by line as streams: a shard is never held in
memory, and a bad line (broken JSON, not UTF-8, over the line limit, a record that is no
valid paper) is one reject naming the shard (its path under the dataset folder) and the
line, while the next line is read as usual. The row rules are the ones every load uses:
`corpus.read_json_line` and `corpus.paper_from_record` (validation, repairs), the paper
registry (repeated ids), `check_edge` and the citation registry (self-citations, repeated
edges). The load that reads the staged files finds nothing left to refuse.

Citations are kept inside the corpus: an edge whose ends were both kept. A reference to a
work the filter left out, or that the dataset does not hold, is counted, not rejected.

Memory grows with the kept corpus only: the map from each kept work's dataset id to its
graph id, the paper registry, and 8 bytes an accepted edge (the registry's edge set);
docs/ingest.md has the measured figure. What waits for the kept set to be complete (the
references of kept works, Semantic Scholar's candidate papers) is spilled to disk.
"""

import csv
import gzip
import json
import os
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO

from crase.errors import CorpusError
from crase.ingest.checkpoint import fingerprint_files
from crase.ingest.corpus import (
    CITATIONS_FILE,
    EDGE_HEADER,
    PAPERS_FILE,
    READ_BUFFER,
    Line,
    read_json_line,
    read_lines,
)
from crase.ingest.dataset_filter import DatasetFilter
from crase.ingest.progress import ProgressBar
from crase.ingest.records import (
    VALIDATION_VERSION,
    EdgeRow,
    Limits,
    Paper,
    Reject,
    RejectKind,
    check_edge,
)
from crase.ingest.registry import CitationRegistry, PaperRegistry
from crase.ingest.rejects import NoteLog, RejectLog

SHARD_SUFFIXES = (".gz", ".json", ".jsonl")
PARTITION_PREFIX = "updated_date="
WORKS_LABELS = ("works", "papers")  # the datasets whose lines the summary counts as read
STAGED_MARK = "staged.json"  # written last: its presence says the staging finished
REJECTS_FILE = "rejects.jsonl"
NOTES_FILE = "notes.jsonl"
SIGNALS_FILE = "citation_signals.jsonl"
# The rules of the staging itself: a staging made under older ones is made again (2: an
# empty shard is a bad_shard reject).
STAGING_VERSION = 2
EDGE_BATCH = 10_000
PROGRESS_LINES = 1_000  # lines between two progress updates


@dataclass(frozen=True)
class Shard:
    path: Path
    name: str  # the path under the dataset folder: what a reject names


DatasetPaths = Path | Sequence[Path]  # one shard or folder, or several


def as_paths(paths: DatasetPaths) -> list[Path]:
    return [paths] if isinstance(paths, Path) else list(paths)


def dataset_root(paths: list[Path]) -> Path | None:
    """What the shards of several paths are named under: the folder holding them all, so
    that two shards of one name in different folders keep apart in rejects; None for a
    single path (its shards are named under itself)."""
    if len(paths) < 2:
        return None
    return Path(os.path.commonpath([path.resolve().parent for path in paths]))


def find_dataset_shards(paths: DatasetPaths) -> list[Shard]:
    """The shards of every path given (each a shard file or a folder of them), newest
    `updated_date=` partition first, else in the order given; a shard named twice is read
    once."""
    given = as_paths(paths)
    root = dataset_root(given)
    shards: dict[Path, Shard] = {}
    for path in given:
        for shard in find_shards(path.resolve() if root else path, root):
            shards.setdefault(shard.path.resolve(), shard)
    return newest_first(list(shards.values()))


def newest_first(shards: list[Shard]) -> list[Shard]:
    """The shards with the newest `updated_date=` partition first (a stable sort: within
    a partition, and for shards outside any, the order stays). A work updated since a
    snapshot's older partition was written is in both; the first copy read is kept."""
    return sorted(shards, key=partition_date, reverse=True)


def partition_date(shard: Shard) -> str:
    """The date of the `updated_date=YYYY-MM-DD` folder a shard is in ("" if none)."""
    for part in reversed(shard.path.parts):
        if part.startswith(PARTITION_PREFIX):
            return part.removeprefix(PARTITION_PREFIX)
    return ""


def find_shards(path: Path, root: Path | None = None) -> list[Shard]:
    """A shard file, or every shard under a folder (any depth, in name order), each named
    by its path under `root` (default: the folder; a file given alone by its name)."""
    if path.is_file():
        return [Shard(path, path.relative_to(root).as_posix() if root else path.name)]
    if not path.is_dir():
        raise CorpusError(f"no dataset at {path}: give a shard file or a folder of them")
    shards = [Shard(found, found.relative_to(root or path).as_posix())
              for found in sorted(path.rglob("*"))
              if found.is_file() and found.name.endswith(SHARD_SUFFIXES)]
    if not shards:
        raise CorpusError(f"no shards (*.gz, *.json, *.jsonl) under {path}")
    return shards


def open_shard(shard: Shard) -> BinaryIO:
    """The shard's bytes (decompressed as they are read, for a .gz); an OSError when the
    file cannot be opened."""
    if shard.path.name.endswith(".gz"):
        return gzip.open(shard.path, "rb")  # type: ignore[return-value]
    return shard.path.open("rb", buffering=READ_BUFFER)


def read_shard(shard: Shard, max_line_bytes: int,
               progress: Callable[[int, int], None] | None = None,
               ) -> Iterator[tuple[int, str, Any] | Reject | None]:
    """(line number, line text, JSON value) per record line of a shard, or its reject.
    None for a line with nothing on it, so every line read is one item.
    `progress(bytes of the shard file read, lines read)` is called now and then. A shard
    that cannot be opened or read to its end (cut off, no gzip, corrupt) ends in one
    `bad_shard` reject, its lines read before the break kept: the other shards go on."""
    number, end, filled = 0, 0, 0
    try:
        handle = open_shard(shard)
    except OSError as err:
        yield bad_shard_reject(shard, 0, 0, None, err)
        return
    with handle:
        # Under a gzip stream, the file it reads: its position is the share of the shard.
        raw = getattr(handle, "fileobj", handle)
        try:
            for number, end, data in read_lines(handle, max_line_bytes):
                parsed = read_json_line(Line(number, end, data), shard.name)
                filled += parsed is not None
                yield parsed if parsed is None or isinstance(parsed, Reject) \
                    else (number, parsed[0], parsed[1])
                if progress is not None and number % PROGRESS_LINES == 0:
                    progress(raw.tell(), number)
        except (OSError, EOFError, zlib.error) as err:  # cut off, not gzip, corrupt
            yield bad_shard_reject(shard, number, end, raw.tell(), err)
            return
    if not filled:
        yield empty_shard_reject(shard, number)


def empty_shard_reject(shard: Shard, lines: int) -> Reject:
    """The one reject of a shard read to its end without a line that holds anything: a
    file of 0 bytes (a download that never started), a gzip stream of no text (its header
    and trailer only), or blank lines only. Loaded silently, it would lose the shard."""
    size = shard.path.stat().st_size
    if size == 0:
        what = "the file is empty (0 bytes)"
    elif lines == 0:
        what = f"its {size:,} bytes hold no text (a gzip header and nothing after it)"
    else:
        what = f"it holds {lines:,} blank lines and no record"
    return Reject(shard.name, lines + 1, RejectKind.BAD_SHARD,
                  f"the shard is empty: {what}; a download that stopped before its data: "
                  "download the shard again and load again", "")


def bad_shard_reject(shard: Shard, lines: int, end: int, position: int | None,
                     err: BaseException) -> Reject:
    """The one reject of a shard read no further than line `lines` (ending at byte `end`
    of its text); `position`: how far into the file the reading had come, where known."""
    where = ""
    if position is not None and shard.path.name.endswith(".gz"):
        where = f"; the gzip stream broke by byte {position:,} of the file's " \
                f"{shard.path.stat().st_size:,}"
    kept = f"its {lines:,} lines before the break are kept, the rest is lost" if lines \
        else "nothing of it could be read"
    return Reject(shard.name, lines + 1, RejectKind.BAD_SHARD,
                  f"the shard cannot be read past line {lines:,} (byte {end:,} of its text"
                  f"{where}): {error_text(err)}; {kept}; download the shard again and load "
                  "again", "")


def error_text(err: BaseException) -> str:
    return str(err) or type(err).__name__


def read_records(shards: list[Shard], staging: "Staging", max_line_bytes: int,
                 label: str = "works") -> Iterator[tuple[Shard, int, str, Any]]:
    """(shard, line number, line text, JSON value) of every record line of the shards;
    a line that is no JSON is refused into `staging` and not yielded. The lines of the
    works (`label` works or papers) are counted into the report's `records`, blank ones
    also into `blank`. With the staging's progress on, a bar over the shards' bytes is
    drawn on stderr."""
    progress = ShardsProgress(label, shards, staging.show_progress)
    report, of_works = staging.report, label in WORKS_LABELS
    for shard in shards:
        report.shards += 1
        lines = 0
        for item in read_shard(shard, max_line_bytes,
                               progress.within if staging.show_progress else None):
            if isinstance(item, Reject) and item.kind == RejectKind.BAD_SHARD:
                staging.reject(item)
                report.bad_shards.append(shard.name)
                continue
            lines += 1
            if isinstance(item, Reject):
                staging.reject(item)
            elif item is None:
                report.blank += of_works
            else:
                yield (shard, *item)
        if of_works:
            report.records += lines
        progress.finished(shard, lines)
    progress.bar.close()


class ShardsProgress:
    """One progress bar over a list of shards: the bytes of their files read so far."""

    def __init__(self, label: str, shards: list[Shard], enabled: bool) -> None:
        self.bar = ProgressBar(label, sum(shard.path.stat().st_size for shard in shards),
                               enabled=enabled)
        self.bytes_before, self.lines_before = 0, 0  # of the shards finished

    def within(self, position: int, lines: int) -> None:
        self.bar.update(self.bytes_before + position, self.lines_before + lines)

    def finished(self, shard: Shard, lines: int) -> None:
        self.bytes_before += shard.path.stat().st_size
        self.lines_before += lines
        self.bar.update(self.bytes_before, self.lines_before)


@dataclass
class StagingReport:
    folder: Path
    shards: int = 0
    records: int = 0  # lines read of the works (papers) shards, every one: kept, left out,
    # refused or blank
    kept: int = 0
    filtered_out: int = 0  # valid records the filter left out
    rejected: int = 0  # paper rows and edge rows refused (see the rejects file)
    edges_kept: int = 0
    edges_outside: int = 0  # references to works that are not in the corpus
    abstracts_joined: int = 0  # Semantic Scholar abstracts set on a kept paper
    abstracts_unjoined: int = 0  # abstracts of no kept paper (not held, filtered, repeated)
    blank: int = 0  # lines of the works shards with nothing on them
    repaired: int = 0  # kept works that validation repaired (see the notes file)
    bad_shards: list[str] = field(default_factory=list)  # cut off, not gzip, corrupt
    reused: bool = False  # an earlier staging with the same inputs and filter was used

    @property
    def partial(self) -> bool:
        """Some shard could not be read to its end: the staging holds the rest."""
        return bool(self.bad_shards)

    @property
    def nothing_read(self) -> bool:
        """No line of the works shards was a record kept or filtered out: every shard is
        bad or empty, or every line a reject. Loading it would load nothing."""
        return self.kept == 0 and self.filtered_out == 0

    @property
    def rejects_path(self) -> Path:
        return self.folder / REJECTS_FILE

    @property
    def notes_path(self) -> Path:
        return self.folder / NOTES_FILE

    @property
    def signals_path(self) -> Path:
        return self.folder / SIGNALS_FILE


class Staging:
    """The staged corpus being written: papers.jsonl, citations.csv, the rejects and notes
    of the dataset's rows, and (where the dataset has them) the citation signals."""

    def __init__(self, folder: Path, dataset_filter: DatasetFilter,
                 show_progress: bool = False) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / STAGED_MARK).unlink(missing_ok=True)
        self.folder = folder
        self.filter = dataset_filter
        self.show_progress = show_progress
        self.report = StagingReport(folder)
        self.rejects = RejectLog(folder / REJECTS_FILE)
        self.notes = NoteLog(folder / NOTES_FILE)
        self.papers_out = (folder / PAPERS_FILE).open("w", encoding="utf-8")
        self.edges_handle = (folder / CITATIONS_FILE).open("w", encoding="utf-8", newline="")
        self.edges_out = csv.writer(self.edges_handle, lineterminator="\n")
        self.edges_out.writerow(EDGE_HEADER)
        self.signals_out: IO[str] | None = None
        self.papers = PaperRegistry()
        self.citations = CitationRegistry(self.papers)
        self.graph_ids: dict[str, str] = {}  # dataset id -> graph id, kept works only

    def reject(self, reject: Reject) -> None:
        self.rejects.add(reject)
        self.report.rejected += 1

    def offer(self, file: str, line: int, paper: Paper | Reject, own_id: str,
              labels: list[str]) -> bool:
        """Keep the paper if it is valid, new and passes the filter; True if kept."""
        if isinstance(paper, Reject):
            self.papers.refuse(paper)
            self.reject(paper)
            return False
        if not self.filter.keeps(paper, own_id, labels):
            self.report.filtered_out += 1
            return False
        if own_id and own_id in self.graph_ids:
            # A copy of a work read before: shards are read newest partition first, so
            # the copy kept is the newest.
            known = self.papers.index[self.graph_ids[own_id]]
            self.reject(self.papers.repeat_reject(paper, file, line, known,
                                                  f"dataset record {own_id}"))
            return False
        refused = self.papers.admit(paper, file, line)
        if refused is not None:
            self.reject(refused)
            # Another record of the same work (a preprint and its published version that
            # OpenAlex keeps apart, both with the arXiv id): its node is the kept one's,
            # so citations to either record reach it.
            self.graph_ids.setdefault(own_id, paper.id)
            return False
        self.graph_ids[own_id] = paper.id
        self.papers_out.write(json.dumps({"id": paper.id, **paper.graph_properties()},
                                         ensure_ascii=False) + "\n")
        self.notes.add_repairs(file, [paper])
        self.report.kept += 1
        return True

    def leave_out(self) -> None:
        """A valid record the filter left out before it was offered."""
        self.report.filtered_out += 1

    def in_corpus(self, citing: str | None, cited: str | None) -> tuple[str, str] | None:
        """The graph ids of an edge between two kept works (by their dataset ids); None,
        counted as outside the corpus, for any other edge."""
        ends = (self.graph_ids.get(citing) if citing is not None else None,
                self.graph_ids.get(cited) if cited is not None else None)
        if ends[0] is None or ends[1] is None:
            self.report.edges_outside += 1
            return None
        return ends[0], ends[1]

    def add_edges(self, file: str, rows: list[EdgeRow],
                  signals: dict[int, dict[str, Any]] | None = None) -> None:
        """Write the edges of one shard's rows that pass the edge checks; `signals`: the
        publisher's properties of each row's edge, by line."""
        checked = []
        for row in rows:
            problem = check_edge(row.citing, row.cited)
            if problem is None:
                checked.append(row)
            else:
                self.reject(Reject(file, row.line, problem[0], problem[1],
                                   f"{row.citing},{row.cited}"))
        accepted, refused = self.citations.admit(checked, file)
        for reject in refused:
            self.reject(reject)
        self.edges_out.writerows((row.citing, row.cited) for row in accepted)
        self.report.edges_kept += len(accepted)
        if signals is not None:
            self.write_signals(accepted, signals)

    def write_signals(self, rows: list[EdgeRow], signals: dict[int, dict[str, Any]]) -> None:
        if self.signals_out is None:
            self.signals_out = (self.folder / SIGNALS_FILE).open("w", encoding="utf-8")
        for row in rows:
            self.signals_out.write(json.dumps({"citing": row.citing, "cited": row.cited,
                                               **signals[row.line]}, ensure_ascii=False) + "\n")

    def close(self) -> None:
        for handle in (self.papers_out, self.edges_handle, self.signals_out):
            if handle is not None:
                handle.close()
        self.rejects.close()
        self.notes.close()


def edges_in_batches(rows: Iterator[tuple[str, EdgeRow]],
                     ) -> Iterator[tuple[str, list[EdgeRow]]]:
    """(file, rows) batches of consecutive rows from one file, at most EDGE_BATCH long."""
    file, batch = "", list[EdgeRow]()
    for row_file, row in rows:
        if batch and (row_file != file or len(batch) >= EDGE_BATCH):
            yield file, batch
            batch = []
        file = row_file
        batch.append(row)
    if batch:
        yield file, batch


# One staging run, and the reuse of a finished one ---------------------------------------------
def run_staging(folder: Path, dataset_filter: DatasetFilter, shards: list[Shard],
                rules: tuple[Limits, int], show_progress: bool,
                fill: Callable[[Staging], None]) -> StagingReport:
    """The report of a finished staging of these shards with this filter and these row
    rules (the limits, the longest line) in `folder`, or of a new one that `fill` writes
    (the staging is marked finished only when it returns)."""
    key = staging_key(shards, dataset_filter, rules)
    finished = finished_staging(folder, key)
    if finished is not None:
        return finished
    staging = Staging(folder, dataset_filter, show_progress)
    try:
        fill(staging)
    except BaseException:
        staging.close()
        raise
    return mark_finished(staging, key)


def staging_key(shards: list[Shard], dataset_filter: DatasetFilter,
                rules: tuple[Limits, int]) -> dict[str, Any]:
    """What a staging depends on: the inputs, the filter, and the row rules (a staging
    made under other limits or an older validation is made again)."""
    limits, max_line_bytes = rules
    return {"inputs": fingerprint_files([shard.path for shard in shards]),
            "filter": dataset_filter.describe(),
            "rules": {**asdict(limits), "max_line_bytes": max_line_bytes,
                      "validation_version": VALIDATION_VERSION,
                      "staging_version": STAGING_VERSION}}


def finished_staging(folder: Path, key: dict[str, Any]) -> StagingReport | None:
    """The report of a staging of the same inputs with the same filter, if one finished
    in `folder`: a resumed `crase load` then reads the same staged files."""
    try:
        mark = json.loads((folder / STAGED_MARK).read_text())
    except (OSError, ValueError):
        return None
    if mark.get("key") != key:
        return None
    report = StagingReport(folder, **{k: v for k, v in mark["report"].items() if k != "folder"})
    report.reused = True
    return report


def mark_finished(staging: Staging, key: dict[str, Any]) -> StagingReport:
    staging.close()
    report = staging.report
    report.repaired = staging.notes.repaired
    fields = {k: v for k, v in asdict(report).items() if k not in ("folder", "reused")}
    (staging.folder / STAGED_MARK).write_text(json.dumps({"key": key, "report": fields}))
    return report


@dataclass
class SpillFile:
    """Rows put aside until the kept set is complete (JSON lines in the staging folder)."""

    path: Path
    handle: IO[str] | None = field(default=None)

    def __enter__(self) -> "SpillFile":
        self.handle = self.path.open("w", encoding="utf-8")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            self.handle.close()

    def write(self, row: list[Any]) -> None:
        assert self.handle is not None
        self.handle.write(json.dumps(row, ensure_ascii=False) + "\n")

    def rows(self) -> Iterator[list[Any]]:
        if self.handle is not None:
            self.handle.close()
        try:
            with self.path.open(encoding="utf-8") as handle:
                for text in handle:
                    yield json.loads(text)
        finally:
            self.path.unlink(missing_ok=True)
