"""The search page's "Start from papers" box in a real browser (headless Chromium) against
a real server and database: lines that are not found are listed back with what was typed
kept, and a search from an arXiv id and a DOI alone (no question) runs to a page that
lists the given papers and says, for each result, which of them it connects to.

The corpus (the API tests' fixture corpus with two DOIs) is loaded once for the module."""

from collections.abc import Iterator
from typing import Any

import pytest

from crase.api.batch_loads import load_batch
from crase.graph import Graph
from crase.settings import DatabaseSettings, Settings
from tests.api.conftest import API_KEY, api_settings_for
from tests.api.test_given_papers import given_corpus
from tests.conftest import clean_graph
from tests.web.conftest import LiveServer
from tests.web.test_browser import find, find_all, log_in, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def given_server(database_settings: DatabaseSettings, session_graph: Graph,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    settings = api_settings_for(Settings(
        database=database_settings, var_dir=tmp_path_factory.mktemp("given-web") / "var"))
    clean_graph(session_graph)
    try:
        load_batch(session_graph, settings, *given_corpus())
        with LiveServer(settings, session_graph) as server:
            yield server
    finally:
        clean_graph(session_graph)


def fill(browser: Any, css: str, text: str) -> None:
    field = find(browser, css)
    field.clear()
    field.send_keys(text)


def test_the_box_lists_unknown_lines_then_searches_from_the_papers(
        browser: Any, given_server: LiveServer) -> None:
    log_in(browser, given_server, API_KEY)
    wait_for(browser, "#search-form", 10)
    typed = "hep-th/9400410\n10.9999/nobody.wrote.this\nSourdough fermentation in space"
    fill(browser, "#given-papers", typed)
    fill(browser, "#search-form input[name=k]", "6")
    find(browser, "#search-form select[name=weighting] option[value=uniform]").click()
    find(browser, "#search-form button[type=submit]").click()

    unknown = wait_for(browser, "#unknown-papers", 20)
    assert [item.text for item in unknown.find_elements("css selector", "li")] == [
        "10.9999/nobody.wrote.this", "Sourdough fermentation in space"]
    assert "2 of the 3 papers to start from are not in the graph" in find(
        browser, ".problem[role=alert]").text
    assert find(browser, "#given-papers").get_attribute("value") == typed

    fill(browser, "#given-papers", "hep-th/9400410\nhttps://doi.org/10.1000/HOLO.5")
    fill(browser, "#search-form input[name=k]", "6")
    find(browser, "#search-form select[name=weighting] option[value=uniform]").click()
    find(browser, "#search-form button[type=submit]").click()

    wait_for(browser, "#results", 180)
    given = [item.text for item in find_all(browser, "#given-papers li")]
    assert len(given) == 2 and all("Holographic duality" in line for line in given)
    assert given[0].endswith("holography-04") and given[1].endswith("holography-05")
    results = find_all(browser, "#results > li.result")
    assert len(results) == 6
    titles = [r.find_element("css selector", "h3").text for r in results]
    holography = "Holographic duality between gauge theory and anti-de Sitter gravity"
    assert not any(title.endswith((f"{holography}, part 5", f"{holography}, part 6"))
                   for title in titles)  # the given papers themselves
    walked = [r.text for r in results if "full-text match" not in r.text]
    assert walked and all("From the given paper “Holographic duality" in text
                          for text in walked)
