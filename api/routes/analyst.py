"""POST /analyst/cypher: read-only Cypher for analysts (see crase.api.analyst)."""

from dataclasses import asdict
from typing import Any

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import JSONBody
from pydantic import BaseModel, ConfigDict, Field

from crase.api.analyst import run_analyst_query
from crase.graph import Graph
from crase.settings import Settings


class AnalystQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=20_000, description="Cypher that only reads")
    params: dict[str, Any] = Field(default_factory=dict, description="Its $parameters")


class AnalystAnswer(BaseModel):
    columns: list[str]
    rows: list[dict[str, Any]]
    truncated: bool = Field(description="True when the query had more rows than row_limit")
    row_limit: int
    elapsed_ms: float


class AnalystController(Controller):
    path = "/analyst"
    tags = ["analyst"]

    @post("/cypher", status_code=200, sync_to_thread=True,
          summary="Run read-only Cypher with a timeout and a row limit; writes are refused")
    def run_cypher(self, data: JSONBody[AnalystQuery], graph: NamedDependency[Graph],
                   settings: NamedDependency[Settings]) -> AnalystAnswer:
        result = run_analyst_query(graph, data.query, data.params,
                                   settings.api.analyst_timeout_s,
                                   settings.api.analyst_row_limit)
        return AnalystAnswer(**asdict(result))
