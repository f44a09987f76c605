"""Sentence vectors kept on disk, so a paper is embedded once per machine, not once per run.

The numpy encoder costs about a fifth of a second per abstract on a small CPU; a benchmark
that meets the same papers in many runs, or a second run on the same corpus, reads the
stored vectors instead. One SQLite file per model, `<directory>/<model name>.sqlite3`
(key: the encoder's 16-byte text hash; value: the float32 vector and its dimension), so a
500K-paper corpus is one file, not a million. WAL mode lets readers and one writer work
at once, in this process and in others; each batch of new vectors is one transaction.

The cache is never worth a failed run: a store that cannot be opened or read is logged
once (with the file to delete) and every text is then a miss, embedded as if uncached.
Older versions kept one `.npy` per text under `<directory>/<model name>/`; that folder is
not migrated, so opening the store never means reading up to a million small files first;
its texts are embedded again as runs meet them, and the log names it once as safe to
delete.
"""

import logging
import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import numpy as np

from crase.models.minilm import FloatArray, text_key

log = logging.getLogger(__name__)

# Stays under SQLite's smallest default limit of bound parameters (999).
READ_CHUNK = 500
# How long a writer waits for another process's write transaction before giving up.
BUSY_TIMEOUT_S = 10.0
WAL_SIZE_LIMIT = 8 * 1024 * 1024
# A rowid table, not WITHOUT ROWID: there a row over about 1 KB spills into an overflow
# page of its own, so a 1.5 KB vector (384 floats) took two pages instead of sharing one.
SCHEMA = ("CREATE TABLE IF NOT EXISTS vectors ("
          "key BLOB PRIMARY KEY, dimension INTEGER NOT NULL, vector BLOB NOT NULL)")


class TextEncoder(Protocol):
    name: str

    def encode(self, texts: list[str]) -> FloatArray:
        """Unit-length vectors, one row per text, in order."""
        ...


class SizedEncoder(TextEncoder, Protocol):
    dimension: int


class CachedEncoder:
    def __init__(self, encoder: SizedEncoder, directory: Path) -> None:
        self.encoder = encoder
        self.name = encoder.name
        self.store_path = directory / f"{encoder.name}.sqlite3"
        self.legacy_directory = directory / encoder.name
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = 0  # the process that opened the connection; a fork must reopen
        self._broken = False

    def encode(self, texts: list[str]) -> FloatArray:
        out = np.empty((len(texts), self.encoder.dimension), dtype=np.float32)
        rows_of: dict[bytes, list[int]] = {}
        text_of: dict[bytes, str] = {}
        for row, text in enumerate(texts):
            key = text_key(text)
            rows_of.setdefault(key, []).append(row)
            text_of[key] = text
        stored = self._read(list(rows_of))
        for key, vector in stored.items():
            out[rows_of[key]] = vector
        missing = [key for key in rows_of if key not in stored]
        if missing:
            fresh = self.encoder.encode([text_of[key] for key in missing])
            for key, vector in zip(missing, fresh, strict=True):
                out[rows_of[key]] = vector
            self._write(list(zip(missing, fresh, strict=True)))
        return out

    def close(self) -> None:
        """Close the store; the last connection to close folds the WAL back into the file."""
        with self._lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
            self._connection = None

    def _read(self, keys: list[bytes]) -> dict[bytes, FloatArray]:
        found: dict[bytes, FloatArray] = {}
        with self._lock:
            connection = self._open()
            if connection is None:
                return found
            try:
                for chunk in chunks(keys, READ_CHUNK):
                    marks = ",".join("?" * len(chunk))
                    rows = connection.execute(
                        f"SELECT key, dimension, vector FROM vectors WHERE key IN ({marks})",
                        chunk).fetchall()
                    for key, dimension, blob in rows:
                        vector = self._vector(dimension, blob)
                        if vector is not None:
                            found[key] = vector
            except sqlite3.Error as err:
                self._failed(err, f"{len(keys)} vectors not read")
                return {}
        return found

    def _vector(self, dimension: int, blob: bytes) -> FloatArray | None:
        # A row of another size (a changed model under the same name) is a miss, not an error.
        if dimension != self.encoder.dimension or len(blob) != 4 * dimension:
            return None
        return np.frombuffer(blob, dtype="<f4")

    def _write(self, pairs: list[tuple[bytes, FloatArray]]) -> None:
        rows = [(key, len(vector), np.asarray(vector, dtype="<f4").tobytes())
                for key, vector in pairs]
        with self._lock:
            connection = self._open()
            if connection is None:
                return
            try:
                with connection:  # one transaction for the whole batch
                    connection.executemany(
                        "INSERT OR REPLACE INTO vectors (key, dimension, vector) "
                        "VALUES (?, ?, ?)", rows)
            except sqlite3.Error as err:
                self._failed(err, f"{len(rows)} vectors not stored")

    def _open(self) -> sqlite3.Connection | None:
        """The connection, opened on first use (so building backends touches no disk);
        None once the store has proved unusable. Called with the lock held."""
        if self._broken:
            return None
        if self._connection is not None and self._pid == os.getpid():
            return self._connection
        try:
            self.store_path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.store_path, timeout=BUSY_TIMEOUT_S,
                                         check_same_thread=False)  # guarded by the lock
        except (OSError, sqlite3.Error) as err:
            self._failed(err, "not opened")
            return None
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            # A cache may lose its last batch on power loss, never its consistency;
            # NORMAL skips the fsync per transaction that FULL pays for.
            connection.execute("PRAGMA synchronous=NORMAL")
            # After a checkpoint the -wal file shrinks back to this, not to its largest.
            connection.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
            connection.execute(SCHEMA)
        except sqlite3.Error as err:
            connection.close()
            self._failed(err, "not opened")
            return None
        self._connection, self._pid = connection, os.getpid()
        # Python's sqlite3 connection sits in a reference cycle, so it may still be open at
        # exit; closing it then folds the -wal and -shm files back into the store.
        weakref.finalize(self, close_in_owner, connection, self._pid)
        self._note_legacy_folder()
        return connection

    def _failed(self, err: Exception, what: str) -> None:
        """A busy store (another process kept the lock past the timeout) costs this batch
        only; anything else stops the store for this encoder's lifetime, with one line
        saying which file to delete. Either way the texts are embedded as misses."""
        if isinstance(err, sqlite3.OperationalError) and is_busy(err):
            log.warning("embedding cache %s busy, %s: %s", self.store_path, what, err)
            return
        log.warning("embedding cache %s is unusable (%s); vectors are computed without "
                    "it; delete the file (and any -wal/-shm beside it) to start a fresh one",
                    self.store_path, err)
        self._broken = True
        if self._connection is not None and self._pid == os.getpid():
            self._connection.close()
        self._connection = None

    def _note_legacy_folder(self) -> None:
        if self.legacy_directory.is_dir():
            log.warning("embedding cache: %s holds the old one-file-per-text layout, which "
                        "is no longer read; it can be deleted", self.legacy_directory)


def close_in_owner(connection: sqlite3.Connection, pid: int) -> None:
    # A forked child must not close (and so checkpoint) its parent's connection.
    if os.getpid() == pid:
        connection.close()


def chunks(items: list[bytes], size: int) -> Iterator[list[bytes]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def is_busy(err: sqlite3.OperationalError) -> bool:
    return "locked" in str(err) or "busy" in str(err)
