"""`crase runs`, `crase show` and `crase export`: find a run again, see it, export it.

Every run is recorded on its Run node (crase/run_lifecycle.py), so a search or an idea run
from last week, from the command line or the API, reads back as it was printed then: `crase
show` rebuilds the run's result from the graph and hands it to the printer of `crase
search` or `crase idea`.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crase.api.commands.search import short_authors, whole_number
from crase.api.exports import ExportFormat
from crase.errors import InvalidRequest, RunNotFound
from crase.paper_links import paper_links
from crase.scoring.tex import tex_to_unicode
from crase.settings import RunSettings, Settings

# Only what the parsers need is imported above (api/cli.py); reading a run (the driver, the
# run views) is imported by the function that does it.
if TYPE_CHECKING:
    from crase.graph import Graph
    from crase.idea.pipeline import IdeaResult
    from crase.search.pipeline import SearchResult

ORDER = 30  # place in `crase --help` (api/cli.py): after search, before idea
PAGE_SIZE = 20
FIND_THEM = "list the runs with `crase runs`"


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    runs = subparsers.add_parser(
        "runs", help="list the recorded runs, newest first",
        description="Every search and idea run recorded in the graph, newest first, "
                    f"{PAGE_SIZE} to a page.")
    runs.add_argument("--kind", metavar="KIND",
                      help="only runs of this kind: search, idea, or a research tool's kind "
                           "(evolution, code_extract, validation_export, ...)")
    runs.add_argument("--page", type=whole_number(1, None), default=1,
                      help="which page (default 1: the newest)")
    runs.set_defaults(handler=show_runs)
    add_retention_commands(runs.add_subparsers(dest="runs_action", metavar="ACTION"))

    show = subparsers.add_parser(
        "show", help="show a recorded run as `crase search` or `crase idea` printed it",
        description="A finished search: its ranked table with each paper's evidence; an "
                    "idea run: its five works with their reasons; then each paper's "
                    "authors, venue and links.")
    show.add_argument("run_id", help="the run id (see `crase runs`)")
    show.add_argument("--json", action="store_true",
                      help="print the whole run as JSON (as GET /runs/{id} answers)")
    show.add_argument("--prior", action="store_true",
                      help="a search's prior works instead: the papers of its evidence graph "
                           "its returned papers cite most")
    show.add_argument("--derivative", action="store_true",
                      help="a search's derivative works instead: the papers of its evidence "
                           "graph that cite most of its returned papers")
    show.set_defaults(handler=show_run)

    export = subparsers.add_parser(
        "export", help="export a finished run's papers as BibTeX, RIS, CSV or JSON",
        description="The run's papers with rank, score and links, for a reference manager "
                    "(BibTeX, RIS), a spreadsheet (CSV) or a program (JSON).")
    export.add_argument("run_id", help="the run id (see `crase runs`)")
    export.add_argument("--format", choices=[f.value for f in ExportFormat],
                        default=ExportFormat.BIBTEX.value, help="default bibtex")
    export.add_argument("--related", action="store_true",
                        help="a search's prior and derivative works too, after its results, "
                             "tagged by list (JSON always has them)")
    export.add_argument("--out", type=Path, help="write to this file instead of stdout")
    export.set_defaults(handler=export_results)


def add_retention_commands(actions: argparse._SubParsersAction) -> None:
    keep = RunSettings.model_fields
    prune = actions.add_parser(
        "prune", help="delete old finished runs (never a starred or exported one)",
        description="Delete the finished runs past both retention rules: older than the "
                    "newest CRASE_RUNS__KEEP_RUNS finished runs (default "
                    f"{keep['keep_runs'].default}), and started CRASE_RUNS__KEEP_DAYS days "
                    f"ago or earlier (default {keep['keep_days'].default:g}). A starred or "
                    "exported run, and a run still queued or running, is never deleted; "
                    "the papers stay. Prints what it frees.")
    prune.add_argument("--dry-run", action="store_true",
                       help="only count what would be pruned")
    prune.set_defaults(handler=prune_command)
    for name, starred in (("star", True), ("unstar", False)):
        star = actions.add_parser(
            name, help="keep a run for good (never pruned)" if starred
            else "let `crase runs prune` delete a run again")
        star.add_argument("run_id", help="the run id (see `crase runs`)")
        star.set_defaults(handler=star_command, starred=starred)


def prune_command(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.run_retention import prune_runs

    with Graph.connect(settings.database) as graph:
        report = prune_runs(graph, settings.runs, dry_run=args.dry_run)
    print(f"{report.describe()}; kept: the newest {settings.runs.keep_runs:,} finished runs, "
          f"every run of the last {settings.runs.keep_days:g} days, starred and exported runs")
    return 0


def star_command(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.run_retention import star_run

    with Graph.connect(settings.database) as graph:
        try:
            star_run(graph, args.run_id, args.starred)
        except RunNotFound as err:
            raise RunNotFound(f"{err}; {FIND_THEM}") from err
    print(f"run {args.run_id} {'starred: never pruned' if args.starred else 'unstarred'}")
    return 0


# crase runs -----------------------------------------------------------------------------
def show_runs(args: argparse.Namespace, settings: Settings) -> int:
    from crase.api.run_views import list_runs
    from crase.graph import Graph

    with Graph.connect(settings.database) as graph:
        page = list_runs(graph, offset=(args.page - 1) * PAGE_SIZE, limit=PAGE_SIZE,
                         kind=args.kind)
    print_runs(page, args.page)
    return 0


def print_runs(page: dict[str, Any], number: int) -> None:
    runs, total, offset = page["runs"], page["total"], page["offset"]
    if not runs:
        print(f"No runs on page {number} ({total} in all)." if total else
              "No runs yet: start one with `crase search \"...\"` or `crase idea \"...\"`.")
        return
    print(f"Runs {offset + 1}-{offset + len(runs)} of {total}, newest first")
    print(f"{'started':<19}  {'id':<12}  {'kind':<6}  {'status':<9}  {'papers':>6}  query")
    for run in runs:
        started = (run["started"] or "")[:19].replace("T", " ")
        print(f"{started:<19}  {run['id']:<12}  {run['kind']:<6}  {run['status']:<9}  "
              f"{run['results']:>6}  {one_line(run['query'] or '', 70)}")
    if offset + len(runs) < total:
        print(f"More: crase runs --page {number + 1}")


def one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


# crase show -----------------------------------------------------------------------------
def show_run(args: argparse.Namespace, settings: Settings) -> int:
    from crase.api.run_views import describe_run
    from crase.graph import Graph

    graph = Graph.connect(settings.database)
    try:
        view = describe_run(graph, args.run_id, None)
        if args.json:
            print(json.dumps(view, indent=2, default=str, ensure_ascii=False))
            return 0
        if args.prior or args.derivative:
            print_related(view, args.prior, args.derivative)
            return 0 if view["status"] == "done" else 1
        print_run(graph, view, settings)
    except RunNotFound as err:
        raise RunNotFound(f"{err}; {FIND_THEM}") from err
    finally:
        graph.close()
    return 0 if view["status"] == "done" else 1


def print_run(graph: "Graph", view: dict[str, Any], settings: Settings) -> None:
    """The run as its own command printed it, then the papers' authors, venues and links."""
    from crase.api.commands.idea import print_result as print_idea
    from crase.api.commands.search import print_result as print_search
    from crase.api.commands.search import read_details

    if view["kind"] == "idea" and (idea := idea_result(graph, view)) is not None:
        print_idea(idea, settings)
        print_papers(idea.audit["final_ranking"])
        return
    if view["kind"] == "search" and view["status"] == "done":
        result = search_result(view)
        print_search(result, settings, read_details(graph, result),
                     [paper["id"] for paper in view["given_papers"]])
        print_papers(view["results"])
        return
    detail = f": {view['error']}" if view["error"] else ""
    print(f"Run {view['id']} ({view['kind']}) is {view['status']}{detail}")
    print(f"Query: {view['query']}")


RELATED_LISTS = (("prior_works", "Prior works: the papers of the evidence graph its returned "
                                  "papers cite most"),
                 ("derivative_works", "Derivative works: the papers of the evidence graph that "
                                      "cite most of its returned papers"))


def print_related(view: dict[str, Any], prior: bool, derivative: bool) -> None:
    """The run's prior and/or derivative works: count, year, first author, title, link, and
    why on a line of its own."""
    if view["kind"] != "search" or not view["results"]:
        print(f"Run {view['id']} ({view['kind']}, {view['status']}) has no evidence graph "
              "to draw prior or derivative works from")
        return
    for name, heading in RELATED_LISTS:
        if not (prior if name == "prior_works" else derivative):
            continue
        print(f"{heading} (run {view['id']})")
        if not view[name]:
            print("  none: no paper is tied to two or more of the returned papers")
        for work in view[name]:
            first = short_authors(work["authors"])
            link = next(iter(work["links"].values()), "")
            print(f"{work['count']:>4}/{work['of']:<4} {work['year'] or '':>4}  {first:<24}  "
                  f"{one_line(tex_to_unicode(work['title'] or work['id']), 70)}  {link}")
            print(f"{'':>10}{work['why']}")


def print_papers(papers: list[dict[str, Any]]) -> None:
    if not papers:
        return
    print("Papers:")
    for paper in papers:
        # A terminal shows TeX as it is written: print names and venues in Unicode.
        where = tex_to_unicode(paper.get("venue") or paper.get("journal_ref") or "")
        authors = "; ".join(tex_to_unicode(name) for name in paper.get("authors") or []) or (
            "authors unknown")
        print(f"{paper['rank']:>4}  {authors}" + (f"; {where}" if where else ""))
        links = paper.get("links") or paper_links(paper)
        if links:
            print(f"{'':>6}" + "  ".join(links.values()))


def search_result(view: dict[str, Any]) -> "SearchResult":
    """The SearchResult a search returned, rebuilt from its record: what its printer needs."""
    from crase.search.pipeline import RankedPaper, SearchResult
    from crase.search.seeds import Seed

    seeds = [Seed(row["paper_id"], row["sub_query_index"], row["sub_query"] or "",
                  row["relevance_rank"], row["recency_rank"], row["weight"] or 1.0)
             for row in view["seeds"]]
    results = [RankedPaper(row["rank"], row["id"], row["score"] or 0.0, row["title"] or "",
                           row["year"], row["authors"], paper_evidence(row["evidence"]))
               for row in view["results"]]
    return SearchResult(view["id"], view["query"] or "", view["plan"], seeds, view["counts"],
                        view["timings"], view["backends"], view["usage"], results)


def paper_evidence(data: dict[str, Any] | None) -> Any:
    """A PaperEvidence from its stored JSON (fields a later version added take defaults)."""
    from dataclasses import fields

    from crase.search.evidence import EdgeEvidence, PaperEvidence

    data = data or {"seed": False, "reached_from": None}
    known = {f.name for f in fields(PaperEvidence)}
    # The view adds what each edge was (`edge`), which the printer does not take.
    edge_fields = {f.name for f in fields(EdgeEvidence)}
    edges = {name: [EdgeEvidence(**{k: v for k, v in edge.items() if k in edge_fields})
                    for edge in data.get(name) or []]
             for name in ("path", "strongest_edges")}
    return PaperEvidence(**{**{k: v for k, v in data.items() if k in known}, **edges})


def idea_result(graph: "Graph", view: dict[str, Any]) -> "IdeaResult | None":
    """The IdeaResult an idea run returned, rebuilt from its stored audit; None while the
    run has stored none (still running, or it failed before its record stage)."""
    from crase.idea.pipeline import IdeaPaperResult, IdeaResult

    rows = graph.read("read_idea_run_audit", id=view["id"])
    if not rows or rows[0]["audit"] is None:
        return None
    audit: dict[str, Any] = json.loads(rows[0]["audit"])
    return IdeaResult(
        run_id=view["id"], status=view["status"], outcome=audit["outcome"],
        mode=audit["mode"], idea=audit["idea"],
        papers=[IdeaPaperResult(**paper) for paper in audit["final_ranking"]],
        ranking=audit["expert"] or {}, incomplete=audit["incomplete"],
        counts=audit["counts"], timings=audit["timings"], backends=audit["backends"],
        providers=audit["providers"], usage=audit["usage"], report=audit["report"],
        audit_path=rows[0]["audit_path"], browser_query=audit["graph"]["browser_query"],
        audit=audit)


# crase export ---------------------------------------------------------------------------
def export_results(args: argparse.Namespace, settings: Settings) -> int:
    from crase.api.exports import export_run
    from crase.graph import Graph

    if args.out is not None and not args.out.parent.is_dir():
        raise InvalidRequest(f"--out {args.out}: its folder does not exist; create it or give "
                          "a file in a folder that does")
    graph = Graph.connect(settings.database)
    try:
        export = export_run(graph, args.run_id, None, ExportFormat(args.format), args.related)
    except RunNotFound as err:
        raise RunNotFound(f"{err}; {FIND_THEM}") from err
    finally:
        graph.close()
    if args.out is None:
        sys.stdout.write(export.body)
        return 0
    args.out.write_text(export.body, encoding="utf-8")
    print(f"wrote {args.out} ({args.format})", file=sys.stderr)
    return 0
