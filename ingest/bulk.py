"""The bulk load: `neo4j-admin database import full` of a whole corpus into a new database.

For 100K+ papers on the self-managed server. The rows go through the same validation as
the incremental load (same rejects file), are written as CSV with typed headers to a
temporary folder, and imported while the server is stopped; the server is then started
again, the schema applied and the indexes awaited. It replaces the database `neo4j`
(Community has only that one); an external database (`CRASE_DATABASE__URI`) is refused.
Not resumable: it is all or nothing, and fast enough to rerun.

Given an encoder, the papers are then embedded and their vectors written, as `crase embed`
does (ingest/paper_vectors.py), so the new corpus is searchable with embeddings when the
import returns. Embedding takes far longer than the import; it resumes from the chunks
cached under var/vectors/ (an interrupted import leaves the graph imported, and `crase
embed`, or the same import again, goes on from the last finished chunk).
"""

import csv
import io
import itertools
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from crase.database import Neo4jServer
from crase.errors import BulkImportError
from crase.graph import Graph
from crase.ingest.batches import FileCounts, ValidatedCorpus
from crase.ingest.checkpoint import load_key
from crase.ingest.corpus import CorpusFiles
from crase.ingest.edge_table import write_checked_edges
from crase.ingest.loader import corpus_paths, graph_totals, notes_path_for
from crase.ingest.paper_vectors import EmbedReport, embed_papers
from crase.ingest.progress import ProgressBar
from crase.ingest.records import Paper
from crase.ingest.rejects import NoteLog, RejectLog
from crase.models.minilm import SentenceEncoder
from crase.progress import CountProgress
from crase.settings import Settings

COMMUNITY_DATABASE = "neo4j"
BATCH_ROWS = 50_000
# Unit separator: a control character no title or author name contains, so arrays need
# no escaping. neo4j-admin reads `\NNN` as a decimal character code.
ARRAY_DELIMITER = "\x1f"
ARRAY_DELIMITER_ARG = "\\031"
PAPER_COLUMNS: list[tuple[str, str]] = [
    ("id", "id:ID"), ("title", "title"), ("abstract", "abstract"), ("year", "year:int"),
    ("venue", "venue"), ("authors", "authors:string[]"), ("arxiv_id", "arxiv_id"),
    ("doi", "doi"), ("s2_id", "s2_id"), ("intro", "intro"),
    ("categories", "categories:string[]"), ("date", "date"), ("journal_ref", "journal_ref"),
]
INDEX_TIMEOUT_S = 3600


@dataclass
class ImportReport:
    corpus: str
    rejects_path: Path
    papers: FileCounts = field(default_factory=FileCounts)
    citations: FileCounts = field(default_factory=FileCounts)
    rejects: dict[str, int] = field(default_factory=dict)
    repaired: int = 0  # papers imported after a repair (their notes are in notes_path)
    seconds: dict[str, float] = field(default_factory=dict)  # per phase
    imported: dict[str, int] = field(default_factory=dict)  # as neo4j-admin reports it
    import_tool_peak_memory: str = ""  # neo4j-admin's own figure, e.g. "1.2GiB"
    graph_after: dict[str, int] = field(default_factory=dict)
    embedded: EmbedReport | None = None  # the paper vectors, unless the import skipped them
    edge_properties_written: bool = False  # with the edges, by neo4j-admin (see EdgeProperties)

    @property
    def load_seconds(self) -> float:
        """Validation, CSV writing and the import itself: what the rates are measured on."""
        return self.seconds.get("validate_and_write_csv", 0.0) + self.seconds.get("import", 0.0)

    @property
    def papers_per_s(self) -> float:
        return self.papers.accepted / self.load_seconds if self.load_seconds else 0.0

    @property
    def citations_per_s(self) -> float:
        return self.citations.accepted / self.load_seconds if self.load_seconds else 0.0


class EdgeProperties(NamedTuple):
    """Properties for the imported edges: a JSON-lines file with one row per accepted edge,
    in the order of the citations file (`{citing, cited, <name>: value...}`), and the
    relationship file's column of each name (`("intents", "intents:string[]")`)."""

    path: Path
    columns: list[tuple[str, str]]


def check_bulk_allowed(settings: Settings) -> None:
    if settings.database.uri:
        raise BulkImportError(
            f"the database is external ({settings.database.uri}); neo4j-admin import needs the "
            "self-managed server. Use `crase load` for an external database.")
    if settings.database.database != COMMUNITY_DATABASE:
        raise BulkImportError(
            f"bulk import replaces the database '{COMMUNITY_DATABASE}' (the only one Neo4j "
            f"Community serves), but the settings name '{settings.database.database}'")


def import_corpus(settings: Settings, files: CorpusFiles, rejects_path: Path | None = None,
                  show_progress: bool = True, encoder: SentenceEncoder | None = None,
                  edge_properties: EdgeProperties | None = None,
                  dataset_rejects: Path | None = None) -> ImportReport:
    """Replace the database with this corpus; the server is running again afterwards. With
    an encoder, every paper also gets its vector (see the module docstring). With edge
    properties that match the accepted edges row for row, the edges are imported with them
    (`report.edge_properties_written`); otherwise without, for the caller to set later.
    The rejects file starts with those of the dataset the corpus was staged from, if any
    (`dataset_rejects`)."""
    check_bulk_allowed(settings)
    target = f"{settings.database.bolt_uri()}/{COMMUNITY_DATABASE}"
    rejects_path = rejects_path or (settings.var_dir / "loads" / (
        f"{files.name}-{load_key(corpus_paths(files), target)}.bulk.rejects.jsonl"))
    report = ImportReport(files.name, rejects_path)
    workdir = Path(tempfile.mkdtemp(prefix="crase-import-"))
    try:
        started = time.monotonic()
        arguments = write_import_files(files, workdir, settings, rejects_path, report,
                                       show_progress and settings.ingest.progress,
                                       dataset_rejects)
        if edge_properties is not None and files.citations is not None:
            report.edge_properties_written = add_edge_properties(
                workdir / "citations.csv", edge_properties)
        report.seconds["validate_and_write_csv"] = time.monotonic() - started
        run_import(settings, arguments, report)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if encoder is not None:
        embed_imported(settings, encoder, report, show_progress and settings.ingest.progress)
    return report


def embed_imported(settings: Settings, encoder: SentenceEncoder, report: ImportReport,
                   show: bool) -> None:
    """Embed the imported papers and write their vectors; progress on a terminal only."""
    progress = CountProgress() if show and sys.stderr.isatty() else None
    with Graph.connect(settings.database) as graph:
        report.embedded = embed_papers(graph, encoder, settings.var_dir,
                                       progress.update if progress else None)
        started = time.monotonic()
        graph.read("await_indexes", seconds=INDEX_TIMEOUT_S)
    report.seconds["embed"] = report.embedded.embed_s
    report.seconds["store_vectors"] = report.embedded.store_s + time.monotonic() - started


def write_import_files(files: CorpusFiles, workdir: Path, settings: Settings,
                       rejects_path: Path, report: ImportReport, show: bool,
                       dataset_rejects: Path | None = None) -> list[str]:
    """Validate and write the CSV files; return the neo4j-admin arguments that read them."""
    rejects = RejectLog(rejects_path)
    rejects.add_from(dataset_rejects)
    notes = NoteLog(notes_path_for(rejects_path))
    try:
        corpus = ValidatedCorpus(files, rejects, settings.ingest, BATCH_ROWS)
        papers_csv, citations_csv = workdir / "papers.csv", workdir / "citations.csv"
        with papers_csv.open("w", encoding="utf-8", newline="") as out:
            multiline = write_papers_csv(corpus, out, ProgressBar(
                "papers", files.papers.stat().st_size, enabled=show), notes)
        write_citations_csv(corpus, citations_csv, files, show)
    finally:
        rejects.close()
        notes.close()
    report.repaired = notes.repaired
    report.papers = corpus.count(files.papers.name)
    if files.citations is not None:
        report.citations = corpus.count(files.citations.name)
    report.rejects = rejects.counts_by_kind()
    return [
        f"--nodes=Paper={papers_csv}", f"--relationships=CITES={citations_csv}",
        f"--array-delimiter={ARRAY_DELIMITER_ARG}", f"--multiline-fields={str(multiline).lower()}",
        "--id-type=string", "--bad-tolerance=0",
        f"--max-off-heap-memory={settings.ingest.import_memory}",
        f"--report-file={workdir / 'import.report'}",
    ]


def write_papers_csv(corpus: ValidatedCorpus, out: TextIO, progress: ProgressBar,
                     notes: NoteLog) -> bool:
    """Write the node file; True if some text has a line break (neo4j-admin then needs
    `--multiline-fields`, which is slower, so it is only asked for when needed)."""
    out.write(",".join(header for _, header in PAPER_COLUMNS) + "\n")
    multiline, written = False, 0
    for batch in corpus.paper_batches():
        lines = [paper_csv_line(paper) for paper in batch.rows]
        multiline = multiline or any("\n" in line[:-1] or "\r" in line for line in lines)
        out.writelines(lines)
        notes.add_repairs(batch.file, batch.rows)
        written += len(lines)
        progress.update(batch.end_offset, written)
    progress.close()
    return multiline


def paper_csv_line(paper: Paper) -> str:
    values: dict[str, Any] = paper.__dict__  # model_dump is slower; fields are plain here
    return ",".join(csv_field(values[name]) for name, _ in PAPER_COLUMNS) + "\n"


def csv_field(value: Any) -> str:
    """Quoted text, a bare integer, or nothing at all for an unknown or empty value (no
    property, as `Paper.graph_properties` gives the incremental load)."""
    if value is None or value == "" or value == []:
        return ""
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        value = ARRAY_DELIMITER.join(item.replace(ARRAY_DELIMITER, " ") for item in value)
    return '"' + value.replace('"', '""') + '"'


def write_citations_csv(corpus: ValidatedCorpus, path: Path, files: CorpusFiles,
                        show: bool) -> None:
    """The relationship file: Arrow's column checks for a plain CSV (`edge_table`), the
    line reader for anything else; both refuse the same rows."""
    with path.open("wb") as out:
        out.write(b":START_ID,:END_ID\n")
        if files.citations is None:
            return
        progress = ProgressBar("citations", files.citations.stat().st_size, enabled=show)
        checked = write_checked_edges(files.citations, corpus.papers, out,
                                      lambda position, rows: progress.update(int(position), rows))
        if checked is not None:
            for reject in checked.rejects:
                corpus.reject(reject, replay=False)
            corpus.count(files.citations.name).accepted += checked.accepted
            progress.close()
            return
        out.seek(0)
        out.truncate()
        text = io.TextIOWrapper(out, encoding="utf-8", newline="")
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow([":START_ID", ":END_ID"])
        written = 0
        for batch in corpus.edge_batches():
            writer.writerows((edge.citing, edge.cited) for edge in batch.rows)
            written += len(batch.rows)
            progress.update(batch.end_offset, written)
        text.flush()
        text.detach()
        progress.close()


def add_edge_properties(relationships: Path, properties: EdgeProperties) -> bool:
    """Rewrite the relationship file with the property columns; True if every property row
    names the edge of its line. At the first that does not (an edge the checks refused, so
    the files no longer line up) the file is left as it was and False returned."""
    rewritten = relationships.with_suffix(".properties.csv")
    with relationships.open(encoding="utf-8", newline="") as edges, \
            properties.path.open(encoding="utf-8") as rows, \
            rewritten.open("w", encoding="utf-8", newline="") as out:
        reader = csv.reader(edges)
        next(reader)  # the header
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([":START_ID", ":END_ID", *(column for _, column in properties.columns)])
        matched = True
        for edge, text in itertools.zip_longest(reader, rows):
            row = json.loads(text) if text is not None else None
            if edge is None or row is None or [row["citing"], row["cited"]] != edge:
                matched = False
                break
            writer.writerow([*edge, *(property_field(row.get(name))
                                      for name, _ in properties.columns)])
    if matched:
        os.replace(rewritten, relationships)
    else:
        rewritten.unlink()
    return matched


def property_field(value: Any) -> str:
    """A relationship property as neo4j-admin reads it; empty (no property) when unknown."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ARRAY_DELIMITER.join(str(item).replace(ARRAY_DELIMITER, " ") for item in value)
    return str(value)


def run_import(settings: Settings, arguments: list[str], report: ImportReport) -> None:
    """Stop the server, import, start it again (also when the import failed), and apply
    the schema; the full-text index is populated before this returns."""
    server = Neo4jServer(settings.database)
    started = time.monotonic()
    server.stop()
    report.seconds["stop_server"] = time.monotonic() - started
    try:
        started = time.monotonic()
        result = server.run_admin("database", "import", "full", COMMUNITY_DATABASE,
                                  "--overwrite-destination", *arguments)
        report.seconds["import"] = time.monotonic() - started
    finally:
        started = time.monotonic()
        server.start()
        report.seconds["start_server"] = time.monotonic() - started
    if result.returncode != 0:
        raise BulkImportError(f"neo4j-admin import failed (exit {result.returncode}): "
                              f"{(result.stderr or result.stdout)[-3000:]}")
    report.imported = imported_counts(result.stdout)
    peak = re.search(r"Peak memory usage: (\S+)", result.stdout)
    report.import_tool_peak_memory = peak.group(1) if peak else ""
    started = time.monotonic()
    graph = Graph.connect(settings.database)
    try:
        graph.apply_schema()
        graph.read("await_indexes", seconds=INDEX_TIMEOUT_S)
        report.graph_after = graph_totals(graph)
    finally:
        graph.close()
    report.seconds["schema_and_indexes"] = time.monotonic() - started
    check_imported(report)


def imported_counts(output: str) -> dict[str, int]:
    counts = {}
    for kind in ("nodes", "relationships"):
        match = re.search(rf"^\s*(\d+) {kind}\s*$", output, re.MULTILINE)
        if match:
            counts[kind] = int(match.group(1))
    return counts


def check_imported(report: ImportReport) -> None:
    expected = {"papers": report.papers.accepted, "citations": report.citations.accepted}
    if report.graph_after != expected:
        raise BulkImportError(f"the graph holds {report.graph_after} after the import, "
                              f"expected {expected}")
