"""Paper vectors: all-MiniLM-L6-v2 embeddings of every paper's title and abstract (TeX
reduced to plain words), by the paper encoder the settings choose (models/paper_encoders.py).
They serve twice: stored on the papers with their encoder's name (`store_paper_vectors`, run
by `crase embed` and `crase db import`), where the `paper_embedding` vector index makes them
the dense half of a search's own text ranking; and as the in-memory index of the
dense-retrieval baseline of the benchmarks (`DenseIndex`), searched by cosine similarity
over the whole corpus.

The vectors are computed once per corpus and encoder and kept under
`<var_dir>/vectors/<encoder>-<key>/` (`ids.json`, `vectors.npy`: float32, one unit row per
paper, ids in the same order). The key hashes every (id, embedded text), so a changed
corpus, or a change to how TeX is read, gets new vectors, and an unchanged one is never
encoded twice. A whole corpus takes minutes to hours, so the build writes chunks as they
finish and an interrupted build resumes at the first missing chunk.
"""

import hashlib
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from crase.graph import Graph
from crase.models.minilm import SentenceEncoder
from crase.scoring.tex import plain_text

FloatArray = NDArray[np.float32]
BuildProgress = Callable[[int, int, float], None]  # (papers done, total, seconds so far)
StageProgress = Callable[[str, int, int], None]  # (stage, done, total): CountProgress.update


@dataclass(frozen=True)
class CorpusTexts:
    ids: list[str]
    texts: list[str]
    key: str  # hash of every (id, embedded text), in id order


def paper_text(title: str | None, abstract: str | None) -> str:
    """What a paper is embedded as: `title. abstract`, TeX reduced to plain words."""
    parts = [p.strip() for p in (title or "", abstract or "") if p and p.strip()]
    return plain_text(". ".join(parts))


def read_corpus_texts(graph: Graph, page: int = 5000) -> CorpusTexts:
    ids: list[str] = []
    texts: list[str] = []
    digest = hashlib.blake2b(digest_size=8)
    after = ""
    while rows := graph.read("read_paper_texts", after=after, limit=page):
        for row in rows:
            ids.append(row["id"])
            texts.append(paper_text(row["title"], row["abstract"]))
            digest.update(f"{row['id']}\t{texts[-1]}\n".encode())
        after = rows[-1]["id"]
    return CorpusTexts(ids, texts, digest.hexdigest())


class DenseIndex:
    """Unit vectors of the corpus; `search` ranks papers by cosine to a query vector."""

    def __init__(self, ids: list[str], vectors: FloatArray) -> None:
        self.ids = ids
        self.vectors = vectors
        self.row = {paper: i for i, paper in enumerate(ids)}

    def search(self, query_vector: FloatArray, k: int,
               excluded: list[str]) -> list[tuple[str, float]]:
        """Top-k (id, cosine), best first, ties by id; excluded papers never appear."""
        scores = self.vectors @ query_vector.astype(np.float32)
        for paper in excluded:
            if paper in self.row:
                scores[self.row[paper]] = -np.inf
        depth = min(k, len(self.ids))
        if depth == 0:
            return []
        top = np.argpartition(-scores, depth - 1)[:depth]
        ranked = sorted(top.tolist(), key=lambda i: (-float(scores[i]), self.ids[i]))
        return [(self.ids[i], float(scores[i])) for i in ranked if np.isfinite(scores[i])]


def vector_cache_dir(var_dir: Path) -> Path:
    """Where `crase embed`, `crase db import` and the benchmarks keep the paper vectors."""
    return var_dir / "vectors"


def load_or_build_index(graph: Graph, encoder: SentenceEncoder, cache_dir: Path,
                        chunk_size: int = 500,
                        progress: BuildProgress | None = None) -> DenseIndex:
    corpus = read_corpus_texts(graph)
    folder = cache_dir / f"{encoder.name}-{corpus.key}"
    vectors_path = folder / "vectors.npy"
    if vectors_path.is_file():
        vectors = np.load(vectors_path)
        ids = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
        if ids == corpus.ids and vectors.shape == (len(ids), encoder.dimension):
            return DenseIndex(ids, vectors)
    vectors = encode_in_chunks(corpus, encoder, folder / "chunks", chunk_size, progress)
    (folder / "ids.json").write_text(json.dumps(corpus.ids), encoding="utf-8")
    save_atomically(vectors_path, vectors)
    shutil.rmtree(folder / "chunks", ignore_errors=True)
    return DenseIndex(corpus.ids, vectors)


def encode_in_chunks(corpus: CorpusTexts, encoder: SentenceEncoder, chunk_dir: Path,
                     chunk_size: int, progress: BuildProgress | None) -> FloatArray:
    chunk_dir.mkdir(parents=True, exist_ok=True)
    parts: list[FloatArray] = []
    started = time.perf_counter()
    total = len(corpus.texts)
    for index, start in enumerate(range(0, total, chunk_size)):
        path = chunk_dir / f"{index:05d}.npy"
        texts = corpus.texts[start:start + chunk_size]
        part = np.load(path) if path.is_file() else None
        if part is None or part.shape != (len(texts), encoder.dimension):
            # Uncached: an abstract is embedded once here and never looked up again.
            part = encoder.encode_uncached(texts)
            save_atomically(path, part)
        parts.append(part)
        if progress:
            progress(start + len(texts), total, time.perf_counter() - started)
    if not parts:
        return np.empty((0, encoder.dimension), dtype=np.float32)
    return np.concatenate(parts).astype(np.float32)


def save_atomically(path: Path, array: FloatArray) -> None:
    """Write to a temporary name and rename, so a reader never sees half an array."""
    temporary = path.with_name(path.name + ".partial.npy")
    np.save(temporary, array)
    temporary.replace(path)


def store_paper_vectors(graph: Graph, index: DenseIndex, model: str, batch_size: int = 1000,
                        progress: BuildProgress | None = None) -> int:
    """Write every vector of `index` onto its paper (idempotent: a paper already holding a
    vector of `model` is skipped); returns the papers written."""
    missing: list[str] = []
    after = ""
    while rows := graph.read("find_papers_without_embedding", model=model, after=after,
                             limit=5000):
        missing += [row["id"] for row in rows if row["id"] in index.row]
        after = rows[-1]["id"]
    started = time.perf_counter()
    for start in range(0, len(missing), batch_size):
        batch = missing[start:start + batch_size]
        graph.write("set_paper_embeddings", model=model, rows=[
            {"id": paper, "vector": index.vectors[index.row[paper]].tolist()} for paper in batch])
        if progress:
            progress(start + len(batch), len(missing), time.perf_counter() - started)
    return len(missing)


@dataclass(frozen=True)
class EmbedReport:
    papers: int  # papers of the corpus, every one with a vector
    stored: int  # vectors written now (the rest held one of this encoder already)
    embed_s: float
    store_s: float


def embed_papers(graph: Graph, encoder: SentenceEncoder, var_dir: Path,
                 progress: StageProgress | None = None) -> EmbedReport:
    """`crase embed` and the embedding of `crase db import`: embed every paper (chunks
    cached under `vector_cache_dir`, so an interrupted run resumes where it stopped) and
    store the vectors the papers do not hold yet, each with its encoder's name (a vector of
    another encoder is replaced)."""
    def stage(name: str) -> BuildProgress | None:
        return (lambda done, total, _: progress(name, done, total)) if progress else None

    started = time.perf_counter()
    index = load_or_build_index(graph, encoder, vector_cache_dir(var_dir),
                                progress=stage("embedding papers"))
    embedded = time.perf_counter()
    stored = store_paper_vectors(graph, index, encoder.name, progress=stage("storing vectors"))
    return EmbedReport(len(index.ids), stored, embedded - started,
                       time.perf_counter() - embedded)
