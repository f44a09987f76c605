"""Agreement between the evidence graph's edge decisions and human annotators, as the Crase
paper's human validation reports it (its Table 5), one plain function per measure.

An item is one citation edge; Crase's decision on it is RETAIN or PRUNE; each annotator,
blinded to that decision, labels the edge RETAIN (the cited paper grounds the citing
paper's claims) or PRUNE. With N items and m labels per item:

- majority label: the label given by more than half of the item's annotators; with an
  even m a tie has no majority, and such an item is left out of the three majority-based
  measures (how many were left out is reported with them);
- Crase-majority agreement = #(decision == majority) / #(items with a majority);
- retained-edge precision = #(retained and majority RETAIN) / #(retained with a majority);
- pruned-edge correctness = #(pruned and majority PRUNE) / #(pruned with a majority);
- unanimous agreement = #(items whose annotators all gave one label) / N;
- Fleiss' kappa over the N x k count table n[i][j] (annotators giving item i label j):
  P_i = (sum_j n_ij^2 - m) / (m (m - 1)), P_bar = mean of P_i,
  p_j = sum_i n_ij / (N m), P_e = sum_j p_j^2, kappa = (P_bar - P_e) / (1 - P_e).
  When every label falls in one category P_e = 1 and kappa is undefined (None).

A share whose denominator is 0 is None, not 0: nothing was measured.
"""

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

Decision = Literal["retain", "prune"]
RETAIN: Decision = "retain"
PRUNE: Decision = "prune"
DECISIONS: tuple[Decision, ...] = (RETAIN, PRUNE)


def majority_label(labels: Sequence[Hashable]) -> Hashable | None:
    """The label more than half of `labels` agree on; None on a tie or with no labels."""
    if not labels:
        return None
    label, votes = Counter(labels).most_common(1)[0]
    return label if votes * 2 > len(labels) else None


def share(hits: int, total: int) -> float | None:
    return hits / total if total else None


def crase_majority_agreement(decisions: Sequence[Decision],
                             majorities: Sequence[Decision | None]) -> float | None:
    pairs = [(d, m) for d, m in zip(decisions, majorities, strict=True) if m is not None]
    return share(sum(1 for d, m in pairs if d == m), len(pairs))


def decision_correctness(decisions: Sequence[Decision], majorities: Sequence[Decision | None],
                         decision: Decision) -> float | None:
    """Among the items Crase gave `decision` (and that have a majority), the share whose
    majority agrees: retained-edge precision for RETAIN, pruned-edge correctness for PRUNE."""
    chosen = [m for d, m in zip(decisions, majorities, strict=True)
              if d == decision and m is not None]
    return share(sum(1 for m in chosen if m == decision), len(chosen))


def unanimous_agreement(labels: Sequence[Sequence[Hashable]]) -> float | None:
    return share(sum(1 for item in labels if item and len(set(item)) == 1), len(labels))


def category_counts(labels: Sequence[Sequence[Hashable]],
                    categories: Sequence[Hashable]) -> list[list[int]]:
    """The N x k table: how many annotators gave item i category j."""
    counted = [Counter(item) for item in labels]
    return [[counts[category] for category in categories] for counts in counted]


def fleiss_kappa(table: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa of an N x k count table; every row must sum to the same m >= 2."""
    if not table:
        return None
    raters = {sum(row) for row in table}
    if len(raters) != 1 or min(raters) < 2:
        raise ValueError("Fleiss' kappa needs the same number (at least 2) of labels per item; "
                         f"the items have {sorted(raters)}")
    m, n_items = raters.pop(), len(table)
    p_bar = sum((sum(c * c for c in row) - m) / (m * (m - 1)) for row in table) / n_items
    columns = [sum(row[j] for row in table) / (n_items * m) for j in range(len(table[0]))]
    p_e = sum(p * p for p in columns)
    if p_e >= 1.0:
        return None
    return (p_bar - p_e) / (1 - p_e)


@dataclass(frozen=True)
class AgreementReport:
    items: int
    annotators: int
    items_with_majority: int
    retained: int
    pruned: int
    crase_majority_agreement: float | None
    retained_edge_precision: float | None
    pruned_edge_correctness: float | None
    unanimous_agreement: float | None
    fleiss_kappa: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def agreement_report(decisions: Mapping[str, Decision],
                     labels: Mapping[str, Sequence[Decision]]) -> AgreementReport:
    """Every measure over the items of `decisions` (item id -> Crase's decision), with
    `labels` (item id -> the annotators' labels, one per annotator)."""
    items = sorted(decisions)
    per_item = [list(labels[item]) for item in items]
    crase = [decisions[item] for item in items]
    majorities: list[Decision | None] = []
    for item_labels in per_item:
        winner = majority_label(item_labels)
        majorities.append(RETAIN if winner == RETAIN else PRUNE if winner == PRUNE else None)
    counts = {len(item_labels) for item_labels in per_item}
    return AgreementReport(
        items=len(items), annotators=max(counts) if counts else 0,
        items_with_majority=sum(1 for m in majorities if m is not None),
        retained=crase.count(RETAIN), pruned=crase.count(PRUNE),
        crase_majority_agreement=crase_majority_agreement(crase, majorities),
        retained_edge_precision=decision_correctness(crase, majorities, RETAIN),
        pruned_edge_correctness=decision_correctness(crase, majorities, PRUNE),
        unanimous_agreement=unanimous_agreement(per_item),
        fleiss_kappa=fleiss_kappa(category_counts(per_item, DECISIONS)) if items else None)
