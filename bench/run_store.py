"""Per-query outputs of the quality benchmark: one JSONL file per (dataset, system setting),
one line per query, appended and flushed as each query finishes.

A rerun reads what is there and skips every query with a successful line, so an
interrupted benchmark resumes where it stopped; a query whose line records an error is run
again. Later lines for the same query win (a retried error is superseded by its success).
"""

import json
from pathlib import Path
from typing import Any

Record = dict[str, Any]


class RunStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, dataset: str, key: str) -> Path:
        return self.folder / dataset / f"{key}.jsonl"

    def load(self, dataset: str, key: str) -> dict[str, Record]:
        """query id -> its latest record (successful or not)."""
        path = self.path(dataset, key)
        records: dict[str, Record] = {}
        if not path.is_file():
            return records
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                line = line.strip()
                if not line:
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by an interruption: that query runs again
                records[record["query_id"]] = record
        return records

    def completed(self, dataset: str, key: str) -> dict[str, Record]:
        return {q: r for q, r in self.load(dataset, key).items() if not r.get("error")}

    def append(self, dataset: str, key: str, record: Record) -> None:
        path = self.path(dataset, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record, sort_keys=True, default=str) + "\n")
            out.flush()
