"""The layout of the evidence graph (no database): year across and score up, styles by
role, size by score, Delta as thickness, labels that do not overlap, and the default view
(seeds, returned papers and the edges among them); the force layout, the page's other
layout: the same every time, inside the drawing, circles apart, linked papers together."""

import math
from typing import Any

import pytest

from crase.api.pages.graph_drawing import (
    CHAR_WIDTH,
    LABEL_FONT,
    MAX_RADIUS,
    MIN_RADIUS,
    UNKNOWN_YEAR,
    Layout,
    draw_evidence_graph,
    edge_width,
    first_surname,
    layout_named,
)


def node(paper_id: str, year: int | None, *, seed: bool = False, kept: bool = True,
         rank: int | None = None, score: float | None = None) -> dict[str, Any]:
    return {"id": paper_id, "title": f"Paper {paper_id}", "year": year,
            "first_author": f"A. Smith-{paper_id}", "seed": seed,
            "kept": kept, "reason": None if kept else "no retained edge", "rank": rank,
            "score": score}


def edge(citing: str, cited: str, delta: float | None, retained: bool = True) -> dict[str, Any]:
    return {"citing": citing, "cited": cited, "delta": delta, "retained": retained,
            "reason": "retained" if retained else "delta 0.000 <= tau 0.2"}


VIEW = {
    "nodes": [node("a", 1999, seed=True, rank=1, score=0.4), node("b", 2001, rank=2, score=0.1),
              node("c", 2001), node("d", None, seed=True, kept=False),
              node("e", 1995, kept=False)],
    "edges": [edge("b", "a", 0.9), edge("c", "a", 0.3), edge("e", "a", 0.0, retained=False)],
}


def test_year_runs_across_and_score_up() -> None:
    drawing = draw_evidence_graph(VIEW)
    assert [label for label, _ in drawing.years][-1] == UNKNOWN_YEAR
    shapes = {n.id: n for n in drawing.nodes}
    assert shapes["e"].x < shapes["a"].x < shapes["b"].x < shapes["d"].x
    assert abs(shapes["b"].x - shapes["c"].x) < 60  # one year
    # Up is a higher score; papers without one sit in the band under the axis.
    assert shapes["a"].y < shapes["b"].y
    assert drawing.band_top is not None
    assert all(shapes[p].y > drawing.band_top for p in ("c", "d", "e"))
    assert all(shapes[p].y < drawing.band_top for p in ("a", "b"))


def test_roles_sizes_and_widths_follow_the_run() -> None:
    drawing = draw_evidence_graph(VIEW)
    shapes = {n.id: n for n in drawing.nodes}
    assert shapes["a"].roles == ("seed", "returned") and shapes["b"].roles == ("returned",)
    assert shapes["c"].roles == ("kept",) and shapes["d"].roles == ("seed", "cut")
    # A returned paper that pruning cut is still drawn as returned.
    cut_but_returned = draw_evidence_graph(
        {"nodes": [node("f", 2000, kept=False, rank=1, score=0.2)], "edges": []})
    assert cut_but_returned.nodes[0].roles == ("returned",)
    assert shapes["a"].r == MAX_RADIUS and shapes["c"].r == MIN_RADIUS
    assert MIN_RADIUS < shapes["b"].r < MAX_RADIUS
    widths = {(e.citing, e.cited): e.width for e in drawing.edges}
    assert widths[("b", "a")] > widths[("c", "a")] > widths[("e", "a")]
    assert edge_width(None) == edge_width(None) > 0
    # Pruned edges are painted first, under the retained ones.
    assert [e.retained for e in drawing.edges] == [False, True, True]


def test_seeds_and_returned_papers_are_labelled_by_first_author_and_year() -> None:
    drawing = draw_evidence_graph(VIEW)
    labels = {n.id: n.label for n in drawing.nodes}
    assert labels["a"] is not None and labels["a"].text == "Smith-a 1999"
    assert labels["d"] is not None and labels["d"].text == "Smith-d"  # no year known
    assert labels["c"] is None and labels["e"] is None  # neither seed nor returned
    assert first_surname("Curtis G. Callan Jr.") == "Callan"
    assert first_surname("M. Ba\\~nados") == "Bañados"


def test_labels_that_fit_do_not_overlap() -> None:
    nodes = [node(f"p{i}", 1995 + i % 5, rank=i + 1, score=1 / (i + 2)) for i in range(60)]
    drawing = draw_evidence_graph({"nodes": nodes, "edges": []})
    boxes = []
    for shape in drawing.nodes:
        if shape.label is None or shape.label.spare:
            continue
        width = len(shape.label.text) * CHAR_WIDTH
        left = {"start": shape.label.x, "end": shape.label.x - width,
                "middle": shape.label.x - width / 2}[shape.label.anchor]
        boxes.append((left, shape.label.y - LABEL_FONT, left + width, shape.label.y))
    assert len(boxes) >= 20
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not (a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1
                        and b[1] < a[3] - 1), (a, b)


def test_circles_of_one_year_are_moved_apart() -> None:
    nodes = [node(f"p{i}", 2000, rank=i + 1, score=0.1) for i in range(5)]
    drawing = draw_evidence_graph({"nodes": nodes, "edges": []})
    spots = [(n.x, n.y, n.r) for n in drawing.nodes]
    for i, (x1, y1, r1) in enumerate(spots):
        for x2, y2, r2 in spots[i + 1:]:
            assert (x1 - x2) ** 2 + (y1 - y2) ** 2 >= (r1 + r2) ** 2


def test_every_paper_stays_inside_the_drawing() -> None:
    nodes = [node(f"p{i}", 1990 + i % 30, rank=i + 1 if i < 150 else None,
                  score=1 / (i + 1) if i < 150 else None) for i in range(300)]
    drawing = draw_evidence_graph({"nodes": nodes, "edges": []})
    for shape in drawing.nodes:
        assert 0 <= shape.x - shape.r and shape.x + shape.r <= drawing.width
        assert 0 <= shape.y - shape.r and shape.y + shape.r <= drawing.height


def test_a_dense_graph_gets_thinner_fainter_lines() -> None:
    sparse = draw_evidence_graph(VIEW)
    nodes = [node(f"p{i}", 1990 + i % 20, rank=i + 1, score=0.1) for i in range(100)]
    edges = [edge(f"p{i}", f"p{j}", 1.0) for i in range(100) for j in range(i)
             if (1990 + i % 20) != (1990 + j % 20)][:3000]
    dense = draw_evidence_graph({"nodes": nodes, "edges": edges})
    assert dense.edge_opacity < sparse.edge_opacity
    assert max(e.width for e in dense.edges) < max(e.width for e in sparse.edges)
    assert min(e.width for e in dense.edges) >= 0.5


def test_the_default_view_is_the_seeds_the_results_and_the_edges_among_them() -> None:
    nodes = [node("s", 2000, seed=True, rank=1), node("r", 2001, rank=2), node("k1", 2001),
             node("k2", 2002)]
    edges = [edge("r", "s", 0.5), edge("k1", "s", 0.5), edge("k2", "k1", 0.5),
             edge("k2", "s", 0.0, retained=False)]
    drawing = draw_evidence_graph({"nodes": nodes, "edges": edges})
    context = {(e.citing, e.cited): e.context for e in drawing.edges}
    assert context == {("r", "s"): False, ("k1", "s"): True, ("k2", "k1"): True,
                       ("k2", "s"): False}
    assert {n.id for n in drawing.nodes if n.central} == {"s", "r"}


def clustered_view(papers: int = 36, context: int = 120) -> dict[str, Any]:
    """Three groups of returned papers, each citing within its group, one citation between
    groups, years and scores mixed so that the year/score start does not already group
    them; and papers not returned, each citing one of them."""
    nodes = [node(f"p{i:02d}", 1990 + (i * 7) % 25, seed=i < 3, rank=i + 1,
                  score=1 / (1 + (i * 5) % 11)) for i in range(papers)]
    group = {f"p{i:02d}": i % 3 for i in range(papers)}
    ids = sorted(group)
    edges = [edge(a, b, None) for n, a in enumerate(ids) for b in ids[n + 1:]
             if group[a] == group[b] and (int(a[1:]) + int(b[1:])) % 4 == 0]
    edges += [edge("p00", "p01", None), edge("p01", "p02", None)]
    nodes += [node(f"c{i:03d}", 1985 + i % 30, kept=i % 4 != 0) for i in range(context)]
    edges += [edge(f"c{i:03d}", ids[i % papers], None, retained=i % 4 != 0)
              for i in range(context)]
    return {"nodes": nodes, "edges": edges}


def test_the_force_layout_draws_the_same_every_time() -> None:
    view = clustered_view()
    shuffled = {"nodes": view["nodes"][::-1], "edges": view["edges"][::-1]}
    first = draw_evidence_graph(view, Layout.FORCE)
    again, reordered = draw_evidence_graph(view, Layout.FORCE), draw_evidence_graph(
        shuffled, Layout.FORCE)
    spots = {n.id: (n.x, n.y) for n in first.nodes}
    assert spots == {n.id: (n.x, n.y) for n in again.nodes}
    assert spots == {n.id: (n.x, n.y) for n in reordered.nodes}
    # It is a layout of its own: no axis, no band, and the papers moved.
    assert first.years == [] and first.scores == [] and first.band_top is None
    year_score = {n.id: (n.x, n.y) for n in draw_evidence_graph(view).nodes}
    assert sum(spots[p] != year_score[p] for p in spots) > len(spots) // 2


def test_the_force_layout_keeps_every_paper_inside_the_drawing() -> None:
    drawing = draw_evidence_graph(clustered_view(papers=60, context=300), Layout.FORCE)
    for shape in drawing.nodes:
        assert 0 <= shape.x - shape.r and shape.x + shape.r <= drawing.width, shape
        assert 0 <= shape.y - shape.r and shape.y + shape.r <= drawing.height, shape


def test_the_force_layout_keeps_the_shown_circles_apart() -> None:
    drawing = draw_evidence_graph(clustered_view(), Layout.FORCE)
    central = [n for n in drawing.nodes if n.central]
    for i, a in enumerate(central):
        for b in central[i + 1:]:
            distance = ((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5
            assert distance >= 0.9 * (a.r + b.r), (a.id, b.id, distance)


def test_the_force_layout_puts_linked_papers_closer_than_unlinked_ones() -> None:
    view = clustered_view()
    drawing = draw_evidence_graph(view, Layout.FORCE)
    spots = {n.id: (n.x, n.y) for n in drawing.nodes if n.central}
    linked = {frozenset((e["citing"], e["cited"])) for e in view["edges"]
              if e["citing"] in spots and e["cited"] in spots}
    ids = sorted(spots)
    pairs = [frozenset((a, b)) for n, a in enumerate(ids) for b in ids[n + 1:]]

    def mean_distance(chosen: list[frozenset[str]]) -> float:
        return sum(math.dist(*(spots[p] for p in pair)) for pair in chosen) / len(chosen)

    near = mean_distance([p for p in pairs if p in linked])
    far = mean_distance([p for p in pairs if p not in linked])
    assert near < 0.6 * far, (near, far)


def test_the_force_layout_draws_a_lone_paper_and_a_run_with_nothing_shown() -> None:
    lone = draw_evidence_graph({"nodes": [node("a", 2000, seed=True, rank=1, score=0.5)],
                                "edges": []}, Layout.FORCE)
    assert [(n.x, n.y) for n in lone.nodes] == [(lone.width / 2, lone.height / 2)]
    unshown = draw_evidence_graph({"nodes": [node("c", 2000), node("d", 2001, kept=False)],
                                   "edges": [edge("c", "d", None)]}, Layout.FORCE)
    assert len({(n.x, n.y) for n in unshown.nodes}) == 2


def test_a_layout_is_named_or_refused_with_the_choices() -> None:
    assert layout_named("force") is Layout.FORCE
    assert layout_named("year-score") is Layout.YEAR_SCORE
    with pytest.raises(ValueError, match="give year-score or force"):
        layout_named("spring")
