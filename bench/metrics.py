"""Retrieval metrics exactly as the Crase paper defines them ("Evaluation metrics").

Notation: Q the queries, Rel(q) the ground-truth set of query q, P_q = (p_1, ..., p_k) the
top-k papers a system returns, best first, y_i = 1 if p_i is in Rel(q) else 0.

- Recall@k is pooled over the queries, not averaged per query:
      Recall@k = sum_q |P_q ∩ Rel(q)| / sum_q |Rel(q)|
  so a query with many relevant papers weighs more than one with few.
- AP@k(q) = (1 / |Rel(q)|) * sum_{i=1..k} Prec@i(q) * y_i, Prec@i = (hits in the first i) / i.
  The normaliser is |Rel(q)|, the whole relevant set, NOT min(k, |Rel(q)|) and NOT the
  number of relevant papers retrieved. So AP@k <= min(k, |Rel(q)|) / |Rel(q)|: a query
  with 24 relevant papers scores at most 5/24 at k = 5, even for a perfect ranking. This
  is why the paper's MAP@5 values are small; it is kept as written so the figures compare.
- MAP@k = (1 / |Q|) * sum_q AP@k(q), a plain mean over queries.
- Hit@k(q) = 1 if any of the first k papers is relevant, else 0 (for single-target query
  sets, where it equals Recall@k); the reported figure is the mean over queries.

A ranking is read as a list of ids, best first; repeats after the first occurrence are
ignored (a system should not return a paper twice, and counting it twice would inflate
every metric). A query with an empty relevant set has no defined AP or recall share: it
is refused (the runner drops such queries first and says how many).
"""

from collections.abc import Sequence

from crase.errors import EvaluationError

CUTOFFS = (5, 10, 20, 30, 40, 50)


def first_k(ranking: Sequence[str], k: int) -> list[str]:
    """The first k distinct ids of a ranking."""
    if k < 1:
        raise EvaluationError(f"cutoff k must be at least 1, got {k}")
    seen: list[str] = []
    for paper in dict.fromkeys(ranking):
        if len(seen) == k:
            break
        seen.append(paper)
    return seen


def hits_at_k(ranking: Sequence[str], relevant: set[str], k: int) -> int:
    """|P_q ∩ Rel(q)| for the top k."""
    return sum(1 for paper in first_k(ranking, k) if paper in relevant)


def average_precision_at_k(ranking: Sequence[str], relevant: set[str], k: int) -> float:
    """AP@k(q) = (1/|Rel(q)|) * sum_{i<=k} Prec@i(q) * y_i (normalised by |Rel(q)|)."""
    _require_relevant(relevant)
    total, hits = 0.0, 0
    for i, paper in enumerate(first_k(ranking, k), start=1):
        if paper in relevant:
            hits += 1
            total += hits / i
    return total / len(relevant)


def hit_at_k(ranking: Sequence[str], relevant: set[str], k: int) -> float:
    _require_relevant(relevant)
    return 1.0 if hits_at_k(ranking, relevant, k) else 0.0


def recall_at_k(rankings: Sequence[Sequence[str]], relevants: Sequence[set[str]],
                k: int) -> float:
    """Pooled Recall@k: total hits in the top k over the total size of the relevant sets."""
    _require_aligned(rankings, relevants)
    for relevant in relevants:
        _require_relevant(relevant)
    found = sum(hits_at_k(r, rel, k) for r, rel in zip(rankings, relevants, strict=True))
    return found / sum(len(rel) for rel in relevants)


def map_at_k(rankings: Sequence[Sequence[str]], relevants: Sequence[set[str]],
             k: int) -> float:
    """MAP@k: the mean over queries of AP@k (each normalised by its |Rel(q)|)."""
    _require_aligned(rankings, relevants)
    aps = [average_precision_at_k(r, rel, k) for r, rel in zip(rankings, relevants, strict=True)]
    return sum(aps) / len(aps)


def mean_hit_at_k(rankings: Sequence[Sequence[str]], relevants: Sequence[set[str]],
                  k: int) -> float:
    _require_aligned(rankings, relevants)
    hits = [hit_at_k(r, rel, k) for r, rel in zip(rankings, relevants, strict=True)]
    return sum(hits) / len(hits)


def _require_relevant(relevant: set[str]) -> None:
    if not relevant:
        raise EvaluationError("a query with no relevant papers cannot be evaluated")


def _require_aligned(rankings: Sequence[Sequence[str]], relevants: Sequence[set[str]]) -> None:
    if not rankings:
        raise EvaluationError("no queries to evaluate")
    if len(rankings) != len(relevants):
        raise EvaluationError(
            f"{len(rankings)} rankings but {len(relevants)} relevant sets"
        )
