"""Papers embedded per second by each paper encoder, on the texts `crase embed` and
`crase db import` embed, through the same chunked path (ingest/paper_vectors.py).

    python -m crase.bench.embedding_rate                        # 2,000 hep-th papers
    python -m crase.bench.embedding_rate --limit 0              # the whole corpus
    python -m crase.bench.embedding_rate --encoders onnx-int8 --batch-tokens 256 512 1024

Texts are made from a corpus file (JSON lines with title and abstract) exactly as
`paper_text` makes them from the graph. Each encoder runs on the same texts, after one
warm-up batch (weights loaded, session built), with a scratch chunk folder (nothing is read
from or left in var/). Prints, per run, papers/s of wall time and per CPU-second of this
process (the second moves less when other work shares the machine), the mean tokens per
paper, the cosine of its vectors to the first run's (mean and minimum), and the load
average before and after.
"""

import argparse
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crase.bench.machine_state import load_average
from crase.ingest.paper_vectors import CorpusTexts, FloatArray, encode_in_chunks, paper_text
from crase.models.minilm import SentenceEncoder
from crase.models.paper_encoders import ENCODER_NAMES, paper_encoder
from crase.settings import PaperEncoderChoice

DEFAULT_PAPERS = Path("../shared/data/hepth/papers.jsonl")
CHUNK_SIZE = 500  # load_or_build_index's default


@dataclass
class Measured:
    label: str
    papers: int
    wall_s: float
    cpu_s: float
    tokens_per_paper: float
    vectors: FloatArray
    load_before: str
    load_after: str


def read_texts(path: Path, limit: int) -> CorpusTexts:
    """The first `limit` papers of the file (0: all), embedded as `paper_text` makes them."""
    ids: list[str] = []
    texts: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if limit and len(ids) >= limit:
                break
            row = json.loads(line)
            ids.append(str(row.get("id", len(ids))))
            texts.append(paper_text(row.get("title"), row.get("abstract")))
    return CorpusTexts(ids, texts, key="bench")


def build_encoder(choice: PaperEncoderChoice, batch_tokens: int | None,
                  threads: int | None) -> SentenceEncoder:
    encoder = paper_encoder(choice)
    if batch_tokens:
        encoder.batch_tokens = batch_tokens
    if threads:
        from crase.models.onnx_minilm import OnnxMiniLmEncoder

        if not isinstance(encoder, OnnxMiniLmEncoder):
            raise SystemExit(f"--threads applies to onnx-int8 only, not {choice}")
        encoder.batch_workers = threads
    return encoder


def measure(label: str, encoder: SentenceEncoder, corpus: CorpusTexts,
            chunk_size: int) -> Measured:
    encoder.encode_uncached(corpus.texts[:8])  # weights, session, tokenizer
    tokens = sum(len(e.ids) for e in encoder.tokenizer.encode_batch(corpus.texts))
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="crase-embedding-rate-") as scratch:
        wall, cpu = time.perf_counter(), time.process_time()
        vectors = encode_in_chunks(corpus, encoder, Path(scratch), chunk_size, None)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return Measured(label, len(corpus.texts), wall, cpu, tokens / max(len(corpus.texts), 1),
                    vectors, load_before, load_average())


def print_table(runs: list[Measured]) -> None:
    print(f"\n{'encoder':<56}{'papers':>8}{'wall s':>9}{'papers/s':>10}{'per CPU-s':>11}"
          f"{'cos mean':>10}{'cos min':>9}  load before -> after")
    reference = runs[0].vectors
    for run in runs:
        cosines = np.einsum("ij,ij->i", run.vectors, reference)
        print(f"{run.label:<56}{run.papers:>8,}{run.wall_s:>9.1f}"
              f"{run.papers / run.wall_s:>10.1f}{run.papers / max(run.cpu_s, 1e-9):>11.1f}"
              f"{cosines.mean():>10.4f}{cosines.min():>9.4f}  "
              f"{run.load_before} -> {run.load_after}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=Path, default=DEFAULT_PAPERS,
                        help=f"corpus papers.jsonl (default {DEFAULT_PAPERS})")
    parser.add_argument("--limit", type=int, default=2000,
                        help="papers to embed, from the top of the file (default 2000; 0: all)")
    parser.add_argument("--encoders", nargs="+", choices=list(ENCODER_NAMES),
                        default=list(ENCODER_NAMES), help="paper encoders to run, in order "
                        "(default: all; cosines are to the first)")
    parser.add_argument("--batch-tokens", type=int, nargs="+", default=[0], metavar="N",
                        help="padded tokens per batch to try (default: each encoder's own)")
    parser.add_argument("--threads", type=int, default=0,
                        help="onnx-int8: batches run at once, a core each "
                             "(default: the cores this process may use)")
    parser.add_argument("--chunk-size", type=int, default=CHUNK_SIZE,
                        help=f"papers per cached chunk, the span sorted by length "
                        f"(default {CHUNK_SIZE}, as `crase embed`)")
    args = parser.parse_args()
    corpus = read_texts(args.papers, args.limit)
    print(f"{len(corpus.texts):,} papers of {args.papers}, chunks of {args.chunk_size}, "
          f"{os.cpu_count()} cores; load average {load_average()}", flush=True)
    runs = []
    for choice in args.encoders:
        for batch_tokens in args.batch_tokens:
            encoder = build_encoder(choice, batch_tokens or None, args.threads or None)
            threads = encoder.batch_workers if encoder.batch_workers > 1 else None
            label = (f"{encoder.name} ({choice}, {encoder.batch_tokens} tok"
                     + (f", {threads} at once)" if threads else ")"))
            runs.append(measure(label, encoder, corpus, args.chunk_size))
            print(f"  {label}: {runs[-1].papers / runs[-1].wall_s:.1f} papers/s", flush=True)
    print_table(runs)
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
