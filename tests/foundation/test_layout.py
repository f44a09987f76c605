"""The layout rule and the import layering, as the README's layout section states them:
every top-level folder with an __init__.py is the package crase.X, each says in its
docstring what lives there, and no folder imports one it may not."""

import ast
from pathlib import Path

ROOT = Path(__file__).parents[2]
# Which folders each folder may import (besides itself); the README's layout table.
MAY_IMPORT: dict[str, set[str]] = {
    "crase": {"cypher"},
    "cypher": {"crase"},
    "scoring": set(),
    "prompts": {"crase", "scoring"},
    "models": {"crase", "prompts"},
    "ingest": {"crase", "scoring", "models"},
    "search": {"crase", "cypher", "scoring", "prompts", "models", "ingest"},
    "idea": {"crase", "cypher", "scoring", "prompts", "models", "ingest", "search"},
    "research": {"crase", "cypher", "scoring", "prompts", "models", "ingest", "search", "idea"},
    "bench": {"crase", "cypher", "scoring", "prompts", "models", "ingest", "search", "idea",
              "research"},
    "api": {"crase", "cypher", "scoring", "prompts", "models", "ingest", "search", "idea",
            "research", "bench"},
}


def code_folders() -> list[str]:
    return sorted(p.name for p in ROOT.iterdir()
                  if (p / "__init__.py").is_file() and p.name != "tests")


def imported_folders(path: Path, folders: set[str]) -> set[str]:
    """The project folders a module imports: `crase.X...` is folder X when X is one,
    else the core (`crase.settings` and the like)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "crase":
                found.add(parts[1] if len(parts) > 1 and parts[1] in folders else "crase")
    return found


def test_every_code_folder_is_in_the_layering() -> None:
    assert set(code_folders()) == set(MAY_IMPORT)


def test_every_code_folder_says_what_it_holds() -> None:
    for folder in code_folders():
        doc = ast.get_docstring(ast.parse((ROOT / folder / "__init__.py").read_text()))
        assert doc, f"{folder}/__init__.py has no docstring"


def test_no_folder_imports_one_it_may_not() -> None:
    folders = set(code_folders())
    wrong = []
    for folder in sorted(folders):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for target in imported_folders(path, folders) - {folder} - MAY_IMPORT[folder]:
                wrong.append(f"{path.relative_to(ROOT)} imports crase.{target}")
    assert not wrong, wrong


def test_the_readme_layout_table_names_every_folder() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [f for f in code_folders() if f"| `{f}/` |" not in readme]
    assert not missing, f"README layout table lacks {missing}"
