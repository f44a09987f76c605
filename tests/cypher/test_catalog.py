"""Every Cypher file is used by the code, and every name the code uses has a file."""

import re
from pathlib import Path

import pytest

from crase.cypher.catalog import CYPHER_DIR, load_query, query_names
from crase.errors import QueryNotFound

ROOT = CYPHER_DIR.parent
# The package's folders, by the layout rule (setup.py): every top-level folder with an
# __init__.py except the tests.
CODE_DIRS = sorted(p.name for p in ROOT.iterdir()
                   if (p / "__init__.py").is_file() and p.name != "tests")
# graph.read("name", ...) / graph.write("name", ...) / load_query("name") and tables of
# names such as EXPANSION_QUERIES: any string literal that names a query file.
NAME = re.compile(r"""["']([a-z][a-z0-9_]*(?:/[a-z0-9_]+)?)["']""")


def used_names() -> set[str]:
    names = set()
    for folder in CODE_DIRS:
        for path in (ROOT / folder).rglob("*.py"):
            names |= set(NAME.findall(path.read_text(encoding="utf-8")))
    return names


def test_every_query_file_is_used() -> None:
    used = used_names()
    unused = [n for n in query_names() if n not in used]
    assert not unused, f"Cypher files no code uses: {unused}"


def test_every_used_read_or_write_name_exists() -> None:
    # The graph client's calls only: a Cypher string such as "gds.pageRank.write('g', ...)"
    # also reads as a method call.
    calls = re.compile(r"""\bgraph\.(?:read|write)\(\s*["']([a-z0-9_/]+)["']""")
    missing = []
    for folder in CODE_DIRS:
        for path in (ROOT / folder).rglob("*.py"):
            for name in calls.findall(path.read_text(encoding="utf-8")):
                if not (CYPHER_DIR / f"{name}.cypher").is_file():
                    missing.append(f"{path.relative_to(ROOT)}: {name}")
    assert not missing


def test_every_file_has_a_header_naming_parameters_and_returns() -> None:
    for name in query_names() + query_names("analyst"):
        text = load_query(name)
        assert text.startswith("//"), name
        header = "\n".join(line for line in text.splitlines() if line.startswith("//"))
        if not name.startswith("schema/"):
            assert "Parameters" in header and "Returns" in header, name


def test_missing_name_fails_loudly() -> None:
    with pytest.raises(QueryNotFound):
        load_query("no_such_query")


def test_queries_use_parameters_not_formatting() -> None:
    for path in Path(CYPHER_DIR).rglob("*.cypher"):
        text = path.read_text(encoding="utf-8")
        assert "{0}" not in text and "%s" not in text, path
