"""The reply cache: valid replies are reused, invalid ones never stored."""

import json
from pathlib import Path

from crase.models.chat import ModelLedger, ModelReply, ModelRunner, ReplyCache
from crase.settings import ModelSettings
from tests.llm.calls import GOOD_2X3, entailment_call
from tests.llm.chat_server import ChatServer, Reply
from tests.llm.conftest import MakeEndpoint


def cache_files(cache: ReplyCache) -> list[Path]:
    return sorted(cache.directory.glob("*/*.json"))


def test_unchanged_call_is_not_paid_twice(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner, cache: ReplyCache
) -> None:
    chat_server.script(Reply(GOOD_2X3, prompt_tokens=250))
    endpoint = make_endpoint()
    first = runner.run_one(endpoint, entailment_call())
    second = runner.run_one(endpoint, entailment_call())

    assert isinstance(first, ModelReply) and isinstance(second, ModelReply)
    assert second.cached and second.value == first.value
    assert second.usage.requests == 0 and second.usage.prompt_tokens == 0
    assert len(chat_server.requests) == 1
    totals = runner.ledger.totals()
    assert (totals.calls, totals.cached, totals.prompt_tokens) == (2, 1, 250)
    entry = json.loads(cache_files(cache)[0].read_text())
    assert entry["prompt"] == "score_entailment@2" and entry["model"] == "test/entail-3b"


def test_invalid_replies_are_never_stored(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner, cache: ReplyCache
) -> None:
    chat_server.script(Reply("[1, 2]"), Reply('{"matrix": [[2]]}'), Reply(GOOD_2X3))
    endpoint = make_endpoint()
    assert not isinstance(runner.run_one(endpoint, entailment_call()), ModelReply)
    assert cache_files(cache) == []
    assert isinstance(runner.run_one(endpoint, entailment_call()), ModelReply)
    assert len(chat_server.requests) == 3


def test_repaired_reply_is_stored_as_the_valid_one(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner, cache: ReplyCache
) -> None:
    chat_server.script(Reply('{"matrix": [[0.5]]}'), Reply(GOOD_2X3))
    endpoint = make_endpoint()
    runner.run_one(endpoint, entailment_call())
    assert json.loads(cache_files(cache)[0].read_text())["content"] == GOOD_2X3
    again = runner.run_one(endpoint, entailment_call())
    assert isinstance(again, ModelReply) and again.cached


def test_changed_inputs_model_or_settings_miss(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(*[Reply(GOOD_2X3)] * 4)
    runner.run_one(make_endpoint(), entailment_call())
    runner.run_one(make_endpoint(), entailment_call(tag="other paper"))
    runner.run_one(make_endpoint(model="another/model"), entailment_call())
    runner.run_one(make_endpoint(temperature=0.7), entailment_call())
    assert len(chat_server.requests) == 4
    assert runner.ledger.totals().cached == 0


def test_a_corrupt_entry_is_ignored(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner, cache: ReplyCache
) -> None:
    chat_server.script(*[Reply(GOOD_2X3)] * 3)
    endpoint = make_endpoint()
    runner.run_one(endpoint, entailment_call())
    path = cache_files(cache)[0]
    path.write_text(json.dumps({"content": '{"matrix": [[9]]}'}))  # no longer valid
    outcome = runner.run_one(endpoint, entailment_call())
    assert isinstance(outcome, ModelReply) and not outcome.cached
    assert json.loads(path.read_text())["content"] == GOOD_2X3  # overwritten with a valid one
    path.write_text("{truncated")
    assert isinstance(runner.run_one(endpoint, entailment_call()), ModelReply)


def test_cache_can_be_switched_off(tmp_path: Path) -> None:
    models = ModelSettings(cache_dir=tmp_path / "c", cache_enabled=False)
    assert ModelRunner.from_settings(models).cache is None
    runner = ModelRunner.from_settings(ModelSettings(cache_dir=tmp_path / "c"), ModelLedger())
    assert runner.cache is not None and runner.cache.directory == tmp_path / "c"


def test_a_rejected_reply_is_remembered_only_when_asked(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, tmp_path: Path
) -> None:
    """At temperature 0 the same request gets the same wrong reply: with remember_rejected
    the rerun records the same failure without a request; a changed check can still
    accept the remembered reply."""
    chat_server.script(Reply("[1, 2]"), Reply('{"matrix": [[2]]}'))
    remembering = ReplyCache(tmp_path / "cache", remember_rejected=True)
    runner = ModelRunner(ModelLedger(), remembering)
    endpoint = make_endpoint()
    first = runner.run_one(endpoint, entailment_call())
    again = runner.run_one(endpoint, entailment_call())
    assert not isinstance(first, ModelReply) and not isinstance(again, ModelReply)
    assert len(chat_server.requests) == 2  # the first call and its repair; none for the rerun
    assert again.kind == "invalid_reply" and "remembered" in again.detail
    assert again.usage.requests == 0 and again.usage.cached == 1 and again.usage.failed == 1
    assert runner.ledger.totals().failed == 2

    warmer = make_endpoint(temperature=0.7)  # not deterministic: never remembered
    chat_server.script(Reply("[1, 2]"), Reply('{"matrix": [[2]]}'), Reply(GOOD_2X3))
    runner.run_one(warmer, entailment_call())
    assert isinstance(runner.run_one(warmer, entailment_call()), ModelReply)
