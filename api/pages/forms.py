"""The search and idea forms: which fields they show, and turning what was posted into the
same requests the JSON API builds (so the checks and the defaults are the API's)."""

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from crase.api.routes.ideas import IdeaBody, build_idea_request
from crase.api.routes.searches import SearchBody, build_request
from crase.errors import InvalidRequest
from crase.graph import Graph
from crase.idea.request import IdeaRequest
from crase.search.given_papers import resolve_typed
from crase.search.request import SearchRequest
from crase.settings import SearchSettings, Settings, choices

# The main parameters of a search, as the form names them (SearchSettings' fields): a
# chosen few, each laid out in templates/search.html.
SEARCH_FIELDS = ("k", "weighting", "hops", "sub_queries", "query_seeds", "walk", "theta",
                 "tau")


def number_bounds(model: type[BaseModel], name: str) -> dict[str, Any]:
    """The min and max of a number field for an HTML input, from its ge/le (an open end,
    gt/lt, is given as the end itself: the server's own check refuses the value)."""
    ends = {"ge": "min", "gt": "min", "le": "max", "lt": "max"}
    return {ends[key]: value for rule in model.model_fields[name].metadata
            for key in ends if (value := getattr(rule, key, None)) is not None}


# Options and bounds come from the settings, so a new choice shows up without an edit here.
SEARCH_CHOICES = {name: options for name in SEARCH_FIELDS
                  if (options := choices(SearchSettings, name))}
SEARCH_BOUNDS = {name: number_bounds(SearchSettings, name) for name in SEARCH_FIELDS
                 if name not in SEARCH_CHOICES}
IDEA_MODES = ("retrieval_eval", "full_report")
GIVEN_FIELD = "given_papers"  # the "Start from papers" box


def filled(form: Mapping[str, str], names: tuple[str, ...]) -> dict[str, str]:
    """The fields filled in; an empty field keeps the server's default."""
    return {name: value.strip() for name in names if (value := form.get(name, "")).strip()}


def validated(model: type[BaseModel], values: dict[str, Any]) -> Any:
    try:
        return model.model_validate(values)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'] if p != 'params') or 'form'}:"
                             f" {e['msg']}" for e in err.errors(include_url=False))
        raise InvalidRequest(f"{problems}; correct the field and send the form again") from err


def given_lines(form: Mapping[str, str]) -> list[str]:
    """The "Start from papers" box: one DOI, arXiv id, id or title a line; blank lines
    are none."""
    return [line.strip() for line in form.get(GIVEN_FIELD, "").splitlines() if line.strip()]


def search_request(form: Mapping[str, str], settings: Settings, graph: Graph) -> SearchRequest:
    """The form's search; the papers in its "Start from papers" box are resolved first
    (GivenPapersUnknown names every line not found)."""
    body = validated(SearchBody, {"query": form.get("query", "").strip(),
                                  "given_papers": given_lines(form),
                                  "params": filled(form, SEARCH_FIELDS)})
    ids = (resolve_typed(graph, body.given_papers, settings.api.given_papers_max_titles)
           if body.given_papers else [])
    return build_request(body, settings.search, ids)


def idea_request(form: Mapping[str, str], settings: Settings) -> IdeaRequest:
    values: dict[str, Any] = {"idea": form.get("idea", "").strip(), **filled(
        form, ("mode", "year_min", "year_max"))}
    return build_idea_request(validated(IdeaBody, values), settings.idea)


def search_defaults(settings: Settings) -> dict[str, Any]:
    defaults = settings.search.model_dump()
    return {name: defaults[name] for name in SEARCH_FIELDS}
