"""How two papers are connected (Inciteful's literature connector): the shortest citation
paths between them in the graph, citations followed either way, at most MAX_STEPS steps;
what `GET /connections`, the connector page and `crase connect` show.

A paper is named by its id, its arXiv id or its DOI. The paths are drawn as columns, one per
step from the first paper: on a shortest path a paper's step is its distance from the first
paper, so each paper has one column whichever path it lies on.
"""

from typing import TYPE_CHECKING, Any

from crase.errors import InvalidRequest, PaperNotFound
from crase.paper_links import paper_links

if TYPE_CHECKING:  # `crase connect --help` reads MAX_STEPS without the driver (api/cli.py)
    from crase.graph import Graph

MAX_STEPS = 6  # the bound written into cypher/find_citation_paths.cypher
MAX_PATHS = 25


def connect_papers(graph: "Graph", source: str, target: str, max_steps: int = 4,
                   limit: int = MAX_PATHS) -> dict[str, Any]:
    """{source, target, max_steps, paths: [{papers, steps}], papers: {id: paper}}."""
    if not 1 <= max_steps <= MAX_STEPS:
        raise InvalidRequest(f"max_steps {max_steps}: give 1 to {MAX_STEPS}")
    first, second = find_paper(graph, source), find_paper(graph, target)
    if first == second:
        raise InvalidRequest(f"{source!r} and {target!r} are the same paper; give two")
    rows = graph.read("find_citation_paths", source=first, target=second,
                      max_steps=max_steps, limit=limit)
    papers = {p["id"]: {**p, "links": paper_links(p)} for row in rows for p in row["papers"]}
    paths = [{"papers": [p["id"] for p in row["papers"]], "steps": row["steps"]}
             for row in rows]
    return {"source": first, "target": second, "max_steps": max_steps,
            "length": len(paths[0]["steps"]) if paths else None, "paths": paths,
            "papers": papers}


def find_paper(graph: "Graph", name: str) -> str:
    """The id of the paper with this id, arXiv id or DOI."""
    name = name.strip()
    if graph.read("match_paper_ids", ids=[name]):
        return name
    rows = graph.read("match_papers_by_identifier", dois=[name.lower()], arxiv_ids=[name],
                      excluded=[])
    if not rows:
        raise PaperNotFound(f"no paper has the id, arXiv id or DOI {name!r}")
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
