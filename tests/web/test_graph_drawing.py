"""The layout of the evidence graph (no database): columns by year, styles by role, size
by score, Delta as thickness, and every arc inside the drawing."""

from typing import Any

from crase.api.pages.graph_drawing import (
    MAX_RADIUS,
    MIN_RADIUS,
    UNKNOWN_YEAR,
    draw_evidence_graph,
    edge_width,
)


def node(paper_id: str, year: int | None, *, seed: bool = False, kept: bool = True,
         rank: int | None = None, score: float | None = None) -> dict[str, Any]:
    return {"id": paper_id, "title": f"Paper {paper_id}", "year": year, "seed": seed,
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


def test_papers_stand_in_year_columns_oldest_first() -> None:
    drawing = draw_evidence_graph(VIEW)
    assert [label for label, _ in drawing.years] == ["1995", "1999", "2001", UNKNOWN_YEAR]
    x = {n.id: n.x for n in drawing.nodes}
    assert x["e"] < x["a"] < x["b"] == x["c"] < x["d"]


def test_roles_sizes_and_widths_follow_the_run() -> None:
    drawing = draw_evidence_graph(VIEW)
    shapes = {n.id: n for n in drawing.nodes}
    assert shapes["a"].roles == ("seed", "returned") and shapes["b"].roles == ("returned",)
    assert shapes["c"].roles == ("kept",) and shapes["d"].roles == ("seed", "cut")
    assert shapes["a"].r == MAX_RADIUS and shapes["c"].r == MIN_RADIUS
    assert MIN_RADIUS < shapes["b"].r < MAX_RADIUS
    widths = {(e.citing, e.cited): e.width for e in drawing.edges}
    assert widths[("b", "a")] > widths[("c", "a")] > widths[("e", "a")]
    assert edge_width(None) == edge_width(None) > 0
    # Pruned edges are painted first, under the retained ones.
    assert [e.retained for e in drawing.edges] == [False, True, True]


def test_every_arc_stays_inside_the_drawing() -> None:
    nodes = [node(f"p{i}", 1990 + i, rank=i + 1, score=1 / (i + 1)) for i in range(30)]
    edges = [edge(f"p{i}", f"p{j}", 0.5) for i in range(30) for j in range(i)]
    drawing = draw_evidence_graph({"nodes": nodes, "edges": edges})
    for shape in drawing.edges:
        numbers = [float(x) for x in shape.path.replace("M", " ").replace("Q", " ").split()]
        xs, ys = numbers[0::2], numbers[1::2]
        # The curve lies within the triangle of its ends and control point; it reaches
        # half way to the control point at most.
        lowest = max(ys[0], ys[2], (ys[0] + ys[2]) / 4 + ys[1] / 2)
        assert 0 <= min(xs[0], xs[2]) and max(xs[0], xs[2]) <= drawing.width
        assert lowest <= drawing.height


def test_a_paper_sits_level_with_the_papers_it_cites() -> None:
    nodes = [node("a", 2000, rank=1), node("b", 2000, rank=2), node("x", 2001, rank=3),
             node("y", 2001, rank=4)]
    drawing = draw_evidence_graph({"nodes": nodes, "edges": [edge("x", "b", 0.5),
                                                             edge("y", "a", 0.5)]})
    y = {n.id: n.y for n in drawing.nodes}
    assert y["a"] < y["b"] and y["y"] < y["x"]  # against their rank order


def test_a_crowded_year_is_split_into_lanes() -> None:
    nodes = [node(f"old{i}", 2000, rank=i + 1, score=0.1) for i in range(70)]
    nodes += [node("new", 2001, score=0.1)]
    edges = [edge("new", "old69", 0.8)]
    drawing = draw_evidence_graph({"nodes": nodes, "edges": edges})
    shapes = {n.id: n for n in drawing.nodes}
    assert len({shapes[f"old{i}"].x for i in range(70)}) == 3  # 30 rows a lane
    assert shapes["new"].x > max(shapes[f"old{i}"].x for i in range(70))
    assert drawing.height < 70 * 26


def test_a_dense_graph_gets_thinner_fainter_lines() -> None:
    sparse = draw_evidence_graph(VIEW)
    nodes = [node(f"p{i}", 1990 + i % 20, score=0.1) for i in range(100)]
    edges = [edge(f"p{i}", f"p{j}", 1.0) for i in range(100) for j in range(i)
             if (1990 + i % 20) != (1990 + j % 20)][:3000]
    dense = draw_evidence_graph({"nodes": nodes, "edges": edges})
    assert dense.edge_opacity < sparse.edge_opacity
    assert max(e.width for e in dense.edges) < max(e.width for e in sparse.edges)
    assert min(e.width for e in dense.edges) >= 0.5


def test_retained_edges_away_from_seeds_and_results_are_context() -> None:
    nodes = [node("s", 2000, seed=True, rank=1), node("k1", 2001), node("k2", 2002)]
    edges = [edge("k1", "s", 0.5), edge("k2", "k1", 0.5), edge("k2", "s", 0.0, retained=False)]
    drawing = draw_evidence_graph({"nodes": nodes, "edges": edges})
    context = {(e.citing, e.cited): e.context for e in drawing.edges}
    assert context == {("k1", "s"): False, ("k2", "k1"): True, ("k2", "s"): False}
