"""API keys: which keys the server accepts, and the guard that checks `X-API-Key`.

Keys come from `api.api_keys` (CRASE_API__API_KEYS='["key1","key2"]'). A server without
configured keys starts only on a loopback address; `crase serve` then generates one key
into `var/api-key` (mode 600) on first start and reuses it afterwards, so a local user has
a key to copy and nothing is ever open without one.

Browsers send no headers of their own, so the web pages take the same keys another way:
entered once on the login page, the key is kept in a secure, HTTP-only, SameSite=Strict
cookie, which the guard accepts on the page routes only (the JSON API still wants the
header). A form posted from a page carries a token derived from that key, so a request
another site forges is refused even where a browser would send the cookie.
"""

import hmac
import ipaddress
import secrets
from pathlib import Path

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from crase.errors import ApiKeyRejected, FormTokenRejected, LoginRequired, SettingsError
from crase.settings import Settings

API_KEY_HEADER = "X-API-Key"
SESSION_COOKIE = "crase_session"
# Route handlers (or their controllers) with this in `opt` are web pages: the guard takes
# the session cookie there instead of the header.
BROWSER_PAGE = "browser_page"
FORM_TOKEN_FIELD = "form_token"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def key_file_path(settings: Settings) -> Path:
    return settings.api.key_file or settings.var_dir / "api-key"


def read_or_create_key(path: Path) -> str:
    """The key kept in `path`, made (random, 32 bytes, URL-safe) on the first call."""
    if path.exists():
        key = path.read_text(encoding="utf-8").strip()
        if key:
            return key
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(32)
    path.write_text(key + "\n", encoding="utf-8")
    path.chmod(0o600)
    return key


def resolve_api_keys(settings: Settings, host: str) -> tuple[list[str], Path | None]:
    """The keys the server will accept, and the key file when one was used.

    Configured keys win. Without them a loopback server uses the generated local key;
    any other address refuses to start, because it would need a key nobody was given."""
    keys = [key for key in settings.api.api_keys if key]
    if keys:
        return keys, None
    if not is_loopback(host):
        raise SettingsError(
            f"refusing to serve on {host} without API keys: set CRASE_API__API_KEYS "
            "(a JSON list) or bind to 127.0.0.1"
        )
    path = key_file_path(settings)
    return [read_or_create_key(path)], path


def key_is_accepted(given: str | None, accepted: list[str]) -> bool:
    if not given:
        return False
    # Compare with every key in constant time, so timing tells nothing about a near miss.
    matches = [hmac.compare_digest(given.encode(), key.encode()) for key in accepted]
    return any(matches)


def has_accepted_key(connection: ASGIConnection) -> bool:
    """Whether the request's header holds a key the app accepts (for GET /health, which
    answers everyone but shows details only to a caller with a key)."""
    accepted: list[str] = connection.app.state.api_keys
    return key_is_accepted(connection.headers.get(API_KEY_HEADER), accepted)


def session_key(connection: ASGIConnection) -> str | None:
    """The key the session cookie holds, when the app still accepts it (a key removed
    from the configuration ends every session made with it)."""
    given = connection.cookies.get(SESSION_COOKIE)
    accepted: list[str] = connection.app.state.api_keys
    return given if given and key_is_accepted(given, accepted) else None


def form_token(key: str) -> str:
    """The token a page's forms carry: derived from the session's key, so another site,
    which cannot read the page, cannot know it."""
    return hmac.new(key.encode(), b"crase web form", "sha256").hexdigest()


def check_form_token(connection: ASGIConnection, given: str | None) -> None:
    key = session_key(connection)
    if key is None:
        raise LoginRequired("log in first: the session cookie is missing or no longer valid")
    if not given or not hmac.compare_digest(given, form_token(key)):
        raise FormTokenRejected("the form was not sent from this site's page (its token is "
                                "missing or stale); reload the page and send it again")


def require_api_key(connection: ASGIConnection, handler: BaseRouteHandler) -> None:
    """Litestar guard for every protected route: the header must hold an accepted key;
    on a web page, the session cookie must."""
    if handler.opt.get(BROWSER_PAGE):
        if session_key(connection) is None:
            raise LoginRequired("log in with one of the server's API keys to see this page")
        return
    if connection.headers.get(API_KEY_HEADER) is None:
        raise ApiKeyRejected(f"missing {API_KEY_HEADER} header")
    if not has_accepted_key(connection):
        raise ApiKeyRejected(f"the {API_KEY_HEADER} header holds no accepted key")
