"""The embedding cache's disk layouts side by side: writing and reading back N vectors as
one `.npy` file per text (the layout before the SQLite store) and as the one SQLite store
per model. Prints seconds, files created and bytes on disk for each, with the load average.

    .venv/bin/python -m crase.bench.embedding_cache_layout [--count 20000] [--dimension 384]

The vectors are random; no model runs, so the figures are the storage alone.
"""

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from crase.bench.machine_state import load_average
from crase.models.embedding_cache import CachedEncoder
from crase.models.minilm import FloatArray, text_key

T = TypeVar("T")


class StoredOnly:
    """Stands in for the model: the store is what is measured, so it is never called."""

    name = "layout-bench"

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    def encode(self, texts: list[str]) -> FloatArray:
        raise AssertionError("the benchmark reads only what it wrote")


def old_path(folder: Path, key: bytes) -> Path:
    name = key.hex()
    return folder / name[:2] / f"{name}.npy"


def old_write(folder: Path, keys: list[bytes], vectors: FloatArray) -> None:
    """As the old cache wrote: a temporary file per vector, renamed into place."""
    for key, vector in zip(keys, vectors, strict=True):
        path = old_path(folder, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(handle, "wb") as stream:
            np.save(stream, vector)
        os.replace(temporary, path)


def old_read(folder: Path, keys: list[bytes], dimension: int) -> int:
    return sum(1 for key in keys if np.load(old_path(folder, key)).shape == (dimension,))


def new_write(folder: Path, keys: list[bytes], vectors: FloatArray) -> None:
    cached = CachedEncoder(StoredOnly(vectors.shape[1]), folder)
    cached._write(list(zip(keys, vectors, strict=True)))
    cached.close()


def new_read(folder: Path, keys: list[bytes], dimension: int) -> int:
    cached = CachedEncoder(StoredOnly(dimension), folder)  # a fresh instance: open included
    found = len(cached._read(keys))
    cached.close()
    return found


def disk_usage(folder: Path) -> tuple[int, int]:
    """Files under a folder, and the bytes allocated on disk (blocks, not apparent size)
    to them and to the folders that hold them, as `du` counts."""
    files, blocks = 0, folder.stat().st_blocks
    for path in folder.rglob("*"):
        files += path.is_file()
        blocks += path.stat().st_blocks
    return files, blocks * 512


def timed(action: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--dimension", type=int, default=384)
    args = parser.parse_args()
    keys = [text_key(f"text {i}") for i in range(args.count)]
    vectors = np.random.default_rng(7).standard_normal(
        (args.count, args.dimension)).astype(np.float32)
    print(f"load average before: {load_average()}")
    with tempfile.TemporaryDirectory(dir=Path.cwd() / "var") as scratch:
        for label, write, read in (("one .npy per text", old_write, old_read),
                                   ("one SQLite store", new_write, new_read)):
            folder = Path(scratch) / label.replace(" ", "-")
            folder.mkdir()
            write_s, _ = timed(lambda: write(folder, keys, vectors))  # noqa: B023
            read_s, found = timed(lambda: read(folder, keys, args.dimension))  # noqa: B023
            assert found == args.count, f"{label}: not every vector read back"
            files, size = disk_usage(folder)
            print(f"{label}: write {write_s:.2f} s, read {read_s:.2f} s, "
                  f"{files:,} files, {size / 1e6:.1f} MB on disk")
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
