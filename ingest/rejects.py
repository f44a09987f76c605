"""The rejects file: one JSON line per refused row (file, line, kind, reason, text), and
the counts per kind that the load summary prints.

The file is appended to and flushed at every checkpoint; a resumed load cuts it back to
the size recorded in the checkpoint, so a row refused before the interruption is not
written twice.
"""

import json
from collections import Counter
from pathlib import Path
from typing import TextIO

from crase.errors import CorpusError
from crase.ingest.records import Reject, RejectKind


class RejectLog:
    def __init__(self, path: Path, resume_at: int | None = None,
                 counts: dict[str, int] | None = None) -> None:
        """Open `path` fresh, or (resuming) cut it back to `resume_at` bytes and go on."""
        self.path = path
        self.counts: Counter[RejectKind] = Counter(
            {RejectKind(kind): n for kind, n in (counts or {}).items()})
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if resume_at is not None and path.exists():
                with path.open("r+b") as raw:
                    raw.truncate(resume_at)
                self.handle: TextIO = path.open("a", encoding="utf-8")
            else:
                self.handle = path.open("w", encoding="utf-8")
        except OSError as err:
            raise CorpusError(f"cannot write the rejects file {path}: {err}") from err

    def add(self, reject: Reject) -> None:
        self.counts[reject.kind] += 1
        self.handle.write(json.dumps(reject.as_json(), ensure_ascii=False) + "\n")

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def flush(self) -> int:
        """Flush to disk and return the file size: the resume point for a checkpoint."""
        self.handle.flush()
        return self.handle.tell()

    def close(self) -> None:
        self.handle.close()

    def counts_by_kind(self) -> dict[str, int]:
        return {kind.value: n for kind, n in sorted(self.counts.items())}


def read_rejects(path: Path) -> list[Reject]:
    """The rejects written to `path` (for tests and for a later look)."""
    rejects = []
    for line in path.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        rejects.append(Reject(data["file"], data["line"], RejectKind(data["kind"]),
                              data["reason"], data.get("text", "")))
    return rejects
