"""The synchronous HTTP client that the Crossref and arXiv modules share: one connection, a
minimum interval between requests, the retry policy of `crase.http`, and failures raised
as ProviderError subclasses.

404 is not an error here: it comes back as the reply, and each API module reads it as
"no such record".
"""

import time
from typing import Any

import httpx

from crase.errors import (
    ProviderRateLimited,
    ProviderReplyInvalid,
    ProviderRequestRejected,
    ProviderTimeout,
    ProviderUnavailable,
)
from crase.http import RetryPolicy, Sent, send_with_retries_sync
from crase.settings import ProviderSettings


class ProviderClient:
    """One sync HTTP client per run, shared by the Crossref and arXiv look-ups, so that the
    minimum interval spans all of them."""

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self.policy = RetryPolicy.of(settings)
        self._http = httpx.Client(timeout=settings.timeout_s, follow_redirects=True)
        self._last = 0.0

    def close(self) -> None:
        self._http.close()

    def get(self, url: str, params: dict[str, Any] | None = None,
            headers: dict[str, str] | None = None) -> httpx.Response:
        """The reply (a 404 included), after the retries the policy allows."""

        def send() -> httpx.Response:
            self._wait_turn()
            return self._http.get(url, params=params, headers=headers)

        try:
            sent = send_with_retries_sync(send, self.policy)
        except httpx.HTTPError as err:  # not worth retrying, but still the provider's failure
            raise ProviderUnavailable(f"{url}: {type(err).__name__}: {err}") from err
        return self._reply(url, sent)

    def get_json(self, url: str, params: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None) -> dict[str, Any] | None:
        """The JSON object of a reply; None for 404."""
        response = self.get(url, params, headers)
        if response.status_code == 404:
            return None
        try:
            body = response.json()
        except ValueError as err:
            raise ProviderReplyInvalid(f"{url}: the reply is not JSON") from err
        if not isinstance(body, dict):
            raise ProviderReplyInvalid(f"{url}: the reply is not a JSON object")
        return body

    def _reply(self, url: str, sent: Sent) -> httpx.Response:
        """The last try's reply, or the error it comes to."""
        outcome = sent.outcome
        if isinstance(outcome, httpx.TimeoutException):
            raise ProviderTimeout(f"{url}: no reply in {self.settings.timeout_s}s") from outcome
        if isinstance(outcome, httpx.TransportError):
            raise ProviderUnavailable(f"{url}: {type(outcome).__name__}: {outcome}") from outcome
        status = outcome.status_code
        if sent.gave_up:
            cls = ProviderRateLimited if status == 429 else ProviderUnavailable
            raise cls(f"{url}: HTTP {status} after {sent.retries} retries")
        if status >= 400 and status != 404:
            raise ProviderRequestRejected(f"{url}: HTTP {status}")
        return outcome

    def _wait_turn(self) -> None:
        interval = 1.0 / self.settings.requests_per_second
        wait = self._last + interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last = time.monotonic()
