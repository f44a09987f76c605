"""No module of the project imports, even for type checking alone, a module that imports
it back: each shared type has a home below both of its users (NeighbourVerdict in
idea/candidates.py, the model call outcomes in models/call_outcomes.py), so no import has
to hide under `if TYPE_CHECKING` to break a circle.

Module-level imports count, those under `if` and `try` included; an import inside a
function is left out (a command imports its pipeline there to start quickly)."""

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).parents[2]


def code_folders(root: Path) -> list[str]:
    """The folders that are packages of the project (as tests/foundation/test_layout.py)."""
    return sorted(p.name for p in root.iterdir()
                  if (p / "__init__.py").is_file() and p.name != "tests")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[0] == "crase":  # the core is `crase` itself
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["crase", *parts])


def module_level_imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If | ast.Try | ast.ExceptHandler):
            yield from module_level_imports(child)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each project module and the project modules it imports at module level."""
    paths = {module_name(path, root): path
             for folder in code_folders(root) for path in (root / folder).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        targets = set()
        for node in module_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets.add(node.module)
                targets.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[name] = {target for target in targets if target in paths} - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that reach each other (strongly connected, more than one)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            group = stack[stack.index(module):]
            del stack[stack.index(module):]
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return found


def test_no_modules_import_each_other() -> None:
    assert circles(import_graph(ROOT)) == []


def test_a_circle_through_a_type_checking_import_is_found(tmp_path: Path) -> None:
    (tmp_path / "idea").mkdir()
    (tmp_path / "idea" / "__init__.py").write_text('"""idea."""\n')
    (tmp_path / "idea" / "gate.py").write_text("from crase.idea.protocols import Scorer\n")
    (tmp_path / "idea" / "protocols.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from crase.idea.gate import Verdict\n")
    assert circles(import_graph(tmp_path)) == [["crase.idea.gate", "crase.idea.protocols"]]
