"""The shared HTTP retry policy (crase.http), without a server: the wait before a retry,
the Retry-After header, which replies and errors are retried, and the async and sync loops
that send a request under the policy."""

import asyncio
import email.utils
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from crase.http import (
    RetryPolicy,
    Sent,
    TryOutcome,
    is_retryable,
    retry_after,
    retry_after_seconds,
    send_with_retries,
    send_with_retries_sync,
)
from crase.settings import ModelEndpoint, ProviderSettings

REQUEST = httpx.Request("GET", "http://127.0.0.1/x")
QUICK = RetryPolicy(max_retries=2, backoff_base_s=0.001, backoff_max_s=0.002)


def reply(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers, request=REQUEST)


def http_date(offset_s: float) -> str:
    return email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=offset_s),
                                       usegmt=True)


# the wait ---------------------------------------------------------------------------------
def test_the_delay_doubles_per_retry_within_its_jitter() -> None:
    policy = RetryPolicy(max_retries=5, backoff_base_s=1.0, backoff_max_s=10.0)
    for attempt, (low, high) in enumerate([(0.5, 1.0), (1.0, 2.0), (2.0, 4.0), (4.0, 8.0)]):
        assert low <= policy.delay(attempt) <= high


def test_the_delay_is_jittered() -> None:
    policy = RetryPolicy(max_retries=5, backoff_base_s=1.0, backoff_max_s=10.0)
    assert len({policy.delay(2) for _ in range(20)}) > 1


def test_the_delay_is_capped() -> None:
    policy = RetryPolicy(max_retries=20, backoff_base_s=1.0, backoff_max_s=10.0)
    assert policy.delay(10) == 10.0


def test_retry_after_is_a_lower_bound_under_the_cap() -> None:
    policy = RetryPolicy(max_retries=5, backoff_base_s=1.0, backoff_max_s=10.0)
    assert policy.delay(0, 7.0) == 7.0
    assert policy.delay(0, 3600.0) == 10.0  # a server asking for an hour cannot stall a run
    assert 0.5 <= policy.delay(0, 0.0) <= 1.0  # "now" does not shorten the backoff


def test_a_policy_reads_the_settings_of_either_client() -> None:
    endpoint = ModelEndpoint(max_retries=2, backoff_base_s=0.5, backoff_max_s=4.0)
    assert RetryPolicy.of(endpoint) == RetryPolicy(2, 0.5, 4.0)
    providers = ProviderSettings(max_retries=3, backoff_base_s=0.25, backoff_max_s=8.0)
    assert RetryPolicy.of(providers) == RetryPolicy(3, 0.25, 8.0)


# Retry-After ------------------------------------------------------------------------------
def test_retry_after_as_seconds() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after(reply(429, {"Retry-After": "0.25"})) == 0.25


def test_retry_after_as_an_http_date() -> None:
    assert 25 <= (retry_after_seconds(http_date(30)) or 0) <= 30
    assert 25 <= (retry_after(reply(503, {"Retry-After": http_date(30)})) or 0) <= 30


def test_a_past_date_means_now() -> None:
    assert (retry_after_seconds(http_date(-60)) or 0) < 0
    assert retry_after(reply(429, {"Retry-After": http_date(-60)})) == 0.0


def test_an_absent_or_unreadable_retry_after_is_none() -> None:
    assert retry_after_seconds(None) is None and retry_after_seconds("") is None
    assert retry_after_seconds("soon") is None
    assert retry_after(reply(429)) is None
    assert retry_after(reply(429, {"Retry-After": "soon"})) is None


# what is retried --------------------------------------------------------------------------
@pytest.mark.parametrize(("status", "retried"), [
    (200, False), (204, False), (301, False), (400, False), (401, False), (404, False),
    (422, False), (429, True), (500, True), (502, True), (503, True), (504, True)])
def test_which_statuses_are_retried(status: int, retried: bool) -> None:
    assert is_retryable(reply(status)) is retried


@pytest.mark.parametrize(("error", "retried"), [
    (httpx.ConnectError("refused"), True),
    (httpx.ReadTimeout("slow"), True),
    (httpx.ConnectTimeout("slow"), True),
    (httpx.PoolTimeout("busy"), True),
    (httpx.RemoteProtocolError("dropped"), True),
    (httpx.ReadError("reset"), True),
    (httpx.TooManyRedirects("loop"), False),
    (httpx.DecodingError("garbled"), False),
    (ValueError("not httpx"), False)])
def test_which_errors_are_retried(error: BaseException, retried: bool) -> None:
    assert is_retryable(error) is retried


def test_the_wait_after_a_try() -> None:
    policy = RetryPolicy(max_retries=2, backoff_base_s=1.0, backoff_max_s=10.0)
    assert policy.wait_after(reply(200), 0) is None
    assert policy.wait_after(reply(404), 0) is None
    assert policy.wait_after(reply(429, {"Retry-After": "5"}), 0) == 5.0
    assert policy.wait_after(reply(503, {"Retry-After": "5"}), 1) == 5.0
    assert 0.5 <= (policy.wait_after(httpx.ConnectError("refused"), 0) or 0) <= 1.0
    assert policy.wait_after(reply(503), 2) is None  # the retries are spent


# the loops --------------------------------------------------------------------------------
Script = Sequence[httpx.Response | Exception]


def scripted(script: Script) -> tuple[Callable[[], httpx.Response], list[int]]:
    """A `send` that answers from the script, one item per try, and the count of its tries."""
    tries = [0]

    def send() -> httpx.Response:
        item = script[tries[0]]
        tries[0] += 1
        if isinstance(item, Exception):
            raise item
        return item

    return send, tries


def status_of(sent: Sent) -> int | None:
    return sent.outcome.status_code if isinstance(sent.outcome, httpx.Response) else None


def run_async(send: Callable[[], httpx.Response], policy: RetryPolicy,
              on_retry: Callable[[TryOutcome, float], None] | None = None) -> Sent:
    async def send_async() -> httpx.Response:
        return send()

    return asyncio.run(send_with_retries(send_async, policy, on_retry))


LOOPS = [pytest.param(send_with_retries_sync, id="sync"), pytest.param(run_async, id="async")]


@pytest.mark.parametrize("loop", LOOPS)
def test_retries_until_a_final_reply(loop: Callable[..., Sent]) -> None:
    send, tries = scripted([reply(503), httpx.ConnectError("refused"), reply(200)])
    seen: list[tuple[TryOutcome, float]] = []
    sent = loop(send, QUICK, lambda outcome, wait: seen.append((outcome, wait)))
    assert status_of(sent) == 200 and sent.retries == 2 and not sent.gave_up
    assert tries[0] == 3
    assert [type(outcome) for outcome, _ in seen] == [httpx.Response, httpx.ConnectError]
    assert all(0 < wait <= QUICK.backoff_max_s for _, wait in seen)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_final_reply_is_not_retried(loop: Callable[..., Sent]) -> None:
    send, tries = scripted([reply(400), reply(200)])
    sent = loop(send, QUICK)
    assert status_of(sent) == 400 and sent.retries == 0 and not sent.gave_up
    assert tries[0] == 1


@pytest.mark.parametrize("loop", LOOPS)
def test_the_last_failure_comes_back_when_the_retries_run_out(
        loop: Callable[..., Sent]) -> None:
    send, tries = scripted([reply(429)] * 3 + [reply(200)])
    sent = loop(send, QUICK)
    assert status_of(sent) == 429 and sent.retries == 2 and sent.gave_up
    assert tries[0] == 3  # one try and two retries
    send, _ = scripted([httpx.ReadTimeout("slow")] * 3)
    sent = loop(send, QUICK)
    assert isinstance(sent.outcome, httpx.ReadTimeout) and sent.gave_up


@pytest.mark.parametrize("loop", LOOPS)
def test_an_error_not_worth_retrying_propagates(loop: Callable[..., Sent]) -> None:
    send, tries = scripted([httpx.TooManyRedirects("loop"), reply(200)])
    with pytest.raises(httpx.TooManyRedirects):
        loop(send, QUICK)
    assert tries[0] == 1


@pytest.mark.parametrize("loop", LOOPS)
def test_no_retries_means_one_try(loop: Callable[..., Sent]) -> None:
    send, tries = scripted([reply(500), reply(200)])
    sent = loop(send, RetryPolicy(max_retries=0, backoff_base_s=1.0, backoff_max_s=1.0))
    assert sent.gave_up and sent.retries == 0 and tries[0] == 1
