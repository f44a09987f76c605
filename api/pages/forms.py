"""The search and idea forms: which fields they show, and turning what was posted into the
same requests the JSON API builds (so the checks and the defaults are the API's)."""

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from crase.api.routes.ideas import IdeaBody, build_idea_request
from crase.api.routes.searches import SearchBody, build_request
from crase.errors import InvalidRequest
from crase.idea.request import IdeaRequest
from crase.search.request import SearchRequest
from crase.settings import Settings

# The main parameters of a search, as the form names them (SearchSettings' fields).
SEARCH_FIELDS = ("k", "weighting", "hops", "sub_queries", "query_seeds", "ranker", "theta",
                 "tau")
SEARCH_CHOICES = {"weighting": ("uniform", "coverage"), "hops": ("1", "1.5", "2"),
                  "ranker": ("ppr", "salsa")}
IDEA_MODES = ("retrieval_eval", "full_report")


def given(form: Mapping[str, str], names: tuple[str, ...]) -> dict[str, str]:
    """The fields filled in; an empty field keeps the server's default."""
    return {name: value.strip() for name in names if (value := form.get(name, "")).strip()}


def validated(model: type[BaseModel], values: dict[str, Any]) -> Any:
    try:
        return model.model_validate(values)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'] if p != 'params') or 'form'}:"
                             f" {e['msg']}" for e in err.errors(include_url=False))
        raise InvalidRequest(f"{problems}; correct the field and send the form again") from err


def search_request(form: Mapping[str, str], settings: Settings) -> SearchRequest:
    body = validated(SearchBody, {"query": form.get("query", "").strip(),
                                  "params": given(form, SEARCH_FIELDS)})
    return build_request(body, settings.search)


def idea_request(form: Mapping[str, str], settings: Settings) -> IdeaRequest:
    values: dict[str, Any] = {"idea": form.get("idea", "").strip(), **given(
        form, ("mode", "year_min", "year_max"))}
    return build_idea_request(validated(IdeaBody, values), settings.idea)


def search_defaults(settings: Settings) -> dict[str, Any]:
    defaults = settings.search.model_dump()
    return {name: defaults[name] for name in SEARCH_FIELDS}
