"""The embedding cache's one SQLite store per model: round trips, large batches, another
process's writes, a corrupt store as a logged miss, and one file however many texts."""

import hashlib
import logging
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from crase.models.embedding_cache import CachedEncoder
from crase.models.minilm import FloatArray

ROOT = Path(__file__).resolve().parents[2]


class FakeEncoder:
    """Deterministic vectors from each text's hash, counting what it was asked to embed,
    so a test can tell a cache hit from a miss without loading the real model."""

    name = "fake-encoder"
    dimension = 8

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def encode(self, texts: list[str]) -> FloatArray:
        self.embedded.extend(texts)
        return np.stack([vector_for(text) for text in texts]).astype(np.float32)


def vector_for(text: str) -> FloatArray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
    vector = np.random.default_rng(seed).standard_normal(FakeEncoder.dimension)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def expected(texts: list[str]) -> FloatArray:
    return np.stack([vector_for(text) for text in texts])


def test_round_trip_through_a_fresh_instance(tmp_path: Path) -> None:
    texts = ["tachyon condensation", "open string field theory", "D-brane decay"]
    first = CachedEncoder(FakeEncoder(), tmp_path)
    assert np.array_equal(first.encode(texts), expected(texts))
    first.close()
    inner = FakeEncoder()
    second = CachedEncoder(inner, tmp_path)
    assert np.array_equal(second.encode(texts), expected(texts))
    assert inner.embedded == []


def test_many_texts_with_repeats_keep_their_order(tmp_path: Path) -> None:
    # More keys than one read chunk, and repeats that must be embedded once.
    texts = [f"paper {i % 1800}" for i in range(2500)]
    inner = FakeEncoder()
    cached = CachedEncoder(inner, tmp_path)
    assert np.array_equal(cached.encode(texts), expected(texts))
    assert len(inner.embedded) == 1800
    mixed = [f"paper {i}" for i in range(1700, 2100)]
    assert np.array_equal(cached.encode(mixed), expected(mixed))
    assert len(inner.embedded) == 1800 + 300  # only the 300 new texts


def test_threads_share_one_instance(tmp_path: Path) -> None:
    cached = CachedEncoder(FakeEncoder(), tmp_path)
    batches = [[f"text {(start + i) % 300}" for i in range(120)] for start in range(0, 300, 25)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(cached.encode, batches))
    for batch, result in zip(batches, results, strict=True):
        assert np.array_equal(result, expected(batch))


def test_another_process_sees_what_this_one_wrote(tmp_path: Path) -> None:
    reader_inner = FakeEncoder()
    reader = CachedEncoder(reader_inner, tmp_path)
    reader.encode(["opened before the other process writes"])  # a live connection
    texts = [f"written elsewhere {i}" for i in range(50)]
    script = textwrap.dedent(f"""
        from pathlib import Path
        from crase.models.embedding_cache import CachedEncoder
        from tests.models.test_embedding_cache import FakeEncoder
        CachedEncoder(FakeEncoder(), Path({str(tmp_path)!r})).encode(
            [f"written elsewhere {{i}}" for i in range(50)])
    """)
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True, timeout=120)
    assert np.array_equal(reader.encode(texts), expected(texts))
    assert reader_inner.embedded == ["opened before the other process writes"]


def test_a_corrupt_store_is_a_logged_miss(tmp_path: Path,
                                          caplog: pytest.LogCaptureFixture) -> None:
    store = tmp_path / f"{FakeEncoder.name}.sqlite3"
    store.write_bytes(b"not a database, " * 512)
    inner = FakeEncoder()
    cached = CachedEncoder(inner, tmp_path)
    texts = ["first", "second"]
    with caplog.at_level(logging.WARNING, logger="crase.models.embedding_cache"):
        assert np.array_equal(cached.encode(texts), expected(texts))
        assert np.array_equal(cached.encode(texts), expected(texts))
    assert inner.embedded == texts + texts  # a miss each time, never an error
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1  # said once, not once per call
    assert str(store) in lines[0] and "delete the file" in lines[0]


def test_one_file_per_model_after_a_thousand_texts(tmp_path: Path) -> None:
    cached = CachedEncoder(FakeEncoder(), tmp_path)
    for start in range(0, 1000, 100):
        cached.encode([f"abstract {i}" for i in range(start, start + 100)])
    # While open, WAL keeps its -wal/-shm companions; closing folds them back.
    cached.close()
    assert [path.name for path in tmp_path.iterdir()] == [f"{FakeEncoder.name}.sqlite3"]
    again = FakeEncoder()
    CachedEncoder(again, tmp_path).encode([f"abstract {i}" for i in range(1000)])
    assert again.embedded == []


def test_an_old_npy_folder_is_named_and_ignored(tmp_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    old = tmp_path / FakeEncoder.name / "ab"
    old.mkdir(parents=True)
    np.save(old / "abcd.npy", np.zeros(FakeEncoder.dimension, dtype=np.float32))
    with caplog.at_level(logging.WARNING, logger="crase.models.embedding_cache"):
        CachedEncoder(FakeEncoder(), tmp_path).encode(["anything"])
    assert any("can be deleted" in record.getMessage() and str(tmp_path / FakeEncoder.name)
               in record.getMessage() for record in caplog.records)
    assert (old / "abcd.npy").exists()  # left for the operator, not removed
