"""The evidence graph of a run laid out for an SVG drawing: one column per year (oldest on
the left), papers in a column by score, circles sized by score, edges as lines as thick
as their Delta. Drawn on the server, so the browser only paints: no layout library, and
a 300-paper, 3,000-edge run is one page of plain SVG."""

import math
from dataclasses import dataclass
from typing import Any

MARGIN = 40
COLUMN_WIDTH = 90
ROW_HEIGHT = 26
ROWS_PER_LANE = 30  # a crowded year is split into lanes side by side
LANE_WIDTH = 22
MIN_RADIUS = 4.0
MAX_RADIUS = 13.0
UNKNOWN_YEAR = "n.d."
ARC_BEND = 0.2
DENSE_EDGES = 200
EDGE_OPACITY = 0.45


@dataclass(frozen=True)
class NodeShape:
    id: str
    title: str
    year: int | None
    x: float
    y: float
    r: float
    roles: tuple[str, ...]  # seed, returned, kept, cut (CSS classes)
    rank: int | None
    score: float | None


@dataclass(frozen=True)
class EdgeShape:
    citing: str
    cited: str
    path: str  # SVG path data: an arc from the citing paper to the cited one
    width: float
    retained: bool
    delta: float | None
    # Retained, but between two papers that are neither seeds nor returned: drawn only on
    # request, so the edges that ground the results stay readable in a large run.
    context: bool = False


@dataclass(frozen=True)
class Drawing:
    width: float
    height: float
    years: list[tuple[str, float]]  # column label and its x
    nodes: list[NodeShape]
    edges: list[EdgeShape]
    edge_opacity: float


def node_roles(node: dict[str, Any]) -> tuple[str, ...]:
    roles = ["seed"] if node["seed"] else []
    if not node["kept"]:
        roles.append("cut")
    elif node["rank"] is not None:
        roles.append("returned")
    else:
        roles.append("kept")
    return tuple(roles)


def radius(score: float | None, top: float) -> float:
    if score is None or top <= 0:
        return MIN_RADIUS
    return MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) * math.sqrt(max(score, 0.0) / top)


def edge_width(delta: float | None, thinning: float = 1.0) -> float:
    # A run without Delta (uniform weighting) draws every edge alike.
    width = 1.2 if delta is None else 0.6 + 4.0 * max(0.0, min(delta, 1.0))
    return round(max(0.5, width * thinning), 2)


def thinning_for(edges: int) -> float:
    """Lines get thinner and fainter as they get many, so a dense graph keeps its shape
    instead of turning into one dark mass: 1 up to DENSE_EDGES edges, then falling with
    the square root of the count."""
    return min(1.0, math.sqrt(DENSE_EDGES / max(edges, 1)))


def control_point(start: NodeShape, end: NodeShape) -> tuple[float, float]:
    """Of a quadratic curve bent to one side by a fifth of its length, so that edges
    between papers in one row, or skipping a year, do not lie on top of each other."""
    dx, dy = end.x - start.x, end.y - start.y
    return (start.x + end.x) / 2 + dy * ARC_BEND, (start.y + end.y) / 2 - dx * ARC_BEND


def arc(start: NodeShape, end: NodeShape) -> str:
    cx, cy = control_point(start, end)
    return f"M{start.x:.1f} {start.y:.1f}Q{cx:.1f} {cy:.1f} {end.x:.1f} {end.y:.1f}"


def arc_bottom(start: NodeShape, end: NodeShape) -> float:
    """The lowest point of the arc: the curve reaches half way to its control point."""
    _, cy = control_point(start, end)
    return max(start.y, end.y, (start.y + end.y) / 4 + cy / 2)


def year_columns(nodes: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Papers by year label, oldest first, papers without a year last; in a column, the
    returned papers by rank, then the rest by id."""
    columns: dict[str, list[dict[str, Any]]] = {}
    for node in sorted(nodes, key=lambda n: (n["year"] is None, n["year"] or 0)):
        columns.setdefault(str(node["year"]) if node["year"] else UNKNOWN_YEAR, []).append(node)
    for members in columns.values():
        members.sort(key=rank_order)
    return columns


def rank_order(node: dict[str, Any]) -> tuple[bool, int, str]:
    return node["rank"] is None, node["rank"] or 0, node["id"]


def order_by_neighbours(columns: dict[str, list[dict[str, Any]]],
                        edges: list[dict[str, Any]]) -> None:
    """Left to right, each column's papers sorted by the mean slot of their neighbours
    already placed (one barycentre sweep): cited and citing papers end up side by side,
    so fewer lines cross. Papers with no placed neighbour keep their rank order, last."""
    neighbours: dict[str, list[str]] = {}
    for edge in edges:
        neighbours.setdefault(edge["citing"], []).append(edge["cited"])
        neighbours.setdefault(edge["cited"], []).append(edge["citing"])
    slot: dict[str, int] = {}
    for members in columns.values():
        def target(node: dict[str, Any]) -> float:
            placed = [slot[n] for n in neighbours.get(node["id"], []) if n in slot]
            return sum(placed) / len(placed) if placed else math.inf
        members.sort(key=lambda node: (target(node), rank_order(node)))
        slot.update({node["id"]: number for number, node in enumerate(members)})


def draw_evidence_graph(view: dict[str, Any]) -> Drawing:
    """Positions and styles for the nodes and edges of `evidence_graph`'s view."""
    top = max((n["score"] or 0.0 for n in view["nodes"]), default=0.0)
    shapes: dict[str, NodeShape] = {}
    years: list[tuple[str, float]] = []
    x = float(MARGIN)
    tallest = 0
    columns = year_columns(view["nodes"])
    order_by_neighbours(columns, [e for e in view["edges"] if e["retained"]])
    for label, members in columns.items():
        lanes = math.ceil(len(members) / ROWS_PER_LANE)
        years.append((label, x + (lanes - 1) * LANE_WIDTH / 2))
        for number, node in enumerate(members):
            lane, row = divmod(number, ROWS_PER_LANE)
            shapes[node["id"]] = NodeShape(
                id=node["id"], title=node["title"] or node["id"], year=node["year"],
                x=x + lane * LANE_WIDTH, y=float(MARGIN + 20 + row * ROW_HEIGHT + (lane % 2) * 8),
                r=round(radius(node["score"], top), 2), roles=node_roles(node),
                rank=node["rank"], score=node["score"])
        tallest = max(tallest, min(len(members), ROWS_PER_LANE))
        x += max(COLUMN_WIDTH, lanes * LANE_WIDTH + COLUMN_WIDTH / 2)
    shown = [e for e in view["edges"] if e["citing"] in shapes and e["cited"] in shapes]
    central = {n.id for n in shapes.values() if "seed" in n.roles or "returned" in n.roles}
    thinning = thinning_for(sum(1 for e in shown if e["retained"]))
    edges = [EdgeShape(citing=e["citing"], cited=e["cited"],
                       path=arc(shapes[e["citing"]], shapes[e["cited"]]),
                       width=edge_width(e["delta"], thinning), retained=e["retained"],
                       delta=e["delta"], context=e["retained"] and not (
                           e["citing"] in central or e["cited"] in central))
             for e in shown]
    # Retained edges last, so they are painted over the pruned ones when those are shown;
    # big circles first, so a small one on top of a big one can still be clicked.
    edges.sort(key=lambda e: e.retained)
    lowest = max((arc_bottom(shapes[e.citing], shapes[e.cited]) for e in edges), default=0.0)
    height = max(MARGIN * 2 + 20 + tallest * ROW_HEIGHT, lowest + MARGIN)
    return Drawing(width=x + MARGIN, height=height, years=years,
                   nodes=sorted(shapes.values(), key=lambda n: -n.r), edges=edges,
                   edge_opacity=round(max(0.12, EDGE_OPACITY * thinning), 3))
