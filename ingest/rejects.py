"""The rejects file: one JSON line per refused row (file, line, kind, reason, text), and
the counts per kind that the load summary prints. Next to it, the notes file: one JSON
line per repair kind of a row that was loaded after a repair (file, paper, kind, notes),
e.g. author names freed of a linking "and" (`repaired_authors`, with the names kept), a
year 801 left out (`dropped_year`), a title trimmed (`trimmed_text`).

Both are written with `ensure_ascii=False`, so a text may hold U+2028 or U+0085, which
`str.splitlines` takes for line breaks: they are read back split at "\n" only.

Both files are appended to and flushed at every checkpoint; a resumed load cuts them back
to the sizes recorded in the checkpoint, so nothing before the interruption is written
twice.
"""

import json
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from crase.errors import CorpusError
from crase.ingest.records import REPAIRED_AUTHORS, Paper, Reject, RejectKind


def open_log(path: Path, resume_at: int | None) -> TextIO:
    """`path` opened fresh, or (resuming) cut back to `resume_at` bytes to go on from."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if resume_at is not None and path.exists():
            with path.open("r+b") as raw:
                raw.truncate(resume_at)
            return path.open("a", encoding="utf-8")
        return path.open("w", encoding="utf-8")
    except OSError as err:
        raise CorpusError(f"cannot write {path}: {err}; give a writable path (--rejects)") from err


class RejectLog:
    def __init__(self, path: Path, resume_at: int | None = None,
                 counts: dict[str, int] | None = None) -> None:
        """Open `path` fresh, or (resuming) cut it back to `resume_at` bytes and go on."""
        self.path = path
        self.counts: Counter[RejectKind] = Counter(
            {RejectKind(kind): n for kind, n in (counts or {}).items()})
        self.handle = open_log(path, resume_at)

    def add(self, reject: Reject) -> None:
        self.counts[reject.kind] += 1
        self.handle.write(json.dumps(reject.as_json(), ensure_ascii=False) + "\n")

    def add_from(self, path: Path | None) -> None:
        """Every reject of another rejects file (a dataset's staging), in its order."""
        for reject in read_rejects(path) if path is not None and path.exists() else []:
            self.add(reject)

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


class NoteLog:
    """The notes file: what validation repaired in rows that were loaded."""

    def __init__(self, path: Path, resume_at: int | None = None, repaired: int = 0) -> None:
        self.path = path
        self.repaired = repaired  # rows noted so far, this load and the one it resumes
        self.handle = open_log(path, resume_at)

    def add_repairs(self, file: str, papers: list[Paper]) -> None:
        for paper in papers:
            if paper.repairs:
                self.repaired += 1
            for kind, notes in paper.repairs.items():
                note: dict[str, Any] = {"file": file, "paper": paper.id, "kind": kind,
                                        "notes": notes}
                if kind == REPAIRED_AUTHORS:
                    note["authors"] = paper.authors
                self.handle.write(json.dumps(note, ensure_ascii=False) + "\n")

    def flush(self) -> int:
        self.handle.flush()
        return self.handle.tell()

    def close(self) -> None:
        self.handle.close()


def read_notes(path: Path) -> list[dict[str, Any]]:
    """The notes written to `path`: one dict per repaired row."""
    if not path.exists():
        return []
    return [json.loads(line) for line in json_lines(path)]


def read_rejects(path: Path) -> list[Reject]:
    """The rejects written to `path` (for tests and for a later look)."""
    rejects = []
    for line in json_lines(path):
        data = json.loads(line)
        rejects.append(Reject(data["file"], data["line"], RejectKind(data["kind"]),
                              data["reason"], data.get("text", "")))
    return rejects


def json_lines(path: Path) -> list[str]:
    """The lines of a JSON-lines file, split at "\n" only (see the module's docstring)."""
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line]
