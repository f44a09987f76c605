"""Logging in to the pages, the session cookie, the form tokens, and the docs pages that
need no internet. Over the app's test client; the browser tests are in test_browser.py and
test_graph_reading.py."""

import re
import time
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.api.auth import FORM_TOKEN_FIELD, SESSION_COOKIE, form_token
from crase.graph import Graph
from crase.settings import Settings
from tests.api.conftest import API_KEY, finished_run  # noqa: F401  (fixture)
from tests.web.conftest import log_in

pytestmark = pytest.mark.integration


def token_on(page: str) -> str:
    match = re.search(rf'name="{FORM_TOKEN_FIELD}" value="([0-9a-f]+)"', page)
    assert match, "the page has no form token"
    return match.group(1)


def test_a_page_without_a_session_goes_to_the_login(page_client: TestClient) -> None:
    response = page_client.get("/ui/runs", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/login?next=%2Fui%2Fruns"
    assert page_client.get("/", follow_redirects=False).headers["location"] == "/ui/"


def test_a_wrong_key_is_refused_and_sets_no_cookie(page_client: TestClient) -> None:
    response = log_in(page_client, "not-a-key")
    assert response.status_code == 401
    assert "is not one of this server" in response.text
    assert SESSION_COOKIE not in response.headers.get("set-cookie", "")
    assert page_client.get("/ui/", follow_redirects=False).status_code == 303


def test_the_session_is_kept_in_a_secure_http_only_same_site_cookie(
        page_client: TestClient) -> None:
    response = log_in(page_client)
    assert response.status_code == 303 and response.headers["location"] == "/ui/"
    cookie = response.headers["set-cookie"].lower()
    assert cookie.startswith(f"{SESSION_COOKIE}=")
    assert "httponly" in cookie and "secure" in cookie and "samesite=strict" in cookie
    page = page_client.get("/ui/")
    assert page.status_code == 200 and "Evidence-graph search" in page.text
    # The forms' token comes from the session, not from the key it was opened with.
    assert token_on(page.text) != form_token(API_KEY)
    assert "default-src 'self'" in page.headers["content-security-policy"]


def test_the_json_api_still_wants_the_header(page_client: TestClient) -> None:
    log_in(page_client)
    response = page_client.get("/runs/abc")
    assert response.status_code == 401 and response.json()["error"] == "ApiKeyRejected"


def test_a_form_without_the_session_token_is_refused(page_client: TestClient) -> None:
    log_in(page_client)
    forged = page_client.post("/ui/searches", data={"query": "tachyon condensation"},
                              follow_redirects=False)
    assert forged.status_code == 401 and "reload the page" in forged.text
    wrong = page_client.post("/ui/searches", data={"query": "tachyon condensation",
                                                   FORM_TOKEN_FIELD: "0" * 64},
                             follow_redirects=False)
    assert wrong.status_code == 401
    assert page_client.get("/ui/runs").text.count('class="run-row"') == 0


def test_a_login_posted_from_another_site_is_refused(page_client: TestClient) -> None:
    response = page_client.post("/ui/login", data={"key": API_KEY},
                                headers={"Origin": "https://elsewhere.example"},
                                follow_redirects=False)
    assert response.status_code == 403 and "another site" in response.text
    assert SESSION_COOKIE not in response.headers.get("set-cookie", "")


def test_the_login_sends_only_to_this_sites_pages(page_client: TestClient) -> None:
    for target in ("https://elsewhere.example/", "//elsewhere.example/ui/", "/runs"):
        response = page_client.post("/ui/login", data={"key": API_KEY, "next": target},
                                    follow_redirects=False)
        assert response.headers["location"] == "/ui/", target
    kept = page_client.post("/ui/login", data={"key": API_KEY, "next": "/ui/runs?page=2"},
                            follow_redirects=False)
    assert kept.headers["location"] == "/ui/runs?page=2"


def test_logging_out_ends_the_session(page_client: TestClient) -> None:
    log_in(page_client)
    token = token_on(page_client.get("/ui/").text)
    response = page_client.post("/ui/logout", data={FORM_TOKEN_FIELD: token},
                                follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/ui/login"
    assert f'{SESSION_COOKIE}=""' in response.headers["set-cookie"]
    assert page_client.get("/ui/", follow_redirects=False).status_code == 303


def test_a_refused_search_keeps_what_was_typed_and_names_the_field(
        page_client: TestClient) -> None:
    log_in(page_client)
    token = token_on(page_client.get("/ui/").text)
    response = page_client.post("/ui/searches", data={
        "query": "tachyon condensation on branes", "k": "5000", FORM_TOKEN_FIELD: token},
        follow_redirects=False)
    assert response.status_code == 422
    assert "k: Input should be less than or equal to 1000" in response.text
    assert "tachyon condensation on branes</textarea>" in response.text


def test_an_unknown_run_is_a_page_that_says_so(page_client: TestClient) -> None:
    log_in(page_client)
    response = page_client.get("/ui/runs/nope")
    assert response.status_code == 404
    assert "RunNotFound" in response.text and "no run with id" in response.text


def test_the_docs_pages_load_nothing_from_elsewhere(page_client: TestClient) -> None:
    docs = page_client.get("/schema")
    assert docs.status_code == 200 and "swagger-ui-bundle.js" in docs.text
    assert not re.search(r"(src|href)=['\"]https?://", docs.text), docs.text
    for asset in re.findall(r"(?:src|href)=['\"](/schema-assets/[^'\"]+)", docs.text):
        assert page_client.get(asset).status_code == 200, asset
    assert "SwaggerUIBundle" in page_client.get("/schema-assets/swagger-ui-bundle.js").text


def test_pages_stay_out_of_the_api_schema(page_client: TestClient) -> None:
    paths: dict[str, Any] = page_client.get("/schema/openapi.json").json()["paths"]
    assert not [path for path in paths if path.startswith("/ui") or path == "/"]


def test_a_finished_run_reads_the_same_on_a_fresh_server(
        page_client: TestClient, finished_run: dict[str, Any]) -> None:  # noqa: F811
    """The pages read the run from the graph: this app never tracked it."""
    log_in(page_client)
    run_id = finished_run["id"]
    progress = page_client.get(f"/ui/runs/{run_id}/progress")
    assert 'data-status="done"' in progress.text
    assert all(f">{stage}" in progress.text for stage in finished_run["timings"])
    page = page_client.get(f"/ui/runs/{run_id}")
    assert page.text.count('class="result"') == len(finished_run["results"])
    assert "https://arxiv.org/abs/" in page.text and 'id="live"' not in page.text
    assert re.search(r'id="order">Order: \w', page.text)  # what placed the list
    graph = page_client.get(f"/ui/runs/{run_id}/graph").text
    assert graph.count("<circle class=\"node") >= len(finished_run["results"]) // 2
    assert 'class="edge pruned"' in graph and 'class="edge retained"' in graph
    edge = re.search(r'class="edge retained"[^>]*data-citing="([^"]+)" data-cited="([^"]+)"',
                     graph)
    assert edge
    card = page_client.get(f"/ui/runs/{run_id}/edge",
                           params={"citing": edge.group(1), "cited": edge.group(2)})
    assert card.status_code == 200 and "Retained." in card.text and "matrix" in card.text
    missing = page_client.get(f"/ui/runs/{run_id}/edge",
                              params={"citing": edge.group(2), "cited": edge.group(1)})
    assert missing.status_code == 404 and "pick an edge" in missing.text
    bibtex = page_client.get(f"/ui/runs/{run_id}/export", params={"format": "bibtex"})
    assert bibtex.status_code == 200 and bibtex.text.count("@") == len(finished_run["results"])
    assert "attachment" in bibtex.headers["content-disposition"]


def session_cookie(response: Any) -> str:
    match = re.search(rf"{SESSION_COOKIE}=([^;]+)", response.headers["set-cookie"])
    assert match, response.headers["set-cookie"]
    return match.group(1).strip('"')


def page_with(test_client: TestClient, cookie: str) -> Any:
    """A page behind the login, asked for with exactly this session cookie, whatever the
    client's jar holds."""
    test_client.cookies.clear()
    test_client.cookies.set(SESSION_COOKIE, cookie, domain="testserver.local")
    return test_client.get("/ui/runs", follow_redirects=False)


def test_the_cookie_holds_a_signed_session_not_the_key(page_client: TestClient) -> None:
    cookie = session_cookie(log_in(page_client))
    assert API_KEY not in cookie
    assert page_with(page_client, cookie).status_code == 200


def test_a_tampered_session_goes_to_the_login(page_client: TestClient) -> None:
    cookie = session_cookie(log_in(page_client))
    for forged in (cookie[:-1] + ("A" if cookie[-1] != "A" else "B"),
                   cookie[:8] + ("x" if cookie[8] != "x" else "y") + cookie[9:],
                   API_KEY, "", "."):
        response = page_with(page_client, forged)
        assert response.status_code == 303, forged
        assert response.headers["location"].startswith("/ui/login")


def test_an_expired_session_goes_to_the_login(api_settings: Settings, graph: Graph) -> None:
    short = api_settings.model_copy(update={"api": api_settings.api.model_copy(
        update={"session_max_age_s": 1.0})})
    with TestClient(create_app(short, graph=graph),
                    base_url="https://testserver.local") as test_client:
        cookie = session_cookie(log_in(test_client))
        assert page_with(test_client, cookie).status_code == 200
        time.sleep(2.1)
        response = page_with(test_client, cookie)
        assert response.status_code == 303, "an expired session still opened the page"
        assert response.headers["location"].startswith("/ui/login")


def test_after_logout_the_old_cookie_no_longer_works(api_settings: Settings,
                                                      page_client: TestClient,
                                                      graph: Graph) -> None:
    cookie = session_cookie(log_in(page_client))
    token = token_on(page_with(page_client, cookie).text)
    page_client.post("/ui/logout", data={FORM_TOKEN_FIELD: token}, follow_redirects=False)
    response = page_with(page_client, cookie)
    assert response.status_code == 303, "the cookie of a logged-out session still works"
    # Nor on the next server that keeps its state in the same var_dir.
    with TestClient(create_app(api_settings, graph=graph),
                    base_url="https://testserver.local") as restarted:
        assert page_with(restarted, cookie).status_code == 303


def test_a_session_outlives_a_restart_and_not_its_key(api_settings: Settings,
                                                      page_client: TestClient,
                                                      graph: Graph) -> None:
    cookie = session_cookie(log_in(page_client))
    with TestClient(create_app(api_settings, graph=graph),
                    base_url="https://testserver.local") as restarted:
        assert page_with(restarted, cookie).status_code == 200
    other_keys = api_settings.model_copy(update={"api": api_settings.api.model_copy(
        update={"api_keys": ["another-key-entirely"]})})
    with TestClient(create_app(other_keys, graph=graph),
                    base_url="https://testserver.local") as rekeyed:
        assert page_with(rekeyed, cookie).status_code == 303


def test_the_session_secret_is_private(api_settings: Settings, page_client: TestClient
                                       ) -> None:
    log_in(page_client)
    secret = api_settings.var_dir / "session-secret"
    assert secret.exists() and secret.stat().st_mode & 0o777 == 0o600
