"""`crase load` (incremental, resumable), `crase fetch` (papers and their neighbours from
Semantic Scholar) and the handler of `crase db import` (bulk).

Exit status of a load or an import: 0 when done, 2 for a usage error or a dataset none
of whose shards yielded a record (nothing loaded), and PARTIAL_EXIT (3) when a dataset was
loaded without some shard that could not be read to its end or was empty (each such shard
one `bad_shard` reject; its other shards and rows loaded)."""

import argparse
import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING

from crase.errors import DatasetEmpty, SettingsError
from crase.settings import Settings

# Only what the parsers need is imported above (api/cli.py); loading, fetching and embedding
# (the driver, numpy, the HTTP client, the encoder) are imported by the functions that run.
if TYPE_CHECKING:
    from crase.ingest.batches import FileCounts
    from crase.ingest.bulk import ImportReport
    from crase.ingest.corpus import CorpusFiles
    from crase.ingest.dataset_filter import DatasetFilter
    from crase.ingest.loader import LoadReport
    from crase.ingest.staging import StagingReport

DATASET_FORMATS = ("openalex", "s2ag")  # publishers' bulk datasets, staged before the load
PARTIAL_EXIT = 3  # loaded, but some shard of the dataset could not be read to its end
EMBED_HINT = ("Next: `crase embed` stores the paper vectors the query's dense search uses "
              "(searches seed from BM25 alone until then).")


ORDER = 30  # place in `crase --help` (api/cli.py)


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    load = subparsers.add_parser(
        "load", help="load a corpus into the graph (idempotent, resumable)",
        description="Validate and MERGE papers and citations in batches. Bad rows go to a "
                    "rejects file and the load goes on. Rerun after an interruption to resume; "
                    "a rerun on unchanged input is skipped.")
    add_corpus_arguments(load)
    load.add_argument("--batch-size", type=int, help="rows per transaction (default 10000)")
    load.add_argument("--restart", action="store_true",
                      help="ignore the checkpoint and load everything again")
    load.set_defaults(handler=load_command)

    fetch = subparsers.add_parser(
        "fetch", help="add papers and their neighbours from Semantic Scholar",
        description="Fetch papers (S2 ids, arXiv:ID, DOI:ID, CorpusId:N) with their references "
                    "and citing papers and MERGE them into the graph. Needs "
                    "CRASE_PROVIDERS__ENABLED=true; honours the shared rate limit.")
    fetch.add_argument("ids", nargs="+", metavar="ID", help="paper ids as S2 accepts them")
    fetch.add_argument("--no-neighbours", action="store_true",
                       help="only the papers themselves, not their references and citations")
    fetch.set_defaults(handler=fetch_command)

    embed = subparsers.add_parser(
        "embed", help="store title-and-abstract embeddings for the query's dense search",
        description="Embed every paper's title and abstract with all-MiniLM-L6-v2 (the "
                    "encoder CRASE_MODELS__PAPER_ENCODER chooses: numpy or onnx-int8) and store "
                    "the vectors on the papers, with the encoder's name, where the vector index "
                    "serves the dense half of each search's own text ranking (a search refuses "
                    "vectors of another encoder than its own). Resumable: vectors are computed "
                    "in chunks cached under var/vectors/, and papers that already hold one of "
                    "this encoder are skipped. Without it a search seeds from BM25 alone.")
    embed.add_argument("--quiet", action="store_true", help="no progress lines")
    embed.set_defaults(handler=embed_command)


def add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                        help="normalized: a folder with papers.jsonl and citations.csv; "
                        "arxiv: the metadata snapshot (JSON lines); openalex: the snapshot's "
                        "works folder, or any of its updated_date=* folders or part_*.gz "
                        "shards; s2ag: folders with the datasets' papers/, abstracts/ and "
                        "citations/ folders. Several PATHs for openalex and s2ag only")
    parser.add_argument("--format", choices=["normalized", "arxiv", *DATASET_FORMATS],
                        default="normalized", dest="corpus_format",
                        help="input format (default normalized)")
    parser.add_argument("--citations", type=Path,
                        help="edge list (citing_id,cited_id); default PATH/citations.csv")
    parser.add_argument("--rejects", type=Path,
                        help="rejects file (default under var/loads/); for openalex and s2ag "
                             "it also holds the rejects of the dataset's staging")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    filters = parser.add_argument_group(
        "dataset filters", "openalex and s2ag only: applied while the shards stream past; "
        "citations are kept only between kept works")
    filters.add_argument("--from-year", type=int, metavar="YEAR",
                         help="keep works published in YEAR or later")
    filters.add_argument("--to-year", type=int, metavar="YEAR",
                         help="keep works published in YEAR or earlier")
    filters.add_argument("--field", action="append", default=[], metavar="NAME",
                         help="keep works filed under NAME (OpenAlex concept, topic, subfield, "
                              "field or domain; Semantic Scholar field of study); repeat for "
                              "any of several")
    filters.add_argument("--has-abstract", action="store_true",
                         help="keep only works with an abstract")
    filters.add_argument("--has-arxiv", action="store_true",
                         help="keep only works with an arXiv id")
    filters.add_argument("--ids", type=Path, metavar="FILE",
                         help="keep only the works listed in FILE, one id a line (the "
                              "dataset's own id, a DOI or an arXiv id)")


def corpus_files(args: argparse.Namespace, settings: Settings,
                 ) -> "tuple[CorpusFiles, StagingReport | None]":
    """The files the load reads: the corpus given, or a dataset staged as one (its
    staging summary printed first, and its report returned)."""
    from crase.ingest.corpus import locate_corpus
    from crase.ingest.dataset_filter import DatasetFilter

    dataset_filter = DatasetFilter.build(args.from_year, args.to_year, args.field,
                                         args.has_abstract, args.has_arxiv, args.ids)
    if args.corpus_format not in DATASET_FORMATS:
        if not dataset_filter.is_empty:
            raise SettingsError("the dataset filters apply to --format openalex and s2ag; "
                                "filter a corpus of our own format before loading it")
        if len(args.paths) > 1:
            raise SettingsError(f"--format {args.corpus_format} reads one PATH; load the "
                                "others one after another")
        return locate_corpus(args.paths[0], args.corpus_format, args.citations), None
    if args.citations is not None:
        raise SettingsError(f"--citations is for our own format and arxiv; {args.corpus_format} "
                            "takes its citations from the dataset")
    staged = stage_dataset(args, settings, dataset_filter)
    print_staging_report(args.corpus_format, staged)
    refuse_empty_dataset(staged)
    return locate_corpus(staged.folder), staged


def refuse_empty_dataset(staged: "StagingReport") -> None:
    """A dataset none of whose shards yielded a record stops the load before the graph
    is touched (a bulk import would replace the database with nothing)."""
    if not staged.nothing_read:
        return
    if staged.bad_shards:
        named = ", ".join(staged.bad_shards[:5]) + (", ..." if len(staged.bad_shards) > 5
                                                      else "")
        why = (f"{len(staged.bad_shards):,} of its {staged.shards:,} shards are empty or "
               f"cannot be read ({named}), and no other line is a valid record")
    else:
        why = f"none of its {staged.shards:,} shards holds a valid record"
    raise DatasetEmpty(f"the dataset yielded no record: {why}; each reason is in "
                       f"{staged.rejects_path}; download those shards again and load again")


def stage_dataset(args: argparse.Namespace, settings: Settings,
                  dataset_filter: "DatasetFilter") -> "StagingReport":
    from crase.ingest.checkpoint import load_key
    from crase.ingest.openalex import stage_openalex
    from crase.ingest.records import Limits
    from crase.ingest.s2ag import stage_s2ag

    stage = stage_openalex if args.corpus_format == "openalex" else stage_s2ag
    folder = settings.var_dir / "staged" / (
        f"{args.corpus_format}-{load_key(args.paths, repr(dataset_filter.describe()))}")
    return stage(args.paths, folder, dataset_filter, Limits.from_settings(settings.ingest),
                 settings.ingest.max_line_bytes,
                 show_progress=settings.ingest.progress and not args.quiet)


def staged_signals(args: argparse.Namespace, files: "CorpusFiles") -> Path | None:
    """The staged dataset's citation signals (isinfluential, intents), where it has them
    (the Semantic Scholar citations dataset)."""
    from crase.ingest.staging import SIGNALS_FILE

    path = files.papers.parent / SIGNALS_FILE
    return path if args.corpus_format in DATASET_FORMATS and path.exists() else None


def store_signals(path: Path, settings: Settings) -> None:
    """The signals onto the loaded edges, in transactions."""
    from crase.graph import Graph
    from crase.ingest.s2ag import store_citation_signals

    with Graph.connect(settings.database) as graph:
        written = store_citation_signals(graph, path)
    print(f"  signals    {written:,} citations with isinfluential and intents")


def print_staging_report(corpus_format: str, report: "StagingReport") -> None:
    reused = " (staged before with the same inputs and filters; reused)" if report.reused \
        else ""
    print(f"Staged {corpus_format} from {report.shards:,} shards into {report.folder}{reused}")
    blank = f" ({report.blank:,} blank)" if report.blank else ""
    print(f"  works      {report.kept:>11,} kept {report.filtered_out:>9,} filtered out "
          f"{report.records:,} lines read{blank}")
    if report.abstracts_joined or report.abstracts_unjoined:
        print(f"  abstracts  {report.abstracts_joined:>11,} joined {report.abstracts_unjoined:>7,} "
              "of no kept work")
    print(f"  citations  {report.edges_kept:>11,} kept {report.edges_outside:>9,} outside "
          "the corpus")
    print(f"  rejects    {report.rejected:,} in {report.rejects_path}")
    print_repairs(report.repaired, report.notes_path)
    print_partial(report)


def print_partial(report: "StagingReport") -> None:
    if report.partial:
        print(f"  partial: {len(report.bad_shards):,} shards could not be read to their end "
              f"(one bad_shard reject each; every other shard was read): "
              f"{', '.join(report.bad_shards)}")


def finished(staged: "StagingReport | None") -> int:
    """The exit status of a load or import that ran to its end."""
    if staged is not None and staged.partial:
        print(f"Partial: loaded without {len(staged.bad_shards):,} unreadable shards; "
              f"download them again and load again (exit status {PARTIAL_EXIT})")
        return PARTIAL_EXIT
    return 0


def load_command(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.ingest.corpus import locate_corpus
    from crase.ingest.loader import load_corpus
    from crase.ingest.staged_identity import adopt_graph_ids

    files, staged = corpus_files(args, settings)
    with Graph.connect(settings.database) as graph:
        if args.corpus_format in DATASET_FORMATS:
            folder, merged = adopt_graph_ids(graph, files.papers.parent)
            files = locate_corpus(folder)
            print(f"  merged     {merged:,} works the graph holds under other ids "
                  "(same Semantic Scholar id, arXiv id or DOI)")
        report = load_corpus(graph, files, settings, rejects_path=args.rejects,
                             batch_size=args.batch_size, restart=args.restart,
                             show_progress=not args.quiet,
                             dataset_rejects=staged.rejects_path if staged else None)
    print_load_report(report)
    signals = staged_signals(args, files)
    if signals is not None:
        store_signals(signals, settings)
    print(EMBED_HINT)
    return finished(staged)


def fetch_command(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.ingest.provider_papers import (
        ProviderLoadReport,
        add_papers_from_semantic_scholar,
    )
    from crase.ingest.semantic_scholar import SemanticScholarClient

    if not settings.providers.enabled:
        raise SettingsError("external providers are off; set CRASE_PROVIDERS__ENABLED=true "
                            "to let crase call Semantic Scholar")
    graph = Graph.connect(settings.database)

    async def fetch() -> ProviderLoadReport:
        async with SemanticScholarClient(settings.providers) as client:
            return await add_papers_from_semantic_scholar(graph, client, args.ids,
                                                          neighbours=not args.no_neighbours)
    try:
        report = asyncio.run(fetch())
    finally:
        graph.close()
    print(f"Semantic Scholar: {len(report.requested) - len(report.not_found)} of "
          f"{len(report.requested)} papers found")
    print(f"  papers     {report.papers_created:,} new, {report.papers_enriched:,} already in "
          f"the graph (missing properties filled in)")
    print(f"  citations  {report.citations_written:,} merged")
    print(f"  abstracts  {len(report.null_abstracts):,} new papers without one")
    for missing in report.not_found:
        print(f"  not found  {missing}")
    for cut in report.truncated:
        print(f"  truncated  {cut} (the API serves about 10,000 at most)")
    return 0


def import_database(args: argparse.Namespace, settings: Settings) -> int:
    from crase.ingest.bulk import EdgeProperties, import_corpus
    from crase.ingest.s2ag import SIGNAL_COLUMNS
    from crase.models.paper_encoders import paper_encoder

    files, staged = corpus_files(args, settings)
    # Made before the import, so a missing encoder fails before the database is replaced.
    encoder = None if args.no_embed else paper_encoder(settings.models.paper_encoder)
    print(f"Bulk import of {files.name}: the server at {settings.database.home} is stopped, "
          "the database 'neo4j' replaced, and the server started again.")
    signals = staged_signals(args, files)
    report = import_corpus(settings, files, rejects_path=args.rejects,
                           show_progress=not args.quiet, encoder=encoder,
                           edge_properties=EdgeProperties(signals, SIGNAL_COLUMNS)
                           if signals is not None else None,
                           dataset_rejects=staged.rejects_path if staged else None)
    print_import_report(report)
    if report.edge_properties_written:
        print("  signals    isinfluential and intents imported with the citations")
    elif signals is not None:
        store_signals(signals, settings)
    return finished(staged)


def print_load_report(report: "LoadReport") -> None:
    from crase.ingest.loader import notes_path_for

    if report.status == "unchanged":
        print(f"{report.corpus}: unchanged since its last load into {report.target}; nothing "
              "to do (--restart loads it again)")
    else:
        resumed = f", {report.resume_point.describe()}" if report.resume_point else ""
        print(f"Loaded {report.corpus} into {report.target}{resumed}")
        print(counts_line("papers", report.papers, report.papers_per_s))
        print(counts_line("citations", report.citations, report.citations_per_s))
    before, after = report.graph_before, report.graph_after
    print(f"  graph now  {after.get('papers', 0):,} papers, {after.get('citations', 0):,} "
          f"citations (+{after.get('papers', 0) - before.get('papers', 0):,}, "
          f"+{after.get('citations', 0) - before.get('citations', 0):,})")
    print_rejects(report.rejects, report.rejects_path)
    print_repairs(report.repaired, notes_path_for(report.rejects_path))


def print_import_report(report: "ImportReport") -> None:
    from crase.ingest.loader import notes_path_for

    print(f"Imported {report.corpus}")
    print(counts_line("papers", report.papers, report.papers_per_s))
    print(counts_line("citations", report.citations, report.citations_per_s))
    phases = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in report.seconds.items())
    print(f"  phases     {phases}")
    print_rejects(report.rejects, report.rejects_path)
    print_repairs(report.repaired, notes_path_for(report.rejects_path))
    embedded = report.embedded
    if embedded is None:
        print(EMBED_HINT)
    else:
        rate = embedded.papers / embedded.embed_s if embedded.embed_s else 0.0
        print(f"  vectors    {embedded.papers:>11,} papers embedded ({rate:,.0f}/s), "
              f"{embedded.stored:,} stored now")


def counts_line(label: str, counts: "FileCounts", rate: float) -> str:
    speed = f"  {rate:,.0f}/s" if rate else ""
    return (f"  {label:<10} {counts.accepted:>11,} loaded {counts.rejected:>9,} rejected"
            f"{speed}")


def print_repairs(repaired: int, path: Path) -> None:
    if repaired:
        print(f"  repaired   {repaired:,} papers, kept (each repair noted in {path})")


def print_rejects(rejects: dict[str, int], path: Path) -> None:
    total = sum(rejects.values())
    print(f"  rejects    {total:,} in {path}")
    for kind, count in sorted(rejects.items(), key=lambda item: -item[1]):
        print(f"    {kind:<20} {count:,}")


def embed_command(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.ingest.paper_vectors import embed_papers
    from crase.models.paper_encoders import paper_encoder

    first: dict[str, tuple[float, int]] = {}  # per stage: (when, done) of its first count

    def report(stage: str, done: int, total: int) -> None:
        since, done_then = first.setdefault(stage, (time.monotonic(), done))
        seconds = time.monotonic() - since
        rate = f" ({(done - done_then) / seconds:.0f}/s)" if seconds > 0 else ""
        print(f"{stage}: {done}/{total} papers{rate}", flush=True)

    encoder = paper_encoder(settings.models.paper_encoder)
    with Graph.connect(settings.database) as graph:
        embedded = embed_papers(graph, encoder, settings.var_dir,
                                None if args.quiet else report)
    print(f"{embedded.papers} papers embedded with {encoder.name} in {embedded.embed_s:.0f} s, "
          f"{embedded.stored} vectors stored now ({embedded.papers - embedded.stored} already "
          "held one of this encoder).")
    return 0
