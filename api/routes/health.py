"""GET /health: database, GDS and model endpoints; the one route without an API key.
Details (versions, endpoints, reasons) only for a caller with an accepted key."""

from typing import Any

from litestar import Request, Response, get
from litestar.di import NamedDependency

from crase.api.auth import has_accepted_key
from crase.api.health import check_health, public_view
from crase.graph import Graph
from crase.settings import Settings


@get("/health", sync_to_thread=True, tags=["health"], security=[],
     summary="Each component's status; with an X-API-Key, also versions, model endpoints and "
             "reasons; 503 when the database is down")
def health(request: Request[Any, Any, Any], graph: NamedDependency[Graph],
           settings: NamedDependency[Settings]) -> Response[dict[str, Any]]:
    result = check_health(graph, settings)
    body = result.body if has_accepted_key(request) else public_view(result.body)
    return Response(body, status_code=200 if result.ok else 503)


# Mounted without the API-key guard.
PUBLIC = [health]
