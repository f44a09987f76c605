"""The human-validation measures of crase.scoring.agreement on cases computed by hand; each
test writes its hand computation next to the assertion."""

from fractions import Fraction

import pytest

from crase.scoring.agreement import (
    PRUNE,
    RETAIN,
    Decision,
    agreement_report,
    category_counts,
    fleiss_kappa,
    majority_label,
)

R, P = RETAIN, PRUNE


def test_fleiss_kappa_of_the_textbook_table() -> None:
    # Fleiss (1971)'s worked layout: 10 items, 14 raters, 5 categories.
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]
    # By hand: column totals 20, 28, 39, 21, 32 of 140 -> p_j = .143, .200, .279, .150, .229,
    # P_e = sum p_j^2 = (20^2 + 28^2 + 39^2 + 21^2 + 32^2) / 140^2 = 4170/19600.
    # P_i = (sum_j n_ij^2 - 14) / (14 * 13): row 1 (196-14)/182 = 1, row 2 (60-14)/182, ...
    # sum_i sum_j n_ij^2 = 196+60+70+94+74+98+58+46+66+66 = 828, so
    # P_bar = (828 - 10*14) / (10*182) = 688/1820.
    p_bar, p_e = Fraction(688, 1820), Fraction(4170, 19600)
    expected = (p_bar - p_e) / (1 - p_e)
    assert fleiss_kappa(table) == pytest.approx(float(expected), abs=1e-12)
    assert round(float(expected), 3) == 0.210


def test_four_edges_three_annotators() -> None:
    decisions: dict[str, Decision] = {"a": R, "b": P, "c": P, "d": R}
    labels = {"a": [R, R, R], "b": [R, R, P], "c": [P, P, P], "d": [P, P, R]}
    report = agreement_report(decisions, labels)
    # Majorities: a R, b R, c P, d P. Crase agrees on a and c: 2/4.
    assert report.crase_majority_agreement == 0.5
    # Retained a, d: a's majority retains, d's prunes: 1/2. Pruned b, c: only c: 1/2.
    assert report.retained_edge_precision == 0.5
    assert report.pruned_edge_correctness == 0.5
    # a and c unanimous: 2/4.
    assert report.unanimous_agreement == 0.5
    # Counts (R, P): (3,0), (2,1), (0,3), (1,2). P_i = 1, (4+1-3)/6 = 1/3, 1, 1/3, so
    # P_bar = 2/3; p_R = 6/12 = p_P, P_e = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3.
    assert report.fleiss_kappa == pytest.approx(1 / 3, abs=1e-12)
    assert (report.items, report.annotators, report.retained, report.pruned) == (4, 3, 2, 2)


def test_a_sample_shaped_like_the_papers_table() -> None:
    # 50 edges, 25 retained and 25 pruned, three annotators. Of the retained, 22 have a
    # majority RETAIN (18 unanimous, 4 split 2-1) and 3 a majority PRUNE (split 1-2); of
    # the pruned, 20 a majority PRUNE (16 unanimous, 4 split) and 5 a majority RETAIN
    # (split 2-1).
    decisions: dict[str, Decision] = {}
    labels: dict[str, list[Decision]] = {}

    def add(decision: Decision, votes: list[Decision], count: int) -> None:
        for _ in range(count):
            item = f"e{len(decisions):02d}"
            decisions[item], labels[item] = decision, votes

    add(R, [R, R, R], 18)
    add(R, [R, R, P], 4)
    add(R, [P, P, R], 3)
    add(P, [P, P, P], 16)
    add(P, [P, P, R], 4)
    add(P, [R, R, P], 5)
    report = agreement_report(decisions, labels)
    # Agreement (22 + 20) / 50 = 0.84; precision 22/25 = 0.88; correctness 20/25 = 0.80:
    # the paper's 84.0 %, 88.0 % and 80.0 % are exactly a 25/25 sample.
    assert report.crase_majority_agreement == pytest.approx(0.84)
    assert report.retained_edge_precision == pytest.approx(0.88)
    assert report.pruned_edge_correctness == pytest.approx(0.80)
    # Unanimous: 18 + 16 = 34 of 50 = 0.68 (the paper's 68.0 %).
    assert report.unanimous_agreement == pytest.approx(0.68)
    # Kappa: P_i = 1 for the 34 unanimous items, 1/3 for the 16 split ones, so
    # P_bar = (34 + 16/3) / 50 = 59/75. RETAIN labels: 18*3 + 4*2 + 3*1 + 4*1 + 5*2 = 79
    # of 150, PRUNE 71: P_e = (79^2 + 71^2) / 150^2 = 5641/11250.
    # kappa = (59/75 - 5641/11250) / (1 - 5641/11250) = 3209/5609 = 0.5721...
    assert report.fleiss_kappa == pytest.approx(3209 / 5609, abs=1e-12)


def test_a_tie_has_no_majority_and_is_left_out() -> None:
    assert majority_label([R, P]) is None
    assert majority_label([R, R, P, P]) is None
    assert majority_label([R, R, P]) == R
    assert majority_label([]) is None
    decisions: dict[str, Decision] = {"a": R, "b": P}
    report = agreement_report(decisions, {"a": [R, P], "b": [P, P]})
    # Only b has a majority (PRUNE), and Crase pruned it: 1/1; no retained item has one.
    assert report.items_with_majority == 1
    assert report.crase_majority_agreement == 1.0
    assert report.retained_edge_precision is None
    assert report.pruned_edge_correctness == 1.0
    assert report.unanimous_agreement == 0.5


def test_kappa_is_undefined_when_every_label_is_the_same() -> None:
    # P_e = 1^2 = 1: chance agreement is certain, the ratio has no value.
    assert fleiss_kappa([[3, 0], [3, 0]]) is None
    assert fleiss_kappa([]) is None


def test_kappa_of_perfect_and_of_opposed_raters() -> None:
    # Perfect: P_bar = 1, P_e = 1/2 -> kappa = 1.
    assert fleiss_kappa([[2, 0], [0, 2]]) == pytest.approx(1.0)
    # Two raters who always disagree: P_i = (1 + 1 - 2) / 2 = 0; P_e = 1/2 -> -1.
    assert fleiss_kappa([[1, 1], [1, 1]]) == pytest.approx(-1.0)


def test_kappa_refuses_items_with_different_numbers_of_labels() -> None:
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[2, 1], [1, 1]])
    assert category_counts([[R, P, R]], [R, P]) == [[2, 1]]
