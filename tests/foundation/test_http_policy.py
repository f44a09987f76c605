"""The shared HTTP retry policy (crase.http), without a server: the wait before a retry,
the Retry-After header, which replies and errors are retried, and the async and sync loops
that send a request under the policy (tenacity's, given a sleep that only records the
waits, so no test waits them out)."""

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
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC).timestamp()  # the fake clock's one reading


def reply(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers, request=REQUEST)


def http_date(offset_s: float) -> str:
    """The HTTP date `offset_s` seconds after NOW."""
    return email.utils.format_datetime(
        datetime.fromtimestamp(NOW, UTC) + timedelta(seconds=offset_s), usegmt=True)


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
    assert retry_after_seconds(http_date(30), now=NOW) == 30.0
    assert retry_after(reply(503, {"Retry-After": http_date(30)}), now=NOW) == 30.0


def test_a_past_date_means_now() -> None:
    assert retry_after_seconds(http_date(-60), now=NOW) == -60.0
    assert retry_after(reply(429, {"Retry-After": http_date(-60)}), now=NOW) == 0.0


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


def test_a_403_with_retry_after_is_a_throttle_and_retried() -> None:
    assert is_retryable(reply(403, {"Retry-After": "2"})) is True
    assert is_retryable(reply(403)) is False  # a refused key: the same answer again


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


def run_sync(send: Callable[[], httpx.Response], policy: RetryPolicy,
             on_retry: Callable[[TryOutcome, float], None] | None = None,
             slept: list[float] | None = None) -> Sent:
    """The sync loop, its waits recorded in `slept` rather than slept."""
    waits = [] if slept is None else slept
    return send_with_retries_sync(send, policy, on_retry, sleep=waits.append)


def run_async(send: Callable[[], httpx.Response], policy: RetryPolicy,
              on_retry: Callable[[TryOutcome, float], None] | None = None,
              slept: list[float] | None = None) -> Sent:
    """The async loop over the same `send`, its waits recorded in `slept`."""
    waits = [] if slept is None else slept

    async def send_async() -> httpx.Response:
        return send()

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    return asyncio.run(send_with_retries(send_async, policy, on_retry, sleep=sleep))


LOOPS = [pytest.param(run_sync, id="sync"), pytest.param(run_async, id="async")]


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


# the wait the loops sleep -----------------------------------------------------------------
SLOW = RetryPolicy(max_retries=3, backoff_base_s=1.0, backoff_max_s=60.0, clock=lambda: NOW)


@pytest.mark.parametrize("loop", LOOPS)
def test_without_retry_after_the_loops_sleep_the_backoff(loop: Callable[..., Sent]) -> None:
    send, _ = scripted([reply(503), httpx.ConnectError("refused"), reply(502), reply(200)])
    slept: list[float] = []
    told: list[float] = []
    sent = loop(send, SLOW, lambda _outcome, wait: told.append(wait), slept)
    assert status_of(sent) == 200 and sent.retries == 3
    assert len(slept) == 3 and slept == told  # on_retry hears the wait that is slept
    for wait, (low, high) in zip(slept, [(0.5, 1.0), (1.0, 2.0), (2.0, 4.0)], strict=True):
        assert low <= wait <= high


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize(("header", "wait"), [
    ("5", 5.0), ("12.5", 12.5), (http_date(30), 30.0),
    ("3600", 60.0),  # capped: a server asking for an hour cannot stall a run
])
def test_the_loops_sleep_what_retry_after_asks(loop: Callable[..., Sent], header: str,
                                               wait: float) -> None:
    for status in (429, 503):
        send, tries = scripted([reply(status, {"Retry-After": header}), reply(200)])
        slept: list[float] = []
        sent = loop(send, SLOW, None, slept)
        assert status_of(sent) == 200 and tries[0] == 2
        assert slept == [wait]


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("header", ["0", http_date(-60), "soon"])
def test_a_retry_after_of_now_or_unreadable_keeps_the_backoff(loop: Callable[..., Sent],
                                                              header: str) -> None:
    send, _ = scripted([reply(429, {"Retry-After": header}), reply(200)])
    slept: list[float] = []
    loop(send, SLOW, None, slept)
    assert len(slept) == 1 and 0.5 <= slept[0] <= 1.0


@pytest.mark.parametrize("loop", LOOPS)
def test_spent_retries_sleep_once_per_retry(loop: Callable[..., Sent]) -> None:
    send, tries = scripted([reply(500, {"Retry-After": "2"})] * 5)
    slept: list[float] = []
    sent = loop(send, SLOW, None, slept)
    assert sent.gave_up and sent.retries == 3 and tries[0] == 4
    assert slept[:2] == [2.0, 2.0]  # the hint is above the first two backoffs
    assert len(slept) == 3 and 2.0 <= slept[2] <= 4.0  # the third backoff is not below it


def test_both_loops_send_through_an_httpx_client_until_the_server_answers() -> None:
    """A real httpx client on a mock transport: a dropped connection, a 503 that asks for a
    date 20 s on, then the answer."""

    def script() -> Callable[[httpx.Request], httpx.Response]:
        replies: list[httpx.Response | Exception] = [
            httpx.ConnectError("refused"),
            httpx.Response(503, headers={"Retry-After": http_date(20)}),
            httpx.Response(200, json={"ok": True})]

        def handle(request: httpx.Request) -> httpx.Response:
            item = replies.pop(0)
            if isinstance(item, Exception):
                raise item
            return item

        return handle

    slept: list[float] = []
    with httpx.Client(transport=httpx.MockTransport(script())) as client:
        sent = send_with_retries_sync(lambda: client.get("http://127.0.0.1/x"), SLOW,
                                      sleep=slept.append)
    assert status_of(sent) == 200 and sent.retries == 2
    assert 0.5 <= slept[0] <= 1.0 and slept[1] == 20.0

    async def send_async() -> Sent:
        async with httpx.AsyncClient(transport=httpx.MockTransport(script())) as client:
            async def sleep(seconds: float) -> None:
                slept.append(seconds)

            return await send_with_retries(lambda: client.get("http://127.0.0.1/x"), SLOW,
                                           sleep=sleep)

    slept.clear()
    sent = asyncio.run(send_async())
    assert status_of(sent) == 200 and sent.retries == 2
    assert 0.5 <= slept[0] <= 1.0 and slept[1] == 20.0
