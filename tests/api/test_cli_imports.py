"""`crase --help` and a command's own `--help` import only what the parsers need (api/cli.py):
not the web framework, the database driver, numpy, or a model or PDF runtime. Each case
runs in a fresh interpreter, since this test session has imported all of them already."""

import json
import subprocess
import sys

import pytest

# Top-level packages a parser never needs; a command imports them when it runs.
FORBIDDEN = ("litestar", "uvicorn", "neo4j", "numpy", "pandas", "pyarrow", "onnxruntime",
             "onnx", "llama_cpp", "pymupdf", "fitz", "tokenizers", "safetensors", "httpx")

# Runs main with each argument list in turn (each ends in SystemExit after printing its
# help), then prints the names of the imported modules.
HELP_THEN_MODULES = """
import contextlib, io, json, sys
from crase.api.cli import main
for argv in json.loads(sys.argv[1]):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main(argv)
        except SystemExit:
            pass
print(json.dumps(sorted(sys.modules)))
"""

# The argument lists of every command's --help, nested ones included (`db import --help`),
# read from the parser in the fresh interpreter itself.
EVERY_COMMAND_HELP = """
import argparse, contextlib, io, json, sys
from crase.api.cli import build_parser, main

def paths(parser, prefix):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield [*prefix, name]
                yield from paths(sub, [*prefix, name])

commands = list(paths(build_parser(), []))
for argv in commands:
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main([*argv, "--help"])
        except SystemExit:
            pass
print(json.dumps({"commands": [" ".join(c) for c in commands], "modules": sorted(sys.modules)}))
"""


def run_python(code: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def forbidden_in(modules: list[str]) -> list[str]:
    return sorted({name.split(".")[0] for name in modules} & set(FORBIDDEN))


@pytest.mark.parametrize("argv", [["--help"], ["search", "--help"], ["show", "--help"]],
                         ids=" ".join)
def test_help_imports_no_driver_web_framework_or_model_runtime(argv: list[str]) -> None:
    modules = json.loads(run_python(HELP_THEN_MODULES, json.dumps([argv])))
    assert "crase.api.cli" in modules
    assert forbidden_in(modules) == []


def test_no_command_help_imports_what_only_running_it_needs() -> None:
    found = json.loads(run_python(EVERY_COMMAND_HELP))
    assert {"search", "show", "db import", "models serve", "validate export"} <= set(
        found["commands"])
    assert forbidden_in(found["modules"]) == []


def test_connecting_code_loads_the_driver_without_pyarrow_which_still_imports() -> None:
    # The driver would import pyarrow for data-frame results Crase never asks for
    # (crase/neo4j_driver.py); the bulk import's edge checks still need it.
    code = ("import json, sys\n"
            "import crase.api.health, crase.graph, crase.database\n"
            "loaded = {name: name in sys.modules for name in ('neo4j', 'pyarrow')}\n"
            "import pyarrow.csv\n"
            "from crase.ingest import edge_table\n"
            "print(json.dumps(loaded))")
    assert json.loads(run_python(code)) == {"neo4j": True, "pyarrow": False}
