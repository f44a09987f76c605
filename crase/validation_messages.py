"""How to say in one line what is wrong with a request that does not validate: every bad
value, what is wrong with it and what to give instead (the range its field allows), each
field named as the caller names it (a command-line flag, an environment variable, a dotted
place in a request). The command line, the settings and the benchmarks word their
refusals this way."""

import re
from collections.abc import Callable
from inspect import isclass
from typing import Any, TypeGuard, get_args

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

Loc = tuple[int | str, ...]
OUT_OF_RANGE = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}
NOT_A_NUMBER = {"int_parsing", "int_from_float", "int_type", "float_parsing", "float_type"}


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
        for field in fields_of(nested_model(model, loc)):
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


def nested_model(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
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
