"""Why each returned paper was kept: the seed that reaches it, the retained citation edges
on the way (each with Delta and its best-grounded claim pair), and its strongest edges.
"""

import textwrap
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from crase.scoring.claims import Claim
from crase.search.expansion import Edge
from crase.search.walk import walk_steps


@dataclass
class EdgeEvidence:
    citing: str
    cited: str
    delta: float
    citing_claim: str | None = None  # the claim of the citing paper best grounded by ...
    cited_claim: str | None = None  # ... this claim of the cited paper
    support: float | None = None  # entailment score of that pair
    # The publisher's mark on the citation (Semantic Scholar's isinfluential); None where
    # the corpus has none.
    influential: bool | None = None


@dataclass
class PaperEvidence:
    seed: bool
    reached_from: str | None  # nearest seed along the walk
    path: list[EdgeEvidence] = field(default_factory=list)
    strongest_edges: list[EdgeEvidence] = field(default_factory=list)
    # Not ranked by the walk: a full-text hit of the query that filled an empty place.
    text_match: bool = False
    # A seed's place in the query's own text ranking (BM25 and embeddings fused) and its
    # share of the walk's restart mass (1 / rank^2, normalised): why a seed stands high.
    text_rank: int | None = None
    restart_share: float | None = None
    # Under the learned order: the features that placed the paper, each with its term of
    # the model's score (the largest first; search/order/model.py).
    ranking_features: dict[str, float] | None = None

    def edges(self) -> list[EdgeEvidence]:
        return self.path + self.strongest_edges


def walk_adjacency(edges: dict[Edge, float], orientation: str
                   ) -> dict[str, list[tuple[str, Edge]]]:
    """For each paper, the papers the walk can step to, with the citation edge used."""
    adjacency: dict[str, list[tuple[str, Edge]]] = {}
    for here, there, edge in walk_steps(edges, orientation):
        adjacency.setdefault(here, []).append((there, edge))
    return adjacency


def nearest_seed_paths(edges: dict[Edge, float], seeds: list[str],
                       orientation: str) -> dict[str, tuple[str, list[Edge]]]:
    """Breadth-first from all seeds at once: for each reachable paper, its nearest seed and
    the citation edges on one shortest walk from it."""
    steps = walk_adjacency(edges, orientation)
    parent: dict[str, tuple[str, Edge] | None] = {s: None for s in seeds}
    origin = {s: s for s in seeds}
    queue = deque(seeds)
    while queue:
        here = queue.popleft()
        for there, edge in steps.get(here, []):
            if there not in parent:
                parent[there] = (here, edge)
                origin[there] = origin[here]
                queue.append(there)
    paths = {}
    for paper in parent:
        path, cursor = [], paper
        while (link := parent[cursor]) is not None:
            cursor, edge = link
            path.append(edge)
        paths[paper] = (origin[paper], path[::-1])
    return paths


def build_evidence(results: list[str], edges: dict[Edge, float], seeds: list[str],
                   orientation: str, influential: dict[Edge, bool] | None = None
                   ) -> dict[str, PaperEvidence]:
    """Each result's evidence: its nearest seed, the edges of one shortest walk from it,
    and up to three more of its heaviest edges; each edge with its walk weight (`delta`:
    Delta, or the weight of a walk without Delta) and the publisher's mark, if any."""
    marks = influential or {}
    paths = nearest_seed_paths(edges, seeds, orientation)
    incident: dict[str, list[Edge]] = {}
    for edge in edges:
        for paper in edge:
            incident.setdefault(paper, []).append(edge)
    evidence = {}
    for paper in results:
        origin, path = paths.get(paper, (None, []))
        strong = sorted(incident.get(paper, []), key=lambda e: (-edges[e], e))[:3]
        evidence[paper] = PaperEvidence(
            seed=paper in seeds, reached_from=origin,
            path=[EdgeEvidence(u, v, edges[(u, v)], influential=marks.get((u, v)))
                  for u, v in path],
            strongest_edges=[EdgeEvidence(u, v, edges[(u, v)], influential=marks.get((u, v)))
                             for u, v in strong if (u, v) not in path],
        )
    return evidence


def attach_claim_pairs(evidence: dict[str, PaperEvidence], matrices: dict[Edge, np.ndarray],
                       claims: dict[str, list[Claim]]) -> None:
    """Fill each edge's best claim pair from its stored matrix (row = citing claim)."""
    for paper_evidence in evidence.values():
        for item in paper_evidence.edges():
            matrix = matrices.get((item.citing, item.cited))
            if matrix is None or matrix.size == 0:
                continue
            i, j = np.unravel_index(int(np.argmax(matrix)), matrix.shape)
            citing_claims = claims.get(item.citing, [])
            cited_claims = claims.get(item.cited, [])
            if i < len(citing_claims) and j < len(cited_claims):
                item.citing_claim = citing_claims[i].text
                item.cited_claim = cited_claims[j].text
                item.support = round(float(matrix[i, j]), 4)


# --- evidence in words (the command line's table, the exports) ----------------------------

# Delta is the share of the citing paper's claims that the cited paper grounds; a reader
# gets it in words: from half the claims on strong, from a quarter moderate, above 0 weak.
STRONG_SUPPORT, MODERATE_SUPPORT = 0.5, 0.25


def clip(text: str, width: int) -> str:
    """`text` on one line, cut at a word boundary to at most `width` characters."""
    return textwrap.shorten(" ".join(text.split()), width=width, placeholder="...")


def support_words(delta: float) -> str:
    if delta >= STRONG_SUPPORT:
        return "strong support"
    if delta >= MODERATE_SUPPORT:
        return "moderate support"
    return "weak support" if delta > 0 else "no support"


def describe_order(order: dict[str, Any]) -> str:
    """What placed the list, in words: the learned model (and what it was trained on),
    the walk's scores, or the query's own text ranking, with why the model did not."""
    if order.get("placed_by") == "model":
        model = order.get("model", {})
        training = model.get("training", {})
        years = sorted({training.get("source_year_min"), training.get("source_year_max")}
                       - {None})
        trained = " ".join(filter(None, [training.get("corpus"),
                                         "-".join(map(str, years))]))
        return (f"learned, model {model.get('name')}"
                + (f" (trained on {trained} papers)" if trained else "")
                + "; each paper shows the features that placed it")
    reason = order.get("not_applied")
    if reason:
        return f"not the learned model: {reason}"
    return "the walk's scores (order=walk)"


def describe_delta(delta: float) -> str:
    """'Delta 0.41 (moderate support: 41% of the citing paper's claims grounded)'."""
    return (f"Delta {delta:.2f} ({support_words(delta)}: {delta:.0%} of the citing paper's "
            "claims grounded)")


def describe_score(score: float, rank: int, scores: Sequence[float]) -> str:
    """A walk score in words: its rank and its share of the listed papers' total, e.g.
    'walk score 0.02031: rank 4 of 50, 4.1% of the list's total (average 2.0%)'."""
    total = sum(scores)
    if score <= 0 or total <= 0:
        return f"rank {rank} of {len(scores)}; no walk score (placed by text relevance)"
    return (f"walk score {score:.5f}: rank {rank} of {len(scores)}, {score / total:.1%} of "
            f"the list's total (average {1 / len(scores):.1%})")
