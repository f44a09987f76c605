"""The `crase` command line. Each command group lives in `api/commands/<group>.py` and
exposes `add_commands(subparsers)`; a command is a function of (args, settings) -> exit code.
Every module of `crase.api.commands` is read, so a new group needs no list edited; a module's
`ORDER` (default 50) places its commands in `crase --help`.

Every command module is imported to build the parser, even for `crase --help`, so a command
module imports at its top only what its parser needs: argparse, crase.settings (flags and
their help come from the settings models), crase.errors and the request models. What a
command runs on (crase.graph and the driver, numpy, the encoders, the pipelines, the web
app) is imported inside the function that runs it, with `if TYPE_CHECKING:` for the names
its annotations use. tests/api/test_cli_imports.py fails when `--help` imports any of them.
Settings themselves are read from the environment only once a command runs.

Whatever goes wrong on purpose (a CraseError, a bad flag, a bad setting) ends in one line on
stderr, `crase: <what is wrong>; <what to do>`, and exit code 2.
"""

import argparse
import difflib
import importlib
import pkgutil
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

from pydantic import ValidationError

from crase.api import commands
from crase.errors import CraseError, InvalidRequest, SettingsError
from crase.settings import Settings
from crase.validation_messages import Loc, describe_invalid

ENV_PREFIX = "CRASE_"


class CraseArgumentParser(argparse.ArgumentParser):
    """argparse that raises a bad flag as InvalidRequest, so that it ends in main's one
    line and not in a usage block and SystemExit; subparsers are of this class too.

    An unknown flag is reported by the command it was given to (`crase search tachyon
    --k 5` names `crase search`, its usage and the flag meant), not by `crase` itself."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The innermost command's default wins (a subcommand's defaults are set last), so
        # after parsing this names the parser of the command that was run.
        self.set_defaults(command_parser=self)

    def error(self, message: str) -> NoReturn:
        raise InvalidRequest(f"{message}; see `{self.prog} --help`")

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            parser: CraseArgumentParser = getattr(parsed, "command_parser", self)
            parser.error(parser.unrecognized(extras))
        return parsed

    def unrecognized(self, extras: Sequence[str]) -> str:
        """What was not understood, the flag probably meant, and the command's usage."""
        message = f"unrecognized arguments: {' '.join(extras)}"
        known = [flag for action in self._actions for flag in action.option_strings]
        for extra in extras:
            if extra.startswith("-"):
                close = difflib.get_close_matches(extra.split("=")[0], known, n=1, cutoff=0.6)
                if close:
                    message += f" (did you mean {close[0]}?)"
                    break
        return f"{message}; {self.prog} takes {self.short_usage()}"

    def short_usage(self) -> str:
        positionals = [action.metavar or action.dest for action in self._actions
                       if not action.option_strings and action.dest != "command_parser"]
        return " ".join([*map(str, positionals), "[options]"])


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


def show_deprecation(message: Warning | str, category: type[Warning], filename: str,
                     lineno: int, file: Any = None, line: str | None = None) -> None:
    """A renamed setting or command, said in one line (not Python's two with a source
    line): the old name still works until the next release."""
    print(f"crase: deprecated: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    warnings.showwarning = show_deprecation
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
