"""`crase score`: claims and entailment for every unscored citation edge of the corpus.

The list of unscored edges is read once, then scored in batches; each batch is written
before the next starts, so an interrupted run resumes by simply running again. Any number
of workers with the same scorer can share a corpus: a batch scored twice is rewritten with
the same values.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass

from crase.graph import Graph
from crase.search.grounding import batched, ensure_claims, ensure_edge_scores
from crase.search.roles.protocols import SearchBackends

Progress = Callable[[str, int, int], None]


@dataclass
class ScoringReport:
    edges_found: int = 0
    edges_scored: int = 0
    edges_failed: int = 0
    edges_without_claims: int = 0
    papers_extracted: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        rate = self.edges_scored / self.seconds if self.seconds else 0.0
        return (f"scored {self.edges_scored} of {self.edges_found} unscored edges in "
                f"{self.seconds:.1f} s ({rate:.0f} edges/s); claims extracted for "
                f"{self.papers_extracted} papers; {self.edges_failed} failed, "
                f"{self.edges_without_claims} without claims")


def score_corpus(graph: Graph, backends: SearchBackends, theta: float, batch_size: int = 2000,
                 limit: int | None = None, progress: Progress | None = None) -> ScoringReport:
    """Claims and Delta for every unscored edge, in idempotent batches; `progress(stage, done,
    total)` hears after each batch (the command line's counter shows rate and ETA)."""
    rows = graph.read("find_unscored_edges", scorer=backends.scorer.name,
                      version=backends.scorer.version, limit=limit or 2**62)
    edges = [(r["citing"], r["cited"]) for r in rows]
    report = ScoringReport(edges_found=len(edges))
    start = time.perf_counter()
    for batch in batched(edges, batch_size):
        papers = sorted({p for edge in batch for p in edge})
        report.papers_extracted += ensure_claims(graph, backends.extractor, papers)
        scores = ensure_edge_scores(graph, backends.extractor.name, backends.scorer, batch,
                                    theta)
        report.edges_scored += scores.scored_now
        report.edges_failed += len(scores.failed)
        report.edges_without_claims += len(scores.without_claims)
        report.seconds = time.perf_counter() - start
        if progress is not None:
            done = report.edges_scored + report.edges_failed + report.edges_without_claims
            progress("scoring edges", done, report.edges_found)
    report.seconds = time.perf_counter() - start
    return report
