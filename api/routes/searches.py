"""POST /searches: start an evidence-graph search; it runs in the background.
`params.source` ("local" or "semantic-scholar") says where seeds and neighbourhood come
from; a semantic-scholar search needs the server's providers enabled. A request sets run
parameters only (`SearchParams`): provider addresses, keys and switches are the operator's.

A search is accepted only while the database answers (else 503), so no accepted run is lost.
"""

from typing import ClassVar

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import JSONBody
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from crase.api.runs import RunRegistry
from crase.errors import InvalidRequest
from crase.search.request import SearchRequest
from crase.search.text_ranking import has_searchable_word
from crase.settings import SearchSettings, Settings, request_fields


# The base is built from SearchSettings at import, which a type checker cannot follow.
class SearchParams(request_fields(SearchSettings)):  # type: ignore[misc]
    """Run parameters; only the fields given replace the server's defaults. Every field is
    the SearchSettings field of its name, as the settings declare it (`request_fields`), so
    a new search setting is a request's parameter too. `source` may be given, but a
    semantic-scholar search is accepted only where the operator has the providers on
    (checked by `start_search`)."""

    settings_model: ClassVar[type[BaseModel]] = SearchSettings
    settings_prefix: ClassVar[str] = "CRASE_SEARCH__"


class SearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(..., min_length=3, max_length=4000, description="The research question")
    params: SearchParams | None = Field(
        None, description="Run parameters (L, m, theta, tau, beta, alpha, k, hops, walk, ...)")
    reference_year: int | None = Field(
        None, ge=1900, le=2200, description="Year ages are measured from; default this year")
    exclude: list[str] = Field(
        default_factory=list, max_length=10_000,
        description="Paper ids left out with all their edges")


class SearchAccepted(BaseModel):
    run_id: str
    status: str
    run_url: str = Field(description="GET it for status, progress and, once done, results")


def build_request(body: SearchBody, defaults: SearchSettings) -> SearchRequest:
    if not has_searchable_word(body.query):
        raise InvalidRequest("query: it holds no word to search for; give a question in words")
    given = body.params.model_dump(exclude_unset=True) if body.params else {}
    try:
        params = SearchSettings.model_validate({**defaults.model_dump(), **given})
    except ValidationError as err:
        # Checks across fields (a search needs seeds) that the body alone cannot see.
        problems = "; ".join(f"params.{'.'.join(str(p) for p in e['loc']) or 'body'}: "
                             f"{e['msg']}" for e in err.errors(include_url=False))
        raise InvalidRequest(problems) from err
    return SearchRequest(query=body.query, params=params, reference_year=body.reference_year,
                         exclude=body.exclude)


class SearchController(Controller):
    path = "/searches"
    tags = ["searches"]

    # In a thread: accepting a run first asks the database whether it answers.
    @post("/", status_code=202, sync_to_thread=True,
          summary="Start a search; 202 with the run id, the run goes on in the background")
    def start_search(self, data: JSONBody[SearchBody], registry: NamedDependency[RunRegistry],
                     settings: NamedDependency[Settings]) -> SearchAccepted:
        request = build_request(data, settings.search)
        if request.params.source == "semantic-scholar" and not settings.providers.enabled:
            raise InvalidRequest("params.source semantic-scholar: external providers are off "
                                 "on this server (CRASE_PROVIDERS__ENABLED); give source "
                                 "local")
        run = registry.submit_search(request)
        return SearchAccepted(run_id=run.id, status=run.status, run_url=f"/runs/{run.id}")


# Mounted by the app behind the API-key guard (api/app.py reads every routes module).
PROTECTED = [SearchController]
