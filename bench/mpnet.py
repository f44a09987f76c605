"""all-mpnet-base-v2 in numpy, for the encoder comparison (bench/encoder_comparison.py) only:
no search embeds with it.

MPNet's encoder is BERT's (post-layer-norm residuals, exact-erf GELU, the same layer shapes,
so models/minilm.py's layer runs it) with two differences: there are no segment embeddings
and absolute positions start at 2 (the position of the padding id 1 plus one, as the
model's `create_position_ids_from_input_ids` counts them), and every layer adds to its
attention scores one learned bias per head and relative-position bucket
(`encoder.relative_attention_bias`, 32 buckets), T5's bucketing: exact distances below 8
in each direction, logarithmic buckets up to 128, the sign in the top half. Then mean
pooling over real tokens and L2 normalisation (the model's sentence-transformers modules).
"""

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from crase.models.minilm import (
    MASKED_SCORE,
    EncoderLayer,
    EncoderWeights,
    FloatArray,
    NumpyBertEncoder,
    layer_norm,
    map_safetensors,
    mean_pool,
    read_layer,
)

RELATIVE_BUCKETS = 32
RELATIVE_MAX_DISTANCE = 128
# The first absolute position a token takes (padding_idx + 1).
FIRST_POSITION = 2
# MPNet's tensor names, under BERT's that read_layer reads.
LAYER_NAMES = {
    "attention.self.query": "attention.attn.q",
    "attention.self.key": "attention.attn.k",
    "attention.self.value": "attention.attn.v",
    "attention.output.dense": "attention.attn.o",
    "attention.output.LayerNorm": "attention.LayerNorm",
}


def relative_position_buckets(length: int, buckets: int = RELATIVE_BUCKETS,
                              max_distance: int = RELATIVE_MAX_DISTANCE) -> NDArray[np.int64]:
    """The bucket of every (query position i, key position j) pair, shape (length, length),
    for the relative position j - i: keys after the query in the upper half of the buckets,
    the others in the lower half; within each half the first half of the buckets are exact
    distances and the rest grow logarithmically up to max_distance, beyond which all share
    the half's last bucket. In float32, as the model computes it, so that a distance on a
    bucket's edge (16, 32, 64) falls where it falls there."""
    positions = np.arange(length)
    distance = positions[:, None] - positions[None, :]  # i - j: positive for keys before
    half = buckets // 2
    bucket = np.where(distance < 0, half, 0)
    distance = np.abs(distance)
    exact = half // 2
    ratio = np.maximum(distance, 1).astype(np.float32) / np.float32(exact)
    scaled = np.log(ratio) / np.float32(np.log(max_distance / exact)) * np.float32(half - exact)
    large = np.minimum(exact + scaled.astype(np.int64), half - 1)
    return (bucket + np.where(distance < exact, distance, large)).astype(np.int64)


class MpNetEncoder(NumpyBertEncoder):
    """all-mpnet-base-v2 (768-d) from an unpacked model folder (model.safetensors,
    tokenizer.json, config.json, sentence_bert_config.json); truncation at 384 tokens."""

    name = "all-mpnet-base-v2"

    def __init__(self, model_dir: Path, batch_tokens: int = 1024) -> None:
        super().__init__(model_dir, batch_tokens, cache_size=0)
        self.relative_bias: FloatArray | None = None  # (buckets, heads), read with the weights

    @property
    def weights(self) -> EncoderWeights:
        with self._lock:
            if self._weights is None:
                self._weights, self.relative_bias = read_mpnet_weights(
                    self.model_dir / "model.safetensors", self.layer_count)
            return self._weights

    def position_bias(self, width: int) -> FloatArray:
        """The relative-position bias every layer adds, shape (heads, width, width)."""
        assert self.relative_bias is not None  # read with the weights
        table = self.relative_bias[relative_position_buckets(width)]  # (width, width, heads)
        return np.ascontiguousarray(table.transpose(2, 0, 1))

    def forward(self, ids: NDArray[np.int64], mask: FloatArray) -> FloatArray:
        batch, width = ids.shape
        weights = self.weights
        hidden = weights.word[ids] + weights.position[FIRST_POSITION:FIRST_POSITION + width]
        hidden = layer_norm(hidden, weights.norm_w, weights.norm_b, self.eps)
        padding = ((np.float32(1.0) - mask) * MASKED_SCORE)[:, None, None, :]
        bias = (padding + self.position_bias(width)[None]).astype(np.float32)
        flat = hidden.reshape(batch * width, self.dimension)
        for layer in weights.layers:
            flat = self.run_layer(layer, flat, bias, batch, width)
        return mean_pool(flat.reshape(batch, width, self.dimension), mask)


def read_mpnet_weights(path: Path, layer_count: int) -> tuple[EncoderWeights, FloatArray]:
    tensors = map_safetensors(path)

    def tensor(name: str) -> FloatArray:
        return np.asarray(tensors[name], dtype=np.float32)

    word = tensor("embeddings.word_embeddings.weight")
    weights = EncoderWeights(
        word=word,
        position=tensor("embeddings.position_embeddings.weight"),
        token_type=np.zeros((1, word.shape[1]), dtype=np.float32),
        norm_w=tensor("embeddings.LayerNorm.weight"),
        norm_b=tensor("embeddings.LayerNorm.bias"),
        layers=[read_mpnet_layer(tensors, i) for i in range(layer_count)],
    )
    return weights, tensor("encoder.relative_attention_bias.weight")


def read_mpnet_layer(tensors: dict[str, np.ndarray], index: int) -> EncoderLayer:
    """One layer through read_layer, its tensors given BERT's names."""
    prefix = f"encoder.layer.{index}."
    renamed = {}
    for name, array in tensors.items():
        if not name.startswith(prefix):
            continue
        local = name[len(prefix):]
        for bert, mpnet in LAYER_NAMES.items():
            if local.startswith(mpnet + "."):
                local = bert + local[len(mpnet):]
                break
        renamed[prefix + local] = array
    return read_layer(renamed, index)
