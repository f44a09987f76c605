"""Turning a template and its values into an HTML response, and an error into a page.

Jinja2 escapes every value (autoescape), so titles, abstracts and claims from a corpus
cannot inject markup."""

import logging
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from litestar import Request, Response

from crase.api.app import client_reason, status_for
from crase.api.auth import FORM_TOKEN_FIELD, form_token, session_key
from crase.errors import CraseError
from crase.search.evidence import describe_order

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
HTML = "text/html; charset=utf-8"
# The pages load nothing from elsewhere; the policy says so to the browser too.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                               "style-src 'self'; script-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}

log = logging.getLogger(__name__)

environment = Environment(loader=FileSystemLoader(TEMPLATES),
                          autoescape=select_autoescape(["html"]),
                          trim_blocks=True, lstrip_blocks=True)


def format_number(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


environment.filters["num"] = format_number
environment.filters["describe_order"] = describe_order  # what placed a search's list
# Compiled at start-up rather than on each page's first request (the graph page's
# template takes about half a second to compile).
for name in environment.list_templates():
    environment.get_template(name)


def render_page(request: Request[Any, Any, Any], template: str, status_code: int = 200,
                **values: Any) -> Response[str]:
    """The template filled in; logged-in pages get the form token their forms carry."""
    key = session_key(request)
    body = environment.get_template(template).render(
        logged_in=key is not None, form_token=form_token(key) if key else "",
        form_token_field=FORM_TOKEN_FIELD, **values)
    return Response(body, status_code=status_code, media_type=HTML,
                    headers=SECURITY_HEADERS)


def error_page(request: Request[Any, Any, Any], error: CraseError) -> Response[str]:
    """What a page shows for a failure: the status and reason the JSON API would give."""
    status = status_for(error)
    if status >= 500:
        log.error("%s %s failed: %s: %s", request.method, request.url.path,
                  type(error).__name__, error)
    return render_page(request, "error.html", status_code=status, status=status,
                       error=type(error).__name__, detail=client_reason(error, status))
