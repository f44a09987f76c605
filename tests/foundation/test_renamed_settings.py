"""The walk and the order model have distinct names since the settings `search.ranker`
(now `search.walk`) and `ranker_model` (then `order_model`, now `models.order_model`,
beside the other learned model files) and the command `crase train-ranker` (now `crase
train-order`) were renamed, and the papers a search starts from are its given papers
since the HTTP field `seed_ids` became `given_papers`; the old names still work for one
release, each with a one-line deprecation message."""

import argparse
from pathlib import Path

import pytest

from crase.api.cli import build_parser, main
from crase.search.request import SearchRequest
from crase.settings import ModelSettings, SearchSettings, Settings


def test_the_old_search_setting_sets_the_walk_with_a_message() -> None:
    with pytest.warns(FutureWarning, match=r"search\.ranker is now search\.walk"):
        assert SearchSettings(ranker="salsa").walk == "salsa"


def test_the_new_name_wins_over_the_old_one() -> None:
    with pytest.warns(FutureWarning):
        assert SearchSettings.model_validate({"ranker": "salsa", "walk": "ppr"}).walk == "ppr"


def test_an_http_request_naming_the_old_setting_walks_as_asked() -> None:
    with pytest.warns(FutureWarning):
        request = SearchRequest.model_validate({"query": "tachyon condensation",
                                                "params": {"ranker": "salsa"}})
    assert request.params.walk == "salsa"
    assert "ranker" not in request.params.model_dump()


def test_the_old_environment_names_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRASE_SEARCH__RANKER", "salsa")
    monkeypatch.setenv("CRASE_RANKER_MODEL", "/models/mine.json")
    with pytest.warns(FutureWarning) as said:
        settings = Settings()
    assert (settings.search.walk, str(settings.models.order_model)) == (
        "salsa", "/models/mine.json")
    assert {str(w.message).split(";")[0] for w in said} == {
        "the setting search.ranker is now search.walk",
        "the setting ranker_model is now models.order_model"}


def test_the_order_model_is_read_beside_the_entailment_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRASE_MODELS__ORDER_MODEL", "/models/order")
    monkeypatch.setenv("CRASE_MODELS__ENTAILMENT_MODEL", "/models/claim-pair.json")
    models = Settings().models
    assert (models.order_model, models.entailment_model) == (
        Path("/models/order"), Path("/models/claim-pair.json"))


def test_the_top_level_order_model_is_read_with_a_message(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRASE_ORDER_MODEL", "/models/mine")
    with pytest.warns(FutureWarning, match=r"order_model is now models\.order_model"):
        settings = Settings()
    assert settings.models.order_model == Path("/models/mine")


def test_of_the_names_given_the_newest_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRASE_RANKER_MODEL", "/models/oldest")
    monkeypatch.setenv("CRASE_ORDER_MODEL", "/models/older")
    with pytest.warns(FutureWarning):
        assert Settings().models.order_model == Path("/models/older")
    monkeypatch.setenv("CRASE_MODELS__ORDER_MODEL", "/models/new")
    with pytest.warns(FutureWarning):
        assert Settings().models.order_model == Path("/models/new")


def test_the_old_name_joins_the_model_settings_given(tmp_path: Path) -> None:
    with pytest.warns(FutureWarning):
        settings = Settings(models=ModelSettings(paper_encoder="onnx-int8"),
                            order_model="/models/mine", var_dir=tmp_path)
    assert settings.models.paper_encoder == "onnx-int8"
    assert settings.models.order_model == Path("/models/mine")
    assert settings.models.cache_dir == tmp_path / "model-cache"  # still follows var_dir
    with pytest.warns(FutureWarning):
        settings = Settings(models=ModelSettings(order_model=Path("/models/new")),
                            order_model="/models/mine")
    assert settings.models.order_model == Path("/models/new")


def test_the_old_flag_sets_the_walk_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.warns(FutureWarning, match="--ranker is now --walk"):
        args = build_parser().parse_args(["search", "tachyon condensation", "--ranker", "salsa"])
    assert args.walk == "salsa"
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    help_text = commands.choices["search"].format_help()
    assert "--walk" in help_text and "--ranker" not in help_text


def test_the_old_command_name_runs_the_new_command_with_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    # The command stops at its first step (no corpus file to hold out), after the message.
    code = main(["train-ranker", "--out", "/nonexistent/m.json", "--corpus", "x",
                 "--before-year", "2003", "--hold-out", "/nonexistent/queries.jsonl"])
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ("crase: deprecated: `crase train-ranker` is now `crase train-order`; "
                      "the old name works until the next release")
    assert code == 2 and "cannot read query file /nonexistent/queries.jsonl" in err[1]


def test_an_http_search_naming_seed_ids_starts_from_those_papers_with_a_message() -> None:
    from crase.api.routes.searches import SearchBody

    with pytest.warns(FutureWarning, match="the field seed_ids is now given_papers"):
        body = SearchBody.model_validate({"seed_ids": ["hep-th/9711200"]})
    assert body.given_papers == ["hep-th/9711200"] and body.query == ""
