"""Reading a benchmark query set (queries.jsonl: one JSON object a line, with query_id,
query, source_paper_id and relevant_ids; ../shared/data/README.md). Kept apart from the
quality benchmark, so that a command needing only the file (`crase train-order
--hold-out`) does not import the benchmark."""

import json
from pathlib import Path
from typing import Any

from crase.errors import EvaluationError


def read_query_file(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise EvaluationError(f"cannot read query file {path}: {err}") from err
    try:
        return [json.loads(line) for line in lines if line.strip()]
    except json.JSONDecodeError as err:
        raise EvaluationError(f"{path} is not JSON lines: {err}") from err


def source_paper_ids(paths: list[Path]) -> frozenset[str]:
    """The source papers of the query sets at `paths`: the papers a training draw leaves out."""
    return frozenset(row["source_paper_id"] for path in paths for row in read_query_file(path))
