"""API keys: which keys the server accepts, and the guard that checks `X-API-Key`; and the
web pages' sessions.

Keys come from `api.api_keys` (CRASE_API__API_KEYS='["key1","key2"]'). A server without
configured keys starts only on a loopback address; `crase serve` then generates one key
into `var/api-key` (mode 600) on first start and reuses it afterwards, so a local user has
a key to copy and nothing is ever open without one.

Browsers send no headers of their own, so the web pages take the same keys another way:
entered once on the login page, the key starts a session. The cookie (secure, HTTP-only,
SameSite=Strict) holds a token, never the key: a random session id, its expiry and a tag
of the key it was made with, signed with HMAC under a secret kept in `var/session-secret`
(mode 600). A session is valid while its signature holds, it has not expired
(`api.session_max_age_s`), its key is still accepted, and its id is still in
`var/sessions/` (logging out removes it), so a restart keeps logins and a logout holds on
every server sharing the var folder. The guard accepts the cookie on the page routes only
(the JSON API still wants the header). A form posted from a page carries a token derived
from the session, so a request another site forges is refused even where a browser would
send the cookie.
"""

import hmac
import ipaddress
import math
import os
import secrets
import time
from dataclasses import dataclass
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
    # Private from its first byte: made with mode 600, never readable to others meanwhile.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(key + "\n")
    path.chmod(0o600)  # an empty file that was there keeps its own mode otherwise
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


def same_text(given: str, expected: str) -> bool:
    """Compared in constant time, as bytes: a cookie or form may hold any character, and
    `hmac.compare_digest` refuses a str that is not ASCII."""
    return hmac.compare_digest(given.encode(), expected.encode())


def key_is_accepted(given: str | None, accepted: list[str]) -> bool:
    if not given:
        return False
    # Compare with every key in constant time, so timing tells nothing about a near miss.
    matches = [same_text(given, key) for key in accepted]
    return any(matches)


def has_accepted_key(connection: ASGIConnection) -> bool:
    """Whether the request's header holds a key the app accepts (for GET /health, which
    answers everyone but shows details only to a caller with a key)."""
    accepted: list[str] = connection.app.state.api_keys
    return key_is_accepted(connection.headers.get(API_KEY_HEADER), accepted)


@dataclass(frozen=True)
class Sessions:
    """The web sessions of the servers that share one var folder (see the module's text)."""

    secret: bytes
    folder: Path  # one file per live session, named by its id, holding its expiry
    max_age_s: float

    @classmethod
    def open(cls, settings: Settings) -> "Sessions":
        secret = read_or_create_key(settings.var_dir / "session-secret").encode()
        folder = settings.var_dir / "sessions"
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
        sessions = cls(secret, folder, settings.api.session_max_age_s)
        sessions.forget_expired()
        return sessions

    def start(self, key: str) -> str:
        """A new session for an accepted key; returns the token for the cookie."""
        self.forget_expired()
        session_id = secrets.token_urlsafe(24)  # no '.' in it: the token's separator
        expires = math.ceil(time.time() + self.max_age_s)
        descriptor = os.open(self.folder / session_id, os.O_WRONLY | os.O_CREAT, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as marker:
            marker.write(str(expires))
        body = f"{session_id}.{expires}.{self._key_tag(key)}"
        return f"{body}.{self._sign(body)}"

    def check(self, token: str | None, accepted: list[str]) -> str | None:
        """The id of the session a token names, when it is valid; None for a token forged
        or altered, expired, logged out, or made with a key no longer accepted."""
        parts = (token or "").split(".")
        if len(parts) != 4:
            return None
        session_id, expires, tag, signature = parts
        # The signature first: nothing else of a token is trusted, or touches the disk,
        # until it holds.
        if not same_text(signature, self._sign(f"{session_id}.{expires}.{tag}")):
            return None
        if int(expires) <= time.time():
            return None
        if not any(same_text(tag, self._key_tag(key)) for key in accepted):
            return None
        return session_id if (self.folder / session_id).exists() else None

    def end(self, session_id: str) -> None:
        """Log out: the session's token is refused from now on, whoever shows it."""
        (self.folder / session_id).unlink(missing_ok=True)

    def forget_expired(self) -> None:
        now = time.time()
        for marker in self.folder.iterdir():
            try:
                if int(marker.read_text(encoding="utf-8")) <= now:
                    marker.unlink(missing_ok=True)
            except (OSError, ValueError):
                marker.unlink(missing_ok=True)  # not a session file this code wrote

    def _sign(self, body: str) -> str:
        return hmac.new(self.secret, b"session:" + body.encode(), "sha256").hexdigest()

    def _key_tag(self, key: str) -> str:
        """Which key a session was made with, without the key: a removed key ends it."""
        return hmac.new(self.secret, b"key:" + key.encode(), "sha256").hexdigest()[:16]


def session_key(connection: ASGIConnection) -> str | None:
    """The id of the valid session the cookie holds; None when there is none."""
    sessions: Sessions = connection.app.state.sessions
    return sessions.check(connection.cookies.get(SESSION_COOKIE),
                          connection.app.state.api_keys)


def form_token(session: str) -> str:
    """The token a page's forms carry: derived from the session's id, which only the
    cookie holds, so another site, which cannot read the page, cannot know it; a new
    login makes a new one."""
    return hmac.new(session.encode(), b"crase web form", "sha256").hexdigest()


def check_form_token(connection: ASGIConnection, given: str | None) -> str:
    """The session's id, when the form carries the session's token."""
    session = session_key(connection)
    if session is None:
        raise LoginRequired("log in first: the session cookie is missing or no longer valid")
    if not given or not same_text(given, form_token(session)):
        raise FormTokenRejected("the form was not sent from this site's page (its token is "
                                "missing or stale); reload the page and send it again")
    return session


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
