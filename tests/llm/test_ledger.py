"""Accounting and reply parsing, without a server (the retry policy's own tests are in
tests/foundation/test_http_policy.py)."""

import json
import threading
import time

import pytest

from crase.models.chat import ModelFailure, ModelReply
from crase.models.reply_json import extract_json_text
from crase.prompts.replies import PlanReply
from crase.usage import ModelLedger, Usage


def reply(
    stage: str, tokens: int, cached: bool = False, prompt: str = "p@1"
) -> ModelReply[PlanReply]:
    usage = Usage(calls=1, cached=1, models={"big"}) if cached else Usage(
        calls=1, made=1, requests=1, prompt_tokens=tokens, completion_tokens=tokens // 10,
        cost_usd=tokens / 1e4, models={"big"},
    )
    return ModelReply(
        value=PlanReply(queries=["a b"]), model="big", prompt=prompt, stage=stage, subject="",
        usage=usage, cached=cached,
    )


def failure(stage: str) -> ModelFailure:
    return ModelFailure(
        model="small", prompt="q@2", stage=stage, subject="u->v", kind="invalid_reply",
        detail="matrix has 3 rows, expected 4",
        usage=Usage(calls=1, made=1, failed=1, requests=2, prompt_tokens=80, models={"small"}),
    )


def test_ledger_sums_per_stage_and_per_model() -> None:
    ledger = ModelLedger()
    for outcome in (reply("plan", 100), reply("claims", 300), reply("claims", 0, cached=True),
                    failure("entailment")):
        outcome.record_in(ledger)
    assert ledger.stage("claims").calls == 2 and ledger.stage("claims").cached == 1
    assert ledger.stage("claims").prompt_tokens == 300
    totals = ledger.totals()
    assert (totals.calls, totals.failed, totals.requests, totals.prompt_tokens) == (4, 1, 4, 480)
    data = json.loads(ledger.to_json())
    assert {row["model"] for row in data["models"]} == {"big", "small"}
    assert data["failures"][0]["detail"] == "matrix has 3 rows, expected 4"


def test_properties_fit_on_a_neo4j_node() -> None:
    ledger = ModelLedger()
    reply("plan", 100).record_in(ledger)
    failure("entailment").record_in(ledger)
    props = ledger.to_properties()
    for value in props.values():  # Neo4j properties: scalars or lists of scalars, no maps
        assert isinstance(value, int | float | str | list)
    assert props["model_names"] == ["big", "small"]
    assert props["prompt_versions"] == ["p@1", "q@2"]
    assert props["model_prompt_tokens"] == 180
    assert json.loads(str(props["model_ledger"]))["totals"]["failed"] == 1


def test_ledger_keeps_a_bounded_failure_list() -> None:
    ledger = ModelLedger(max_failures_kept=2)
    for _ in range(5):
        failure("entailment").record_in(ledger)
    data = ledger.to_dict()
    assert len(data["failures"]) == 2 and data["failures_dropped"] == 3
    assert data["totals"]["failed"] == 5


def test_ledger_is_thread_safe() -> None:
    ledger = ModelLedger()

    def record_many() -> None:
        for _ in range(500):
            reply("claims", 10).record_in(ledger)

    threads = [threading.Thread(target=record_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ledger.totals().calls == 2000 and ledger.totals().prompt_tokens == 20000


def test_usage_since_is_what_was_spent_in_between() -> None:
    usage = Usage(calls=2, made=2, prompt_tokens=50, models={"a"})
    before = usage.copy()
    usage.add(Usage(calls=3, made=1, cached=2, prompt_tokens=10, cost_usd=0.5, models={"b"}))
    spent = usage.since(before)
    assert (spent.calls, spent.made, spent.cached, spent.prompt_tokens) == (3, 1, 2, 10)
    assert spent.cost_usd == 0.5 and spent.to_dict()["models"] == ["a", "b"]
    assert before.calls == 2 and before.models == {"a"}  # the copy does not move


def test_usage_counts_cache_hits_as_calls_not_made() -> None:
    usage = Usage()
    for outcome in (reply("claims", 100), reply("claims", 0, cached=True), failure("claims")):
        usage.add(outcome.usage)
    assert (usage.calls, usage.made, usage.cached, usage.failed) == (3, 2, 1, 1)
    assert usage.prompt_tokens == 180 and usage.models == {"big", "small"}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"a": 1}', '{"a": 1}'),
        ('  ```json\n{"a": 1}\n```  ', '{"a": 1}'),
        ('```\n{"a": 1}\n```', '{"a": 1}'),
        ('<think>\nplan {x}\n</think>\n{"a": 1}', '{"a": 1}'),
        ('Here is the JSON: {"a": {"b": 2}} Hope this helps.', '{"a": {"b": 2}}'),
        ("no json at all", "no json at all"),
    ],
)
def test_json_is_extracted_from_the_reply(content: str, expected: str) -> None:
    assert extract_json_text(content) == expected


@pytest.mark.parametrize("content", ["```" + " " * 20_000 + "x", "<think>" * 3_000],
                         ids=["fence then spaces", "reasoning blocks without their close"])
def test_a_reply_built_to_stall_is_read_at_once(content: str) -> None:
    # A reply can echo user text; the fence case took minutes of one regex call.
    started = time.thread_time()
    assert extract_json_text(content) == content
    assert time.thread_time() - started < 0.5
