"""Where an incremental load stands, in a small JSON file next to its rejects file.

It records, per input file, the line and byte offset up to which every row is in the
graph or in the rejects file, plus a fingerprint of the inputs and the database they go
to. A rerun with the same fingerprint skips what is done (and a finished load is skipped
altogether, unless the graph has since lost nodes or edges). MERGE keeps a replayed batch
harmless anyway; the checkpoint only saves the time.
"""

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crase.errors import CorpusError

SAMPLE_BYTES = 1 << 20  # head and tail hashed for the fingerprint


@dataclass
class FileProgress:
    line: int = 0  # last line fully handled (1-based); 0 = nothing yet
    offset: int = 0  # byte offset just after that line
    done: bool = False


@dataclass
class Checkpoint:
    fingerprint: dict[str, Any]
    target: str
    files: dict[str, FileProgress] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # papers/edges accepted, rejected
    rejects: dict[str, int] = field(default_factory=dict)  # per reject kind
    rejects_offset: int = 0
    graph_after: dict[str, int] = field(default_factory=dict)  # node/edge totals when done
    completed: bool = False
    updated: str = ""

    def progress(self, file: str) -> FileProgress:
        return self.files.setdefault(file, FileProgress())

    def save(self, path: Path) -> None:
        """Write atomically: a crash mid-write leaves the previous checkpoint intact."""
        self.updated = datetime.now(UTC).isoformat(timespec="seconds")
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(asdict(self), indent=1))
        os.replace(temporary, path)

    @classmethod
    def read(cls, path: Path) -> "Checkpoint | None":
        """The checkpoint at `path`, or None if there is none or it is unreadable."""
        try:
            data = json.loads(path.read_text())
            files = {name: FileProgress(**value) for name, value in data.pop("files").items()}
            return cls(files=files, **data)
        except (FileNotFoundError, json.JSONDecodeError, TypeError, KeyError, AttributeError):
            return None


def fingerprint_files(paths: list[Path]) -> dict[str, Any]:
    """Size, modification time and a hash of the first and last MiB of every input: cheap
    for multi-GB inputs, and changed by any real edit."""
    result: dict[str, Any] = {}
    for path in paths:
        try:
            stat = path.stat()
            digest = hashlib.blake2b(digest_size=16)
            with path.open("rb") as handle:
                digest.update(handle.read(SAMPLE_BYTES))
                if stat.st_size > SAMPLE_BYTES:
                    handle.seek(max(SAMPLE_BYTES, stat.st_size - SAMPLE_BYTES))
                    digest.update(handle.read(SAMPLE_BYTES))
        except OSError as err:
            raise CorpusError(f"cannot read {path}: {err}") from err
        result[str(path.resolve())] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
                                       "sample": digest.hexdigest()}
    return result


def load_key(paths: list[Path], target: str) -> str:
    """A short name for one (inputs, database) pair, for the default rejects file."""
    text = "\n".join([target, *(str(path.resolve()) for path in paths)])
    return hashlib.blake2b(text.encode(), digest_size=4).hexdigest()
