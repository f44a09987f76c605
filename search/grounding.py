"""Claims per paper and entailment per citation edge, stored in the graph and reused.

Claims are extracted once per (paper, extractor). An edge is scored once per (scorer name,
version); its matrix stays on the edge, and Delta at a run's theta is computed from it in
the database, so a run with another theta never calls the scorer again. Both steps work
in batches and write each batch before the next one, so an interrupted run resumes where
it stopped.
"""

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from crase.graph import Graph
from crase.run_lifecycle import now_iso
from crase.scoring.claims import Claim, PaperText
from crase.scoring.delta import coverage_affinity
from crase.search.expansion import Edge, StoredScore
from crase.search.roles.protocols import ClaimExtractor, EntailmentScorer

Progress = Callable[[str, int, int], None]
T = TypeVar("T")


@dataclass
class EdgeScores:
    delta: dict[Edge, float] = field(default_factory=dict)  # at the run's theta
    scored_now: int = 0
    reused: int = 0
    failed: list[Edge] = field(default_factory=list)  # scorer gave no valid matrix
    without_claims: list[Edge] = field(default_factory=list)  # a side has no claims


def batched(items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def ensure_claims(graph: Graph, extractor: ClaimExtractor, paper_ids: list[str],
                  batch_size: int = 256, progress: Progress | None = None) -> int:
    """Extract and store claims for the papers that lack them; returns papers extracted."""
    missing = graph.read("find_papers_without_claims", ids=paper_ids, extractor=extractor.name)
    done = 0
    for batch in batched(missing, batch_size):
        texts = [PaperText(r["id"], r["title"] or "", r["abstract"], r["intro"]) for r in batch]
        claims = extractor.extract(texts)
        rows = [{"paper_id": pid, "rank": rank, "text": c.text, "type": c.type,
                 "source_phrase": c.source_phrase}
                for pid, paper_claims in claims.items()
                for rank, c in enumerate(paper_claims, start=1)]
        if rows:
            graph.write("merge_claims", rows=rows, extractor=extractor.name, created=now_iso())
        done += len(claims)
        if progress:
            progress("claims", done, len(missing))
    return done


def read_claims(graph: Graph, paper_ids: list[str], extractor: str) -> dict[str, list[Claim]]:
    rows = graph.read("read_claims", ids=paper_ids, extractor=extractor)
    return {r["paper_id"]: [Claim(c["text"], c["type"], c["source_phrase"]) for c in r["claims"]]
            for r in rows}


def ensure_edge_scores(graph: Graph, extractor: str, scorer: EntailmentScorer,
                       edges: list[Edge], theta: float, batch_size: int = 512,
                       progress: Progress | None = None,
                       stored: Mapping[Edge, StoredScore] | None = None) -> EdgeScores:
    """Delta at `theta` for every edge, scoring only the edges this scorer has not scored.

    `stored` is what the caller already read from the edges (the expansion does); an edge
    whose stored Delta answers this scorer at this theta is not read again."""
    result = EdgeScores()
    to_read = []
    for edge in edges:
        known = (stored or {}).get(edge)
        if known and known.answers(scorer.name, scorer.version, theta):
            result.delta[edge] = known.delta
            result.reused += 1
        else:
            to_read.append(edge)
    rows = graph.read("read_edge_scores", edges=[list(e) for e in to_read],
                      scorer=scorer.name, version=scorer.version,
                      theta=theta) if to_read else []
    unscored = []
    for row in rows:
        edge = (row["citing"], row["cited"])
        if row["delta"] is None:
            unscored.append(edge)
        else:
            result.delta[edge] = float(row["delta"])
            result.reused += 1
    # Edges out of one paper side by side: their prompts share the citing claims, which a
    # model server that caches a prompt's prefix then reads once (score_entailment@2).
    unscored.sort()
    for done, batch in enumerate(batched(unscored, batch_size), start=1):
        _score_batch(graph, extractor, scorer, batch, theta, result)
        if progress:
            progress("entailment", min(done * batch_size, len(unscored)), len(unscored))
    return result


def read_matrices(graph: Graph, scorer: EntailmentScorer,
                  edges: list[Edge]) -> dict[Edge, np.ndarray]:
    rows = graph.read("read_edge_matrices", edges=[list(e) for e in edges],
                      scorer=scorer.name, version=scorer.version)
    return {(r["citing"], r["cited"]): np.asarray(r["matrix"], dtype=float).reshape(
        r["rows"], r["cols"]) for r in rows if r["matrix"] is not None}


def _score_batch(graph: Graph, extractor: str, scorer: EntailmentScorer, batch: list[Edge],
                 theta: float, result: EdgeScores) -> None:
    claims = read_claims(graph, sorted({p for edge in batch for p in edge}), extractor)
    scorable = [e for e in batch if claims.get(e[0]) and claims.get(e[1])]
    result.without_claims.extend(e for e in batch if not (claims.get(e[0]) and claims.get(e[1])))
    matrices = scorer.score([(claims[u], claims[v]) for u, v in scorable])
    rows = []
    for edge, matrix in zip(scorable, matrices, strict=True):
        if matrix is None:
            result.failed.append(edge)
            continue
        delta = coverage_affinity(matrix, theta)
        result.delta[edge] = delta
        rows.append({"citing": edge[0], "cited": edge[1], "delta": delta,
                     "matrix": [round(float(x), 6) for x in matrix.ravel()],
                     "rows": int(matrix.shape[0]), "cols": int(matrix.shape[1])})
    if rows:
        graph.write("set_edge_scores", rows=rows, theta=theta, scorer=scorer.name,
                    version=scorer.version, scored_at=now_iso())
    result.scored_now += len(rows)
