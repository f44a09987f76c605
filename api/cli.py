"""The `crase` command line. Each command group lives in `api/commands/<group>.py` and
exposes `add_commands(subparsers)`; a command is a function of (args, settings) -> exit code.
Every module of `crase.api.commands` is read, so a new group needs no list edited; a module's
`ORDER` (default 50) places its commands in `crase --help`.

Whatever goes wrong on purpose (a CraseError, a bad flag, a bad setting) ends in one line on
stderr, `crase: <what is wrong>; <what to do>`, and exit code 2.
"""

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from pydantic import ValidationError

from crase.api import commands
from crase.errors import CraseError, InvalidRequest, SettingsError
from crase.search.request import Loc, describe_invalid
from crase.settings import Settings

ENV_PREFIX = "CRASE_"


class CraseArgumentParser(argparse.ArgumentParser):
    """argparse that raises a bad flag as InvalidRequest, so that it ends in main's one
    line and not in a usage block and SystemExit; subparsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        raise InvalidRequest(f"{message}; see `{self.prog} --help`")


def command_groups() -> list[ModuleType]:
    modules = [importlib.import_module(f"{commands.__name__}.{info.name}")
               for info in pkgutil.iter_modules(commands.__path__)]
    return sorted(modules, key=lambda module: (getattr(module, "ORDER", 50), module.__name__))


def build_parser() -> argparse.ArgumentParser:
    parser = CraseArgumentParser(
        prog="crase",
        description="Crase: evidence-graph scholarly search and idea-to-prior-work over Neo4j.",
        epilog="Settings come from CRASE_* environment variables and .env (see .env.example).",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in command_groups():
        group.add_commands(subparsers)
    return parser


def env_name(loc: Loc) -> str:
    return ENV_PREFIX + "__".join(str(part) for part in loc).upper()


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as err:
        raise SettingsError(describe_invalid(
            err, Settings, env_name, "fix it in the environment or .env")) from err


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.handler(args, load_settings()))
    except CraseError as err:
        # One line whatever the message holds (a database's reply may span several).
        print(f"crase: {type(err).__name__}: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("crase: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
