"""nomic-embed-text-v1.5 (GGUF, f16) on llama.cpp, in process through llama-cpp-python (the
build `make local-llm` installs), for the encoder comparison only (bench/encoder_comparison.py).

The model wants a task prefix: `search_document: ` before every paper, `search_query: `
before every query. llama.cpp mean-pools the last hidden states of each sequence (the
GGUF's pooling type, set here explicitly); the vectors are kept unnormalised, so that one
embedding serves every Matryoshka size: the full 768 dimensions are L2-normalised as they
are, a smaller size is layer-normed over all 768, cut to its first dimensions and then
normalised, as the model's card prescribes. Texts longer than the context (512 tokens) are
cut there.
"""

import os
from pathlib import Path
from typing import Any

import numpy as np

from crase.errors import EmbeddingModelMissing
from crase.models.minilm import FloatArray

DOCUMENT_PREFIX = "search_document: "
QUERY_PREFIX = "search_query: "
FULL_DIMENSION = 768
MATRYOSHKA_DIMENSIONS = (768, 512, 256, 128, 64)
CONTEXT_TOKENS = 512
LAYER_NORM_EPS = np.float32(1e-5)
INSTALL_HINT = "make local-llm (llama-cpp-python)"


def matryoshka_vectors(raw: FloatArray, dimension: int) -> FloatArray:
    """Unit vectors of `dimension` from mean-pooled 768-d embeddings."""
    if dimension not in MATRYOSHKA_DIMENSIONS:
        raise EmbeddingModelMissing(
            f"nomic-embed has no {dimension}-d size; choose one of {MATRYOSHKA_DIMENSIONS}")
    vectors = np.asarray(raw, dtype=np.float32)
    if dimension < FULL_DIMENSION:
        centred = vectors - vectors.mean(axis=1, keepdims=True)
        vectors = centred / np.sqrt(centred.var(axis=1, keepdims=True) + LAYER_NORM_EPS)
        vectors = vectors[:, :dimension]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, np.float32(1e-12))).astype(np.float32)


class NomicEmbedEncoder:
    """`embed_papers` / `embed_queries`: mean-pooled, unnormalised 768-d vectors;
    `finish` turns them into the unit vectors of `dimension` that are compared."""

    # One set of kept vectors, whatever the size compared.
    cache_name = "nomic-embed-text-v1.5-f16"

    def __init__(self, model_path: Path, dimension: int = FULL_DIMENSION,
                 threads: int | None = None) -> None:
        if not model_path.is_file():
            raise EmbeddingModelMissing(
                f"{model_path} is missing; unpack it from gpt4all's zip parts first")
        matryoshka_vectors(np.zeros((1, FULL_DIMENSION), np.float32), dimension)  # checks it
        self.model_path = model_path
        self.dimension = dimension
        self.name = self.cache_name + ("" if dimension == FULL_DIMENSION else f"-{dimension}")
        self.threads = threads or len(os.sched_getaffinity(0))
        self._model: Any = None

    @property
    def model(self) -> Any:
        if self._model is None:
            try:
                import llama_cpp
            except ImportError as error:
                raise EmbeddingModelMissing(
                    f"llama-cpp-python is not installed; run `{INSTALL_HINT}`") from error
            self._model = llama_cpp.Llama(
                str(self.model_path), embedding=True, n_ctx=CONTEXT_TOKENS,
                n_batch=CONTEXT_TOKENS, n_ubatch=CONTEXT_TOKENS, n_threads=self.threads,
                n_threads_batch=self.threads, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                verbose=False)
        return self._model

    def _embed(self, texts: list[str]) -> FloatArray:
        if not texts:
            return np.empty((0, FULL_DIMENSION), dtype=np.float32)
        vectors = self.model.embed(texts, normalize=False, truncate=True)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), FULL_DIMENSION)

    def embed_papers(self, texts: list[str]) -> FloatArray:
        return self._embed([DOCUMENT_PREFIX + text for text in texts])

    def embed_queries(self, texts: list[str]) -> FloatArray:
        return self._embed([QUERY_PREFIX + text for text in texts])

    def finish(self, vectors: FloatArray) -> FloatArray:
        return matryoshka_vectors(vectors, self.dimension)

    def count_tokens(self, texts: list[str]) -> int:
        return sum(min(len(self.model.tokenize((DOCUMENT_PREFIX + t).encode(), add_bos=True)),
                       CONTEXT_TOKENS) for t in texts)
