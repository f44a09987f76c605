"""Every numeric run parameter has a range a user could want and no more; floats refuse NaN
and infinity. Without an upper bound `max_iterations=1000000000` ran GDS out of memory."""

import math
from typing import Any

import annotated_types
import pytest
from pydantic import BaseModel, ValidationError

from crase.idea.request import IdeaRequest
from crase.search.request import SearchRequest
from crase.settings import ApiSettings, IdeaSettings, IngestSettings, SearchSettings

# The run parameters: every numeric field, now and when one is added.
BOUNDED = [SearchSettings, IdeaSettings, SearchRequest, IdeaRequest]
LOWER = (annotated_types.Ge, annotated_types.Gt)
UPPER = (annotated_types.Le, annotated_types.Lt)


def numeric_fields(model: type[BaseModel]) -> list[tuple[str, Any]]:
    fields = []
    for name, info in model.model_fields.items():
        kinds = getattr(info.annotation, "__args__", (info.annotation,))
        if any(kind in (int, float) for kind in kinds):
            fields.append((name, info))
    return fields


@pytest.mark.parametrize("model", BOUNDED, ids=lambda m: m.__name__)
def test_every_numeric_field_has_both_bounds(model: type[BaseModel]) -> None:
    unbounded = [name for name, info in numeric_fields(model)
                 if not any(isinstance(m, LOWER) for m in info.metadata)
                 or not any(isinstance(m, UPPER) for m in info.metadata)]
    assert unbounded == []


@pytest.mark.parametrize("model", BOUNDED, ids=lambda m: m.__name__)
def test_every_float_refuses_nan_and_infinity(model: type[BaseModel]) -> None:
    lax = [name for name, info in numeric_fields(model)
           if float in getattr(info.annotation, "__args__", (info.annotation,))
           and not any(getattr(m, "allow_inf_nan", True) is False for m in info.metadata)]
    assert lax == []


@pytest.mark.parametrize("field, value", [
    ("max_iterations", 1_000_000_000), ("max_iterations", 1001), ("max_iterations", 0),
    ("k", 1001), ("k", 0), ("seed_pool", 100_000), ("query_seeds", 101),
    ("tolerance", 0.0), ("tolerance", 1.0), ("tolerance", math.nan), ("tolerance", math.inf),
    ("beta", 1e9), ("beta", math.nan), ("alpha", 1.0), ("alpha", math.nan),
    ("tau", math.nan), ("theta", -1.0), ("theta", math.inf), ("sub_query_weight", math.nan),
])
def test_search_parameters_out_of_range_are_refused(field: str, value: float) -> None:
    with pytest.raises(ValidationError) as caught:
        SearchSettings(**{field: value})
    assert caught.value.errors()[0]["loc"] == (field,)


@pytest.mark.parametrize("field, value", [
    ("max_iterations", 1000), ("k", 1000), ("seed_pool", 1000), ("beta", 10.0),
    ("tolerance", 0.1), ("tolerance", 1e-15),
])
def test_the_largest_sensible_values_are_allowed(field: str, value: float) -> None:
    assert getattr(SearchSettings(**{field: value}), field) == value


@pytest.mark.parametrize("field, value", [
    ("neighbour_read_limit", 10**9), ("protect_corroborated", 10**9),
    ("strong_rank_cutoff", 10**6), ("term_frequency_cap", 10**6),
    ("provider_probe_timeout_s", math.inf), ("pdf_timeout_s", math.nan),
    ("pdf_timeout_s", 1e9), ("pdf_max_bytes", 10**15),
])
def test_idea_parameters_out_of_range_are_refused(field: str, value: float) -> None:
    with pytest.raises(ValidationError):
        IdeaSettings(**{field: value})


@pytest.mark.parametrize("model, field, value", [
    (ApiSettings, "port", 70_000), (ApiSettings, "max_body_bytes", 10**12),
    (ApiSettings, "analyst_timeout_s", math.inf), (ApiSettings, "analyst_row_limit", 10**9),
    (ApiSettings, "health_timeout_s", math.nan), (ApiSettings, "database_retry_s", 1e6),
    (ApiSettings, "ingest_max_rows", 10**9), (ApiSettings, "runs_in_memory", 10**9),
    (IngestSettings, "batch_size", 10**9), (IngestSettings, "max_line_bytes", 10**12),
    (IngestSettings, "batch_bytes", 10**12), (IngestSettings, "max_field_chars", 10**12),
    (IngestSettings, "min_year", -5), (IngestSettings, "min_year", 3000),
])
def test_server_and_load_settings_out_of_range_are_refused(model: type[BaseModel], field: str,
                                                           value: float) -> None:
    with pytest.raises(ValidationError):
        model(**{field: value})


def test_shipped_defaults_are_inside_their_bounds() -> None:
    for model in (SearchSettings, IdeaSettings, ApiSettings, IngestSettings):
        assert model.model_validate(model().model_dump()) == model()
    assert SearchSettings().max_iterations == 100 and SearchSettings().tolerance == 1e-9
    assert SearchSettings().k == 50 and SearchSettings().beta == 0.5
