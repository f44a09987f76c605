"""Loads the Cypher files of this folder by name: one query per `<verb_noun>.cypher`.

Queries are read once and cached. A missing name fails loudly, so a typo never becomes an
empty query. The returned text is a `LiteralString` for the driver: it comes from files
in the repository, never from user input.
"""

from functools import cache
from pathlib import Path
from typing import LiteralString

from crase.errors import QueryNotFound

CYPHER_DIR = Path(__file__).resolve().parent


@cache
def load_query(name: str) -> LiteralString:
    """The text of `cypher/<name>.cypher` (`name` may include a subfolder: `schema/...`)."""
    path = CYPHER_DIR / f"{name}.cypher"
    if not path.is_file():
        raise QueryNotFound(f"no Cypher file {path.relative_to(CYPHER_DIR.parent)}")
    # The driver asks for a LiteralString: the text is one of the package's own files.
    return path.read_text(encoding="utf-8")


def query_names(folder: str = "") -> list[str]:
    """Names of the queries in `cypher/<folder>`, sorted (schema files apply in this order)."""
    base = CYPHER_DIR / folder
    prefix = f"{folder}/" if folder else ""
    return sorted(prefix + path.stem for path in base.glob("*.cypher"))
