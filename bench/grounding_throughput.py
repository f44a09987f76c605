"""Throughput of the offline grounding stages on a sample of real citation edges, for each
claim encoder on the same edges.

    .venv/bin/python -m crase.bench.grounding_throughput [corpus] [--edges 2000] [--seed 7]
        [--encoders numpy,onnx-int8] [--batch-tokens N]

Per encoder, in one process, from a cold start (fresh encoder, empty cache, model loaded
first and timed apart): claim extraction (papers/s), embedding of every distinct claim
(claims/s, and claims per CPU-second, which a busy shared machine disturbs less than wall
time), scoring the edges once their claims are embedded (edges/s), and the cold figure a
first query pays (extraction + embedding + scoring, edges/s). The load average is printed
beside each encoder's figures, and the ratio of cold edges/s to the first encoder's.
"""

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from crase.bench.citation_pairs import add_sample_arguments, read_corpus, sample_edges
from crase.bench.machine_state import load_average
from crase.models.minilm import NumpyBertEncoder, SentenceEncoder
from crase.search.roles.cosine_entailment import CosineEntailmentScorer
from crase.search.roles.offline_claims import OfflineClaimExtractor

T = TypeVar("T")
ENCODERS = ("numpy", "onnx-int8")


def make_encoder(choice: str, batch_tokens: int | None) -> SentenceEncoder:
    if choice == "numpy":
        return NumpyBertEncoder(batch_tokens=batch_tokens or 1024)
    from crase.models.onnx_minilm import ONNX_BATCH_TOKENS, OnnxMiniLmEncoder

    return OnnxMiniLmEncoder(batch_tokens=batch_tokens or ONNX_BATCH_TOKENS)


def timed(work: Callable[[], T]) -> tuple[T, float, float]:
    """The result, wall seconds and CPU seconds of this process (all threads)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def measure(folder: Path, edge_count: int, seed: int, choice: str,
            batch_tokens: int | None = None) -> dict[str, float | str]:
    corpus = read_corpus(folder)
    edges = sample_edges(corpus, edge_count, seed)
    papers = sorted({p for edge in edges for p in edge})
    encoder = make_encoder(choice, batch_tokens)
    load_before = load_average()
    # Weights or session first, so the embedding figure is the forward passes only.
    _, load_s, _ = timed(lambda: encoder.encode_uncached(["warm up"]))

    claims, extract_s, _ = timed(
        lambda: OfflineClaimExtractor().extract([corpus.papers[p] for p in papers]))
    texts = sorted({c.text for paper_claims in claims.values() for c in paper_claims})
    _, embed_s, embed_cpu = timed(lambda: encoder.encode(texts))
    pairs = [(claims[u], claims[v]) for u, v in edges if claims.get(u) and claims.get(v)]
    scorer = CosineEntailmentScorer(encoder)
    _, score_s, _ = timed(lambda: scorer.score(pairs))
    cold_s = extract_s + embed_s + score_s

    tokens = sum(len(e.ids) for e in encoder.tokenizer.encode_batch(texts))
    return {
        "encoder": f"{encoder.name} ({scorer.name}, batch {encoder.batch_tokens} tokens)",
        "load_average_before": load_before,
        "edges": len(pairs),
        "papers": len(papers),
        "claims": len(texts),
        "mean_tokens_per_claim": round(tokens / len(texts), 1),
        "model_load_s": round(load_s, 2),
        "extract_papers_per_s": round(len(papers) / extract_s, 1),
        "embed_claims_per_s": round(len(texts) / embed_s, 1),
        "embed_claims_per_cpu_s": round(len(texts) / embed_cpu, 1),
        "embed_tokens_per_s": round(tokens / embed_s, 1),
        "score_edges_per_s_warm": round(len(pairs) / score_s, 1),
        "edges_per_s_cold": round(len(pairs) / cold_s, 1),
        "seconds_cold": round(cold_s, 2),
        "load_average_after": load_average(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_sample_arguments(parser)
    parser.add_argument("--encoders", default=",".join(ENCODERS),
                        help=f"claim encoders to compare, in order ({', '.join(ENCODERS)})")
    parser.add_argument("--batch-tokens", type=int,
                        help="padded tokens per batch (default: each encoder's own)")
    args = parser.parse_args()
    choices = [c.strip() for c in args.encoders.split(",") if c.strip()]
    unknown = [c for c in choices if c not in ENCODERS]
    if unknown or not choices:
        parser.error(f"--encoders takes {', '.join(ENCODERS)}; got {args.encoders!r}")
    results = []
    for choice in choices:
        result = measure(args.corpus, args.edges, args.seed, choice, args.batch_tokens)
        results.append(result)
        for name, value in result.items():
            print(f"{name:>26}: {value}")
        print()
    for result in results[1:]:
        ratio = float(result["edges_per_s_cold"]) / float(results[0]["edges_per_s_cold"])
        embed = float(result["embed_claims_per_cpu_s"]) / float(
            results[0]["embed_claims_per_cpu_s"])
        print(f"cold edges/s, {str(result['encoder']).split()[0]} / {choices[0]}: {ratio:.2f}x "
              f"(embedding per CPU-second {embed:.2f}x)")


if __name__ == "__main__":
    main()
