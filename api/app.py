"""The Litestar app: `create_app(settings)` wires the graph, the run registry, API keys,
the routes, the OpenAPI schema (served at /schema) and the one error mapping.

Every route but GET /health (and the schema and its docs pages) needs an `X-API-Key`
header holding one of the keys the app was given; the web pages under /ui take the same
keys from the session cookie their login page sets (api/auth.py, api/routes/pages.py).
The docs pages at /schema load Swagger UI from the app itself (the swagger-ui-bundle
package carries it), so they work without internet.

What a client is shown when something fails: a body that cannot be parsed (malformed, or
nested past the decoder's ~1,000 levels) is a 400 that says so, and is logged; a body not
declared `application/json` is a 415; a 5xx carries a short reason and what to do, while
the error's own message (which may name the Bolt address, a query, driver or model
endpoint text) and any traceback go to the server log only.
"""

import importlib
import logging
import pkgutil
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from litestar import Litestar, Request, Response, Router
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import (
    ClientException,
    HTTPException,
    SerializationException,
    ValidationException,
)
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.static_files import create_static_files_router
from litestar.types import Scope

from crase.api import routes
from crase.api.analyst import AnalystSlots
from crase.api.auth import API_KEY_HEADER, BROWSER_PAGE, Sessions, require_api_key
from crase.api.bulkheads import Bulkheads
from crase.api.runs import DATABASE_DOWN, BackendsFactory, IdeaBackendsFactory, RunRegistry
from crase.errors import (
    AnalystQueriesBusy,
    AnalystQueryInvalid,
    AnalystQueryRefused,
    AnalystQueryTimeout,
    AnalystQueryUnanswered,
    ApiKeyRejected,
    CorpusError,
    CraseError,
    DatabaseUnavailable,
    GivenPapersUnknown,
    InvalidRequest,
    ModelError,
    PaperNotFound,
    PaperVectorsMismatch,
    ParameterAboveServerCap,
    ProviderUnavailable,
    QueryMemoryExceeded,
    QueryTimedOut,
    RunNotCancellable,
    RunNotFinished,
    RunNotFound,
    RunQueueFull,
    SettingsError,
    WorkBusy,
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
    ParameterAboveServerCap: 400,
    ApiKeyRejected: 401,
    AnalystQueryRefused: 403,
    RunNotFound: 404,
    PaperNotFound: 404,
    AnalystQueryTimeout: 408,
    RunNotCancellable: 409,
    RunNotFinished: 409,
    RunQueueFull: 429,
    WorkBusy: 429,
    QueryMemoryExceeded: 422,  # the request asked too much of one transaction
    ModelError: 502,
    DatabaseUnavailable: 503,
    ProviderUnavailable: 503,
    AnalystQueriesBusy: 503,
    PaperVectorsMismatch: 503,  # until the operator re-embeds or resets the encoder
    AnalystQueryUnanswered: 504,
    QueryTimedOut: 504,
}
# What a client is told of a 5xx, by the error's nearest listed class; the message itself
# goes to the server log. An error written for the client (AnalystQueriesBusy, ...) is
# listed with None and keeps its message.
CLIENT_REASONS: dict[type[CraseError], str | None] = {
    DatabaseUnavailable: DATABASE_DOWN,
    ModelError: "a model endpoint failed; retry later, or ask the operator to check the "
                "model endpoints (GET /health with a key, and the server log, say which)",
    ProviderUnavailable: "a metadata provider (Semantic Scholar, Crossref, arXiv) kept "
                         "failing; retry later",
    AnalystQueriesBusy: None,
    PaperVectorsMismatch: None,
    AnalystQueryUnanswered: None,
    QueryTimedOut: None,
}
GENERIC_REASON = ("the server failed on this request; retry, and if it fails again, ask the "
                  "operator to look for it in the server log")
TOO_DEEP = ("the JSON body is nested too deeply to read (deeper than about 1,000 levels); "
            "send flatter JSON")
NOT_JSON = "send the body as JSON, with the header Content-Type: application/json"
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})

MISSING_PARAMETER = re.compile(r"Missing required (\w+) parameter '([^']+)'")

log = logging.getLogger(__name__)


def status_for(error: CraseError) -> int:
    for cls in type(error).__mro__:
        if cls in ERROR_STATUS:
            return ERROR_STATUS[cls]
    return 500


def client_reason(error: CraseError, status: int) -> str:
    if status < 500:
        return str(error)  # written for the client
    for cls in type(error).__mro__:
        if cls in CLIENT_REASONS:
            return CLIENT_REASONS[cls] or str(error)
    return GENERIC_REASON


def crase_error_response(request: Request[Any, Any, Any], error: CraseError) -> Response[Any]:
    status = status_for(error)
    if status >= 500:
        # A listed class is an expected outage (its message says enough); anything else
        # is a bug, and its traceback is wanted.
        listed = any(cls in ERROR_STATUS for cls in type(error).__mro__)
        log.error("%s %s failed: %s: %s", request.method, request.url.path,
                  type(error).__name__, error, exc_info=None if listed else error)
    headers = ({"Retry-After": str(error.retry_after_s)}
               if isinstance(error, AnalystQueriesBusy | RunQueueFull | WorkBusy) else None)
    body: dict[str, Any] = {"status_code": status, "error": type(error).__name__,
                            "detail": client_reason(error, status)}
    if isinstance(error, GivenPapersUnknown):  # every entry not found, not only the first
        body["unknown"] = error.unknown
    return Response(body, status_code=status, headers=headers)


def http_error_response(request: Request[Any, Any, Any],
                        error: HTTPException) -> Response[Any]:
    if isinstance(error.__cause__, SerializationException):
        return body_problem(f"the JSON cannot be read ({error.detail}); send well-formed JSON")
    if error.status_code >= 500:
        log.error("%s %s failed: %s: %s", request.method, request.url.path,
                  type(error).__name__, error.detail, exc_info=error)
        return Response({"status_code": error.status_code, "error": type(error).__name__,
                         "detail": GENERIC_REASON}, status_code=error.status_code)
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


def body_problem(message: str) -> Response[Any]:
    """A 400 in the shape of every other validation failure, naming the body."""
    return Response({"status_code": 400, "error": "ValidationFailed", "detail": f"body: {message}",
                     "errors": [{"field": "body", "message": message, "source": "body"}]},
                    status_code=400)


def too_deep_response(_: Request[Any, Any, Any], __: RecursionError) -> Response[Any]:
    """The JSON decoder recurses per level and gives up near 1,000 (`log_failure` logs it)."""
    return body_problem(TOO_DEEP)


def internal_error_response(request: Request[Any, Any, Any],
                            error: Exception) -> Response[Any]:
    """Anything unexpected: a 500 with a generic reason; the detail in the server log."""
    log.error("%s %s failed: %s: %s", request.method, request.url.path,
              type(error).__name__, error, exc_info=error)
    return Response({"status_code": 500, "error": "InternalServerError",
                     "detail": GENERIC_REASON}, status_code=500)


async def log_failure(error: Exception, scope: Scope) -> None:
    """After-exception hook, so that a body too deep is logged whichever handler (a route's
    own, or the app's) answers it."""
    if isinstance(error, RecursionError):
        log.warning("%s %s refused: the JSON body is nested too deeply to read",
                    scope.get("method"), scope.get("path"))


class UnsupportedMediaType(ClientException):
    status_code = 415


async def require_json_body(request: Request[Any, Any, Any]) -> None:
    """Before-request hook: a body must be declared JSON (Litestar would read a text/plain
    body as JSON all the same). A POST without a body needs no content type."""
    if request.method not in BODY_METHODS or not has_body(request):
        return
    if request.route_handler.opt.get(BROWSER_PAGE):
        return  # a web page's form, posted as a browser posts it
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json" and not media_type.endswith("+json"):
        given = f"Content-Type {media_type}" if media_type else "no Content-Type"
        raise UnsupportedMediaType(f"the body was sent with {given}; {NOT_JSON}")


def has_body(request: Request[Any, Any, Any]) -> bool:
    length = request.headers.get("content-length")
    if length is not None:
        return length.strip() not in ("", "0")
    return "transfer-encoding" in request.headers


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


SWAGGER_ASSETS = "/schema-assets"


def swagger_ui_folder() -> Path:
    """Swagger UI's files as the swagger-ui-bundle package installs them."""
    import swagger_ui_bundle

    return Path(swagger_ui_bundle.swagger_ui_path)


def swagger_assets_router() -> Router:
    return create_static_files_router(path=SWAGGER_ASSETS, directories=[swagger_ui_folder()],
                                      name="swagger_ui")


def openapi_config() -> OpenAPIConfig:
    swagger = SwaggerRenderPlugin(
        js_url=f"{SWAGGER_ASSETS}/swagger-ui-bundle.js",
        css_url=f"{SWAGGER_ASSETS}/swagger-ui.css",
        standalone_preset_js_url=f"{SWAGGER_ASSETS}/swagger-ui-standalone-preset.js",
        favicon=f"<link rel='icon' type='image/png' href='{SWAGGER_ASSETS}/favicon-32x32.png'>",
        path=["/", "/swagger"])
    return OpenAPIConfig(
        title="Crase",
        version="0.1.0",
        description="Evidence-graph scholarly search over a citation graph in Neo4j. Every "
                    f"route but /health needs the {API_KEY_HEADER} header.",
        components=Components(security_schemes={"apiKey": SecurityScheme(
            type="apiKey", name=API_KEY_HEADER, security_scheme_in="header")}),
        security=[{"apiKey": []}],
        use_handler_docstrings=False,
        render_plugins=[swagger],
    )


def route_handlers() -> tuple[list[Any], list[Any]]:
    """(public, protected) handlers of every module in `crase.api.routes`, by module name."""
    public: list[Any] = []
    protected: list[Any] = []
    for module_info in sorted(pkgutil.iter_modules(routes.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{routes.__name__}.{module_info.name}")
        public.extend(getattr(module, "PUBLIC", []))
        protected.extend(getattr(module, "PROTECTED", []))
    return public, protected


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
                           build_idea or (lambda: build_idea_backends(settings)),
                           settings.api.run_deadline_s, settings.api.max_queued_runs,
                           settings.api.stale_run_after_s)
    public, protected_handlers = route_handlers()
    protected = Router(path="/", guards=[require_api_key], route_handlers=protected_handlers)
    return Litestar(
        route_handlers=[*public, swagger_assets_router(), protected],
        dependencies={"graph": provide(graph), "registry": provide(registry),
                      "settings": provide(settings),
                      "analyst_slots": provide(AnalystSlots.from_settings(settings.api)),
                      "bulkheads": provide(Bulkheads(settings.api))},
        exception_handlers={CraseError: crase_error_response,
                            HTTPException: http_error_response,
                            RecursionError: too_deep_response,
                            Exception: internal_error_response},
        before_request=require_json_body,
        after_exception=[log_failure],
        state=State({"api_keys": keys, "sessions": Sessions.open(settings)}),
        request_max_body_size=settings.api.max_body_bytes,
        openapi_config=openapi_config(),
        # Runs whose process is gone (no heartbeat) are closed 'failed' (api/runs.py).
        on_startup=[registry.close_stale_runs],
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
