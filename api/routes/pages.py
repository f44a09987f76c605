"""The web pages under /ui: login and logout, the search and idea forms, the runs list, a
run (live progress, then results or the idea run's five works and audit summary), its
evidence graph with paper and edge cards, and the downloads.

Pages call the same functions as the JSON API and are kept out of its OpenAPI schema. They
need the session cookie that the login page sets (api/auth.py); a browser without one is
sent to the login page, and every form post must carry the session's form token.
"""

import math
from typing import Annotated, Any
from urllib.parse import quote

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.exceptions import ValidationException
from litestar.params import Body, FromPath, FromQuery, QueryParameter
from litestar.response import Redirect
from litestar.static_files import create_static_files_router

from crase.api.auth import (
    BROWSER_PAGE,
    FORM_TOKEN_FIELD,
    SESSION_COOKIE,
    Sessions,
    check_form_token,
    key_is_accepted,
)
from crase.api.bulkheads import Bulkheads
from crase.api.exports import ExportFormat, export_run
from crase.api.pages.edge_details import edge_details
from crase.api.pages.forms import (
    GIVEN_FIELD,
    IDEA_MODES,
    SEARCH_BOUNDS,
    SEARCH_CHOICES,
    given_lines,
    idea_request,
    search_defaults,
    search_request,
)
from crase.api.pages.graph_drawing import Layout, draw_evidence_graph, layout_named
from crase.api.pages.idea_summary import summarize_audit
from crase.api.pages.rendering import STATIC, error_page, render_page
from crase.api.pages.result_views import (
    link_list,
    linked_results,
    search_results,
    top_authors_and_venues,
)
from crase.api.run_views import (
    describe_run,
    evidence_graph,
    list_runs,
    read_results,
    weighed_graph,
)
from crase.api.runs import FINISHED, RunRegistry
from crase.errors import (
    CraseError,
    GivenPapersUnknown,
    InvalidRequest,
    LoginRequired,
    PaperNotFound,
)
from crase.graph import Graph
from crase.idea.audit import export_idea_audit
from crase.run_lifecycle import WITH_RESULTS
from crase.settings import Settings

FormData = Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)]
RUNS_PER_PAGE = 20


def login_redirect(request: Request[Any, Any, Any], _: LoginRequired) -> Response[Any]:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return Redirect(f"/ui/login?next={quote(target, safe='')}", status_code=303)


def safe_next(target: str | None) -> str:
    """Only a page of this site, so the login cannot be used to send a user elsewhere."""
    if target and target.startswith("/ui/") and not target.startswith("//"):
        return target
    return "/ui/"


def same_origin(request: Request[Any, Any, Any]) -> bool:
    """A browser names the page a form came from; a form posted from elsewhere is refused."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    return origin.split("://", 1)[-1] == request.headers.get("host", "")


class UiController(Controller):
    """What every web page shares: its place under /ui, no place in the API schema, the
    session cookie instead of the key header, and errors as pages."""

    path = "/ui"
    include_in_schema = False
    opt = {BROWSER_PAGE: True}
    exception_handlers = {LoginRequired: login_redirect, CraseError: error_page}


class LoginController(UiController):
    """The login and logout, open to everyone (the guard does not run here)."""

    @get("/login", sync_to_thread=False)
    def login_form(self, request: Request[Any, Any, Any],
                   next_page: Annotated[str | None, QueryParameter(name="next")] = None,
                   ) -> Response[str]:
        return render_page(request, "login.html", next_page=safe_next(next_page), problem=None)

    @post("/login", sync_to_thread=False, status_code=303)
    def log_in(self, request: Request[Any, Any, Any], data: FormData) -> Response[Any]:
        next_page = safe_next(data.get("next"))
        if not same_origin(request):
            return render_page(request, "login.html", status_code=403, next_page=next_page,
                               problem="the login form was sent from another site; open "
                                       "this server's login page and log in there")
        key = data.get("key", "").strip()
        if not key_is_accepted(key, request.app.state.api_keys):
            return render_page(request, "login.html", status_code=401, next_page=next_page,
                               problem="that key is not one of this server's API keys; "
                                       "copy it from var/api-key or ask the operator")
        # The cookie holds a signed session token, never the key (api/auth.py).
        sessions: Sessions = request.app.state.sessions
        response: Response[Any] = Redirect(next_page, status_code=303)
        response.set_cookie(SESSION_COOKIE, sessions.start(key),
                            max_age=math.ceil(sessions.max_age_s), path="/", httponly=True,
                            secure=True, samesite="strict")
        return response

    @post("/logout", sync_to_thread=False, status_code=303)
    def log_out(self, request: Request[Any, Any, Any], data: FormData) -> Response[Any]:
        # Logging out needs the form token too, so another site cannot end a session.
        session = check_form_token(request, data.get(FORM_TOKEN_FIELD))
        sessions: Sessions = request.app.state.sessions
        sessions.end(session)  # the old cookie is refused from now on, wherever it is kept
        response: Response[Any] = Redirect("/ui/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response


class PageController(UiController):
    """Every page behind the login (the API-key guard takes the cookie here)."""

    @get("/", sync_to_thread=False)
    def search_page(self, request: Request[Any, Any, Any],
                    settings: NamedDependency[Settings],
                    question: Annotated[str | None, QueryParameter(
                        name="query", max_length=4000)] = None,
                    ) -> Response[str]:
        # A run page's author and venue links open the form with the name as the question.
        return forms_page(request, settings,
                          search_form={"query": question} if question else None)

    @post("/searches", sync_to_thread=True, status_code=303)
    def start_search(self, request: Request[Any, Any, Any], data: FormData,
                     registry: NamedDependency[RunRegistry],
                     settings: NamedDependency[Settings], graph: NamedDependency[Graph],
                     bulkheads: NamedDependency[Bulkheads]) -> Response[Any]:
        check_form_token(request, data.get(FORM_TOKEN_FIELD))
        try:
            # The box's papers are resolved with the search's own: one given-papers slot.
            with bulkheads.slot("given_papers" if given_lines(data) else "searches"):
                run = registry.submit_search(search_request(data, settings, graph))
        except GivenPapersUnknown as err:
            return forms_page(request, settings, search_form=data, search_problem=str(err),
                              unknown_papers=err.unknown)
        except InvalidRequest as err:
            return forms_page(request, settings, search_form=data, search_problem=str(err))
        return Redirect(f"/ui/runs/{run.id}", status_code=303)

    @post("/ideas", sync_to_thread=True, status_code=303)
    def start_idea(self, request: Request[Any, Any, Any], data: FormData,
                   registry: NamedDependency[RunRegistry],
                   settings: NamedDependency[Settings]) -> Response[Any]:
        check_form_token(request, data.get(FORM_TOKEN_FIELD))
        try:
            run = registry.submit_idea(idea_request(data, settings))
        except InvalidRequest as err:
            return forms_page(request, settings, idea_form=data, idea_problem=str(err))
        return Redirect(f"/ui/runs/{run.id}", status_code=303)

    @get("/runs", sync_to_thread=True)
    def runs_page(self, request: Request[Any, Any, Any], graph: NamedDependency[Graph],
                  page: Annotated[int, QueryParameter(ge=1, le=100_000)] = 1) -> Response[str]:
        listing = list_runs(graph, offset=(page - 1) * RUNS_PER_PAGE, limit=RUNS_PER_PAGE)
        pages = max(1, -(-listing["total"] // RUNS_PER_PAGE))
        return render_page(request, "runs.html", listing=listing, page=page, pages=pages)

    @get("/runs/{run_id:str}", sync_to_thread=True)
    def run_page(self, request: Request[Any, Any, Any], run_id: FromPath[str],
                 graph: NamedDependency[Graph],
                 registry: NamedDependency[RunRegistry]) -> Response[str]:
        run = describe_run(graph, run_id, registry.get(run_id))
        if run["kind"] == "idea":
            return idea_page(request, graph, run)
        with_results = run["status"] in WITH_RESULTS
        results = search_results(graph, run) if with_results else []
        return render_page(request, "run.html", run=run, results=results,
                           finished=run["status"] in FINISHED, with_results=with_results,
                           formats=[f.value for f in ExportFormat],
                           names=top_authors_and_venues(run["results"]))

    @get("/runs/{run_id:str}/progress", sync_to_thread=True)
    def progress_fragment(self, request: Request[Any, Any, Any], run_id: FromPath[str],
                          graph: NamedDependency[Graph],
                          registry: NamedDependency[RunRegistry]) -> Response[str]:
        run = describe_run(graph, run_id, registry.get(run_id))
        return render_page(request, "progress.html", run=run)

    @get("/runs/{run_id:str}/graph", sync_to_thread=True)
    def graph_page(self, request: Request[Any, Any, Any], run_id: FromPath[str],
                   graph: NamedDependency[Graph],
                   registry: NamedDependency[RunRegistry],
                   layout: Annotated[str, QueryParameter(max_length=40)] = Layout.YEAR_SCORE.value,
                   ) -> Response[str]:
        try:
            chosen = layout_named(layout)
        except ValueError as err:  # a 400 worded as every other bad query value is
            raise ValidationException(f"layout: {err}", extra=[
                {"key": "layout", "message": str(err), "source": "query"}]) from None
        view = weighed_graph(evidence_graph(graph, run_id, registry.get(run_id)))
        weighted = view["weighting"] == "coverage"
        # The list beside the drawing needs the results and the seeds' titles, not the
        # whole run (its related lists are two more queries a large run waits for).
        listed = {"results": read_results(graph, run_id, view["weighting"]),
                  "seeds": graph.read("read_run_seeds", run_id=run_id)}
        return render_page(request, "graph.html", view=view, weighted=weighted,
                           layout=chosen.value, drawing=draw_evidence_graph(view, chosen),
                           linked=linked_results(listed))

    @get("/runs/{run_id:str}/edge", sync_to_thread=True)
    def edge_card(self, request: Request[Any, Any, Any], run_id: FromPath[str],
                  citing: FromQuery[str], cited: FromQuery[str], graph: NamedDependency[Graph],
                  registry: NamedDependency[RunRegistry]) -> Response[str]:
        edge = edge_details(graph, run_id, registry.get(run_id), citing, cited)
        return render_page(request, "edge_card.html", edge=edge,
                           weighted=edge["weighting"] == "coverage")

    @get("/runs/{run_id:str}/papers/{paper_id:path}", sync_to_thread=True)
    def paper_card(self, request: Request[Any, Any, Any], run_id: FromPath[str],
                   paper_id: FromPath[str], graph: NamedDependency[Graph]) -> Response[str]:
        paper_id = paper_id.lstrip("/")
        rows = graph.read("read_paper", id=paper_id)
        if not rows:
            raise PaperNotFound(f"no paper with id {paper_id!r}; pick one from the graph")
        node = next((n for n in graph.read("read_run_graph_nodes", run_id=run_id)
                     if n["id"] == paper_id), None)
        return render_page(request, "paper_card.html", paper=rows[0], node=node,
                           links=link_list(rows[0]))

    @get("/runs/{run_id:str}/export", sync_to_thread=True)
    def download(self, run_id: FromPath[str], graph: NamedDependency[Graph],
                 registry: NamedDependency[RunRegistry],
                 format: FromQuery[ExportFormat] = ExportFormat.BIBTEX,
                 related: FromQuery[bool] = False) -> Response[str]:
        export = export_run(graph, run_id, registry.get(run_id), format, related)
        return Response(export.body, media_type=export.media_type, headers={
            "Content-Disposition": f'attachment; filename="{export.filename}"'})

    @get("/runs/{run_id:str}/audit", sync_to_thread=True)
    def audit_json(self, run_id: FromPath[str], graph: NamedDependency[Graph],
                   ) -> dict[str, Any]:
        return export_idea_audit(graph, run_id)


def forms_page(request: Request[Any, Any, Any], settings: Settings,
               search_form: dict[str, str] | None = None, search_problem: str | None = None,
               idea_form: dict[str, str] | None = None,
               idea_problem: str | None = None,
               unknown_papers: list[str] | None = None) -> Response[str]:
    """The two forms; after a refused post, with what was typed and what to correct (for
    a search from papers, each line of the box that was not found)."""
    problem = search_problem or idea_problem
    return render_page(request, "search.html", status_code=422 if problem else 200,
                       defaults=search_defaults(settings), choices=SEARCH_CHOICES,
                       bounds=SEARCH_BOUNDS,
                       modes=IDEA_MODES, search_form=search_form or {},
                       idea_form=idea_form or {}, search_problem=search_problem,
                       idea_problem=idea_problem, unknown_papers=unknown_papers or [],
                       given_field=GIVEN_FIELD)


def idea_page(request: Request[Any, Any, Any], graph: Graph,
              run: dict[str, Any]) -> Response[str]:
    finished = run["status"] in FINISHED
    summary = summarize_audit(export_idea_audit(graph, run["id"])) if finished else None
    works = [{**work, "links": link_list(work)} for work in run["results"]]
    return render_page(request, "idea_run.html", run=run, works=works, summary=summary,
                       finished=finished, formats=[f.value for f in ExportFormat])


def root_redirect() -> Redirect:
    return Redirect("/ui/", status_code=303)


page_static = create_static_files_router(path="/ui/static", directories=[STATIC],
                                         name="page_static")
root = get("/", include_in_schema=False, sync_to_thread=False)(root_redirect)

# Mounted by the app (api/app.py reads every routes module): the login page, the static
# files and / in the open; the pages behind the guard, which takes the cookie for them.
PUBLIC = [LoginController, page_static, root]
PROTECTED = [PageController]
