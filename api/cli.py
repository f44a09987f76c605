"""The `crase` command line. Each command group lives in `api/commands/<group>.py` and
exposes `add_commands(subparsers)`; a command is a function of (args, settings) -> exit code.
"""

import argparse
import sys
from collections.abc import Sequence

from crase.api.commands import bench, database, idea, ingest, search, serve
from crase.errors import CraseError
from crase.settings import Settings

COMMAND_GROUPS = [database, search, ingest, serve, idea, bench]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crase",
        description="Crase: evidence-graph scholarly search and idea-to-prior-work over Neo4j.",
        epilog="Settings come from CRASE_* environment variables and .env (see .env.example).",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.add_commands(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args, Settings()))
    except CraseError as err:
        print(f"crase: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("crase: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
