"""The Litestar app: `create_app(settings)` wires the graph, the run registry, API keys,
the routes, the OpenAPI schema (served at /schema) and the one error mapping.

Every route but GET /health (and the schema and its docs pages) needs an `X-API-Key`
header holding one of the keys the app was given.
"""

import logging
import re
from collections.abc import Callable
from typing import Any

from litestar import Litestar, Request, Response, Router
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme

from crase.api.auth import API_KEY_HEADER, require_api_key
from crase.api.routes.analyst import AnalystController
from crase.api.routes.health import health
from crase.api.routes.ideas import IdeaController
from crase.api.routes.papers import PaperController
from crase.api.routes.runs import RunController
from crase.api.routes.searches import SearchController
from crase.api.runs import BackendsFactory, IdeaBackendsFactory, RunRegistry
from crase.errors import (
    AnalystQueryInvalid,
    AnalystQueryRefused,
    AnalystQueryTimeout,
    ApiKeyRejected,
    CorpusError,
    CraseError,
    DatabaseUnavailable,
    InvalidRequest,
    ModelError,
    PaperNotFound,
    ProviderUnavailable,
    RunNotCancellable,
    RunNotFinished,
    RunNotFound,
    SettingsError,
)
from crase.graph import Graph
from crase.idea.roles.from_settings import build_idea_backends
from crase.search.roles.from_settings import build_search_backends
from crase.settings import Settings

# The one place errors become HTTP statuses; a subclass maps like its nearest listed base.
ERROR_STATUS: dict[type[CraseError], int] = {
    InvalidRequest: 422,
    CorpusError: 422,
    AnalystQueryInvalid: 400,
    ApiKeyRejected: 401,
    AnalystQueryRefused: 403,
    RunNotFound: 404,
    PaperNotFound: 404,
    AnalystQueryTimeout: 408,
    RunNotCancellable: 409,
    RunNotFinished: 409,
    ModelError: 502,
    DatabaseUnavailable: 503,
    ProviderUnavailable: 503,
}

MISSING_PARAMETER = re.compile(r"Missing required (\w+) parameter '([^']+)'")

log = logging.getLogger(__name__)


def status_for(error: CraseError) -> int:
    for cls in type(error).__mro__:
        if cls in ERROR_STATUS:
            return ERROR_STATUS[cls]
    return 500


def crase_error_response(_: Request[Any, Any, Any], error: CraseError) -> Response[Any]:
    status = status_for(error)
    if status >= 500:
        log.error("request failed: %s: %s", type(error).__name__, error)
    return Response({"status_code": status, "error": type(error).__name__,
                     "detail": str(error)}, status_code=status)


def http_error_response(_: Request[Any, Any, Any], error: HTTPException) -> Response[Any]:
    body: dict[str, Any] = {"status_code": error.status_code,
                            "error": type(error).__name__, "detail": error.detail}
    if isinstance(error, ValidationException):
        body["error"] = "ValidationFailed"
        body["errors"] = validation_problems(error)
        if body["errors"] and isinstance(error.extra, list):
            body["detail"] = "; ".join(f"{p['field']}: {p['message']}" for p in body["errors"])
    elif error.extra:
        body["extra"] = error.extra
    return Response(body, status_code=error.status_code, headers=error.headers)


def validation_problems(error: ValidationException) -> list[dict[str, Any]]:
    """Each bad field with its message. Litestar lists them in `extra`, except for a
    missing parameter, which only its message names."""
    if isinstance(error.extra, list):
        return [{"field": item.get("key") or "body", "message": item.get("message"),
                 "source": item.get("source", "body")} for item in error.extra]
    missing = MISSING_PARAMETER.search(str(error.detail))
    if missing:
        return [{"field": missing.group(2), "message": "required", "source": missing.group(1)}]
    return []


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Crase",
        version="0.1.0",
        description="Evidence-graph scholarly search over a citation graph in Neo4j. Every "
                    f"route but /health needs the {API_KEY_HEADER} header.",
        components=Components(security_schemes={"apiKey": SecurityScheme(
            type="apiKey", name=API_KEY_HEADER, security_scheme_in="header")}),
        security=[{"apiKey": []}],
        use_handler_docstrings=False,
    )


def provide(value: Any) -> Provide:
    return Provide(lambda: value, use_cache=True, sync_to_thread=False)


def create_app(settings: Settings, graph: Graph | None = None,
               build_backends: BackendsFactory | None = None,
               build_idea: IdeaBackendsFactory | None = None) -> Litestar:
    """The app. Needs at least one API key in `settings.api.api_keys` (`crase serve`
    provides one on loopback). `graph` and the backend factories default to a connection
    from `settings.database` and the configured backends."""
    keys = [key for key in settings.api.api_keys if key]
    if not keys:
        raise SettingsError("the HTTP API needs at least one key in api.api_keys "
                            "(`crase serve` makes one for a loopback server)")
    owns_graph = graph is None
    graph = graph or connect_graph(settings)
    registry = RunRegistry(graph, build_backends or (lambda: build_search_backends(settings)),
                           settings.api.search_workers, settings.api.runs_in_memory,
                           build_idea or (lambda: build_idea_backends(settings)))
    protected = Router(path="/", guards=[require_api_key], route_handlers=[
        SearchController, RunController, PaperController, AnalystController, IdeaController])
    return Litestar(
        route_handlers=[health, protected],
        dependencies={"graph": provide(graph), "registry": provide(registry),
                      "settings": provide(settings)},
        exception_handlers={CraseError: crase_error_response,
                            HTTPException: http_error_response},
        state=State({"api_keys": keys}),
        request_max_body_size=settings.api.max_body_bytes,
        openapi_config=openapi_config(),
        on_shutdown=[shutdown_hook(registry, graph if owns_graph else None)],
    )


def connect_graph(settings: Settings) -> Graph:
    """Like `Graph.connect`, with a short retry budget: the driver's default retries an
    unreachable database for up to a minute, far too long for an HTTP client to wait for
    its 503."""
    return Graph.connect(settings.database, retry_s=settings.api.database_retry_s)


def shutdown_hook(registry: RunRegistry, graph: Graph | None) -> Callable[[], None]:
    """Cancel and wait for the runs; close the connection if the app opened it."""
    def shut_down() -> None:
        registry.shutdown()
        if graph is not None:
            graph.close()
    return shut_down
