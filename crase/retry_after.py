"""The HTTP Retry-After header, read the same way by the model client and the provider
clients: a number of seconds, or an HTTP date."""

import email.utils
import time


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds until the date or the number in `value` (negative for a date already past);
    None when the header is absent or unreadable."""
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
    return when.timestamp() - time.time()
