"""Budgeted local selection: which discovered works get an abstract assessment.

Score = BM25 over title and the complete available abstract (statistics of the candidate
pool, query = the idea's terms), scaled to [0, 1] by the pool's best, plus the reciprocal
rank fusion of the full-text retriever ranks (sum of 1 / (60 + rank)), also scaled to
[0, 1]. Capacity is reserved, inside the budget, in this order for:

1. corroborated works: found by two or more routes, or a recalled title resolved against
   the corpus;
2. strong retriever ranks: a full-text rank at or above the cutoff (default 3);
3. works without an abstract (missing evidence is not negative evidence);

then the remaining slots go by score. Ineligible works (year) and identity conflicts are
not selected, with their reason. This is a budget: a relevant work can fall below it, and
the audit says so.
"""

import math
from collections import Counter
from collections.abc import Sequence

from crase.idea.candidates import Candidate, Decision
from crase.idea.terms import content_stems
from crase.search.text_ranking import RRF_K
from crase.settings import IdeaSettings

BM25_K1 = 1.2
BM25_B = 0.75


def bm25_scores(query_terms: Sequence[str], documents: Sequence[list[str]]) -> list[float]:
    """BM25 of each tokenised document for the query terms (each term counted once)."""
    n = len(documents)
    if n == 0:
        return []
    frequencies = [Counter(doc) for doc in documents]
    average = sum(len(doc) for doc in documents) / n or 1.0
    document_frequency = Counter(term for counts in frequencies for term in counts)
    terms = list(dict.fromkeys(query_terms))
    scores = []
    for doc, counts in zip(documents, frequencies, strict=True):
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / average)
        score = 0.0
        for term in terms:
            tf = counts.get(term, 0)
            if tf:
                df = document_frequency[term]
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf * (BM25_K1 + 1) / (tf + norm)
        scores.append(score)
    return scores


def candidate_stems(candidate: Candidate) -> list[str]:
    record = candidate.primary
    return content_stems(f"{record.title}\n{record.abstract}")


def score_candidates(candidates: Sequence[Candidate], query_terms: Sequence[str]) -> None:
    """Write bm25, bm25_norm, rrf, rrf_norm and selection_score into each candidate."""
    raw = bm25_scores(query_terms, [candidate_stems(c) for c in candidates])
    rrf = [sum(1.0 / (RRF_K + hit.detail["rank"]) for hit in c.routes if hit.route == "fulltext")
           for c in candidates]
    top_bm25, top_rrf = max(raw, default=0.0) or 1.0, max(rrf, default=0.0) or 1.0
    for candidate, bm25, fusion in zip(candidates, raw, rrf, strict=True):
        candidate.signals["bm25"] = bm25
        candidate.signals["bm25_norm"] = bm25 / top_bm25
        candidate.signals["rrf"] = fusion
        candidate.signals["rrf_norm"] = fusion / top_rrf
        candidate.signals["selection_score"] = bm25 / top_bm25 + fusion / top_rrf


def is_corroborated(candidate: Candidate) -> bool:
    names = candidate.route_names
    return len(names) >= 2 or "recalled" in names


def select_for_assessment(
    candidates: Sequence[Candidate], query_terms: Sequence[str], params: IdeaSettings
) -> list[Candidate]:
    """Decide selection for every candidate; returns the selected ones in decision order."""
    open_pool = []
    for candidate in candidates:
        if not candidate.eligibility.kept:
            candidate.selection = Decision(False, f"not selected: {candidate.eligibility.reason}")
        elif candidate.identity_conflict:
            candidate.selection = Decision(False, "not selected: identity conflict")
        else:
            open_pool.append(candidate)
    score_candidates(open_pool, query_terms)
    ranked = sorted(open_pool, key=lambda c: (-c.signals["selection_score"],
                                              c.best_fulltext_rank() or 10**9, c.work_id))
    place = {c.work_id: number for number, c in enumerate(ranked, start=1)}
    budget = params.selection_budget
    selected: list[Candidate] = []
    protected = [
        ("corroborated (two or more routes, or a resolved recalled title)",
         params.protect_corroborated, is_corroborated),
        (f"strong full-text rank (<= {params.strong_rank_cutoff})", params.protect_strong_rank,
         lambda c: (c.best_fulltext_rank() or 10**9) <= params.strong_rank_cutoff),
        ("missing abstract", params.protect_missing_abstract,
         lambda c: not any(r.has_abstract for r in c.records)),
    ]
    for label, quota, belongs in protected:
        used = 0
        for candidate in ranked:
            if used >= quota or len(selected) >= budget:
                break
            if candidate.selection is None and belongs(candidate):
                used += 1
                selected.append(candidate)
                candidate.selection = Decision(
                    True, f"protected slot {used} of {quota}: {label}",
                    position=place[candidate.work_id],
                    score=candidate.signals["selection_score"])
    for candidate in ranked:
        if candidate.selection is not None:
            continue
        position = place[candidate.work_id]
        score = candidate.signals["selection_score"]
        if len(selected) < budget:
            selected.append(candidate)
            candidate.selection = Decision(
                True, f"within the budget of {budget}: score rank {position}",
                position=position, score=score)
        else:
            candidate.selection = Decision(
                False, f"below the selection budget of {budget}: score rank {position}",
                position=position, score=score)
    return selected
