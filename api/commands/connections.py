"""`crase connect A B`: how two papers are connected, as the connector page shows it (the
shortest citation paths between them, citations followed either way)."""

import argparse
import json

from crase.api.citation_paths import MAX_STEPS, connect_papers, describe_path
from crase.api.commands.search import whole_number
from crase.settings import Settings

ORDER = 45  # place in `crase --help` (api/cli.py): after the run commands


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    connect = subparsers.add_parser(
        "connect", help="how two papers are connected: the shortest citation paths",
        description="The shortest citation paths between two papers in the graph, "
                    "citations followed either way; each step says who cites whom. Name a "
                    "paper by its id, arXiv id or DOI.")
    connect.add_argument("source", help="the first paper")
    connect.add_argument("target", help="the second paper")
    connect.add_argument("--max-steps", dest="max_steps", type=whole_number(1, MAX_STEPS),
                         default=4, help=f"longest path looked for (default 4, at most "
                                         f"{MAX_STEPS})")
    connect.add_argument("--json", action="store_true",
                         help="print the paths as JSON (as GET /connections answers)")
    connect.set_defaults(handler=connect_two_papers)


def connect_two_papers(args: argparse.Namespace, settings: Settings) -> int:
    """0 when a path was found, 1 when none of at most --max-steps steps joins them."""
    from crase.graph import Graph

    with Graph.connect(settings.database) as graph:
        found = connect_papers(graph, args.source, args.target, args.max_steps,
                               timeout_s=settings.api.connector_timeout_s)
    if args.json:
        print(json.dumps(found, indent=2, ensure_ascii=False))
        return 0 if found["paths"] else 1
    if not found["paths"]:
        print(f"No citation path of at most {args.max_steps} steps joins {found['source']} "
              f"and {found['target']}.")
        return 1
    count, length = len(found["paths"]), found["length"]
    print(f"{count} shortest path{'s' if count != 1 else ''} of {length} "
          f"step{'s' if length != 1 else ''} from {found['source']} to {found['target']}:")
    for number, path in enumerate(found["paths"], start=1):
        print(f"{number:>3}. " + " -> ".join(path["papers"]))
        for line in describe_path(path, found["papers"]):
            print(f"       {line}")
    return 0
