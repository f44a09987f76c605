"""The benchmark's ablation grids against the search settings: a setting with choices runs
every choice SearchSettings allows; a numeric grid is a chosen subset, each value one the
settings accept. No server."""

from dataclasses import fields
from typing import get_args

import pytest

from crase.bench.quality import ABLATIONS
from crase.bench.systems import WalkConfig
from crase.settings import SearchSettings, choices

WALK_FIELDS = {field.name: field.type for field in fields(WalkConfig)}


@pytest.mark.parametrize("name", sorted(ABLATIONS))
def test_an_ablation_grid_holds_values_its_setting_allows(name: str) -> None:
    _, setting, values = ABLATIONS[name]
    assert setting in WALK_FIELDS, setting
    if setting not in SearchSettings.model_fields:  # the benchmark's own knob (age)
        assert set(values) <= set(get_args(WALK_FIELDS[setting]))
        return
    options = choices(SearchSettings, setting)
    if options:
        assert values == options  # every choice, in the settings' order
    for value in values:  # raises where the settings refuse the value
        SearchSettings.model_validate({**SearchSettings().model_dump(), setting: value})


@pytest.mark.parametrize("name", [name for name in SearchSettings.model_fields
                                  if choices(SearchSettings, name) and name in WALK_FIELDS])
def test_the_walk_config_takes_the_settings_choices(name: str) -> None:
    assert get_args(WALK_FIELDS[name]) == choices(SearchSettings, name)
