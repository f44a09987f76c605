"""Citation edges and non-citing pairs sampled from a corpus in the normalized format, for
the entailment calibration and benchmark.

A non-citing pair keeps the citing paper of a sampled edge and swaps the cited paper for a
random paper of the same year or older that neither cites nor is cited by it, so the two
samples differ only in whether the citation exists.
"""

import argparse
import csv
import json
import random
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

from crase.scoring.claims import PaperText
from crase.settings import Settings


@dataclass(frozen=True)
class Corpus:
    papers: dict[str, PaperText]
    years: dict[str, int]
    edges: list[tuple[str, str]]


def default_corpus() -> Path:
    """The corpus setting (CRASE_SAMPLE_CORPUS): the repository's 3,000-paper hep-th
    sample unless set, e.g. to the full hep-th corpus."""
    return Settings().sample_corpus


def add_sample_arguments(parser: argparse.ArgumentParser) -> None:
    """The corpus folder and the edge sample, as the benchmarks over citation pairs take
    them."""
    parser.add_argument("corpus", type=Path, nargs="?", default=default_corpus(),
                        help="folder with papers.jsonl and citations.csv "
                        "(default: CRASE_SAMPLE_CORPUS, else data/sample)")
    parser.add_argument("--edges", type=int, default=2000, help="citation edges to sample")
    parser.add_argument("--seed", type=int, default=7, help="sampling seed")


def read_corpus(folder: Path) -> Corpus:
    papers: dict[str, PaperText] = {}
    years: dict[str, int] = {}
    with (folder / "papers.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            papers[row["id"]] = PaperText(row["id"], row.get("title") or "",
                                          row.get("abstract") or "")
            years[row["id"]] = int(row.get("year") or 0)
    with (folder / "citations.csv").open(newline="", encoding="utf-8") as handle:
        edges = [(r["citing_id"], r["cited_id"]) for r in csv.DictReader(handle)]
    return Corpus(papers, years, edges)


def sample_edges(corpus: Corpus, count: int, seed: int) -> list[tuple[str, str]]:
    """`count` citation edges (all of them if fewer), in a seeded random order."""
    rng = random.Random(seed)
    return rng.sample(corpus.edges, min(count, len(corpus.edges)))


def sample_non_citing(corpus: Corpus, edges: list[tuple[str, str]], seed: int
                      ) -> list[tuple[str, str]]:
    """One non-citing pair per edge: same citing paper, a random older-or-same-year paper
    with no citation between the two in either direction (none if no such paper is found)."""
    rng = random.Random(seed + 1)
    linked: dict[str, set[str]] = {}
    for citing, cited in corpus.edges:
        linked.setdefault(citing, set()).add(cited)
        linked.setdefault(cited, set()).add(citing)
    by_year = sorted(corpus.papers, key=lambda p: (corpus.years[p], p))
    years = [corpus.years[p] for p in by_year]
    pairs = []
    for citing, _ in edges:
        older = bisect_right(years, corpus.years[citing])
        for _ in range(1000):  # a paper linked to everything older gets no pair
            other = by_year[rng.randrange(older)]
            if other != citing and other not in linked.get(citing, set()):
                pairs.append((citing, other))
                break
    return pairs

