"""Reading a query set: one JSON object a line (../shared/data/README.md), a question with
the papers that answer it. The benchmarks measure the search on such sets, and `crase
train-order --hold-out` leaves their source papers out of its draw, so the format has
its home here, below both.

Every line has `query_id`, `query`, `source_paper_id` and `relevant_ids`. Two more forms of
query come from what researchers type and bring (bench/query_forms.py writes them):

- `query` may be empty: the user typed nothing and starts from papers alone;
- `seed_ids` (optional): papers the user starts from. They are given, so they never count
  as found: resolve_queries (bench/quality.py) takes them out of the relevant set and
  Scored.from_records (bench/evaluation.py) out of every ranked list before scoring.

A line needs query text or seed_ids; a seed may not be the source paper (the source stays
hidden from every system). A line without the new fields reads exactly as before."""

import json
from pathlib import Path
from typing import Any

from crase.errors import EvaluationError

REQUIRED_TEXT_FIELDS = ("query_id", "source_paper_id")


def read_query_file(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise EvaluationError(f"cannot read query file {path}: {err}") from err
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise EvaluationError(f"{path} is not JSON lines: {err}") from err
        check_query_row(row, f"{path}:{number}")
        rows.append(row)
    return rows


def check_query_row(row: Any, where: str) -> None:
    """Refuses a query line the benchmark cannot read, saying which field to fix."""
    if not isinstance(row, dict):
        raise EvaluationError(f"{where}: a query line must be a JSON object")
    for name in REQUIRED_TEXT_FIELDS:
        if not isinstance(row.get(name), str) or not row[name]:
            raise EvaluationError(f"{where}: give {name} as a non-empty string")
    if not isinstance(row.get("query"), str):
        raise EvaluationError(f"{where}: give query as a string (it may be empty)")
    if not is_id_list(row.get("relevant_ids")):
        raise EvaluationError(f"{where}: give relevant_ids as a list of paper id strings")
    seeds = row.get("seed_ids")
    if seeds is not None and not is_id_list(seeds):
        raise EvaluationError(f"{where}: give seed_ids as a list of paper id strings")
    if not row["query"].strip() and not seeds:
        raise EvaluationError(f"{where}: the query is empty and no seed_ids are given; "
                              "give query text, seed_ids or both")
    if seeds and row["source_paper_id"] in seeds:
        raise EvaluationError(f"{where}: seed_ids name the source paper "
                              f"{row['source_paper_id']}, which stays hidden; remove it")


def is_id_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and item for item in value)


def seed_ids_of(row: dict[str, Any]) -> list[str]:
    """The line's given papers, in order, each once; [] for a line without them."""
    return list(dict.fromkeys(row.get("seed_ids") or []))


def source_paper_ids(paths: list[Path]) -> frozenset[str]:
    """The source papers of the query sets at `paths`: the papers a training draw leaves out."""
    return frozenset(row["source_paper_id"] for path in paths for row in read_query_file(path))
