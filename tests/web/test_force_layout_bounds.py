"""The force layout of a large run (no database): bounded in time and memory, the same
every time, and the page says how many papers it moved. A 2,492-paper run took 26.6 s
of server CPU and 220 MB per view when every paper was simulated against every other."""

import time
import tracemalloc
from typing import Any

import pytest

from crase.api.pages.force_layout import MAX_SIMULATED
from crase.api.pages.graph_drawing import Layout, draw_evidence_graph
from tests.web.test_graph_drawing import edge, node

PAPERS = 2492
SHOWN = 60


def large_view(papers: int = PAPERS, shown: int = SHOWN) -> dict[str, Any]:
    """`shown` returned papers and the rest of a run's neighbourhood, each citing two
    papers before it (a seeded pattern, so the view is the same every time)."""
    nodes = [node(f"p{i:04d}", 1980 + i % 40, seed=i < 5, rank=i + 1 if i < shown else None,
                  score=1 / (i + 1) if i < shown else None, kept=i % 5 != 0)
             for i in range(papers)]
    edges = [edge(f"p{i:04d}", f"p{(i * 7919) % i:04d}", None, retained=i % 3 != 0)
             for i in range(1, papers)]
    edges += [edge(f"p{i:04d}", f"p{(i * 104729) % i:04d}", None) for i in range(2, papers)]
    return {"nodes": nodes, "edges": edges}


def measured(view: dict[str, Any]) -> tuple[Any, float, float]:
    """The drawing, the seconds it took and the peak memory it allocated (MB)."""
    tracemalloc.start()
    started = time.process_time()
    drawing = draw_evidence_graph(view, Layout.FORCE)
    seconds = time.process_time() - started
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return drawing, seconds, peak


def test_a_large_run_is_laid_out_in_bounded_time_and_memory() -> None:
    view = large_view()
    drawing, seconds, peak = measured(view)
    print(f"force layout of {PAPERS} papers: {seconds:.2f} s CPU, peak {peak:.1f} MB")
    assert len(drawing.nodes) == PAPERS
    assert seconds < 8.0 and peak < 60.0, (seconds, peak)
    for shape in drawing.nodes:
        assert 0 <= shape.x <= drawing.width and 0 <= shape.y <= drawing.height, shape
    # The page says how many papers the layout moved, and what became of the rest.
    assert drawing.note is not None and f"{MAX_SIMULATED:,}" in drawing.note
    assert f"{PAPERS - MAX_SIMULATED:,}" in drawing.note


def test_a_run_drawn_again_comes_from_the_cache_unchanged() -> None:
    view = large_view(papers=1200)
    first, first_seconds, _ = measured(view)
    again, seconds, _ = measured(large_view(papers=1200))  # an equal view, built anew
    print(f"first {first_seconds:.2f} s, again {seconds:.2f} s")
    assert seconds < 0.5 * first_seconds, (first_seconds, seconds)
    assert [(n.id, n.x, n.y) for n in again.nodes] == [(n.id, n.x, n.y) for n in first.nodes]


@pytest.mark.parametrize("papers", [40, MAX_SIMULATED])
def test_a_run_within_the_cap_is_moved_whole_and_says_nothing(papers: int) -> None:
    drawing = draw_evidence_graph(large_view(papers=papers, shown=20), Layout.FORCE)
    assert drawing.note is None
