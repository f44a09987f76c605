"""`crase evolution`, `crase citation-gaps` and `crase landscape`: the Idea2Prior paper's
literature extensions from the command line; each run is recorded on a Run node."""

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ValidationError

from crase.errors import InvalidRequest
from crase.settings import Settings

# Only what the parsers need is imported above (api/cli.py); the driver and the encoder are
# imported by the functions that run a command.
if TYPE_CHECKING:
    from crase.research.evolution import EvolutionMap

ORDER = 50  # place in `crase --help` (api/cli.py)

M = TypeVar("M", bound=BaseModel)
# The most bytes a draft or reference list named here may have: the largest text the
# requests take (a BibTeX list of 1,000,000 characters) at 4 bytes a character of UTF-8.
MAX_TEXT_FILE_BYTES = 4_000_000


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    evolution = subparsers.add_parser(
        "evolution", help="the citation graph of a topic or a seed paper, grouped by year",
        description="Papers of a topic (or a seed paper) and their citation neighbours as a "
                    "directed graph grouped by year, with key papers and paths; Mermaid or "
                    "JSON. An edge is a citation, not proof of influence.")
    start = evolution.add_mutually_exclusive_group(required=True)
    start.add_argument("topic", nargs="?", help="the topic, in quotes")
    start.add_argument("--seed-paper", dest="seed_paper", metavar="ID",
                       help="start from this paper instead of a topic")
    evolution.add_argument("--limit", type=int, default=15, help="seed papers (default 15)")
    evolution.add_argument("--max-papers", dest="max_papers", type=int, default=150,
                           help="most papers in the map (default 150)")
    evolution.add_argument("--path", nargs=2, action="append", default=[],
                           metavar=("FROM", "TO"), help="a pair of papers to connect")
    evolution.add_argument("--compare", type=Path, metavar="FILE",
                           help="reference list to compare with (CSV, BibTeX or JSON)")
    evolution.add_argument("--format", choices=["summary", "mermaid", "json"],
                           default="summary", help="what to print (default summary)")
    evolution.set_defaults(handler=run_evolution)

    gaps = subparsers.add_parser(
        "citation-gaps", help="papers a draft excerpt plausibly should cite",
        description="For each passage of the draft, corpus papers whose abstract or claims "
                    "fit it, linked to its references, and not cited yet.")
    gaps.add_argument("draft", type=Path, help="a text file with the draft excerpt")
    gaps.add_argument("--bib", type=Path, help="the draft's references as BibTeX")
    gaps.add_argument("--cite", nargs="*", default=[], metavar="ID",
                      help="corpus ids the draft already cites")
    gaps.add_argument("--limit", type=int, default=10, help="suggestions (default 10)")
    gaps.add_argument("--json", action="store_true", help="print the report as JSON")
    gaps.set_defaults(handler=run_citation_gaps)

    landscape = subparsers.add_parser(
        "landscape", help="data sets, metrics and method families named in a topic's papers",
        description="A preliminary exploration: names found in the titles and abstracts of "
                    "the topic's papers, with counts and the papers behind each.")
    landscape.add_argument("topic", help="the topic, in quotes")
    landscape.add_argument("--limit", type=int, default=50, help="papers read (default 50)")
    landscape.add_argument("--top", type=int, default=10, help="names printed per kind")
    landscape.add_argument("--json", action="store_true", help="print the result as JSON")
    landscape.set_defaults(handler=run_landscape)


def build(model: type[M], command: str, **values: object) -> M:
    """The request, checked before any run exists; a bad value ends as InvalidRequest."""
    try:
        return model.model_validate(values)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'request'}: {e['msg']}"
                             for e in err.errors(include_url=False))
        raise InvalidRequest(f"{problems}; see `crase {command} --help`") from err


def read_text(path: Path, what: str) -> str:
    """A draft or reference list named on the command line: a regular file of at most
    MAX_TEXT_FILE_BYTES (crase/user_files.py), in UTF-8."""
    from crase.user_files import read_user_text

    try:
        return read_user_text(path, what, MAX_TEXT_FILE_BYTES)
    except UnicodeDecodeError as err:
        raise InvalidRequest(f"{what} {path} is not UTF-8 text; save it as UTF-8") from err
    except FileNotFoundError as err:
        raise InvalidRequest(f"{what} {path} is not a file; give the path of a text "
                             "file") from err
    except OSError as err:
        raise InvalidRequest(f"{what} {path} cannot be read ({err.strerror}); give the path "
                             "of a text file") from err


def run_evolution(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.models.paper_encoders import paper_encoder
    from crase.reference_lists import read_reference_list
    from crase.research.evolution import EvolutionRequest, map_evolution

    references = (read_reference_list(read_text(args.compare, "--compare"))
                  if args.compare else None)
    request = build(EvolutionRequest, "evolution", topic=args.topic, seed_paper=args.seed_paper,
                    limit=args.limit, max_papers=args.max_papers,
                    paths=[{"source": a, "target": b} for a, b in args.path],
                    reference_list=references)
    with Graph.connect(settings.database) as graph:
        result = map_evolution(
            graph, paper_encoder(settings.models.paper_encoder) if request.topic else None,
            request)
    if args.format == "json":
        print(result.model_dump_json(indent=1))
    elif args.format == "mermaid":
        print(result.mermaid, end="")
    else:
        print_evolution(result)
    return 0


def print_evolution(result: "EvolutionMap") -> None:
    c = result.counts
    years = [g.year for g in result.years if g.year is not None]
    span = f"{min(years)}-{max(years)}" if years else "no years"
    print(f"Run {result.run_id}: {c['papers']} papers ({c['seeds']} seeds), {c['edges']} "
          f"citations, {len(result.years)} year groups ({span})")
    print(f"Note: {result.note}")
    print(f"Key papers ({result.key_rule}):")
    for key in result.key_papers:
        print(f"  [{key.id}] {key.title} ({key.year}): cited by {key.citations_in_map} "
              "papers of the map")
    for path in result.paths:
        chain = " -> ".join(f"{p} ({y})" for p, y in zip(path.papers, path.years, strict=True))
        print(f"Path {path.source} to {path.target}: {path.kind}"
              + (f": {chain}" if chain else ""))
        for note in path.notes:
            print(f"  {note}")
    comparison = result.comparison
    if comparison is not None:
        print(f"Reference list: {comparison.reference_count} papers; in the map "
              f"{len(comparison.in_map)}, in the corpus but not the map "
              f"{len(comparison.in_corpus_not_in_map)}, not in the corpus "
              f"{len(comparison.not_in_corpus)}; coverage {comparison.coverage:.3f}, map "
              f"share {comparison.map_share:.3f}, Jaccard {comparison.jaccard:.3f}")
        for missing in comparison.in_corpus_not_in_map + comparison.not_in_corpus:
            print(f"  missing: {missing.reference.title or missing.reference.id}"
                  + (f" [{missing.paper_id}]" if missing.paper_id else " (not in the corpus)"))
    print("Mermaid: rerun with --format mermaid; everything: --format json")


def run_citation_gaps(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.models.paper_encoders import paper_encoder
    from crase.research.citation_gaps import GapRequest, find_citation_gaps

    draft = read_text(args.draft, "the draft")
    bibtex = read_text(args.bib, "--bib") if args.bib else None
    request = build(GapRequest, "citation-gaps", draft=draft, bibtex=bibtex,
                    cited_ids=args.cite, limit=args.limit)
    with Graph.connect(settings.database) as graph:
        report = find_citation_gaps(graph, paper_encoder(settings.models.paper_encoder), request,
                                    settings.models)
    if args.json:
        print(report.model_dump_json(indent=1))
        return 0
    c = report.counts
    print(f"Run {report.run_id}: {c['passages']} passages, {c['references_resolved']} of "
          f"{c['references']} references found in the corpus, {c['candidates']} candidates, "
          f"{c['suggestions']} suggestions")
    print(f"Assessment: {report.assessment}")
    for ref in report.references:
        if ref.paper_id is None:
            print(f"  reference not in the corpus: {ref.reference.key}: {ref.reference.title}")
    for s in report.suggestions:
        print(f"{s.rank}. [{s.paper_id}] {s.title} ({s.year}) score {s.score:.3f}, "
              f"passage {s.passage}")
        print(f"   {s.why}")
    return 0


def run_landscape(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.models.paper_encoders import paper_encoder
    from crase.research.landscape import LandscapeRequest, map_landscape

    request = build(LandscapeRequest, "landscape", topic=args.topic, limit=args.limit)
    with Graph.connect(settings.database) as graph:
        result = map_landscape(graph, paper_encoder(settings.models.paper_encoder), request,
                               settings.models)
    if args.json:
        print(result.model_dump_json(indent=1))
        return 0
    print(f"Run {result.run_id}: {result.counts['candidates']} papers read; extraction: "
          f"{result.extraction}")
    print(result.label)
    for kind in ("datasets", "metrics", "method_families"):
        entries = getattr(result, kind)
        print(f"{kind.replace('_', ' ').capitalize()} ({len(entries)} names):")
        for entry in entries[:args.top]:
            shown = ", ".join(entry.paper_ids[:5]) + (", ..." if entry.papers > 5 else "")
            papers = "paper" if entry.papers == 1 else "papers"
            print(f"  {entry.name}: {entry.papers} {papers} ({shown})")
    return 0
