"""What a search asks for: the query, the run parameters, and what it must not use; and how
to say in one line what is wrong with a request that does not validate."""

import re
from collections.abc import Callable, Sequence
from datetime import date
from inspect import isclass
from typing import Any, TypeGuard, get_args

from pydantic import BaseModel, Field, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from crase.settings import SearchSettings

Loc = tuple[int | str, ...]
OUT_OF_RANGE = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}
NOT_A_NUMBER = {"int_parsing", "int_from_float", "int_type", "float_parsing", "float_type"}
MIN_QUERY_CHARS = 3
# The forms of query, each ordered by its own model (search/order/model.py). The shortest
# query of the `text` form: a title and two abstract sentences have 16 words and more in
# every dev set; a title alone has a median of 8 (hep-th).
MIN_QUERY_WORDS = 12
QUERY_FORMS = ("text", "words", "papers")  # what query_form tells from a request
# The forms an order model is trained for: the query forms, and `idea` (one sentence
# describing an idea), which only a caller that says so asks in (the idea workflow).
ORDER_FORMS = (*QUERY_FORMS, "idea")
FORM_NAMES = {"text": "a query of 12 words or more", "words": "a query of fewer than 12 words",
              "papers": "a search from papers", "idea": "an idea in one sentence"}
MAX_GIVEN_PAPERS = 100  # papers a search may start from: a reference list, not a corpus


class SearchRequest(BaseModel):
    query: str = Field(
        "", max_length=4000,
        description="The research question; may be empty when the search starts from papers",
    )
    seed_ids: list[str] = Field(
        default_factory=list, max_length=MAX_GIVEN_PAPERS,
        description="Paper ids the user starts from: the walk's seeds; never in the results",
    )
    params: SearchSettings = Field(default_factory=SearchSettings, description="Run parameters")
    reference_year: int | None = Field(
        None, ge=1900, le=2200,
        description="Year ages are measured from (the query's year); default: this year",
    )
    exclude: list[str] = Field(
        default_factory=list, max_length=10_000,
        description="Paper ids left out with all their edges (benchmarks: the query's source)",
    )
    seed_override: list[str] | None = Field(
        None, max_length=10_000,
        description="Use these paper ids as the seeds instead of planning and searching "
                    "(benchmarks: the seed-corruption test); stages 2-3 run unchanged",
    )

    @model_validator(mode="after")
    def asks_something(self) -> "SearchRequest":
        if len(self.query.strip()) < MIN_QUERY_CHARS and not self.seed_ids:
            raise ValueError(f"query is too short; give at least {MIN_QUERY_CHARS} "
                             "characters, or seed_ids (papers to start from), or both")
        return self

    @property
    def given(self) -> list[str]:
        """The papers the user starts from, each once, in the given order."""
        return list(dict.fromkeys(self.seed_ids))

    def age_reference(self) -> int:
        return self.reference_year or date.today().year


def query_form(query: str, given: Sequence[str]) -> str:
    """The form of a query, which picks the model that orders its list."""
    if given:
        return "papers"
    return "text" if len(query.split()) >= MIN_QUERY_WORDS else "words"


def describe_invalid(err: ValidationError, model: type[BaseModel], name: Callable[[Loc], str],
                     otherwise: str) -> str:
    """One line for every bad value of `model`: what is wrong and what to give instead, with
    the range the field allows. `name` says how the caller calls a field (a command-line
    flag, an environment variable); `otherwise` is what to do where no range explains it."""
    return "; ".join(describe_problem(error, model, name, otherwise)
                     for error in err.errors(include_url=False))


def describe_problem(error: ErrorDetails, model: type[BaseModel], name: Callable[[Loc], str],
                     otherwise: str) -> str:
    loc, kind, ctx = tuple(error["loc"]), error["type"], error.get("ctx", {})
    info = field_at(model, loc)
    label, value = name(loc), shown(error.get("input"))
    if info is not None and kind in OUT_OF_RANGE | {"finite_number"}:
        wrong = "not a finite number" if kind == "finite_number" else "out of range"
        return f"{label} {value}: {wrong}; give {number_kind(info)} {allowed_range(info)}"
    if info is not None and kind in NOT_A_NUMBER:
        return f"{label} {value}: not {number_kind(info)}; give one {allowed_range(info)}"
    if kind == "string_too_short":
        return f"{label} is too short; give at least {ctx.get('min_length')} characters"
    if kind == "string_too_long":
        return f"{label} is too long; give at most {ctx.get('max_length')} characters"
    if kind == "literal_error":
        return f"{label} {value} is not allowed; give {ctx.get('expected')}"
    if kind == "value_error":
        # A check across fields (a model validator): name its fields as the caller does.
        text = error["msg"].removeprefix("Value error, ")
        for field in fields_of(model_at(model, loc)):
            text = re.sub(rf"\b{field}\b", name((*loc, field)).replace("\\", "\\\\"), text)
        return f"{text}; {otherwise}"
    return f"{label}: {error['msg'].lower()}; {otherwise}"


def field_at(model: type[BaseModel], loc: Loc) -> FieldInfo | None:
    """The field a validation error's location names, through nested models."""
    info: FieldInfo | None = None
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None or not isinstance(part, str) or part not in current.model_fields:
            return None
        info = current.model_fields[part]
        current = info.annotation if is_model(info.annotation) else None
    return info


def model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    if not loc:
        return model
    info = field_at(model, loc)
    return info.annotation if info is not None and is_model(info.annotation) else None


def is_model(annotation: Any) -> TypeGuard[type[BaseModel]]:
    return isclass(annotation) and issubclass(annotation, BaseModel)


def fields_of(model: type[BaseModel] | None) -> list[str]:
    return list(model.model_fields) if model else []


def number_kind(info: FieldInfo) -> str:
    return "a whole number" if int in (info.annotation, *get_args(info.annotation)) \
        else "a number"


def allowed_range(info: FieldInfo) -> str:
    """The field's bounds in words: "from 1 to 1000", "above 0 and at most 0.1", ..."""
    bounds = {key: number(getattr(m, key)) for m in info.metadata
              for key in ("ge", "gt", "le", "lt") if getattr(m, key, None) is not None}
    if "ge" in bounds and "le" in bounds:
        return f"from {bounds['ge']} to {bounds['le']}"
    words = {"ge": "at least", "gt": "above", "le": "at most", "lt": "below"}
    return " and ".join(f"{words[key]} {value}" for key, value in bounds.items())


def number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def shown(value: Any) -> str:
    """A rejected value as the user wrote it, cut short (a 4,000-character query is no help
    in an error line)."""
    text = number(value) if isinstance(value, int | float) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."
