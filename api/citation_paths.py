"""How two papers are connected (Inciteful's literature connector): the shortest citation
paths between them in the graph, citations followed either way, at most MAX_STEPS steps;
what `GET /connections`, the connector page and `crase connect` show.

A paper is named by its id, its arXiv id or its DOI, in any spelling the identity module
knows (`arXiv:hep-th/9901001v2`, `https://doi.org/...`). The paths are drawn as columns,
one per step from the first paper: on a shortest path a paper's step is its distance from
the first paper, so each paper has one column whichever path it lies on.

The search is breadth-first from both ends at once (cypher/expand_citation_frontier.cypher,
one step of one side a query), always widening the side with the smaller frontier, and
stops when the two meet or when their depths add up to `max_steps`: "no path within N
steps" costs no more than the N steps themselves. It is bounded twice: it reaches at most
`max_reached` papers (ConnectionSearchTooLarge past that), and all its reads together
take at most `timeout_s`, each read a transaction the database ends when the time left
runs out (QueryTimedOut), so no query outlives the request.
"""

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

from crase.errors import ConnectionSearchTooLarge, InvalidRequest, PaperNotFound
from crase.paper_identity import lookup_keys
from crase.paper_links import paper_links

if TYPE_CHECKING:  # `crase connect --help` reads MAX_STEPS without the driver (api/cli.py)
    from crase.graph import Graph

MAX_STEPS = 6
MAX_PATHS = 25
# Papers the two sides may reach together: the whole 3,000-paper sample is 3% of it; a
# million-paper graph stops a 6-step search between hubs here instead of reading it all.
MAX_REACHED = 100_000
CONNECTOR_TIMEOUT_S = 10.0  # api.connector_timeout_s's default, for the command line

Step = dict[str, str]  # {citing, cited}


@dataclass
class Side:
    """One end of the search: every paper it reached, at which depth, and how (the papers
    one step nearer its start and the citation between them)."""

    start: str
    depth: int = 0
    distance: dict[str, int] = field(default_factory=dict)
    previous: dict[str, dict[str, Step]] = field(default_factory=dict)
    frontier: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.distance[self.start] = 0
        self.frontier = [self.start]

    def widen(self, rows: list[dict[str, Any]]) -> None:
        """Take one step: the rows' new papers are the next frontier."""
        self.depth += 1
        for row in rows:
            here, there = row["id"], row["next"]
            step = ({"citing": here, "cited": there} if row["cites"]
                    else {"citing": there, "cited": here})
            self.distance.setdefault(there, self.depth)
            self.previous.setdefault(there, {}).setdefault(here, step)
        self.frontier = sorted({row["next"] for row in rows})

    def routes(self, paper: str) -> Iterator[tuple[list[str], list[Step]]]:
        """Every shortest route from this side's start to `paper`: its papers and steps,
        from the start."""
        if paper == self.start:
            yield [paper], []
            return
        for before, step in sorted(self.previous[paper].items()):
            for papers, steps in self.routes(before):
                yield [*papers, paper], [*steps, step]


def connect_papers(graph: "Graph", source: str, target: str, max_steps: int = 4,
                   limit: int = MAX_PATHS, timeout_s: float = CONNECTOR_TIMEOUT_S,
                   max_reached: int = MAX_REACHED) -> dict[str, Any]:
    """{source, target, max_steps, length, paths: [{papers, steps}], papers: {id: paper}}."""
    if not 1 <= max_steps <= MAX_STEPS:
        raise InvalidRequest(f"max_steps {max_steps}: give 1 to {MAX_STEPS}")
    deadline = time.monotonic() + timeout_s
    first = find_paper(graph, source, left(deadline))
    second = find_paper(graph, target, left(deadline))
    if first == second:
        raise InvalidRequest(f"{source!r} and {target!r} are the same paper; give two")
    routes = shortest_routes(graph, Side(first), Side(second), max_steps, max_reached,
                             deadline)
    paths: list[dict[str, Any]] = [{"papers": papers, "steps": steps}
                                   for papers, steps in islice(routes, limit)]
    ids = sorted({paper for path in paths for paper in path["papers"]})
    rows = graph.read("read_path_papers", timeout_s=left(deadline), ids=ids) if ids else []
    papers = {row["id"]: {**row, "links": paper_links(row)} for row in rows}
    return {"source": first, "target": second, "max_steps": max_steps,
            "length": len(paths[0]["steps"]) if paths else None, "paths": paths,
            "papers": papers}


def left(deadline: float) -> float:
    """Seconds until the deadline (none left: 0, and the next read is not sent)."""
    return max(0.0, deadline - time.monotonic())


def shortest_routes(graph: "Graph", source: Side, target: Side, max_steps: int,
                    max_reached: int, deadline: float
                    ) -> Iterator[tuple[list[str], list[Step]]]:
    """The shortest paths of at most `max_steps` steps, in a fixed order; none when the
    two sides' depths add up to `max_steps` (or a side runs out of papers) first."""
    while source.depth + target.depth < max_steps and source.frontier and target.frontier:
        side, other = ((source, target) if len(source.frontier) <= len(target.frontier)
                       else (target, source))
        budget = max_reached - len(source.distance) - len(target.distance)
        rows = graph.read("expand_citation_frontier", timeout_s=left(deadline),
                          frontier=side.frontier, reached=list(side.distance),
                          limit=budget + 1)
        if len({row["next"] for row in rows}) > budget or len(rows) > budget:
            raise ConnectionSearchTooLarge(
                f"the search reached {max_reached:,} papers within "
                f"{source.depth + target.depth + 1} steps without finding a path; lower "
                f"max_steps (now {max_steps}) or name two papers nearer each other")
        side.widen(rows)
        met = [paper for paper in side.frontier if paper in other.distance]
        if met:
            return meeting_routes(source, target, met)
    return iter(())


def meeting_routes(source: Side, target: Side, met: list[str]
                   ) -> Iterator[tuple[list[str], list[Step]]]:
    """The shortest paths through the papers where the two sides met: a path's paper at
    the widened side's depth is one of them, at the fewest steps from the other end."""
    nearest = min(target.distance[p] + source.distance[p] for p in met)
    for paper in met:
        if source.distance[paper] + target.distance[paper] != nearest:
            continue
        for head_papers, head_steps in source.routes(paper):
            for tail_papers, tail_steps in target.routes(paper):
                yield ([*head_papers, *reversed(tail_papers[:-1])],
                       [*head_steps, *reversed(tail_steps)])


def find_paper(graph: "Graph", name: str, timeout_s: float | None = None) -> str:
    """The id of the paper with this id, arXiv id or DOI (any spelling the identity
    module knows)."""
    keys = lookup_keys(name)
    rows = graph.read("match_paper_ids", timeout_s=timeout_s, ids=keys.ids)
    if not rows and (keys.dois or keys.arxiv_ids):
        rows = graph.read("match_papers_by_identifier", timeout_s=timeout_s, dois=keys.dois,
                          arxiv_ids=keys.arxiv_ids, excluded=[])
    if not rows:
        raise PaperNotFound(f"no paper has the id, arXiv id or DOI {name.strip()!r}")
    return str(rows[0]["id"])


def describe_path(path: dict[str, Any], papers: dict[str, dict[str, Any]]) -> list[str]:
    """A path in words, one step a line: 'A (1995) cites B (1993)' or 'is cited by'."""
    lines = []
    for here, there in zip(path["papers"], path["papers"][1:], strict=False):
        cites = any(step["citing"] == here and step["cited"] == there for step in path["steps"])
        verb = "cites" if cites else "is cited by"
        lines.append(f"{paper_name(papers[here])} {verb} {paper_name(papers[there])}")
    return lines


def paper_name(paper: dict[str, Any]) -> str:
    year = f" ({paper['year']})" if paper.get("year") else ""
    return f"“{paper.get('title') or paper['id']}”{year}"


def path_columns(result: dict[str, Any]) -> list[list[str]]:
    """The papers of all paths by their step from the first paper, in order of first use."""
    columns: list[list[str]] = []
    for path in result["paths"]:
        for step, paper in enumerate(path["papers"]):
            if step == len(columns):
                columns.append([])
            if paper not in columns[step]:
                columns[step].append(paper)
    return columns
