"""A force-directed layout of the evidence graph (after Fruchterman and Reingold, 1991), the
graph page's other layout (`?layout=force`): every two papers push each other apart, every
retained citation edge pulls its two papers together and a weak pull holds all of them
near the middle, so papers that cite one another end up in one cluster and a paper linked
to few of the others at the rim. Neither direction means anything; the result is
stretched to fill the drawing.

Deterministic, so a run draws the same every time: the papers start where the year/score
layout puts them (a small jitter from a fixed seed parts those that start on one spot),
are taken in the order of their ids, and move for a fixed number of steps with a falling
temperature.

Two passes: first the papers shown by default (the seeds and the returned papers, with the
retained edges among them), then the rest of the run with those held still, so that
ticking "all papers considered" adds papers around the drawing without moving it.

Bounded: every step costs the papers moved times the papers they push against, so at most
MAX_SIMULATED papers take part: the shown ones, then the other papers with the most links
to them. The rest start beside the papers they are linked to (as the second pass's papers
do) and stay there; `force_layout` says how many. Rows of the pairwise arrays are taken
CHUNK at a time, so no array is papers x papers. A 2,492-paper run took 26.6 s of CPU and
220 MB with every paper simulated against every other.
"""

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Points = NDArray[np.float64]
Pairs = NDArray[np.intp]

ITERATIONS = 300  # the shown papers' pass
CONTEXT_ITERATIONS = 150  # the other papers' pass, around the shown ones
SEED = 20240601
JITTER = 0.5  # pixels: enough to part papers that start on one spot, too little to see
SPACING = 0.8  # the ideal edge length as a share of sqrt(area per paper)
GRAVITY = 0.6  # a pull to the middle, so that unlinked papers and clusters stay near
REACH = 2.0  # ideal lengths: papers further apart do not push each other
FIRST_STEP = 0.1  # the largest first move, as a share of the frame's width
SCATTER = 8.0  # pixels: how far around its neighbours a paper of the second pass starts
GAP = 3.0  # pixels left between two circles once they have been moved apart
SEPARATION_ROUNDS = 60
MAX_SIMULATED = 500  # papers moved by the forces; the rest are placed beside their links
CHUNK = 256  # movers per block of the pairwise arrays: CHUNK x papers floats at a time


@dataclass(frozen=True)
class Frame:
    """Where the centres of the circles may go: the drawing less a margin."""

    left: float
    top: float
    right: float
    bottom: float

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def middle(self) -> NDArray[np.float64]:
        return np.array([(self.left + self.right) / 2, (self.top + self.bottom) / 2])

    @property
    def half(self) -> NDArray[np.float64]:
        return np.array([self.width / 2, self.height / 2])


@dataclass(frozen=True)
class ForceLayout:
    """Each paper's centre, and how many papers the forces moved (the others were placed
    beside the papers they are linked to)."""

    spots: dict[str, tuple[float, float]]
    simulated: int
    placed_only: int


def force_layout(papers: list[str], links: list[tuple[str, str]],
                 start: dict[str, tuple[float, float]], radii: dict[str, float],
                 shown: set[str], frame: Frame,
                 context_links: list[tuple[str, str]] | None = None,
                 ) -> ForceLayout:
    """The centre of each paper: those in `shown`, pulled by `links`, laid out among
    themselves and spread over the frame; then the others around them, pulled by
    `context_links` (by default `links`), at most MAX_SIMULATED papers in all; the rest
    beside their links."""
    context = links if context_links is None else context_links
    moved = simulated_papers(papers, context, shown)
    spots = simulated_layout(sorted(moved), links, start, radii, shown, frame, context)
    rest = sorted(set(papers) - moved)
    if rest:
        spots.update(placed_beside(rest, context, spots, start, frame))
    return ForceLayout(spots, len(moved), len(rest))


def simulated_papers(papers: list[str], links: list[tuple[str, str]],
                     shown: set[str]) -> set[str]:
    """The papers the forces move: the shown ones, then those with the most links to
    papers already chosen (ties by id), up to MAX_SIMULATED."""
    if len(papers) <= MAX_SIMULATED:
        return set(papers)
    chosen = {paper for paper in papers if paper in shown}
    degree: dict[str, int] = dict.fromkeys(papers, 0)
    for a, b in links:
        if a in degree and b in degree:
            degree[a] += b in chosen
            degree[b] += a in chosen
    others = sorted((paper for paper in papers if paper not in chosen),
                    key=lambda paper: (-degree[paper], paper))
    return chosen | set(others[:max(0, MAX_SIMULATED - len(chosen))])


def placed_beside(rest: list[str], links: list[tuple[str, str]],
                  spots: dict[str, tuple[float, float]],
                  start: dict[str, tuple[float, float]], frame: Frame,
                  ) -> dict[str, tuple[float, float]]:
    """Papers the forces did not move, each at the middle of the papers it is linked to
    (in rounds, as `near_neighbours` places them), inside the frame."""
    order = sorted(spots) + rest
    index = {paper: number for number, paper in enumerate(order)}
    points = starting_points(order, {**start, **spots})
    points[:len(spots)] = np.array([spots[paper] for paper in sorted(spots)]).reshape(-1, 2)
    placed = np.arange(len(order)) < len(spots)
    points = clamp(near_neighbours(points, link_pairs(links, index), placed, frame), frame)
    return {paper: (float(points[index[paper], 0]), float(points[index[paper], 1]))
            for paper in rest}


def simulated_layout(papers: list[str], links: list[tuple[str, str]],
                     start: dict[str, tuple[float, float]], radii: dict[str, float],
                     shown: set[str], frame: Frame, context_links: list[tuple[str, str]],
                     ) -> dict[str, tuple[float, float]]:
    """The two passes over `papers`, every one of them moved by the forces."""
    order = sorted(papers)
    index = {paper: number for number, paper in enumerate(order)}
    points = starting_points(order, start)
    sizes = np.array([radii[paper] for paper in order])
    central = np.array([paper in shown for paper in order], dtype=bool)

    inner = np.flatnonzero(central)
    everyone = np.ones(len(inner), dtype=bool)
    laid = simulate(points[inner], within(link_pairs(links, index), central), everyone,
                    frame, ITERATIONS, bounded=False)
    points[inner] = separate(fill(laid, frame), sizes[inner], everyone, frame)

    if not central.all():
        pairs = link_pairs(context_links, index)
        points = near_neighbours(points, pairs, central, frame)
        points = simulate(points, pairs, ~central, frame, CONTEXT_ITERATIONS, bounded=True)
        points = separate(points, sizes, ~central, frame)
    return {paper: (float(points[n, 0]), float(points[n, 1])) for n, paper in enumerate(order)}


def starting_points(order: list[str], start: dict[str, tuple[float, float]]) -> Points:
    # The seeded jitter keeps two papers that start on one spot from pushing each other
    # with no direction (and dividing by a zero distance).
    jitter = np.random.default_rng(SEED).uniform(-JITTER, JITTER, size=(len(order), 2))
    return np.array([start[paper] for paper in order], dtype=float).reshape(-1, 2) + jitter


def link_pairs(links: list[tuple[str, str]], index: dict[str, int]) -> Pairs:
    """Each link once, as two row numbers, whichever paper cites which: a citation pulls
    both ways alike, and a pair citing each other is pulled once."""
    pairs = sorted({tuple(sorted((index[a], index[b]))) for a, b in links
                    if a in index and b in index and a != b})
    return np.array(pairs, dtype=np.intp).reshape(-1, 2)


def within(pairs: Pairs, members: NDArray[np.bool_]) -> Pairs:
    """The pairs whose two papers are both members, renumbered among the members."""
    renumber = np.cumsum(members) - 1
    kept = pairs[members[pairs].all(axis=1)] if len(pairs) else pairs
    return renumber[kept].astype(np.intp).reshape(-1, 2)


def simulate(points: Points, pairs: Pairs, movable: NDArray[np.bool_], frame: Frame,
             iterations: int, bounded: bool) -> Points:
    """Fruchterman-Reingold steps: each movable paper moves along the sum of its forces,
    by no more than the temperature, which falls linearly to nothing. Unbounded, the
    papers find their own shape (`fill` fits it to the frame afterwards); bounded, a
    paper that would leave the frame stops at its side."""
    points = points.copy()
    movers = np.flatnonzero(movable)
    if len(movers) == 0:
        return points
    ideal = SPACING * math.sqrt(frame.width * frame.height / len(points))
    for step in range(iterations):
        temperature = FIRST_STEP * frame.width * (1 - step / iterations)
        forces = (repulsion(points, movers, ideal) + attraction(points, pairs, ideal)[movers]
                  + gravity(points[movers], frame, ideal))
        length = np.maximum(np.hypot(forces[:, 0], forces[:, 1]), 1e-9)[:, None]
        moved = points[movers] + forces / length * np.minimum(length, temperature)
        points[movers] = clamp(moved, frame) if bounded else moved
    return points


def repulsion(points: Points, movers: NDArray[np.intp], ideal: float) -> Points:
    """The push on each mover from every other paper closer than REACH ideal lengths:
    ideal²/distance. The reach (the grid variant of the original) keeps the many far
    papers from adding up to one push outwards that would press the outer papers against
    the frame."""
    forces = np.zeros((len(movers), 2))
    for first in range(0, len(movers), CHUNK):
        block = movers[first:first + CHUNK]
        dx, dy = differences(points, block)
        squared = np.maximum(dx * dx + dy * dy, 0.01)
        squared[np.arange(len(block)), block] = np.inf  # a paper does not push itself
        push = np.where(squared < (REACH * ideal) ** 2, ideal ** 2 / squared, 0.0)
        forces[first:first + CHUNK] = np.stack([(dx * push).sum(axis=1),
                                                (dy * push).sum(axis=1)], axis=1)
    return forces


def differences(points: Points, rows: NDArray[np.intp]) -> tuple[Points, Points]:
    """x and y from every paper to each paper of `rows`, as two (rows, papers) arrays:
    cheaper to sum than one array of vectors."""
    return (points[rows, 0][:, None] - points[None, :, 0],
            points[rows, 1][:, None] - points[None, :, 1])


def attraction(points: Points, pairs: Pairs, ideal: float) -> Points:
    """Every link pulls its two papers together with distance²/ideal."""
    forces = np.zeros_like(points)
    if len(pairs) == 0:
        return forces
    apart = points[pairs[:, 0]] - points[pairs[:, 1]]
    pull = apart * (np.hypot(apart[:, 0], apart[:, 1]) / ideal)[:, None]
    np.add.at(forces, pairs[:, 0], -pull)
    np.add.at(forces, pairs[:, 1], pull)
    return forces


def gravity(points: Points, frame: Frame, ideal: float) -> Points:
    # Measured against the frame's half width and half height, so the papers fill a wide
    # frame instead of a circle in its middle.
    return -GRAVITY * ideal * (points - frame.middle) / frame.half


def clamp(points: Points, frame: Frame) -> Points:
    return np.clip(points, [frame.left, frame.top], [frame.right, frame.bottom])


def fill(points: Points, frame: Frame) -> Points:
    """Stretched (or shrunk) to reach the frame's four sides, so the labels get the room."""
    if len(points) < 2:
        return np.tile(frame.middle, (len(points), 1))
    low, high = points.min(axis=0), points.max(axis=0)
    span = np.where(high - low > 1e-9, high - low, 1.0)
    share = np.where(high - low > 1e-9, (points - low) / span, 0.5)
    return np.array([frame.left, frame.top]) + share * np.array([frame.width, frame.height])


def separate(points: Points, sizes: NDArray[np.float64], movable: NDArray[np.bool_],
             frame: Frame) -> Points:
    """Circles that still overlap are pushed apart, each movable one by half the overlap
    (a fixed one does not move, so the other takes all of it), for a few rounds."""
    points = points.copy()
    movers = np.flatnonzero(movable)
    share = np.where(movable, 0.5, 1.0)[None, :]  # of an overlap with that paper
    for _ in range(SEPARATION_ROUNDS):
        shifts = np.zeros((len(movers), 2))
        for first in range(0, len(movers), CHUNK):
            block = movers[first:first + CHUNK]
            dx, dy = differences(points, block)
            distance = np.maximum(np.hypot(dx, dy), 1e-9)
            overlap = sizes[block][:, None] + sizes[None, :] + GAP - distance
            overlap[np.arange(len(block)), block] = 0.0
            push = np.maximum(overlap, 0.0) * share / distance
            shifts[first:first + CHUNK] = np.stack([(dx * push).sum(axis=1),
                                                    (dy * push).sum(axis=1)], axis=1)
        if not shifts.any():
            break
        points[movers] = clamp(points[movers] + shifts, frame)
    return points


def near_neighbours(points: Points, pairs: Pairs, placed: NDArray[np.bool_],
                    frame: Frame) -> Points:
    """Each paper not yet placed starts at the middle of its placed neighbours, in rounds
    (a neighbour placed in one round places the papers linked to it in the next), so the
    simulation only has to settle it, not carry it across the frame. A paper linked to
    none starts in the middle, and is pushed out from there."""
    points, placed = points.copy(), placed.copy()
    # Many papers cite only one hub: a seeded scatter sends them off it in all directions.
    scatter = np.random.default_rng(SEED).uniform(-SCATTER, SCATTER, size=points.shape)
    while True:
        total, count = np.zeros_like(points), np.zeros(len(points))
        for mover, anchor in np.concatenate([pairs, pairs[:, ::-1]]):
            if placed[anchor] and not placed[mover]:
                total[mover] += points[anchor]
                count[mover] += 1
        fresh = count > 0
        if not fresh.any():
            break
        points[fresh] = total[fresh] / count[fresh][:, None] + scatter[fresh]
        placed |= fresh
    points[~placed] = frame.middle + scatter[~placed]
    return points
