"""`crase grow`: the graph grown from papers you know, through OpenAlex
(crase.ingest.openalex_grow), then embedded so that a search runs on it at once."""

import argparse
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from crase.api.commands.search import whole_number
from crase.errors import InvalidRequest, ProviderNotEnabled
from crase.settings import Settings

# Only what the parser needs is imported above (api/cli.py); the grow itself (the driver,
# the HTTP client, the encoder) is imported by the function that runs it.
if TYPE_CHECKING:
    from crase.graph import Graph
    from crase.ingest.openalex_api import OpenAlexCalls
    from crase.ingest.openalex_grow import GrowReport, WorkAsk
    from crase.reference_lists import ReferenceEntry

ORDER = 32  # place in `crase --help` (api/cli.py), after load and fetch
MAX_DEPTH = 3  # each level multiplies the works named; past 3 a field is the whole index
MAX_PAPERS = 200_000
# An OpenAlex work id as a person types it (anchored, no nested repetition: linear time).
OPENALEX_WORK = re.compile(r"(?:https?://openalex\.org/)?[Ww]\d{1,12}")
SHOWN = 10  # unknown entries and ids named one a line


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    grow = subparsers.add_parser(
        "grow", help="grow the graph from papers you know, through OpenAlex",
        description="Fetch the given papers' OpenAlex works and the works they cite (and,\n"
                    "with --citers, the works citing them), level by level to --depth and\n"
                    "--max-papers; store them as `crase load` does, merged with papers the\n"
                    "graph already holds (same DOI, arXiv id or OpenAlex id); draw their\n"
                    "citations; embed the new papers. Every reply is cached under\n"
                    "var/openalex/: rerun the same command after an interruption to resume\n"
                    "without asking again. Needs CRASE_PROVIDERS__ENABLED=true and, for real\n"
                    "work, CRASE_PROVIDERS__OPENALEX_API_KEY (docs/ingest.md).",
        epilog="examples:\n"
               "  crase grow --from-file my-library.bib --citers --max-papers 5000\n"
               "  crase grow --from 10.1103/PhysRevLett.75.4724 --from hep-th/9711200",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    grow.add_argument("--from", dest="given_papers", action="append", default=[], metavar="PAPER",
                      help="a paper to grow from: an OpenAlex id (W…), DOI, arXiv id, graph "
                           "id or title; repeat for more")
    grow.add_argument("--from-file", dest="given_paper_files", action="append", default=[],
                      type=Path, metavar="PATH",
                      help="papers to grow from, read from a reference manager's export "
                           "(.bib or .ris); repeatable")
    grow.add_argument("--citers", action="store_true",
                      help="also fetch the works citing each level's works")
    grow.add_argument("--depth", type=whole_number(0, MAX_DEPTH), default=1,
                      help=f"levels of references (and citers) from the given papers "
                           f"(0 to {MAX_DEPTH}, default 1)")
    grow.add_argument("--max-papers", type=whole_number(1, MAX_PAPERS), default=5_000,
                      help="most works fetched in all, the given ones included (default 5000)")
    grow.add_argument("--no-embed", action="store_true",
                      help="leave the new papers without vectors (`crase embed` later)")
    grow.set_defaults(handler=grow_command)


def grow_command(args: argparse.Namespace, settings: Settings) -> int:
    from crase.api.commands.search import given_entries
    from crase.graph import Graph
    from crase.ingest.openalex_api import OpenAlexClient
    from crase.ingest.openalex_grow import GrowLimits, grow_from_openalex
    from crase.progress import CountProgress
    from crase.search.reference_resolution import TITLE_MATCH

    if not settings.providers.enabled:
        raise ProviderNotEnabled("external providers are off; set CRASE_PROVIDERS__ENABLED="
                                 "true to let crase call OpenAlex")
    entries = given_entries(args)
    if not entries:
        raise InvalidRequest("name the papers to grow from: --from PAPER or --from-file "
                             "PATH (.bib, .ris)")
    # A bar on a terminal only: in a pipe or a log the summary says it all.
    progress = CountProgress().update if sys.stderr.isatty() else None
    limits = GrowLimits(args.depth, args.citers, args.max_papers, TITLE_MATCH)
    started = time.perf_counter()
    with Graph.connect(settings.database) as graph:
        asks = work_asks(graph, entries)
        with OpenAlexClient(settings.providers, settings.providers.openalex_dir) as client:
            report = grow_from_openalex(graph, client, asks, limits, progress)
            print_grow_report(report, client.spent, client.budget.left_usd(), args.max_papers,
                              time.perf_counter() - started)
        if not args.no_embed and report.new_ids:
            embed_new(graph, settings)
    return 0


def work_asks(graph: "Graph", entries: list["ReferenceEntry"]) -> list["WorkAsk"]:
    """What each entry is looked for by in OpenAlex: an OpenAlex id as typed; its DOI,
    arXiv id and title; and for an entry that names a graph paper by its id (found as a
    search from papers finds it), the graph paper's DOI, arXiv id and title. Only a graph
    id lends them: an entry matched by title would ask otherwise once a grow had stored
    its paper, and a resumed grow must send the requests the first one sent."""
    from crase.ingest.openalex import short_id
    from crase.ingest.openalex_grow import WorkAsk
    from crase.search.given_papers import resolve_given
    from crase.search.request import MAX_GIVEN_PAPERS

    known: dict[str, str] = {}
    for start in range(0, len(entries), MAX_GIVEN_PAPERS):
        found = resolve_given(graph, entries[start:start + MAX_GIVEN_PAPERS]).found
        known.update({paper.entry: paper.id for paper in found if paper.matched_by == "id"})
    rows = {row["id"]: row for row in graph.read("read_papers", ids=list(set(known.values())))}
    asks = []
    for entry in entries:
        reference = entry.reference
        row = rows.get(known.get(entry.label, ""), {})
        typed = entry.label if OPENALEX_WORK.fullmatch(entry.label) else None
        asks.append(WorkAsk(
            label=entry.label, openalex_id=short_id(typed) if typed else None,
            doi=row.get("doi") or (reference.doi if reference else None),
            arxiv_id=row.get("arxiv_id") or (reference.arxiv_id if reference else None),
            # A typed graph id reads as a title too; the paper's own title is the one.
            title=row.get("title") or (reference.title if reference else None)))
    return asks


def print_grow_report(report: "GrowReport", spent: "OpenAlexCalls", left_usd: float,
                      max_papers: int, seconds: float) -> None:
    given = len(report.given) + len(report.unknown)
    print(f"Grown from OpenAlex in {seconds:.1f} s: {len(report.given)} of {given} given "
          "papers found")
    print(f"  papers     {report.papers_fetched:,} fetched: {report.papers_created:,} new, "
          f"{report.papers_merged:,} already in the graph (merged by id, DOI or arXiv id)")
    print(f"  citations  +{report.edges_after - report.edges_before:,} (graph now "
          f"{report.papers_after:,} papers, {report.edges_after:,} citations)")
    if report.no_abstract:
        print(f"  abstracts  {report.no_abstract:,} new papers without one (OpenAlex has none)")
    print(f"  rejected   {report.rejected_count:,}")
    for reason, works in sorted(report.rejected.items(), key=lambda item: -len(item[1])):
        print(f"    {reason:<18} {len(works):,}  e.g. {'; '.join(works[:2])}")
    if report.outside_cap:
        print(f"  cap        {report.outside_cap:,} works named but past --max-papers "
              f"{max_papers:,}, not fetched")
    if report.not_found:
        print(f"  not found  {len(report.not_found):,} works OpenAlex does not have: "
              f"{', '.join(report.not_found[:SHOWN])}")
    calls = spent.by_kind
    print(f"  calls      {calls['list']:,} list, {calls['singleton']:,} singleton, "
          f"{calls['search']:,} search; {spent.cached:,} read from the cache; "
          f"{spent.tries:,} HTTP requests; ${spent.cost_usd:.4f} "
          f"(left today: ${left_usd:.4f})")
    for label in report.unknown:
        print(f"crase: not in OpenAlex (looked for by id, DOI, arXiv id and title): {label}",
              file=sys.stderr)


def embed_new(graph: "Graph", settings: Settings) -> None:
    from crase.ingest.paper_vectors import embed_papers
    from crase.models.paper_encoders import paper_encoder

    encoder = paper_encoder(settings.models.paper_encoder)
    embedded = embed_papers(graph, encoder, settings.var_dir)
    print(f"  vectors    {embedded.stored:,} stored, {encoder.name}, embedding "
          f"{embedded.embed_s:.1f} s (the graph's {embedded.papers:,} papers each hold one)")
