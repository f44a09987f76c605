"""POST /searches: start an evidence-graph search; it runs in the background.
`given_papers` names papers to start from (graph ids, arXiv ids, DOIs or titles): they are
resolved before the run is queued (search/given_papers.py), an unknown one is refused with
all of them listed (422, `unknown`), and the query may then be empty. Its name until this
release, `seed_ids`, is still read (RENAMED_BODY_FIELDS), with a deprecation message.
`params.source` ("local", "semantic-scholar" or "openalex") says where seeds and
neighbourhood come from; a provider's search needs the server's providers enabled. A
request sets run parameters only (`SearchParams`): provider addresses, keys and switches
are the operator's.

A search is accepted only while the database answers (else 503), so no accepted run is lost.
"""

from typing import Annotated, Any, ClassVar

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import JSONBody
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from crase.api.bulkheads import Bulkheads
from crase.api.runs import RunRegistry
from crase.errors import InvalidRequest
from crase.graph import Graph
from crase.search.given_papers import MAX_ENTRY_CHARS, resolve_typed
from crase.search.request import MAX_GIVEN_PAPERS, MIN_QUERY_CHARS, SearchRequest
from crase.search.text_ranking import has_searchable_word
from crase.settings import SearchSettings, Settings, renamed_settings, request_fields

# Fields of the body renamed in this release, old name -> new: the old name is still read,
# with a deprecation message, until the next release.
RENAMED_BODY_FIELDS = {"seed_ids": "given_papers"}


# The base is built from SearchSettings at import, which a type checker cannot follow.
class SearchParams(request_fields(SearchSettings)):  # type: ignore[misc]
    """Run parameters; only the fields given replace the server's defaults. Every field is
    the SearchSettings field of its name, as the settings declare it (`request_fields`), so
    a new search setting is a request's parameter too. `source` may be given, but a
    semantic-scholar search is accepted only where the operator has the providers on
    (checked by `start_search`)."""

    settings_model: ClassVar[type[BaseModel]] = SearchSettings
    settings_prefix: ClassVar[str] = "CRASE_SEARCH__"


# An entry of given_papers: text, trimmed, that is not empty.
GivenEntry = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1,
                                              max_length=MAX_ENTRY_CHARS)]


class SearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Before the query, which is checked against it (`asks_something`).
    given_papers: list[GivenEntry] = Field(
        default_factory=list, max_length=MAX_GIVEN_PAPERS,
        description="Papers to start from, each a graph paper id, an arXiv id (any spelling: "
                    "arXiv:hep-th/9901001v2, an abs URL), a DOI (or its doi.org URL) or an "
                    "exact title. They are the walk's seeds and never among the results; "
                    "each result's evidence.reached_from names the one it connects to. An "
                    "entry not found is refused (422, GivenPapersUnknown, every such entry "
                    "listed in `unknown`)",
        examples=[["hep-th/9711200", "10.1103/PhysRevLett.75.4724",
                   "Dirichlet-Branes and Ramond-Ramond Charges"]])
    query: str = Field(
        "", max_length=4000, validate_default=True,
        description=f"The research question (at least {MIN_QUERY_CHARS} characters); may be "
                    "left out when given_papers names papers to start from")
    params: SearchParams | None = Field(
        None, description="Run parameters (L, m, theta, tau, beta, alpha, k, hops, walk, ...)")
    reference_year: int | None = Field(
        None, ge=1900, le=2200, description="Year ages are measured from; default this year")
    exclude: list[str] = Field(
        default_factory=list, max_length=10_000,
        description="Paper ids left out with all their edges")

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        return renamed_settings(data, RENAMED_BODY_FIELDS, "", what="the field")

    @field_validator("query")
    @classmethod
    def asks_something(cls, query: str, info: ValidationInfo) -> str:
        if len(query.strip()) < MIN_QUERY_CHARS and not info.data.get("given_papers"):
            raise ValueError(f"give a query of at least {MIN_QUERY_CHARS} characters, or "
                             "given_papers (papers to start from), or both")
        return query


class SearchRefused(BaseModel):
    """How the app words every refused request (api/app.py), with the entries of
    given_papers that were not found where that is why."""

    status_code: int
    error: str = Field(description="The error's name: GivenPapersUnknown, InvalidRequest, ...")
    detail: str = Field(description="One line: what is wrong and what to do")
    unknown: list[str] | None = Field(
        None, description="GivenPapersUnknown: every given_papers entry not found, as given")


class SearchAccepted(BaseModel):
    run_id: str
    status: str
    run_url: str = Field(description="GET it for status, progress and, once done, results")


def build_request(body: SearchBody, defaults: SearchSettings,
                  given_papers: list[str] | None = None) -> SearchRequest:
    """The search the body asks for; `given_papers` are the graph ids its given_papers
    resolved to (`resolve_typed`), which the request carries instead of the entries as
    typed."""
    if body.query.strip() and not has_searchable_word(body.query):
        raise InvalidRequest("query: it holds no word to search for; give a question in words")
    given = body.params.model_dump(exclude_unset=True) if body.params else {}
    try:
        params = SearchSettings.model_validate({**defaults.model_dump(), **given})
    except ValidationError as err:
        # Checks across fields (a search needs seeds) that the body alone cannot see.
        problems = "; ".join(f"params.{'.'.join(str(p) for p in e['loc']) or 'body'}: "
                             f"{e['msg']}" for e in err.errors(include_url=False))
        raise InvalidRequest(problems) from err
    return SearchRequest(query=body.query.strip(), given_papers=given_papers or [], params=params,
                         reference_year=body.reference_year, exclude=body.exclude)


class SearchController(Controller):
    path = "/searches"
    tags = ["searches"]

    # In a thread: accepting a run first asks the database whether it answers.
    @post("/", status_code=202, sync_to_thread=True,
          summary="Start a search; 202 with the run id, the run goes on in the background",
          responses={422: ResponseSpec(
              SearchRefused, generate_examples=False,
              description="The request cannot be run: a query without a word, parameters "
                          "that leave it no seeds, or given_papers entries not in the graph "
                          "(GivenPapersUnknown, each listed in `unknown`)")})
    def start_search(self, data: JSONBody[SearchBody], registry: NamedDependency[RunRegistry],
                     settings: NamedDependency[Settings], graph: NamedDependency[Graph],
                     bulkheads: NamedDependency[Bulkheads]) -> SearchAccepted:
        with bulkheads.slot("searches"):
            return self.accept(data, registry, settings, graph, bulkheads)

    @staticmethod
    def accept(data: SearchBody, registry: RunRegistry, settings: Settings, graph: Graph,
               bulkheads: Bulkheads) -> SearchAccepted:
        given: list[str] = []
        if data.given_papers:
            with bulkheads.slot("given_papers"):
                given = resolve_typed(graph, data.given_papers,
                                      settings.api.given_papers_max_titles)
        request = build_request(data, settings.search, given)
        source = request.params.source
        if source != "local" and not settings.providers.enabled:
            raise InvalidRequest(f"params.source {source}: external providers are off on "
                                 "this server (CRASE_PROVIDERS__ENABLED); give source local")
        run = registry.submit_search(request)
        return SearchAccepted(run_id=run.id, status=run.status, run_url=f"/runs/{run.id}")


# Mounted by the app behind the API-key guard (api/app.py reads every routes module).
PROTECTED = [SearchController]
