"""`crase db start|stop|status|logs|init|migrate|import`: the self-managed Neo4j server, its schema,
and the bulk import of a corpus into a new database."""

import argparse
from typing import TYPE_CHECKING

from crase.api.commands.ingest import add_corpus_arguments, import_database
from crase.settings import Settings

if TYPE_CHECKING:
    from crase.database import Neo4jServer

ORDER = 10  # place in `crase --help` (api/cli.py)


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    db = subparsers.add_parser("db", help="run and prepare the Neo4j + GDS server")
    actions = db.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("start", help="start the server (once) and wait for Bolt").set_defaults(
        handler=start_server)
    actions.add_parser("stop", help="stop the server this project started").set_defaults(
        handler=stop_server)
    actions.add_parser("status", help="is it running, where, and where are the logs").set_defaults(
        handler=show_status)
    logs = actions.add_parser("logs", help="print the end of the server log")
    logs.add_argument("-n", "--lines", type=int, default=40, help="lines to print (default 40)")
    logs.set_defaults(handler=show_logs)
    actions.add_parser("init", help="apply the schema (idempotent)").set_defaults(
        handler=init_schema)
    actions.add_parser(
        "migrate", help="bring the graph to the current identity rules (idempotent)",
        description="Rewrite stored arXiv ids without version or prefix, give papers keyed "
                    "by an arXiv DOI their arXiv id as graph id, and merge the two nodes of a "
                    "work known by both into one (docs/database.md).").set_defaults(
        handler=migrate_graph)
    bulk = actions.add_parser(
        "import", help="bulk-import a corpus with neo4j-admin (replaces the database)",
        description="For new databases of 100K+ papers: validate, write CSV, stop the server, "
                    "`neo4j-admin database import full`, start it, apply the schema, then embed "
                    "every paper and store its vector as `crase embed` does (the encoder "
                    "CRASE_MODELS__PAPER_ENCODER chooses), so the corpus is searchable with "
                    "embeddings in one command.")
    add_corpus_arguments(bulk)
    bulk.add_argument("--no-embed", action="store_true",
                      help="import only; `crase embed` stores the paper vectors later")
    bulk.set_defaults(handler=import_database)


def server_of(settings: Settings) -> "Neo4jServer":
    # Imported here, as the driver it brings: `crase db --help` needs neither (api/cli.py).
    from crase.database import Neo4jServer

    return Neo4jServer(settings.database)


def start_server(args: argparse.Namespace, settings: Settings) -> int:
    server = server_of(settings)
    was_running = server.status().running
    status = server.start()
    verb = "already running" if was_running else "started"
    print(f"Neo4j {verb} (pid {status.pid})")
    print(f"  Bolt:    {status.bolt_uri}  user {settings.database.user}, "
          f"password in {server.password_file}")
    print(f"  Browser: {status.browser_url}")
    print(f"  Logs:    {status.log_dir}")
    return 0


def stop_server(args: argparse.Namespace, settings: Settings) -> int:
    stopped = server_of(settings).stop()
    print("Neo4j stopped" if stopped else "no server started by this project is running")
    return 0


def show_status(args: argparse.Namespace, settings: Settings) -> int:
    status = server_of(settings).status()
    state = f"running (pid {status.pid})" if status.running else "not running"
    print(f"Neo4j {state}\n  Bolt: {status.bolt_uri}\n  Browser: {status.browser_url}\n"
          f"  Logs: {status.log_dir}")
    return 0 if status.running else 1


def show_logs(args: argparse.Namespace, settings: Settings) -> int:
    server = server_of(settings)
    for path in (server.console_log, server.log_dir / "neo4j.log"):
        if path.exists():
            lines = path.read_text(errors="replace").splitlines()[-args.lines:]
            print(f"==> {path} <==\n" + "\n".join(lines))
    return 0


def init_schema(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph

    with Graph.connect(settings.database) as graph:
        applied = graph.apply_schema()
    print(f"schema applied: {len(applied)} statements")
    return 0


def migrate_graph(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.identity_migration import migrate_paper_identities

    with Graph.connect(settings.database) as graph:
        report = migrate_paper_identities(graph)
    print(f"identity migration: {report.summary()}")
    return 0
