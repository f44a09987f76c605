"""Throughput of the offline grounding stages on a sample of real citation edges.

    .venv/bin/python -m crase.bench.entailment [corpus] [--edges 2000] [--seed 7]

Measures, on one process and whatever BLAS threads the machine gives numpy:
claim extraction (papers/s), embedding of every distinct claim with a cold cache
(claims/s), and scoring the edges once their claims are embedded (edges/s), plus the cold
figure a first query pays (extraction + embedding + scoring, edges/s).
"""

import argparse
import time
from pathlib import Path

from crase.bench.citation_pairs import add_sample_arguments, read_corpus, sample_edges
from crase.models.minilm import MiniLmEncoder
from crase.search.roles.offline_claims import OfflineClaimExtractor
from crase.search.roles.offline_entailment import OfflineEntailmentScorer


def measure(folder: Path, edge_count: int, seed: int) -> dict[str, float]:
    corpus = read_corpus(folder)
    edges = sample_edges(corpus, edge_count, seed)
    papers = sorted({p for edge in edges for p in edge})
    encoder = MiniLmEncoder()

    started = time.perf_counter()
    claims = OfflineClaimExtractor().extract([corpus.papers[p] for p in papers])
    extracted = time.perf_counter()
    texts = sorted({c.text for paper_claims in claims.values() for c in paper_claims})
    encoder.encode(texts)
    embedded = time.perf_counter()
    pairs = [(claims[u], claims[v]) for u, v in edges if claims.get(u) and claims.get(v)]
    OfflineEntailmentScorer(encoder).score(pairs)
    scored = time.perf_counter()

    tokens = sum(len(e.ids) for e in encoder.tokenizer.encode_batch(texts))
    return {
        "edges": len(pairs),
        "papers": len(papers),
        "claims": len(texts),
        "mean_tokens_per_claim": round(tokens / len(texts), 1),
        "extract_papers_per_s": round(len(papers) / (extracted - started), 1),
        "embed_claims_per_s": round(len(texts) / (embedded - extracted), 1),
        "embed_tokens_per_s": round(tokens / (embedded - extracted), 1),
        "score_edges_per_s_warm": round(len(pairs) / (scored - embedded), 1),
        "edges_per_s_cold": round(len(pairs) / (scored - started), 1),
        "seconds_total": round(scored - started, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_sample_arguments(parser)
    args = parser.parse_args()
    for name, value in measure(args.corpus, args.edges, args.seed).items():
        print(f"{name:>26}: {value}")


if __name__ == "__main__":
    main()
