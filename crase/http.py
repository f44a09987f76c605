"""The one retry policy of every outgoing HTTP client (model endpoints, Semantic Scholar,
Crossref, arXiv), and the loops that send a request under it, for httpx's async and sync
clients. Both loops are tenacity's, built from the same arguments (`tenacity_arguments`).

- A try is retried on 429, any 5xx, a 403 with Retry-After (a throttle), a timeout or a
  refused or dropped connection (httpx's TransportError). Every other reply, 4xx
  included, is final: the same request would get the same answer.
- The wait doubles per retry, with jitter. A server's Retry-After (seconds or an HTTP date)
  is a lower bound, and both are capped at `backoff_max_s`, so that a server asking for an
  hour cannot stall a run.
- The loops return the last try's reply or transport error; each client turns it into its
  own result or error, and meters or paces its tries inside the `send` it passes in.
"""

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_result,
    stop_after_attempt,
)

# Timeouts are TransportErrors too; other httpx errors (a redirect loop, a body that does not
# decode) would fail the same way again.
RETRYABLE_ERRORS = (httpx.TransportError,)

TryOutcome = httpx.Response | httpx.TransportError  # what one try came to
# Told the outcome that failed and the wait before the retry (to pace other callers, say).
OnRetry = Callable[[TryOutcome, float], None]


class RetrySettings(Protocol):
    """The settings a policy is read from (ModelEndpoint, ProviderSettings)."""

    max_retries: int
    backoff_base_s: float
    backoff_max_s: float


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int
    backoff_base_s: float
    backoff_max_s: float
    # What "now" is when a Retry-After names a date.
    clock: Callable[[], float] = field(default=time.time, compare=False, repr=False)

    @classmethod
    def of(cls, settings: RetrySettings) -> "RetryPolicy":
        return cls(settings.max_retries, settings.backoff_base_s, settings.backoff_max_s)

    def delay(self, attempt: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait before retry number `attempt` + 1."""
        # Jitter in the upper half, so that callers that failed together do not retry together.
        computed = self.backoff_base_s * 2.0**attempt * random.uniform(0.5, 1.0)
        wanted = max(computed, retry_after_s or 0.0)
        return min(wanted, self.backoff_max_s)

    def wait(self, state: RetryCallState) -> float:
        """tenacity's wait: the delay after the try `state` has just made, which the
        reply's Retry-After, if any, lengthens."""
        outcome = outcome_of(state)
        hint = (retry_after(outcome, self.clock()) if isinstance(outcome, httpx.Response)
                else None)
        return self.delay(state.attempt_number - 1, hint)


def retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def is_retryable(outcome: httpx.Response | BaseException) -> bool:
    """Whether another try of the same request may fare better. A 403 that says when to
    come back (Retry-After) is a throttle, not a refusal: OpenAlex answers its rate limit
    that way."""
    if isinstance(outcome, httpx.Response):
        return retryable_status(outcome.status_code) or (
            outcome.status_code == 403 and "retry-after" in outcome.headers)
    return isinstance(outcome, RETRYABLE_ERRORS)


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds until the date or the number in `value` (negative for a date already past),
    counted from `now` (the clock by default); None when the header is absent or
    unreadable."""
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return when.timestamp() - (time.time() if now is None else now)


def retry_after(response: httpx.Response, now: float | None = None) -> float | None:
    """A reply's Retry-After in seconds, at least 0; None when absent or unreadable."""
    seconds = retry_after_seconds(response.headers.get("retry-after"), now)
    return None if seconds is None else max(0.0, seconds)


@dataclass(frozen=True)
class Sent:
    """The last try of a request and the number of retries before it."""

    outcome: TryOutcome
    retries: int

    @property
    def gave_up(self) -> bool:
        """The last try failed in a way worth retrying: the retries ran out."""
        return is_retryable(self.outcome)


def outcome_of(state: RetryCallState) -> TryOutcome:
    """What the try `state` has just made came to (a transport error is returned by the
    try, not raised, so it is always a result)."""
    assert state.outcome is not None, "asked before the first try"
    outcome: TryOutcome = state.outcome.result()
    return outcome


def tenacity_arguments(policy: RetryPolicy, on_retry: OnRetry | None) -> dict[str, Any]:
    """The policy as tenacity's arguments, one set for the sync and the async loop: retry
    while the outcome is worth it and tries are left, wait the policy's delay, and give
    back the last outcome rather than raise when the tries run out."""

    def before_sleep(state: RetryCallState) -> None:
        if on_retry is not None:
            on_retry(outcome_of(state), state.upcoming_sleep)

    return {"stop": stop_after_attempt(policy.max_retries + 1),
            "retry": retry_if_result(is_retryable),
            "wait": policy.wait,
            "before_sleep": before_sleep,
            "retry_error_callback": outcome_of}


def retries_made(retrying: Retrying | AsyncRetrying) -> int:
    return int(retrying.statistics["attempt_number"]) - 1


async def send_with_retries(send: Callable[[], Awaitable[httpx.Response]], policy: RetryPolicy,
                            on_retry: OnRetry | None = None,
                            sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> Sent:
    """Awaits `send()` until its outcome is final or the retries are spent, awaiting
    `sleep` of the policy's wait in between. Errors that are not worth retrying propagate."""

    async def try_once() -> TryOutcome:
        try:
            return await send()
        except RETRYABLE_ERRORS as err:
            return err

    retrying = AsyncRetrying(sleep=sleep, **tenacity_arguments(policy, on_retry))
    outcome: TryOutcome = await retrying(try_once)
    return Sent(outcome, retries_made(retrying))


def send_with_retries_sync(send: Callable[[], httpx.Response], policy: RetryPolicy,
                           on_retry: OnRetry | None = None,
                           sleep: Callable[[float], None] = time.sleep) -> Sent:
    """`send_with_retries` for a synchronous `send` (httpx.Client); blocks while it waits."""

    def try_once() -> TryOutcome:
        try:
            return send()
        except RETRYABLE_ERRORS as err:
            return err

    retrying = Retrying(sleep=sleep, **tenacity_arguments(policy, on_retry))
    outcome: TryOutcome = retrying(try_once)
    return Sent(outcome, retries_made(retrying))
