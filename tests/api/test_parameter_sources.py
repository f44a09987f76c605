"""The search settings are the one source of every search parameter's choices, defaults
and bounds: the `crase search` flags, the web form and the HTTP schema are checked equal
to SearchSettings here, so a new choice or setting needs no second list. No server."""

import argparse
import re
from typing import Any

import pytest

from crase.api.cli import build_parser
from crase.api.commands.search import (
    SEARCH_FLAGS,
    SETTINGS_ONLY,
    RenamedFlag,
    build_request,
    flag_of,
)
from crase.api.pages.forms import (
    SEARCH_BOUNDS,
    SEARCH_CHOICES,
    SEARCH_FIELDS,
    number_bounds,
    search_defaults,
)
from crase.api.pages.rendering import environment
from crase.api.routes.searches import SearchBody
from crase.errors import InvalidRequest
from crase.settings import SearchSettings, Settings, choices

LITERALS = [name for name in SearchSettings.model_fields if choices(SearchSettings, name)]


def search_actions() -> dict[str, argparse.Action]:
    """The `crase search` parser's actions by destination (a renamed flag's old name, which
    shares its destination, left out: tests/foundation/test_renamed_settings.py)."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {action.dest: action for action in commands.choices["search"]._actions
            if not isinstance(action, RenamedFlag)}


def test_every_search_setting_is_a_flag_or_left_to_the_settings() -> None:
    assert set(SETTINGS_ONLY) <= set(SearchSettings.model_fields)
    assert set(SEARCH_FLAGS) | set(SETTINGS_ONLY) == set(SearchSettings.model_fields)
    assert not set(SEARCH_FLAGS) & set(SETTINGS_ONLY)


@pytest.mark.parametrize("name", SEARCH_FLAGS)
def test_a_flag_has_its_settings_choices_default_and_description(name: str) -> None:
    field = SearchSettings.model_fields[name]
    action = search_actions()[name]
    assert action.option_strings == [flag_of(name)]
    assert tuple(action.choices or ()) == choices(SearchSettings, name)
    # None: a flag left out keeps the configured setting; the help names the field's default.
    assert action.default is None
    assert action.help == f"{field.description} (default {field.default})"


def test_flags_left_out_keep_the_configured_settings() -> None:
    configured = SearchSettings(k=7, walk="salsa", hops="1", theta=0.6)
    settings = Settings().model_copy(update={"search": configured})
    args = build_parser().parse_args(["search", "tachyon condensation"])
    assert build_request(args, settings).params == configured


def test_flags_given_replace_the_settings() -> None:
    args = build_parser().parse_args(["search", "tachyon condensation", "-k", "9",
                                      "--walk", "salsa", "--seeds-per-query", "3"])
    params = build_request(args, Settings()).params
    assert (params.k, params.walk, params.seeds_per_query) == (9, "salsa", 3)


def test_a_choice_outside_the_settings_is_refused() -> None:
    allowed = ", ".join(repr(option) for option in choices(SearchSettings, "walk"))
    with pytest.raises(InvalidRequest, match=re.escape(f"(choose from {allowed})")):
        build_parser().parse_args(["search", "tachyon condensation", "--walk", "no-such"])


def test_the_forms_options_and_bounds_are_the_settings() -> None:
    assert SEARCH_CHOICES == {name: choices(SearchSettings, name) for name in SEARCH_FIELDS
                              if name in LITERALS}
    assert SEARCH_BOUNDS == {name: number_bounds(SearchSettings, name)
                             for name in SEARCH_FIELDS if name not in LITERALS}
    assert SEARCH_BOUNDS["sub_queries"] == {"min": 0, "max": 20}


def rendered_form() -> str:
    return environment.get_template("search.html").render(
        logged_in=True, form_token="t", form_token_field="token", modes=(),
        defaults=search_defaults(Settings()), choices=SEARCH_CHOICES, bounds=SEARCH_BOUNDS,
        search_form={}, idea_form={})


def test_the_rendered_form_lists_every_choice_and_bound() -> None:
    page = rendered_form()
    for name, options in SEARCH_CHOICES.items():
        select = re.search(rf'<select name="{name}">(.*?)</select>', page, re.S)
        assert select, name
        assert tuple(re.findall(r'<option value="([^"]*)"', select.group(1))) == options
    for name, ends in SEARCH_BOUNDS.items():
        tag = re.search(rf'<input type="number" name="{name}"[^>]*>', page)
        assert tag, name
        assert f'min="{ends["min"]}" max="{ends["max"]}"' in tag.group(0), name


def schema_of(name: str) -> dict[str, Any]:
    schema = SearchBody.model_json_schema()
    return dict(schema["$defs"]["SearchParams"]["properties"][name])


@pytest.mark.parametrize("name", LITERALS)
def test_the_http_schema_offers_the_settings_choices(name: str) -> None:
    field = SearchSettings.model_fields[name]
    assert tuple(schema_of(name)["enum"]) == choices(SearchSettings, name)
    assert schema_of(name)["default"] == field.default
