"""How two papers are connected: `GET /connections` (JSON) and the connector page
`/ui/connect`, both over crase.api.citation_paths."""

from typing import Annotated, Any

from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency
from litestar.params import Parameter, QueryParameter
from pydantic import BaseModel, Field

from crase.api.citation_paths import (
    MAX_PATHS,
    MAX_STEPS,
    connect_papers,
    describe_path,
    path_columns,
)
from crase.api.pages.path_drawing import draw_paths
from crase.api.pages.rendering import render_page
from crase.api.routes.pages import UiController
from crase.errors import InvalidRequest, PaperNotFound, QueryTimedOut
from crase.graph import Graph
from crase.settings import Settings

PAPER_NAME = Parameter(min_length=1, max_length=300,
                       description="A paper's id, arXiv id or DOI")
STEPS = Parameter(ge=1, le=MAX_STEPS, description=f"Longest path looked for (1 to {MAX_STEPS})")


class PathStep(BaseModel):
    citing: str
    cited: str


class CitationPath(BaseModel):
    papers: list[str] = Field(description="Paper ids from the first paper to the second")
    steps: list[PathStep] = Field(description="Each step's citation, its direction kept")


class PathPaper(BaseModel):
    id: str
    title: str | None
    year: int | None
    first_author: str | None
    arxiv_id: str | None
    doi: str | None
    s2_id: str | None
    links: dict[str, str]


class Connection(BaseModel):
    source: str = Field(description="The first paper's id")
    target: str = Field(description="The second paper's id")
    max_steps: int
    length: int | None = Field(description="Steps of the shortest paths; null: none found")
    paths: list[CitationPath] = Field(description=f"All shortest paths, at most {MAX_PATHS}")
    papers: dict[str, PathPaper] = Field(description="Every paper on the paths, by id")


class ConnectionController(Controller):
    path = "/connections"
    tags = ["papers"]

    @get("/", sync_to_thread=True,
         summary="How two papers are connected: the shortest citation paths between them, "
                 "citations followed either way")
    def get_connection(self, graph: NamedDependency[Graph], settings: NamedDependency[Settings],
                       source: Annotated[str, PAPER_NAME],
                       target: Annotated[str, PAPER_NAME],
                       max_steps: Annotated[int, STEPS] = 4) -> Connection:
        return Connection.model_validate(connect_papers(
            graph, source, target, max_steps, timeout_s=settings.api.connector_timeout_s))


class ConnectorPage(UiController):
    """The connector's form and, once two papers are given, their paths drawn and listed."""

    @get("/connect", sync_to_thread=True)
    def connector_page(self, request: Request[Any, Any, Any], graph: NamedDependency[Graph],
                       settings: NamedDependency[Settings],
                       source: Annotated[str | None, QueryParameter(max_length=300)] = None,
                       target: Annotated[str | None, QueryParameter(max_length=300)] = None,
                       max_steps: Annotated[int, QueryParameter(ge=1, le=MAX_STEPS)] = 4,
                       ) -> Response[str]:
        found, drawing, problem = None, None, None
        if source and target:
            try:
                found = connect_papers(graph, source, target, max_steps,
                                       timeout_s=settings.api.connector_timeout_s)
            except (PaperNotFound, InvalidRequest, QueryTimedOut) as err:
                problem = str(err)
            else:
                found["described"] = [describe_path(p, found["papers"])
                                      for p in found["paths"]]
                drawing = draw_paths(found, path_columns(found))
        return render_page(request, "connect.html", status_code=422 if problem else 200,
                           source=source or "", target=target or "", max_steps=max_steps,
                           steps=MAX_STEPS, found=found, drawing=drawing, problem=problem)


# Mounted by the app behind the API-key guard (api/app.py reads every routes module).
PROTECTED = [ConnectionController, ConnectorPage]
