"""The encoder comparison's pure parts: MPNet's relative-position buckets against T5's
table worked out by hand, nomic-embed's Matryoshka sizes, a file out of a zip's trailing
parts, and the query rules and paper pool of the comparison."""

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from crase.bench.encoder_comparison import (
    Corpus,
    choose_pool,
    differences,
    index_megabytes,
    resolve_file_queries,
)
from crase.bench.evaluation import Scored
from crase.bench.mpnet import relative_position_buckets
from crase.bench.nomic_embed import matryoshka_vectors
from crase.bench.split_zip import extract_member
from crase.errors import EmbeddingModelMissing

# Distance -> bucket for a key that many places before the query (32 buckets, 128 max):
# 0-7 exact, then 8 + floor(log(d / 8) / log(16) * 8), capped at 15.
BUCKET_BEFORE = {0: 0, 1: 1, 7: 7, 8: 8, 15: 9, 16: 10, 31: 11, 32: 12, 63: 13, 64: 14,
                 127: 15, 128: 15, 300: 15}


def test_buckets_of_keys_before_the_query_follow_t5s_table() -> None:
    buckets = relative_position_buckets(301)
    for distance, bucket in BUCKET_BEFORE.items():
        assert buckets[distance, 0] == bucket, distance


def test_keys_after_the_query_take_the_upper_half() -> None:
    buckets = relative_position_buckets(301)
    for distance, bucket in BUCKET_BEFORE.items():
        if distance:
            assert buckets[0, distance] == bucket + 16, distance
    assert buckets[5, 5] == 0


def test_buckets_depend_on_the_distance_alone() -> None:
    buckets = relative_position_buckets(40)
    assert buckets.shape == (40, 40)
    assert (buckets[1:, 1:] == buckets[:-1, :-1]).all()


def test_full_size_nomic_vectors_are_the_pooled_ones_normalised() -> None:
    raw = np.random.default_rng(3).normal(size=(4, 768)).astype(np.float32)
    full = matryoshka_vectors(raw, 768)
    np.testing.assert_allclose(full, raw / np.linalg.norm(raw, axis=1, keepdims=True),
                               rtol=1e-5)


def test_a_matryoshka_cut_is_layer_normed_before_it_is_cut() -> None:
    raw = np.random.default_rng(4).normal(loc=2.0, size=(3, 768)).astype(np.float32)
    cut = matryoshka_vectors(raw, 256)
    normed = (raw - raw.mean(axis=1, keepdims=True)) / raw.std(axis=1, keepdims=True)
    expected = normed[:, :256] / np.linalg.norm(normed[:, :256], axis=1, keepdims=True)
    assert cut.shape == (3, 256)
    np.testing.assert_allclose(cut, expected, atol=1e-5)


def test_a_size_the_model_was_not_trained_for_is_refused() -> None:
    with pytest.raises(EmbeddingModelMissing, match="no 300-d size"):
        matryoshka_vectors(np.ones((1, 768), np.float32), 300)


def split_archive(tmp_path: Path, part_size: int) -> list[Path]:
    """An archive of a filler, a deflated and a stored member, cut into numbered parts."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("filler.bin", np.random.default_rng(5).bytes(3000),
                         compress_type=zipfile.ZIP_STORED)
        archive.writestr("model/weights.gguf", b"GGUF" + bytes(range(256)) * 40,
                         compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("model/notes.txt", b"kept as it is", compress_type=zipfile.ZIP_STORED)
    whole = buffer.getvalue()
    parts = []
    for number, start in enumerate(range(0, len(whole), part_size), start=1):
        part = tmp_path / f"archive.zip.{number:03d}"
        part.write_bytes(whole[start:start + part_size])
        parts.append(part)
    return parts


def test_a_member_comes_out_of_the_trailing_parts_alone(tmp_path: Path) -> None:
    parts = split_archive(tmp_path, 1000)
    target = tmp_path / "out" / "weights.gguf"
    member = extract_member(parts[3:], "model/weights.gguf", target)
    assert target.read_bytes() == b"GGUF" + bytes(range(256)) * 40
    assert member.size == 4 + 256 * 40
    extract_member(parts[3:], "model/notes.txt", tmp_path / "notes.txt")
    assert (tmp_path / "notes.txt").read_bytes() == b"kept as it is"


def test_a_member_that_starts_before_the_parts_given_is_refused(tmp_path: Path) -> None:
    parts = split_archive(tmp_path, 1000)
    with pytest.raises(EmbeddingModelMissing, match="starts before"):
        extract_member(parts[1:], "filler.bin", tmp_path / "filler.bin")


def test_a_damaged_member_fails_its_crc(tmp_path: Path) -> None:
    parts = split_archive(tmp_path, 100_000)
    data = bytearray(parts[0].read_bytes())
    at = data.index(b"kept as it is")
    data[at] ^= 1
    parts[0].write_bytes(bytes(data))
    with pytest.raises(EmbeddingModelMissing, match="CRC"):
        extract_member(parts, "model/notes.txt", tmp_path / "notes.txt")


def test_an_archive_without_its_last_part_is_refused(tmp_path: Path) -> None:
    parts = split_archive(tmp_path, 1000)
    with pytest.raises(EmbeddingModelMissing, match="end-of-archive"):
        extract_member(parts[:2], "filler.bin", tmp_path / "filler.bin")


def row(query: str, relevant: list[str], source: str = "s", seeds: list[str] | None = None
        ) -> dict[str, object]:
    line: dict[str, object] = {"query_id": f"q-{query}-{source}", "query": query,
                               "relevant_ids": relevant, "source_paper_id": source}
    if seeds is not None:
        line["seed_ids"] = seeds
    return line


def test_queries_keep_the_rules_of_the_quality_benchmark() -> None:
    present = {"s", "a", "b", "g"}
    queries = resolve_file_queries([
        row("text", ["a", "b", "s", "outside"]),  # source and unknown papers dropped
        row("text", ["a", "g"], seeds=["g", "unknown"]),  # a given paper is never relevant
        row("", ["a"], seeds=["unknown"]),  # no text and no given paper in the corpus
        row("text", ["outside"]),  # nothing relevant in the corpus
        row("text", ["a"], source="missing"),  # source not in the corpus
    ], present)
    assert [(set(q.relevant), q.seed_ids) for q in queries] == [({"a", "b"}, ()),
                                                                ({"a"}, ("g",))]


def test_the_pool_keeps_every_named_paper_and_draws_the_rest_the_same_way() -> None:
    corpus = Corpus([f"p{i:03d}" for i in range(100)], [f"text {i}" for i in range(100)])
    named = {"p005", "p050", "p099", "not in the corpus"}
    pool = choose_pool(corpus, named, 20)
    assert len(pool) == 20
    assert {"p005", "p050", "p099"} <= set(pool)
    assert pool == sorted(pool)  # corpus order
    assert choose_pool(corpus, named, 20) == pool
    assert choose_pool(corpus, named, 0) == corpus.ids
    assert corpus.subset(pool[:2]).texts == [corpus.texts[int(p[1:])] for p in pool[:2]]


def test_an_encoder_against_itself_differs_by_nothing() -> None:
    queries = resolve_file_queries([row("one", ["a", "b"]), row("two", ["c"])],
                                   {"s", "a", "b", "c"})
    scored = Scored(queries, [["a", "x", "b"], ["y", "c"]], 0, 0)
    for figure in differences(scored, scored).values():
        assert (figure.value, figure.low, figure.high) == (0.0, 0.0, 0.0)


def test_index_sizes() -> None:
    assert index_megabytes(30_000, 384) == (46.08, 11.64)
