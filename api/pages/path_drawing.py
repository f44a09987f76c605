"""The connector's paths as an SVG drawing: one column per step from the first paper, the
papers of a column one under another, each citation a line with an arrow towards the cited
paper, each paper labelled with its first author and year (its title on hover)."""

from dataclasses import dataclass
from typing import Any

from crase.api.pages.graph_drawing import label_text

COLUMN_GAP = 190.0
ROW_GAP = 64.0
MARGIN_X = 80.0
MARGIN_Y = 40.0
RADIUS = 9.0


@dataclass(frozen=True)
class PathNode:
    id: str
    x: float
    y: float
    label: str
    title: str
    end: bool  # one of the two papers asked about


@dataclass(frozen=True)
class PathLine:
    citing: str
    cited: str
    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True)
class PathDrawing:
    width: float
    height: float
    nodes: list[PathNode]
    lines: list[PathLine]


def draw_paths(found: dict[str, Any], columns: list[list[str]]) -> PathDrawing:
    tallest = max((len(column) for column in columns), default=1)
    height = 2 * MARGIN_Y + (tallest - 1) * ROW_GAP + 20
    spots = {}
    for step, column in enumerate(columns):
        top = (height - (len(column) - 1) * ROW_GAP) / 2 - 10
        for row, paper in enumerate(column):
            spots[paper] = (MARGIN_X + step * COLUMN_GAP, top + row * ROW_GAP)
    papers = found["papers"]
    nodes = [PathNode(paper, x, y, label_text(papers[paper]),
                      papers[paper]["title"] or paper,
                      paper in (found["source"], found["target"]))
             for paper, (x, y) in spots.items()]
    steps = {(s["citing"], s["cited"]) for path in found["paths"] for s in path["steps"]}
    lines = [PathLine(citing, cited, *shortened(spots[citing], spots[cited]))
             for citing, cited in sorted(steps)]
    width = 2 * MARGIN_X + max(len(columns) - 1, 0) * COLUMN_GAP
    return PathDrawing(width, height, nodes, lines)


def shortened(start: tuple[float, float], end: tuple[float, float],
              ) -> tuple[float, float, float, float]:
    """The line between two circles' edges, so its arrow head stays visible."""
    (x1, y1), (x2, y2) = start, end
    length = max(((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5, 1e-9)
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    cut = RADIUS + 2
    return (round(x1 + ux * cut, 1), round(y1 + uy * cut, 1), round(x2 - ux * (cut + 3), 1),
            round(y2 - uy * (cut + 3), 1))
