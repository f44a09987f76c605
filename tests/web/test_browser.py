"""The pages in a real browser (headless Chromium, Selenium) against a real server and
database: log in, search, follow the run, read the results, open the evidence graph and
its cards, download BibTeX; a wrong key is refused; no horizontal scrolling of the list at
1280x800 or on a phone. The same over the committed sample, and an idea run, are in
tests/web/test_graph_reading.py (which loads the sample once for all of them).

Screenshots go to the test's own folder, or to CRASE_WEB_SCREENSHOTS when set (the ones in
docs/screenshots were taken with CRASE_WEB_SCREENSHOTS=docs/screenshots).
"""

import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.api.corpus import QUERY
from tests.web.conftest import DESKTOP, PHONE, LiveServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

RESULTS = 10


def screenshot_folder(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("CRASE_WEB_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def wait_for(browser: Any, css: str, timeout_s: float = 120.0) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout_s).until(
        expected_conditions.visibility_of_element_located((By.CSS_SELECTOR, css)))


def find(browser: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By
    return browser.find_element(By.CSS_SELECTOR, css)


def find_all(browser: Any, css: str) -> list[Any]:
    from selenium.webdriver.common.by import By
    return list(browser.find_elements(By.CSS_SELECTOR, css))


def log_in(browser: Any, server: LiveServer, key: str) -> None:
    browser.get(f"{server.url}/ui/login")
    field = wait_for(browser, "#key", 10)
    field.clear()
    field.send_keys(key)
    find(browser, "form[action='/ui/login'] button[type=submit]").click()
    # The next page: the search forms, or the login again with its refusal.
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 20).until(lambda b: find_all(b, "#search-form, .problem"))


def allow_downloads(browser: Any) -> None:
    browser.execute_cdp_cmd("Browser.setDownloadBehavior", {
        "behavior": "allow", "downloadPath": str(browser.downloads)})


def downloaded(browser: Any, suffix: str, timeout_s: float = 20.0) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = [p for p in browser.downloads.iterdir() if p.name.endswith(suffix)]
        if done:
            return done[0].read_text(encoding="utf-8")
        time.sleep(0.1)
    raise AssertionError(f"no {suffix} file was downloaded: {list(browser.downloads.iterdir())}")


def horizontal_overflow(browser: Any) -> int:
    return int(browser.execute_script(
        "return document.documentElement.scrollWidth - window.innerWidth"))


def drawn(browser: Any, element: Any) -> bool:
    """Whether the style draws the element (Selenium's own check is unreliable for thin SVG
    lines, whose box may have no height)."""
    return bool(browser.execute_script(
        "return getComputedStyle(arguments[0]).display !== 'none'", element))


def click(browser: Any, element: Any) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(browser).move_to_element(element).click().perform()


# The middle of an arc, in the window's coordinates, when the arc itself is what a click
# there would hit (not a paper's circle or another arc on top of it).
ARC_MIDDLE = """
const path = arguments[0];
path.scrollIntoView({block: 'center', inline: 'center'});
const middle = path.getPointAtLength(path.getTotalLength() / 2);
const m = path.getScreenCTM();
const x = middle.x * m.a + middle.y * m.c + m.e, y = middle.x * m.b + middle.y * m.d + m.f;
return document.elementFromPoint(x, y) === path ? [Math.round(x), Math.round(y)] : null;
"""


def click_an_edge(browser: Any, edges: list[Any]) -> None:
    """Click the middle of the first arc that is on top there, as a user would."""
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    for edge in edges:
        point = browser.execute_script(ARC_MIDDLE, edge)
        if point:
            action = ActionBuilder(browser)
            action.pointer_action.move_to_location(*point)
            action.pointer_action.click()
            action.perform()
            return
    raise AssertionError("no edge can be clicked in the middle")


def test_a_wrong_key_is_refused(browser: Any, live_server: LiveServer) -> None:
    browser.get(f"{live_server.url}/ui/runs")
    assert "/ui/login?next=" in browser.current_url
    log_in(browser, live_server, "not-the-key")
    assert "is not one of this server's API keys" in wait_for(browser, ".problem", 10).text
    assert browser.get_cookies() == []
    browser.get(f"{live_server.url}/ui/runs")
    assert "/ui/login" in browser.current_url


def test_a_search_from_login_to_graph_cards_and_bibtex(browser: Any, live_server: LiveServer,
                                                       tmp_path: Path) -> None:
    from tests.api.conftest import API_KEY

    shots = tmp_path  # the README's pictures come from the sample (the test below)
    log_in(browser, live_server, API_KEY)
    wait_for(browser, "#search-form", 10)
    cookie = browser.get_cookie("crase_session")
    assert cookie and cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Strict"

    query = find(browser, "#search-form textarea[name=query]")
    query.send_keys(QUERY)
    for name, value in (("k", RESULTS), ("sub_queries", 2), ("query_seeds", 0), ("tau", 0.2)):
        field = find(browser, f"#search-form input[name={name}]")
        field.clear()
        field.send_keys(str(value))
    find(browser, "#search-form select[name=weighting] option[value=coverage]").click()
    find(browser, "#search-form button[type=submit]").click()

    # The run page follows the run's stages (the run takes seconds: the page opens while
    # it goes), then reloads itself with the ranked list.
    progress = wait_for(browser, "#progress", 10)
    assert progress.get_attribute("data-status") in ("queued", "running")
    assert progress.find_elements("css selector", ".stage") and find(browser, "#live")
    wait_for(browser, "#results", 180)
    results = find_all(browser, "#results > li.result")
    assert len(results) >= RESULTS
    arxiv = [a.get_attribute("href") for a in find_all(browser, "#results a.paper-link")]
    assert arxiv and all(href.startswith("https://arxiv.org/abs/") for href in arxiv)
    assert "A seed" in find(browser, "#results").text
    assert "Reached from the seed" in find(browser, "#results").text
    assert "Delta" in find(browser, "#results").text
    assert horizontal_overflow(browser) <= 0
    browser.execute_script("document.querySelector('#open-graph').scrollIntoView()")
    browser.save_screenshot(str(shots / "run-page.png"))
    abstract = find(browser, "#result-1 details.abstract")
    abstract.find_element("css selector", "summary").click()
    assert abstract.find_element("css selector", "p").is_displayed()

    allow_downloads(browser)
    find(browser, "#download-bibtex").click()
    bibtex = downloaded(browser, ".bib")
    assert bibtex.count("@") >= RESULTS and re.search(r"\brank 1\b", bibtex)
    # The same formats with the run's prior and derivative works; JSON always has them.
    related = find(browser, "#download-ris-related").get_attribute("href")
    assert related.endswith("format=ris&related=true")

    run_url = browser.current_url
    browser.set_window_size(*PHONE)
    browser.get(run_url)
    wait_for(browser, "#results", 10)
    assert horizontal_overflow(browser) <= 0
    browser.save_screenshot(str(shots / "run-page-phone.png"))
    browser.set_window_size(*DESKTOP)

    find(browser, "#open-graph").click()
    svg = wait_for(browser, "#evidence-graph", 20)
    nodes = find_all(browser, "#evidence-graph circle.node")
    assert len(nodes) >= 5
    assert find_all(browser, "#evidence-graph circle.node.seed")
    assert find_all(browser, "#evidence-graph circle.node.returned")
    pruned = find_all(browser, "#evidence-graph path.edge.pruned")
    assert pruned and not any(drawn(browser, edge) for edge in pruned)

    click(browser, find(browser, "#evidence-graph circle.node.returned"))
    card = wait_for(browser, "#paper-card", 10)
    assert "Returned at rank" in card.text and card.find_elements("css selector", "h3")

    retained = find_all(browser, "#evidence-graph path.edge.retained")
    assert retained
    click_an_edge(browser, retained)
    edge_card = wait_for(browser, "#edge-card", 10)
    assert "Delta" in edge_card.text and "theta" in edge_card.text
    assert edge_card.find_elements("css selector", "table.matrix td")
    assert edge_card.find_elements("css selector", "ol.pairs li")
    browser.save_screenshot(str(shots / "evidence-graph.png"))

    find(browser, "#show-pruned").click()
    assert all(drawn(browser, edge) for edge in find_all(browser, "path.edge.pruned"))
    assert svg.get_attribute("class").split().count("show-pruned") == 1


def test_the_runs_list_pages_newest_first(browser: Any, live_server: LiveServer) -> None:
    from tests.api.conftest import API_KEY

    log_in(browser, live_server, API_KEY)
    find(browser, "#search-form textarea[name=query]").send_keys(QUERY)
    find(browser, "#search-form button[type=submit]").click()
    wait_for(browser, "#results", 180)
    browser.get(f"{live_server.url}/ui/runs")
    rows = find_all(browser, "#runs li.run-row")
    assert len(rows) == 1 and QUERY in rows[0].text and "done" in rows[0].text
    rows[0].find_element("css selector", "a").click()
    wait_for(browser, "#results", 10)
