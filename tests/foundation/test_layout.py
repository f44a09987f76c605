"""The layout rule and the import layering, as the README's layout section states them:
every top-level folder with an __init__.py is the package crase.X, each says in its
docstring what lives there, and no folder imports one it may not.

The layering is read from the README's layout table (its "may import" column), so the
README is the one statement of it; a cell the reader cannot understand fails the tests
rather than being read as allowing anything."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
NAME = re.compile(r"`([^`]+)`")
# The phrases a "may import" cell is written in, besides backticked names.
NOTHING = "nothing of the project"
ALL = "all"
ALL_BUT = "all but"
ABOVE = "the folders above"


def code_folders() -> list[str]:
    return sorted(p.name for p in ROOT.iterdir()
                  if (p / "__init__.py").is_file() and p.name != "tests")


def layout_rows() -> list[tuple[str, str]]:
    """(folder, may-import cell) for each row of the README's layout table, in order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = cells(lines[0])
    column = next(i for i, name in enumerate(header) if name.lower().startswith("may import"))
    rows = []
    for line in lines[2:]:  # after the header and its --- line
        row = cells(line)
        rows.append((row[0].strip("`").rstrip("/"), row[column]))
    return rows


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def readme_layering() -> dict[str, set[str]]:
    """Which folders (or modules of the core, such as `crase.errors`) each code folder may
    import, besides itself. Rows for folders that hold no code (tests/, database/ ...) are
    left out; "all" means every code folder, so no code may import tests."""
    folders = set(code_folders())
    layering: dict[str, set[str]] = {}
    for folder, cell in layout_rows():
        if folder in folders:
            layering[folder] = may_import(cell, list(layering), folders - {folder})
    return layering


def may_import(cell: str, above: list[str], others: set[str]) -> set[str]:
    names = set(NAME.findall(cell))
    words = NAME.sub("", cell).strip()
    if words == NOTHING and not names:
        return set()
    if words == ALL and not names:
        return others
    if words.startswith(ALL_BUT) and only_joins(words[len(ALL_BUT):]):
        return others - names
    if words.startswith(ABOVE):
        names |= set(above)
        words = words[len(ABOVE):]
    assert only_joins(words), f"README layout table: cannot read the may-import cell {cell!r}"
    return names


def only_joins(words: str) -> bool:
    """Whether what is left between the names is only commas and "and"."""
    return not set(words.replace(",", " ").split()) - {"and"}


def imported(path: Path, folders: set[str]) -> set[str]:
    """What a module imports of the project: folder X for `crase.X...`, `crase.M` for a
    module of the core (`crase.settings` and the like), `tests` for the test suite."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = ([f"crase.{alias.name}" for alias in node.names]
                     if node.module == "crase" else [node.module])
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "tests":
                found.add("tests")
            elif parts[0] == "crase":
                found.add(parts[1] if len(parts) > 1 and parts[1] in folders
                          else ".".join(parts[:2]))
    return found


def allowed(folder: str, target: str, may: set[str]) -> bool:
    """A folder's own modules, what its row names, and the whole core where it names
    `crase` (a row naming `crase.errors` allows that module of the core alone)."""
    in_core = target == "crase" or target.startswith("crase.")
    return (target == folder or target in may or (in_core and folder == "crase")
            or (in_core and "crase" in may))


def test_every_code_folder_is_in_the_readme_layering() -> None:
    assert set(readme_layering()) == set(code_folders()), "README layout table differs"


def test_every_code_folder_says_what_it_holds() -> None:
    for folder in code_folders():
        doc = ast.get_docstring(ast.parse((ROOT / folder / "__init__.py").read_text()))
        assert doc, f"{folder}/__init__.py has no docstring"


def test_no_folder_imports_one_it_may_not() -> None:
    layering = readme_layering()
    folders = set(layering)
    wrong = []
    for folder in sorted(folders):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for target in sorted(imported(path, folders)):
                if not allowed(folder, target, layering[folder]):
                    wrong.append(f"{path.relative_to(ROOT)} imports {target}")
    assert not wrong, wrong


def test_the_readme_table_is_read_as_written() -> None:
    # The reader's phrases on a few rows, so a misreading cannot pass as a loose layering.
    layering = readme_layering()
    assert layering["cypher"] == {"crase.errors"}
    assert layering["scoring"] == {"crase.text_limits"}
    assert layering["idea"] == {"crase", "cypher", "scoring", "prompts", "models", "ingest",
                                "search"}
    assert layering["bench"] == set(code_folders()) - {"bench", "api"}
    assert "tests" not in layering["api"]


def test_no_benchmark_imports_the_command_line_or_the_http_api() -> None:
    # api/ runs the benchmarks (`crase bench`), so the arrow goes from api/ down to bench/
    # only; the README row says so and test_no_folder_imports_one_it_may_not holds the code
    # to it, so a row loosened back to "all" fails here.
    assert "api" not in readme_layering()["bench"]


def test_only_the_driver_module_imports_the_neo4j_package() -> None:
    # crase/neo4j_driver.py imports the driver without pyarrow; a module importing neo4j
    # itself could be the first to load it, with pyarrow.
    home = ROOT / "crase" / "neo4j_driver.py"
    direct = []
    for folder in ["crase", *code_folders()]:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                     for alias in node.names]
            names += [node.module for node in ast.walk(tree)
                      if isinstance(node, ast.ImportFrom) and node.module and not node.level]
            if path != home and any(name.split(".")[0] == "neo4j" for name in names):
                direct.append(str(path.relative_to(ROOT)))
    assert direct == []
