"""The layout rule, written once: every top-level folder X/ with an `__init__.py` is the
package `crase.X` (its subfolders with an `__init__.py` are its subpackages), and `crase/`
is `crase` itself. Adding a folder needs no list to be edited here or anywhere else."""

from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent
NOT_PACKAGES = {"tests"}


def layout() -> tuple[list[str], dict[str, str]]:
    packages, where = [], {}
    for top in sorted(ROOT.iterdir()):
        if not (top / "__init__.py").is_file() or top.name in NOT_PACKAGES:
            continue
        name = "crase" if top.name == "crase" else f"crase.{top.name}"
        where[name] = top.name
        for init in sorted(top.rglob("__init__.py")):
            parts = init.parent.relative_to(top).parts
            packages.append(".".join((name, *parts)))
    return packages, where


packages, package_dir = layout()
setup(packages=packages, package_dir=package_dir)
