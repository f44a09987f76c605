"""The evidence graph of a run laid out for an SVG drawing, on two axes that mean something:
the year of publication across (oldest on the left) and the run's score up (log scale, best
at the top). Papers the run did not return have no score: they sit in a band under the
axis, by year. Circles are sized by score; the returned papers and the seeds carry a label
(first author, year) where it fits, the rest show it on hover and when zoomed in.

Drawn on the server, so the browser only paints and moves the view box: no layout library,
and a 300-paper, 3,000-edge run is one page of plain SVG.

The page's other layout, `?layout=force` (the Layout select), hands the same papers to
force_layout.py and draws them with the same shapes, labels and edges, without axes or
band.

Why year/score is the default: the year columns it replaced gave the vertical axis no
meaning and drew 292 unlabelled dots in a wall. On the committed sample's 30-result run
(docs/web.md has both screenshots) the force layout labels all 31 papers shown where
year/score labels 21 (the other ten sit in a knot of 1996-1998 papers scored 0.006 to
0.009), and it does not knot the hubs; but it shows the year by colour only and the score
by circle size only, so when a paper appeared and how far the best one stands above the
rest, the questions this page is for, are no longer read at a glance; and on a
262-paper run its best-ranked papers sit unlabelled in a dense core.
"""

import hashlib
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

import numpy as np

from crase.api.pages.force_layout import MAX_SIMULATED, ForceLayout, Frame, force_layout
from crase.ingest.records import NAME_SUFFIX
from crase.scoring.tex import tex_to_unicode

WIDTH = 900.0
LEFT, RIGHT = 64.0, 24.0
TOP = 24.0
PLOT_HEIGHT = 400.0  # the scored papers' area
BAND_GAP = 46.0  # between the score axis and the band of papers without a score
BAND_ROW = 10.0
BOTTOM = 34.0  # the year labels
MIN_RADIUS = 3.5
MAX_RADIUS = 14.0
UNKNOWN_YEAR = "n.d."
ARC_BEND = 0.12
DENSE_EDGES = 200
EDGE_OPACITY = 0.5
YEAR_CLASSES = 8  # colour by year: y0 (oldest) .. y7 (newest), CSS holds the palette
LABEL_FONT = 11.0
CHAR_WIDTH = 6.1  # an estimate of a label character's width at LABEL_FONT
EDGE_ROOM = 6.0  # a label keeps this far from the drawing's sides (wide letters run over)
FORCE_HEIGHT = 540.0  # the force layout's drawing: no band, no year labels under it
FORCE_SIDE = 64.0  # room left and right of the outermost circles for their labels
FORCE_TOP = 24.0


class Layout(StrEnum):
    """How the page places the papers: `?layout=` on the graph page."""

    YEAR_SCORE = "year-score"
    FORCE = "force"


def layout_named(name: str) -> Layout:
    """The layout a page asked for; ValueError, with the choices, for any other name."""
    try:
        return Layout(name)
    except ValueError:
        choices = " or ".join(layout.value for layout in Layout)
        raise ValueError(f"{name!r} is not a layout of the graph; give {choices} "
                         f"({Layout.YEAR_SCORE.value} is the default)") from None


@dataclass(frozen=True)
class Label:
    text: str
    x: float
    y: float
    anchor: str  # start, end or middle
    spare: bool  # it did not fit beside its paper: shown only when zoomed in


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
    central: bool  # a seed or a returned paper: drawn by default
    year_class: str
    label: Label | None


@dataclass(frozen=True)
class EdgeShape:
    citing: str
    cited: str
    path: str  # SVG path data: an arc from the citing paper to the cited one
    width: float
    retained: bool
    delta: float | None
    # Retained, but touching a paper that is neither a seed nor returned: drawn only on
    # request, so the edges that ground the results stay readable in a large run.
    context: bool = False


@dataclass(frozen=True)
class Drawing:
    width: float
    height: float
    years: list[tuple[str, float]]  # tick label and its x
    scores: list[tuple[str, float]]  # tick label and its y
    band_top: float | None  # where the band of papers without a score starts
    nodes: list[NodeShape]
    edges: list[EdgeShape]
    edge_opacity: float
    note: str | None = None  # what the layout left out or simplified, said on the page


@dataclass(frozen=True)
class YearAxis:
    first: int
    last: int
    left: float
    step: float  # width of one year
    undated_x: float

    def x(self, year: int | None) -> float:
        if year is None:
            return self.undated_x
        return self.left + (year - self.first + 0.5) * self.step

    def ticks(self) -> list[tuple[str, float]]:
        every = next(n for n in (1, 2, 5, 10, 20, 50) if self.step * n >= 34)
        ticks = [(str(y), self.x(y)) for y in range(self.first, self.last + 1)
                 if y % every == 0 or self.first == self.last]
        return ticks + [(UNKNOWN_YEAR, self.undated_x)]


@dataclass(frozen=True)
class ScoreAxis:
    low: float  # log10 of the lowest positive score
    high: float

    def y(self, score: float | None) -> float:
        if score is None or score <= 0:
            return TOP + PLOT_HEIGHT
        if self.high - self.low < 1e-9:
            return TOP + PLOT_HEIGHT / 2
        share = (math.log10(score) - self.low) / (self.high - self.low)
        return TOP + 12 + (1 - share) * (PLOT_HEIGHT - 24)

    def ticks(self) -> list[tuple[str, float]]:
        """Powers of ten (and their halves, when the range is narrow) inside the range."""
        ticks = []
        for power in range(math.floor(self.low), math.ceil(self.high) + 1):
            for factor in (1, 3) if self.high - self.low < 2 else (1,):
                value = factor * 10.0 ** power
                if self.low - 1e-9 <= math.log10(value) <= self.high + 1e-9:
                    ticks.append((f"{value:.0e}".replace("e-0", "e-"), self.y(value)))
        return ticks


def node_roles(node: dict[str, Any]) -> tuple[str, ...]:
    # A returned paper is drawn as returned even where pruning cut it from the evidence
    # graph: the learned order ranks every candidate, and the list beside the drawing
    # names it among the results.
    roles = ["seed"] if node["seed"] else []
    if node["rank"] is not None:
        roles.append("returned")
    elif not node["kept"]:
        roles.append("cut")
    else:
        roles.append("kept")
    return tuple(roles)


def radius(score: float | None, top: float) -> float:
    if score is None or top <= 0:
        return MIN_RADIUS
    return MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) * math.sqrt(max(score, 0.0) / top)


def edge_width(delta: float | None, thinning: float = 1.0, marked: bool = False) -> float:
    # A run without Delta draws every edge alike, but for the citations an influential
    # run weighed up (`marked`).
    if delta is None:
        width = 2.6 if marked else 1.2
    else:
        width = 0.6 + 4.0 * max(0.0, min(delta, 1.0))
    return round(max(0.5, width * thinning), 2)


def thinning_for(edges: int) -> float:
    """Lines get thinner and fainter as they get many, so a dense graph keeps its shape
    instead of turning into one dark mass: 1 up to DENSE_EDGES edges, then falling with
    the square root of the count."""
    return min(1.0, math.sqrt(DENSE_EDGES / max(edges, 1)))


def arc(start: NodeShape, end: NodeShape) -> str:
    """A quadratic curve bent to one side by a fraction of its length, so that edges
    between papers of one year do not lie on top of each other."""
    dx, dy = end.x - start.x, end.y - start.y
    cx, cy = (start.x + end.x) / 2 + dy * ARC_BEND, (start.y + end.y) / 2 - dx * ARC_BEND
    return f"M{start.x:.1f} {start.y:.1f}Q{cx:.1f} {cy:.1f} {end.x:.1f} {end.y:.1f}"


def year_axis(nodes: list[dict[str, Any]]) -> YearAxis:
    years = [n["year"] for n in nodes if n["year"]]
    first, last = (min(years), max(years)) if years else (2000, 2000)
    span = last - first + 1
    step = (WIDTH - LEFT - RIGHT - 40) / span  # 40: the undated papers' column
    return YearAxis(first, last, LEFT, step, WIDTH - RIGHT - 20)


def score_axis(nodes: list[dict[str, Any]]) -> ScoreAxis:
    scores = [n["score"] for n in nodes if n["score"] and n["score"] > 0]
    if not scores:
        return ScoreAxis(0.0, 0.0)
    return ScoreAxis(math.log10(min(scores)), math.log10(max(scores)))


def first_surname(name: str | None) -> str:
    """The surname a label shows: the last word of the name, not a suffix (Callan, not
    Jr.), in Unicode."""
    words = tex_to_unicode(name or "").split()
    if len(words) > 1 and NAME_SUFFIX.match(words[-1]):
        words.pop()
    return words[-1] if words else ""


def label_text(node: dict[str, Any]) -> str:
    surname = first_surname(node.get("first_author")) or "Anon."
    return f"{surname} {node['year']}" if node["year"] else surname


def year_class(year: int | None, axis: YearAxis) -> str:
    if year is None:
        return "y-none"
    share = (year - axis.first) / max(axis.last - axis.first + 1, 1)
    return f"y{min(YEAR_CLASSES - 1, int(share * YEAR_CLASSES))}"


def swarm(wanted: list[tuple[str, float, float, float]], half_width: float,
          ) -> dict[str, tuple[float, float]]:
    """Places circles (id, x, y, r) of one year at their height, each moved sideways by as
    little as keeps it clear of those placed before (a beeswarm), within the year's width;
    where none is clear, at its own place."""
    placed: list[tuple[float, float, float]] = []
    spots: dict[str, tuple[float, float]] = {}
    for paper, x, y, r in wanted:
        spot = (x, y)
        for shift in sideways(half_width - r):
            if all((x + shift - px) ** 2 + (y - py) ** 2 >= (r + pr + 1) ** 2
                   for px, py, pr in placed):
                spot = (x + shift, y)
                break
        placed.append((*spot, r))
        spots[paper] = spot
    return spots


def sideways(limit: float, step: float = 2.0) -> list[float]:
    shifts = [0.0]
    distance = step
    while distance <= max(limit, 0.0):
        shifts += [distance, -distance]
        distance += step
    return shifts


def band_spots(members: list[dict[str, Any]], x: float, width: float,
               top: float) -> dict[str, tuple[float, float]]:
    """Papers without a score under the axis, in rows across their year's width."""
    per_row = max(1, int(width // BAND_ROW))
    spots = {}
    for number, node in enumerate(members):
        row, column = divmod(number, per_row)
        offset = (column - (min(per_row, len(members)) - 1) / 2) * BAND_ROW
        spots[node["id"]] = (x + offset, top + BAND_ROW / 2 + row * BAND_ROW)
    return spots


def place_nodes(nodes: list[dict[str, Any]], years: YearAxis, scores: ScoreAxis,
                ) -> tuple[dict[str, tuple[float, float, float]], float]:
    """(x, y, r) of every paper, and the band's bottom."""
    best = max((n["score"] or 0.0 for n in nodes), default=0.0)
    by_year: dict[int | None, list[dict[str, Any]]] = {}
    for node in sorted(nodes, key=rank_order):
        by_year.setdefault(node["year"], []).append(node)
    half = max(years.step / 2, 10.0)
    band_top = TOP + PLOT_HEIGHT + BAND_GAP
    placed: dict[str, tuple[float, float, float]] = {}
    band_bottom = band_top
    for year, members in by_year.items():
        x = years.x(year)
        scored = [n for n in members if n["rank"] is not None]
        sizes = {n["id"]: radius(n["score"], best) for n in scored}
        wanted = [(n["id"], x, scores.y(n["score"]), sizes[n["id"]]) for n in scored]
        for paper, (px, py) in swarm(wanted, half).items():
            placed[paper] = (px, py, sizes[paper])
        unscored = [n for n in members if n["rank"] is None]
        for paper, (px, py) in band_spots(unscored, x, 2 * half, band_top).items():
            placed[paper] = (px, py, MIN_RADIUS)
            band_bottom = max(band_bottom, py + BAND_ROW)
    return placed, band_bottom


def rank_order(node: dict[str, Any]) -> tuple[bool, int, str]:
    return node["rank"] is None, node["rank"] or 0, node["id"]


def place_labels(shapes: list[NodeShape], nodes: dict[str, dict[str, Any]],
                 width: float = WIDTH) -> dict[str, Label]:
    """A label for each seed and returned paper, best rank first: to the right of its
    circle, else left, above or below, wherever it stays inside the drawing's width and
    overlaps no label placed before and no circle; where nothing fits, a spare label
    (shown when zoomed in) on the right."""
    central = [s for s in shapes if s.central]
    # Boxes as arrays: each try is checked against every circle and label at once, which
    # keeps a 300-paper run's labelling in milliseconds.
    circles = np.array([circle_box(s) for s in central], dtype=float).reshape(-1, 4)
    boxes = np.empty((len(central), 4))
    placed = 0
    labels = {}
    for shape in sorted(central, key=lambda s: rank_order(nodes[s.id])):
        text = label_text(nodes[shape.id])
        others = circles[~np.all(circles == circle_box(shape), axis=1)]
        fitted = None
        for x, y, anchor, box in label_places(shape, len(text) * CHAR_WIDTH, LABEL_FONT):
            inside = box[0] >= EDGE_ROOM and box[2] <= width - EDGE_ROOM
            if inside and not (overlaps_any(box, others) or overlaps_any(box, boxes[:placed])):
                fitted = Label(text, round(x, 1), round(y, 1), anchor, spare=False)
                boxes[placed] = box
                placed += 1
                break
        labels[shape.id] = fitted or Label(text, round(shape.x + shape.r + 2, 1),
                                           round(shape.y + 4, 1), "start", spare=True)
    return labels


def circle_box(shape: NodeShape) -> tuple[float, float, float, float]:
    return (shape.x - shape.r, shape.y - shape.r, shape.x + shape.r, shape.y + shape.r)


def label_places(shape: NodeShape, width: float, height: float,
                 ) -> list[tuple[float, float, str, tuple[float, float, float, float]]]:
    """Right, left, above and below the circle: the text's anchor point, its anchor, and
    the box it covers."""
    gap, x, y, r = 2.0, shape.x, shape.y, shape.r
    near, half = r + gap, height / 2
    base = y + height / 3
    return [
        (x + near, base, "start", (x + near, y - half, x + near + width, y + half)),
        (x - near, base, "end", (x - near - width, y - half, x - near, y + half)),
        (x, y - near - 1, "middle", (x - width / 2, y - near - height, x + width / 2, y - near)),
        (x, y + near + height - 1, "middle",
         (x - width / 2, y + near, x + width / 2, y + near + height)),
    ]


def overlaps_any(box: tuple[float, float, float, float], others: np.ndarray) -> bool:
    """Whether the box overlaps any row (x0, y0, x1, y1) of `others`."""
    return bool(np.any((others[:, 0] < box[2]) & (box[0] < others[:, 2])
                       & (others[:, 1] < box[3]) & (box[1] < others[:, 3])))


def draw_evidence_graph(view: dict[str, Any], layout: Layout = Layout.YEAR_SCORE) -> Drawing:
    """Positions and styles for the nodes and edges of `evidence_graph`'s view."""
    years, scores = year_axis(view["nodes"]), score_axis(view["nodes"])
    placed, band_bottom = place_nodes(view["nodes"], years, scores)
    if layout is Layout.FORCE:
        moved, note = force_placed(view, placed)
        return replace(drawing_of(view, moved, years, FORCE_HEIGHT), note=note)
    has_band = any(n["rank"] is None for n in view["nodes"])
    height = (band_bottom if has_band else TOP + PLOT_HEIGHT) + BOTTOM
    return drawing_of(view, placed, years, round(height, 1), ticks=(years, scores),
                      band_top=TOP + PLOT_HEIGHT + BAND_GAP if has_band else None)


def force_placed(view: dict[str, Any], placed: dict[str, tuple[float, float, float]],
                 ) -> tuple[dict[str, tuple[float, float, float]], str | None]:
    """The papers moved by the force layout, which starts from the year/score places (so
    that it is the same every time). The papers shown by default are pulled along the
    retained edges, the ones a reader sees; the others along every edge, pruned ones
    too, since a cut paper may have no other, and each is worth placing near the papers
    it cites or is cited by. Each paper keeps its size. With the note the page shows
    when the layout moved only some of the papers (force_layout.MAX_SIMULATED)."""
    retained = sorted((e["citing"], e["cited"]) for e in view["edges"] if e["retained"])
    every = sorted((e["citing"], e["cited"]) for e in view["edges"])
    shown = sorted(n["id"] for n in view["nodes"] if is_central(n))
    start = sorted(placed.items())
    key = hashlib.sha256(repr((start, retained, every, shown)).encode()).hexdigest()
    layout = LAYOUT_CACHE.get(key)
    if layout is None:
        frame = Frame(FORCE_SIDE, FORCE_TOP, WIDTH - FORCE_SIDE, FORCE_HEIGHT - FORCE_TOP)
        layout = force_layout(list(placed), retained,
                              {p: (x, y) for p, (x, y, _) in start},
                              {p: r for p, (_, _, r) in start}, set(shown), frame,
                              context_links=every)
        LAYOUT_CACHE.put(key, layout)
    note = None if not layout.placed_only else (
        f"The force layout moved {layout.simulated:,} papers (at most {MAX_SIMULATED:,}: "
        f"the seeds, the returned papers and those most linked to them); the other "
        f"{layout.placed_only:,} sit beside the papers they cite or are cited by, unmoved.")
    return {paper: (*layout.spots[paper], placed[paper][2]) for paper in placed}, note


class LayoutCache:
    """The last few force layouts by a digest of everything they are computed from, so a
    run's graph page drawn again (a reload, another reader) costs no layout; the same
    input always gives the same layout, so an entry is never stale."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: OrderedDict[str, ForceLayout] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: str) -> ForceLayout | None:
        with self.lock:
            if key in self.entries:
                self.entries.move_to_end(key)
            return self.entries.get(key)

    def put(self, key: str, layout: ForceLayout) -> None:
        with self.lock:
            self.entries[key] = layout
            self.entries.move_to_end(key)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)


# 16 layouts of at most a few thousand papers each: a few MB.
LAYOUT_CACHE = LayoutCache(16)


def is_central(node: dict[str, Any]) -> bool:
    """A seed or a returned paper: drawn by default."""
    return bool(node["seed"]) or node["rank"] is not None


def drawing_of(view: dict[str, Any], placed: dict[str, tuple[float, float, float]],
               years: YearAxis, height: float, ticks: tuple[YearAxis, ScoreAxis] | None = None,
               band_top: float | None = None) -> Drawing:
    """The drawing of papers already placed: shapes, labels and edges; the axes' ticks
    where the places mean a year and a score."""
    by_id = {n["id"]: n for n in view["nodes"]}
    shapes = {}
    for node in view["nodes"]:
        x, y, r = placed[node["id"]]
        shapes[node["id"]] = NodeShape(
            id=node["id"], title=node["title"] or node["id"], year=node["year"],
            x=round(x, 1), y=round(y, 1), r=round(r, 2), roles=node_roles(node),
            rank=node["rank"], score=node["score"], central=is_central(node),
            year_class=year_class(node["year"], years), label=None)
    labels = place_labels(list(shapes.values()), by_id)
    shapes = {paper: NodeShape(**{**shape.__dict__, "label": labels.get(paper)})
              for paper, shape in shapes.items()}
    edges = draw_edges(view["edges"], shapes)
    thinning = thinning_for(sum(1 for e in edges if e.retained and not e.context))
    # Big circles first, so a small one on top of a big one can still be clicked.
    return Drawing(width=WIDTH, height=height, years=ticks[0].ticks() if ticks else [],
                   scores=ticks[1].ticks() if ticks else [], band_top=band_top,
                   nodes=sorted(shapes.values(), key=lambda n: (n.central, -n.r)),
                   edges=edges, edge_opacity=round(max(0.15, EDGE_OPACITY * thinning), 3))


def draw_edges(rows: list[dict[str, Any]], shapes: dict[str, NodeShape]) -> list[EdgeShape]:
    shown = [e for e in rows if e["citing"] in shapes and e["cited"] in shapes]
    central = {paper for paper, shape in shapes.items() if shape.central}
    thinning = thinning_for(sum(1 for e in shown if e["retained"] and e["citing"] in central
                                and e["cited"] in central))
    edges = [EdgeShape(citing=e["citing"], cited=e["cited"],
                       path=arc(shapes[e["citing"]], shapes[e["cited"]]),
                       width=edge_width(e["delta"], thinning, bool(e.get("influential"))),
                       retained=e["retained"],
                       delta=e["delta"],
                       context=e["retained"] and not (e["citing"] in central
                                                      and e["cited"] in central))
             for e in shown]
    # Retained edges last, so they are painted over the pruned ones when those are shown.
    edges.sort(key=lambda e: e.retained)
    return edges
