"""`crase score`: claims and entailment for every unscored citation edge of the corpus.

The list of unscored edges is read once, then scored in batches; each batch is written
before the next starts, so an interrupted run resumes by simply running again. Any number
of workers with the same scorer can share a corpus: a batch scored twice is rewritten with
the same values. `score_batch` is the one unit of work, run in a loop here and by the Ray
workers of `search/ray_scoring.py`.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from crase.graph import Graph
from crase.models.paper_encoders import paper_encoder
from crase.search.expansion import Edge
from crase.search.grounding import batched, ensure_claims, ensure_edge_scores
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.protocols import EntailmentScorer, SearchBackends
from crase.settings import Settings

Progress = Callable[[str, int, int], None]
# Builds the backends of one scoring process from the settings; a distributed worker calls
# it once, so it must be a module-level function (or a partial of one) to travel by name.
BackendsFactory = Callable[[Settings], SearchBackends]
STAGE = "scoring edges"  # the progress callback's stage name, for both engines


def scoring_backends(settings: Settings, cache_size: int = 400_000) -> SearchBackends:
    """The backends of a corpus-wide pass. It meets every claim on many edges: keep all
    their embeddings (384 floats each; 400,000 claims is about 600 MB) instead of
    re-encoding them."""
    return build_search_backends(
        settings, paper_encoder(settings.models.paper_encoder, cache_size=cache_size))


@dataclass
class BatchCounts:
    """What one batch did; a distributed worker also says who it is."""

    edges: int = 0
    scored: int = 0
    failed: int = 0
    without_claims: int = 0
    papers_extracted: int = 0
    worker: str = ""


@dataclass
class ScoringReport:
    edges_found: int = 0
    edges_scored: int = 0
    edges_failed: int = 0
    edges_without_claims: int = 0
    papers_extracted: int = 0
    seconds: float = 0.0
    # Batches that raised or whose worker died: none of their edges count as scored here.
    batches_failed: int = 0
    edges_in_failed_batches: int = 0
    first_failure: str = ""
    batches_by_worker: dict[str, int] = field(default_factory=dict)

    @property
    def edges_done(self) -> int:
        """Edges handled so far, whatever became of them (the progress counter)."""
        return (self.edges_scored + self.edges_failed + self.edges_without_claims
                + self.edges_in_failed_batches)

    def add(self, counts: BatchCounts) -> None:
        self.edges_scored += counts.scored
        self.edges_failed += counts.failed
        self.edges_without_claims += counts.without_claims
        self.papers_extracted += counts.papers_extracted
        if counts.worker:
            self.batches_by_worker[counts.worker] = (
                self.batches_by_worker.get(counts.worker, 0) + 1)

    def add_failed_batch(self, edges: int, reason: str) -> None:
        self.batches_failed += 1
        self.edges_in_failed_batches += edges
        self.first_failure = self.first_failure or reason

    def summary(self) -> str:
        rate = self.edges_scored / self.seconds if self.seconds else 0.0
        line = (f"scored {self.edges_scored} of {self.edges_found} unscored edges in "
                f"{self.seconds:.1f} s ({rate:.0f} edges/s); claims extracted for "
                f"{self.papers_extracted} papers; {self.edges_failed} failed, "
                f"{self.edges_without_claims} without claims")
        if self.batches_by_worker:
            workers = len(self.batches_by_worker)
            line += f"; {workers} worker{'s' if workers > 1 else ''}"
        if self.batches_failed:
            batches = f"{self.batches_failed} batch{'es' if self.batches_failed > 1 else ''}"
            line += (f"; {batches} ({self.edges_in_failed_batches} edges) "
                     f"failed, first: {self.first_failure}; run `crase score` again to score "
                     "what is still unscored")
        return line


def find_unscored_edges(graph: Graph, scorer: EntailmentScorer,
                        limit: int | None = None) -> list[Edge]:
    """Every citation edge this scorer (name and version) has not scored, up to `limit`."""
    rows = graph.read("find_unscored_edges", scorer=scorer.name, version=scorer.version,
                      limit=limit or 2**62)
    return [(r["citing"], r["cited"]) for r in rows]


def score_batch(graph: Graph, backends: SearchBackends, batch: list[Edge],
                theta: float) -> BatchCounts:
    """Claims for the batch's papers that lack them, then entailment for its edges, both
    written before this returns (so a rerun skips what this batch did)."""
    papers = sorted({p for edge in batch for p in edge})
    extracted = ensure_claims(graph, backends.extractor, papers)
    scores = ensure_edge_scores(graph, backends.extractor.name, backends.scorer, batch, theta)
    return BatchCounts(edges=len(batch), scored=scores.scored_now, failed=len(scores.failed),
                       without_claims=len(scores.without_claims), papers_extracted=extracted)


def score_corpus(graph: Graph, backends: SearchBackends, theta: float, batch_size: int = 2000,
                 limit: int | None = None, progress: Progress | None = None) -> ScoringReport:
    """Claims and Delta for every unscored edge, in idempotent batches; `progress(stage, done,
    total)` hears after each batch (the command line's counter shows rate and ETA)."""
    edges = find_unscored_edges(graph, backends.scorer, limit)
    report = ScoringReport(edges_found=len(edges))
    start = time.perf_counter()
    for batch in batched(edges, batch_size):
        report.add(score_batch(graph, backends, batch, theta))
        report.seconds = time.perf_counter() - start
        if progress is not None:
            progress(STAGE, report.edges_done, report.edges_found)
    report.seconds = time.perf_counter() - start
    return report
