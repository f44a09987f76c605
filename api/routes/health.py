"""GET /health: database, GDS and model endpoints; the one route without an API key."""

from typing import Any

from litestar import Response, get
from litestar.di import NamedDependency

from crase.api.health import check_health
from crase.graph import Graph
from crase.settings import Settings


@get("/health", sync_to_thread=True, tags=["health"], security=[],
     summary="Database, GDS and each model endpoint; 503 when the database is down")
def health(graph: NamedDependency[Graph],
           settings: NamedDependency[Settings]) -> Response[dict[str, Any]]:
    result = check_health(graph, settings)
    return Response(result.body, status_code=200 if result.ok else 503)
