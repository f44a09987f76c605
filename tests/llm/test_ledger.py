"""Accounting, backoff and reply parsing, without a server."""

import email.utils
import json
import threading
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from crase.llm import (
    CallUsage,
    ModelFailure,
    ModelLedger,
    ModelReply,
    add_to_usage,
    backoff_delay,
    extract_json_text,
    retry_after,
)
from crase.prompts.replies import PlanReply
from crase.scoring.backends import Usage
from crase.settings import ModelEndpoint


def reply(
    stage: str, tokens: int, cached: bool = False, prompt: str = "p@1"
) -> ModelReply[PlanReply]:
    usage = CallUsage() if cached else CallUsage(
        requests=1, prompt_tokens=tokens, completion_tokens=tokens // 10, cost_usd=tokens / 1e4
    )
    return ModelReply(
        value=PlanReply(queries=["a b"]), model="big", prompt=prompt, stage=stage, subject="",
        usage=usage, cached=cached,
    )


def failure(stage: str) -> ModelFailure:
    return ModelFailure(
        model="small", prompt="q@2", stage=stage, subject="u->v", kind="invalid_reply",
        detail="matrix has 3 rows, expected 4", usage=CallUsage(requests=2, prompt_tokens=80),
    )


def test_ledger_sums_per_stage_and_per_model() -> None:
    ledger = ModelLedger()
    for outcome in (reply("plan", 100), reply("claims", 300), reply("claims", 0, cached=True),
                    failure("entailment")):
        ledger.record(outcome)
    assert ledger.stage("claims").calls == 2 and ledger.stage("claims").cached == 1
    assert ledger.stage("claims").prompt_tokens == 300
    totals = ledger.totals()
    assert (totals.calls, totals.failed, totals.requests, totals.prompt_tokens) == (4, 1, 4, 480)
    data = json.loads(ledger.to_json())
    assert {row["model"] for row in data["models"]} == {"big", "small"}
    assert data["failures"][0]["detail"] == "matrix has 3 rows, expected 4"


def test_properties_fit_on_a_neo4j_node() -> None:
    ledger = ModelLedger()
    ledger.record(reply("plan", 100))
    ledger.record(failure("entailment"))
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
        ledger.record(failure("entailment"))
    data = ledger.to_dict()
    assert len(data["failures"]) == 2 and data["failures_dropped"] == 3
    assert data["totals"]["failed"] == 5


def test_ledger_is_thread_safe() -> None:
    ledger = ModelLedger()

    def record_many() -> None:
        for _ in range(500):
            ledger.record(reply("claims", 10))

    threads = [threading.Thread(target=record_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ledger.totals().calls == 2000 and ledger.totals().prompt_tokens == 20000


def test_usage_counts_cache_hits_as_planned_not_made() -> None:
    usage = Usage()
    add_to_usage(usage, reply("claims", 100))
    add_to_usage(usage, reply("claims", 0, cached=True))
    add_to_usage(usage, failure("claims"))
    assert (usage.calls_planned, usage.calls_made, usage.calls_failed) == (3, 2, 1)
    assert usage.prompt_tokens == 180 and usage.models == {"big", "small"}


def test_backoff_grows_is_jittered_and_capped() -> None:
    endpoint = ModelEndpoint(backoff_base_s=1.0, backoff_max_s=10.0)
    for attempt, (low, high) in enumerate([(0.5, 1.0), (1.0, 2.0), (2.0, 4.0), (4.0, 8.0)]):
        assert low <= backoff_delay(endpoint, attempt, None) <= high
    assert backoff_delay(endpoint, 10, None) == 10.0
    assert backoff_delay(endpoint, 0, 7.0) == 7.0  # the server's hint is a lower bound
    assert backoff_delay(endpoint, 0, 3600.0) == 10.0  # but never past the cap


def test_retry_after_reads_seconds_and_dates() -> None:
    def parsed(value: str) -> float | None:
        return retry_after(httpx.Response(429, headers={"Retry-After": value}))

    assert parsed("3") == 3.0
    assert parsed("0.25") == 0.25
    assert parsed("soon") is None
    later = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= (parsed(later) or 0) <= 30
    assert retry_after(httpx.Response(429)) is None


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
