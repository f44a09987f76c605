"""POST /analyst/cypher: read-only Cypher for analysts (see crase.api.analyst for what is
refused, the timeout, the deadline and the concurrency bound)."""

import asyncio
from dataclasses import asdict
from functools import partial
from typing import Any

from anyio import to_thread
from litestar import Controller, Request, post
from litestar.di import NamedDependency
from litestar.params import JSONBody
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from crase.api.analyst import (
    MAX_QUERY_CHARS,
    AnalystSlots,
    RequestStop,
    answer_analyst_query,
    parameter_problem,
    stop_request,
)
from crase.graph import Graph
from crase.settings import Settings


class AnalystQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS,
                       description="Cypher that only reads")
    params: dict[str, Any] = Field(default_factory=dict, description="Its $parameters")

    @field_validator("params")
    @classmethod
    def neo4j_can_take(cls, params: dict[str, Any]) -> dict[str, Any]:
        problem = parameter_problem(params)
        if problem:
            raise PydanticCustomError("parameter", problem)
        return params


class AnalystAnswer(BaseModel):
    columns: list[str]
    rows: list[dict[str, Any]]
    truncated: bool = Field(description="True when the query had more rows than row_limit")
    row_limit: int
    elapsed_ms: float


class AnalystController(Controller):
    path = "/analyst"
    tags = ["analyst"]

    @post("/cypher", status_code=200,
          summary="Run read-only Cypher with a timeout and a row limit; writes are refused; "
                  "at most api.analyst_max_in_flight at once (503 with Retry-After past it); "
                  "a client that goes away ends its query")
    async def run_cypher(self, request: Request[Any, Any, Any], data: JSONBody[AnalystQuery],
                         graph: NamedDependency[Graph], settings: NamedDependency[Settings],
                         analyst_slots: NamedDependency[AnalystSlots]) -> AnalystAnswer:
        stop = RequestStop()
        answer = asyncio.ensure_future(to_thread.run_sync(partial(
            answer_analyst_query, graph, analyst_slots, settings.api, data.query,
            data.params, stop)))
        gone = asyncio.ensure_future(client_gone(request))
        await asyncio.wait({answer, gone}, return_when=asyncio.FIRST_COMPLETED)
        if not answer.done():
            # The client went away: its query must not hold a slot to its timeout.
            await to_thread.run_sync(partial(stop_request, graph, stop))
        gone.cancel()
        return AnalystAnswer(**asdict(await answer))


async def client_gone(request: Request[Any, Any, Any]) -> None:
    """Returns when the client disconnects (the body is read by now, so the next message
    the server receives is the disconnect)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


# Mounted by the app behind the API-key guard (api/app.py reads every routes module).
PROTECTED = [AnalystController]
