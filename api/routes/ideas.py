"""POST /ideas: idea to prior work in the background; GET /ideas/{id}/audit: its audit.

The run itself is read like any other at GET /runs/{id} (status, per-stage progress, the
five papers with the reason for each). A request sets budgets and gates only (`IdeaParams`,
each budget at most the server's own); the rest is the operator's: local PDF folders (a path
on the server), whether external providers are used, where PDFs are fetched from, and how
large or slow a download may be. A run is accepted only while the database answers (else
503), so no accepted run is lost.
"""

from typing import Any

from litestar import Controller, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from crase.api.runs import RunRegistry
from crase.errors import InvalidRequest
from crase.graph import Graph
from crase.idea.audit import export_idea_audit
from crase.idea.request import IdeaMode, IdeaParams, IdeaRequest, merge_idea_params
from crase.settings import IdeaSettings, Settings


class IdeaBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    idea: str = Field(..., min_length=3, max_length=8000, description="The research idea")
    mode: IdeaMode = Field("retrieval_eval", description="retrieval_eval or full_report")
    year_min: int | None = Field(None, ge=1600, le=2200, description="Earliest eligible year")
    year_max: int | None = Field(None, ge=1600, le=2200, description="Latest eligible year")
    exclude: list[str] = Field(default_factory=list, max_length=10_000,
                               description="Paper ids left out with their edges")
    params: IdeaParams | None = Field(None, description="Budgets (at most the server's own) "
                                                        "and gates (within the published "
                                                        "limits)")


class IdeaAccepted(BaseModel):
    run_id: str
    status: str
    run_url: str = Field(description="GET it for status, progress and the five papers")
    audit_url: str = Field(description="GET it for the full audit once the run has ended")


def build_idea_request(body: IdeaBody, defaults: IdeaSettings) -> IdeaRequest:
    try:
        params = merge_idea_params(body.params, defaults)
        return IdeaRequest(idea=body.idea, mode=body.mode, year_min=body.year_min,
                           year_max=body.year_max, exclude=body.exclude, params=params)
    except ValidationError as err:
        # Checks across fields (years in order, facet bounds) that one field cannot see.
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
                             for e in err.errors(include_url=False))
        raise InvalidRequest(problems) from err


class IdeaController(Controller):
    path = "/ideas"
    tags = ["ideas"]

    # In a thread: accepting a run first asks the database whether it answers.
    @post("/", status_code=202, sync_to_thread=True,
          summary="Start an idea-to-prior-work run; 202 with the run id")
    def start_idea(self, data: JSONBody[IdeaBody], registry: NamedDependency[RunRegistry],
                   settings: NamedDependency[Settings]) -> IdeaAccepted:
        run = registry.submit_idea(build_idea_request(data, settings.idea))
        return IdeaAccepted(run_id=run.id, status=run.status, run_url=f"/runs/{run.id}",
                            audit_url=f"/ideas/{run.id}/audit")

    @get("/{run_id:str}/audit", sync_to_thread=True,
         summary="The audit of an idea run: every candidate, gate, budget and decision")
    def get_audit(self, run_id: FromPath[str], graph: NamedDependency[Graph]) -> dict[str, Any]:
        return export_idea_audit(graph, run_id)


# Mounted by the app behind the API-key guard (api/app.py reads every routes module).
PROTECTED = [IdeaController]
