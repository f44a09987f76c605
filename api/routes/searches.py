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
from crase.settings import (
    Fill,
    Hops,
    Orientation,
    Ranker,
    RequestParams,
    SearchSettings,
    SearchSource,
    SeedRule,
    SeedWeights,
    Settings,
    Weighting,
    setting,
)


class SearchParams(RequestParams):
    """Run parameters; only the fields given replace the server's defaults. Each is the
    SearchSettings field of its name (types, bounds and descriptions are checked equal by
    tests/api/test_searches.py)."""

    settings_model: ClassVar[type[BaseModel]] = SearchSettings
    settings_prefix: ClassVar[str] = "CRASE_SEARCH__"

    query_seeds: int = setting(SearchSettings, "query_seeds")
    sub_queries: int = setting(SearchSettings, "sub_queries")
    seeds_per_query: int = setting(SearchSettings, "seeds_per_query")
    seed_pool: int = setting(SearchSettings, "seed_pool")
    seed_rule: SeedRule = setting(SearchSettings, "seed_rule")
    seed_weights: SeedWeights = setting(SearchSettings, "seed_weights")
    sub_query_weight: float = setting(SearchSettings, "sub_query_weight")
    hops: Hops = setting(SearchSettings, "hops")
    # Switched on per request only where the operator has the providers on (checked below).
    source: SearchSource = setting(SearchSettings, "source")
    theta: float = setting(SearchSettings, "theta")
    tau: float = setting(SearchSettings, "tau")
    beta: float = setting(SearchSettings, "beta")
    alpha: float = setting(SearchSettings, "alpha")
    k: int = setting(SearchSettings, "k")
    ranker: Ranker = setting(SearchSettings, "ranker")
    orientation: Orientation = setting(SearchSettings, "orientation")
    weighting: Weighting = setting(SearchSettings, "weighting")
    fill: Fill = setting(SearchSettings, "fill")
    max_iterations: int = setting(SearchSettings, "max_iterations")
    tolerance: float = setting(SearchSettings, "tolerance")


class SearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(..., min_length=3, max_length=4000, description="The research question")
    params: SearchParams | None = Field(
        None, description="Run parameters (L, m, theta, tau, beta, alpha, k, hops, ranker, ...)")
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
