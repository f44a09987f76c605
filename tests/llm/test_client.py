"""The chat client against a local scripted server: each case ends accepted, repaired or
recorded as failed, and the ledger says so."""

import json
import socket
import time
from dataclasses import replace

import pytest

from crase.errors import ModelError, ModelNotConfigured, ModelReplyInvalid
from crase.models.call_outcomes import reply_value
from crase.models.chat import ModelFailure, ModelReply, ModelRunner
from crase.models.reply_cache import ReplyCache
from crase.prompts.reply_schemas import entailment_schema
from crase.settings import ModelEndpoint
from tests.llm.calls import GOOD_2X3, entailment_call
from tests.llm.chat_server import ChatServer, Raw, Reply, Sleep, Status
from tests.llm.conftest import MakeEndpoint


def test_valid_reply_is_accepted_with_tokens_and_cost(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Reply(GOOD_2X3, prompt_tokens=300, completion_tokens=40))
    outcome = runner.run_one(make_endpoint(), entailment_call())

    assert isinstance(outcome, ModelReply)
    assert outcome.value.matrix == [[0.9, 0.1, 0.0], [0.2, 0.7, 0.05]]
    assert (outcome.model, outcome.prompt, outcome.stage) == (
        "test/entail-3b", "score_entailment@2", "entailment")
    assert not outcome.repaired and not outcome.cached
    assert (outcome.usage.prompt_tokens, outcome.usage.completion_tokens) == (300, 40)
    assert outcome.usage.cost_usd == pytest.approx(300 / 1000 * 0.5 + 40 / 1000 * 2.0)
    sent = chat_server.requests[0]
    assert sent["model"] == "test/entail-3b"
    assert sent["max_tokens"] == 512  # the prompt's own budget: the endpoint sets none
    assert sent["temperature"] == 0.0
    assert sent["response_format"] == {"type": "json_object"}
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    totals = runner.ledger.totals()
    assert (totals.calls, totals.failed, totals.requests, totals.prompt_tokens) == (1, 0, 1, 300)


def test_code_fences_and_reasoning_are_stripped(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Reply(f"<think>let me see</think>\n```json\n{GOOD_2X3}\n```"))
    outcome = runner.run_one(make_endpoint(), entailment_call())
    assert isinstance(outcome, ModelReply) and not outcome.repaired


def test_malformed_json_is_repaired_once(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(
        Reply('{"matrix": [[0.9, 0.1, 0.0], [0.2, 0.7', prompt_tokens=300, completion_tokens=30),
        Reply(GOOD_2X3, prompt_tokens=360, completion_tokens=40),
    )
    outcome = runner.run_one(make_endpoint(), entailment_call())

    assert isinstance(outcome, ModelReply) and outcome.repaired
    assert outcome.usage.requests == 2
    assert outcome.usage.prompt_tokens == 660  # both replies were paid for
    repair = chat_server.requests[1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert repair[2]["content"].startswith('{"matrix"')
    assert "not valid JSON" in repair[3]["content"]
    assert runner.ledger.totals().repaired == 1


def test_wrong_matrix_shape_is_repaired(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Reply('{"matrix": [[0.9, 0.1], [0.2, 0.7]]}'), Reply(GOOD_2X3))
    outcome = runner.run_one(make_endpoint(), entailment_call())
    assert isinstance(outcome, ModelReply) and outcome.repaired
    repair_text = chat_server.requests[1]["messages"][3]["content"]
    assert "row 1 has 2 values, expected 3" in repair_text


def test_out_of_range_twice_is_a_recorded_failure(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    bad = '{"matrix": [[1.4, 0.1, 0.0], [0.2, 0.7, -0.1]]}'
    chat_server.script(Reply(bad), Reply(bad))
    outcome = runner.run_one(make_endpoint(), entailment_call(tag="x"))

    assert isinstance(outcome, ModelFailure)
    assert outcome.kind == "invalid_reply"
    assert "less than or equal to 1" in outcome.detail
    assert outcome.last_reply == bad
    assert outcome.usage.requests == 2 and outcome.usage.prompt_tokens == 200
    assert isinstance(outcome.to_error(), ModelReplyInvalid)
    with pytest.raises(ModelReplyInvalid, match="edge x: invalid_reply"):
        reply_value(outcome)
    ledger = runner.ledger.to_dict()
    assert ledger["totals"]["failed"] == 1
    assert ledger["failures"][0]["subject"] == "edge x"
    assert ledger["failures"][0]["kind"] == "invalid_reply"


def test_only_one_repair_is_tried(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Reply("not json"), Reply("still not json"), Reply(GOOD_2X3))
    outcome = runner.run_one(make_endpoint(), entailment_call())
    assert isinstance(outcome, ModelFailure) and outcome.kind == "invalid_reply"
    assert len(chat_server.requests) == 2


def test_429_waits_for_retry_after_then_accepts(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Status(429, {"Retry-After": "0.3"}), Reply(GOOD_2X3))
    started = time.monotonic()
    outcome = runner.run_one(make_endpoint(backoff_max_s=2.0), entailment_call())

    assert isinstance(outcome, ModelReply) and not outcome.repaired
    assert reply_value(outcome).matrix[0] == [0.9, 0.1, 0.0]
    assert time.monotonic() - started >= 0.3
    assert (outcome.usage.requests, outcome.usage.retries) == (2, 1)


def test_5xx_are_retried_with_backoff(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Status(500), Status(503), Reply(GOOD_2X3))
    outcome = runner.run_one(make_endpoint(), entailment_call())
    assert isinstance(outcome, ModelReply)
    assert (outcome.usage.requests, outcome.usage.retries) == (3, 2)
    assert runner.ledger.totals().retries == 2


def test_persistent_5xx_is_a_failure_after_the_retries(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(*[Status(502)] * 3, Reply(GOOD_2X3))
    outcome = runner.run_one(make_endpoint(max_retries=2), entailment_call())
    assert isinstance(outcome, ModelFailure) and outcome.kind == "server_error"
    assert "after 2 retries" in outcome.detail
    assert len(chat_server.requests) == 3
    error = outcome.to_error()
    assert isinstance(error, ModelError) and not isinstance(error, ModelReplyInvalid)


def test_persistent_429_is_recorded_as_rate_limited(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(*[Status(429, {"Retry-After": "0"})] * 2)
    outcome = runner.run_one(make_endpoint(max_retries=1), entailment_call())
    assert isinstance(outcome, ModelFailure) and outcome.kind == "rate_limited"


def test_timeout_is_retried(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Sleep(1.0, Reply(GOOD_2X3)), Reply(GOOD_2X3))
    outcome = runner.run_one(make_endpoint(timeout_s=0.2), entailment_call())
    assert isinstance(outcome, ModelReply)
    assert outcome.usage.retries == 1


def test_persistent_timeout_is_a_failure(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(*[Sleep(0.6, Reply(GOOD_2X3))] * 2)
    outcome = runner.run_one(make_endpoint(timeout_s=0.15, max_retries=1), entailment_call())
    assert isinstance(outcome, ModelFailure) and outcome.kind == "timeout"
    assert outcome.usage.requests == 2


def test_client_errors_are_not_retried(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Status(400, body='{"error": "context length exceeded"}'))
    outcome = runner.run_one(make_endpoint(), entailment_call())
    assert isinstance(outcome, ModelFailure) and outcome.kind == "http_error"
    assert "context length" in outcome.detail
    assert len(chat_server.requests) == 1


def test_a_body_that_is_no_completion_is_a_failure(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Raw("<html>proxy error</html>"))
    outcome = runner.run_one(make_endpoint(), entailment_call())
    assert isinstance(outcome, ModelFailure) and outcome.kind == "bad_response"


def test_refused_connection_is_a_transport_failure(runner: ModelRunner) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket closes
    endpoint = ModelEndpoint(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=1,
        backoff_base_s=0.01, backoff_max_s=0.02,
    )
    outcome = runner.run_one(endpoint, entailment_call())
    assert isinstance(outcome, ModelFailure) and outcome.kind == "transport"
    assert outcome.usage.requests == 2


def test_missing_usage_is_counted_as_unknown(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Reply(GOOD_2X3, with_usage=False))
    outcome = runner.run_one(make_endpoint(), entailment_call())
    assert isinstance(outcome, ModelReply)
    assert outcome.usage.usage_missing == 1 and outcome.usage.prompt_tokens == 0
    assert runner.ledger.totals().usage_missing == 1


def test_concurrency_is_limited_per_endpoint(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(*[Sleep(0.15, Reply(GOOD_2X3))] * 6)
    calls = [entailment_call(tag=str(i)) for i in range(6)]
    outcomes = runner.run(make_endpoint(max_concurrency=2), calls)
    assert all(isinstance(outcome, ModelReply) for outcome in outcomes)
    assert chat_server.max_in_flight == 2


def test_endpoint_settings_reach_the_request(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Reply(GOOD_2X3))
    endpoint = make_endpoint(
        max_tokens=64, temperature=0.3, api_key="sekret", response_format="json_schema"
    )
    runner.run_one(endpoint, entailment_call())
    sent = chat_server.requests[0]
    assert sent["max_tokens"] == 64 and sent["temperature"] == 0.3
    schema = sent["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["matrix"] and schema["additionalProperties"] is False


def test_a_llama_cpp_endpoint_gets_the_calls_narrowed_schema_and_still_validates(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    # A 3 x 2 reply to a 2 x 3 edge: the schema is sent to the server, the check decides.
    wrong = '{"matrix": [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]}'
    chat_server.script(Reply(wrong), Reply(wrong))
    call = replace(entailment_call(), schema=entailment_schema(2, 3))
    outcome = runner.run_one(make_endpoint(response_format="json_object_schema"), call)
    sent = chat_server.requests[0]["response_format"]
    assert sent["type"] == "json_object"
    rows = sent["schema"]["properties"]["matrix"]
    assert (rows["minItems"], rows["maxItems"], rows["items"]["minItems"]) == (2, 2, 3)
    assert isinstance(outcome, ModelFailure) and outcome.kind == "invalid_reply"
    assert "matrix has 3 rows, expected 2" in outcome.detail


def test_a_reply_cut_at_the_token_limit_is_repaired_with_that_reason(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    cut = {"choices": [{"index": 0, "finish_reason": "length",
                        "message": {"role": "assistant", "content": '{"matrix": [[0.9, 0.1'}}],
           "usage": {"prompt_tokens": 300, "completion_tokens": 64, "total_tokens": 364}}
    chat_server.script(Raw(json.dumps(cut)), Reply(GOOD_2X3))
    outcome = runner.run_one(make_endpoint(max_tokens=64), entailment_call())
    assert isinstance(outcome, ModelReply) and outcome.repaired
    repair = chat_server.requests[1]["messages"][-1]["content"]
    assert "cut off at the limit of 64 tokens" in repair and "not valid JSON" in repair
    assert outcome.usage.completion_tokens == 64 + 20


def test_repetition_penalties_are_sent_only_when_set(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Reply(GOOD_2X3), Reply(GOOD_2X3))
    runner.run_one(make_endpoint(), entailment_call(tag="plain"))
    runner.run_one(make_endpoint(frequency_penalty=1.0, presence_penalty=0.5),
                   entailment_call(tag="penalised"))
    plain, penalised = chat_server.requests
    assert "frequency_penalty" not in plain and "presence_penalty" not in plain
    assert (penalised["frequency_penalty"], penalised["presence_penalty"]) == (1.0, 0.5)
    call = entailment_call()
    messages = call.prompt.render(call.inputs)
    keys = {ReplyCache.key(call.prompt, messages, endpoint, 512) for endpoint in
            (make_endpoint(), make_endpoint(presence_penalty=None),
             make_endpoint(presence_penalty=1.0))}
    assert len(keys) == 2  # unset leaves the key as it was; a penalty changes it


def test_unconfigured_endpoint_is_refused(runner: ModelRunner) -> None:
    with pytest.raises(ModelNotConfigured):
        runner.run_one(ModelEndpoint(), entailment_call())


def test_repair_failure_over_http_keeps_the_first_problems(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Reply('{"matrix": []}'), Status(400))
    outcome = runner.run_one(make_endpoint(), entailment_call())
    assert isinstance(outcome, ModelFailure) and outcome.kind == "http_error"
    assert "repair request failed" in outcome.detail and "matrix" in outcome.detail


def test_ledger_is_serialisable(
    chat_server: ChatServer, make_endpoint: MakeEndpoint, runner: ModelRunner
) -> None:
    chat_server.script(Reply(GOOD_2X3), Reply("nope"), Reply("nope"))
    calls = [entailment_call(tag="a"), entailment_call(tag="b")]
    runner.run(make_endpoint(max_concurrency=1), calls)
    restored = json.loads(runner.ledger.to_json())
    assert restored["stages"]["entailment"]["calls"] == 2
    assert restored["stages"]["entailment"]["failed"] == 1
    assert restored["models"][0]["prompt"] == "score_entailment@2"
