"""Edges/s of `crase score` with 1 and 2 Ray workers, and on one process, on the same edges.

    .venv/bin/python -m crase.bench.ray_scoring [--edges 2000] [--batch-size 250]
        [--workers 1 2] [--ray-address ADDRESS] [--no-local]

Runs against the database the settings name (CRASE_DATABASE__*); use a throwaway one with
the sample loaded (docs/distributed-scoring.md). Every run starts from nothing: its
backends carry a tag of their own (the claim extractor's name and the scorer's version get
`+bench-<run>`), so no run reuses the claims or scores of another, and each extracts the
claims of its papers and scores its edges anew. The edges are the first `--edges` that
`find_unscored_edges` returns, the same for every run. What the runs store (tagged claims,
tagged scores on those edges) stays in that database.

Each line gives edges/s over the scoring itself (from the first batch sent to the last
written; Ray's start-up is in the wall time beside it) and the 1-minute load average
before and after the run: on a shared machine other work moves the figure.
"""

import argparse
import functools
import os
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from crase.graph import Graph
from crase.scoring.claims import Claim, PaperText
from crase.search.roles.protocols import ClaimExtractor, EntailmentScorer, SearchBackends
from crase.search.scoring_worker import ScoringReport, score_corpus, scoring_backends
from crase.settings import Settings
from crase.usage import Usage

CACHE_SIZE = 400_000


class TaggedExtractor:
    """A claim extractor under a name of its own, so its claims are stored apart."""

    def __init__(self, inner: ClaimExtractor, tag: str) -> None:
        self.inner = inner
        self.name = f"{inner.name}+{tag}"
        self.usage: Usage = inner.usage

    def extract(self, papers: list[PaperText]) -> dict[str, list[Claim]]:
        return self.inner.extract(papers)


class TaggedScorer:
    """An entailment scorer under a version of its own, so every edge counts as unscored."""

    def __init__(self, inner: EntailmentScorer, tag: str) -> None:
        self.inner = inner
        self.name = inner.name
        self.version = f"{inner.version}+{tag}"
        self.usage: Usage = inner.usage

    def score(self, pairs: list[tuple[list[Claim], list[Claim]]]
              ) -> list[NDArray[np.float64] | None]:
        return self.inner.score(pairs)


def tagged_backends(settings: Settings, tag: str) -> SearchBackends:
    """The backends of `crase score`, tagged; module-level so Ray workers build it by name."""
    backends = scoring_backends(settings, CACHE_SIZE)
    backends.extractor = TaggedExtractor(backends.extractor, tag)
    backends.scorer = TaggedScorer(backends.scorer, tag)
    return backends


@dataclass
class Measure:
    engine: str
    workers: int
    report: ScoringReport
    wall_s: float
    load_before: float
    load_after: float

    def line(self) -> str:
        r = self.report
        rate = r.edges_scored / r.seconds if r.seconds else 0.0
        return (f"{self.engine:<6} {self.workers:>7} {r.edges_scored:>6} {rate:>8.1f} "
                f"{r.seconds:>9.1f} {self.wall_s:>7.1f}   {self.load_before:.2f} -> "
                f"{self.load_after:.2f}")


HEADER = "engine workers  edges  edges/s  scoring_s  wall_s   load avg (1 min) before -> after"


def measure(settings: Settings, engine: str, workers: int, edges: int, batch_size: int,
            address: str | None) -> Measure:
    tag = f"bench-{engine}{workers}-{time.time_ns()}"
    factory = functools.partial(tagged_backends, tag=tag)
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    if engine == "ray":
        from crase.search.ray_scoring import score_corpus_on_ray

        report = score_corpus_on_ray(settings, factory, batch_size, edges, workers, address)
    else:
        with Graph.connect(settings.database) as graph:
            report = score_corpus(graph, factory(settings), settings.search.theta,
                                  batch_size, edges)
    return Measure(engine, workers, report, time.perf_counter() - started, load_before,
                   os.getloadavg()[0])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edges", type=int, default=2000, help="edges per run")
    parser.add_argument("--batch-size", type=int, default=250, help="edges per batch")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                        help="Ray worker counts to measure (default 1 2)")
    parser.add_argument("--ray-address", help="a running Ray cluster (default: start one)")
    parser.add_argument("--no-local", action="store_true",
                        help="leave out the single-process run")
    args = parser.parse_args(argv)
    settings = Settings()
    runs = ([] if args.no_local else [("local", 1)]) + [("ray", n) for n in args.workers]
    print(f"{os.cpu_count()} CPUs; {args.edges} edges, batches of {args.batch_size}; "
          f"database {settings.database.bolt_uri()}")
    print(HEADER)
    for engine, workers in runs:
        result = measure(settings, engine, workers, args.edges, args.batch_size,
                         args.ray_address)
        print(result.line(), flush=True)
        if result.report.edges_found != args.edges or result.report.batches_failed:
            print(f"  note: {result.report.summary()}")


if __name__ == "__main__":
    main()
