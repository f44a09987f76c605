"""The evidence graph as a reader meets it, in headless Chromium over the committed sample:
labels on the returned papers, zoom and pan on the view box, the list beside the drawing
lighting up a result's paper and its path from the seed, a node's click scrolling the list
to it; the evidence worded by the run's weighting; the force layout (`?layout=force`); the
draw time of the page. Then a Delta-weighted search of the sample from the form and an idea
run with its audit. The sample is loaded once for the module (tests/web/conftest.py), and
the uniform run the reading tests look at is searched once.

Screenshots go to the test's own folder, or to CRASE_WEB_SCREENSHOTS when set (the ones in
docs/screenshots were taken with CRASE_WEB_SCREENSHOTS=docs/screenshots).
"""

import json
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import DESKTOP, PHONE, LiveServer
from tests.web.test_browser import (
    allow_downloads,
    click,
    click_an_edge,
    downloaded,
    drawn,
    find,
    find_all,
    horizontal_overflow,
    log_in,
    screenshot_folder,
    wait_for,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

QUERY = "black hole entropy from string theory microstates"
RESULTS = 30
LABEL = re.compile(r"^\S.* (19|20)\d\d$")


def api(server: LiveServer, path: str, body: dict[str, Any] | None = None) -> Any:
    from tests.api.conftest import API_KEY

    request = urllib.request.Request(
        server.url + path, data=None if body is None else json.dumps(body).encode(),
        headers={"X-API-Key": API_KEY, "Content-Type": "application/json"},
        method="GET" if body is None else "POST")
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())


def finished_search(server: LiveServer, weighting: str = "uniform", k: int = RESULTS,
                    order: str = "learned") -> dict[str, Any]:
    """A search of the sample through the API, once it is done."""
    accepted = api(server, "/searches", {"query": QUERY, "params": {
        "k": k, "weighting": weighting, "order": order}})
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        run = api(server, f"/runs/{accepted['run_id']}")
        if run["status"] not in ("queued", "running"):
            assert run["status"] == "done", run
            return dict(run)
        time.sleep(0.3)
    raise AssertionError("the search did not finish")


@pytest.fixture(scope="module")
def uniform_run(sample_server: LiveServer) -> dict[str, Any]:
    """The uniform search of the sample that the reading tests below look at, run once:
    they only read it."""
    return finished_search(sample_server)


def open_graph(browser: Any, server: LiveServer, run_id: str, layout: str | None = None) -> Any:
    from tests.api.conftest import API_KEY

    log_in(browser, server, API_KEY)
    browser.get(f"{server.url}/ui/runs/{run_id}/graph" + (f"?layout={layout}" if layout else ""))
    svg = wait_for(browser, "#evidence-graph", 20)
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 20).until(
        lambda b: b.execute_script("return window.craseGraphPaintedMs !== undefined"))
    return svg


def assert_labels_and_results_drawn(browser: Any) -> list[Any]:
    """Most returned papers and seeds carry a first-author-and-year label on screen, and
    every returned paper is drawn; the returned papers' circles."""
    labels = [label for label in find_all(browser, "#evidence-graph text.label")
              if drawn(browser, label)]
    assert len(labels) >= RESULTS // 2
    assert all(LABEL.match(label.text) for label in labels), [label.text for label in labels]
    returned = find_all(browser, "#evidence-graph circle.node.returned")
    assert len(returned) == RESULTS and all(drawn(browser, node) for node in returned)
    return returned


def test_the_graph_reads_zooms_and_follows_the_list(browser: Any, sample_server: LiveServer,
                                                    uniform_run: dict[str, Any],
                                                    tmp_path: Path) -> None:
    shots = screenshot_folder(tmp_path)
    run = uniform_run
    svg = open_graph(browser, sample_server, run["id"])

    # Labels: first author and year, on the returned papers and seeds, most of them shown.
    returned = assert_labels_and_results_drawn(browser)
    titles = [node.find_element("css selector", "title").get_attribute("textContent")
              for node in returned]
    assert all(title.strip() for title in titles)
    # Default view: the seeds and returned papers; the rest of the run on request.
    context = find_all(browser, "#evidence-graph circle.node.context")
    assert context and not any(drawn(browser, node) for node in context)

    # The run weighed every edge alike: the page says so, and names no Delta, theta or scorer.
    summary = find(browser, "#graph-summary").text
    assert "unweighted citation edge" in summary
    assert "theta" not in summary and "scored by" not in summary
    assert not re.search(r"Delta \d", summary)
    browser.save_screenshot(str(shots / "evidence-graph.png"))

    # Zoom: the buttons and the wheel change the view box; reset brings it back.
    whole = svg.get_dom_attribute("viewBox")
    find(browser, "#zoom-in").click()
    zoomed = svg.get_dom_attribute("viewBox")
    assert zoomed != whole
    assert float(zoomed.split()[2]) < float(whole.split()[2])
    assert "zoomed" not in (svg.get_attribute("class") or "")
    find(browser, "#zoom-in").click()
    assert "zoomed" in svg.get_attribute("class")  # the spare labels appear
    browser.execute_script("""
        const svg = arguments[0], box = svg.getBoundingClientRect();
        svg.dispatchEvent(new WheelEvent('wheel', {deltaY: 100, bubbles: true, cancelable: true,
            clientX: box.left + box.width / 2, clientY: box.top + box.height / 2}));""", svg)
    assert svg.get_dom_attribute("viewBox") not in (whole, zoomed)
    find(browser, "#zoom-reset").click()
    reset = svg.get_dom_attribute("viewBox")
    assert [float(n) for n in reset.split()] == [float(n) for n in whole.split()]

    # Hover a result reached over the graph: its paper and its path from the seed light up.
    reached = next(paper for paper in run["results"]
                   if (paper["evidence"] or {}).get("path"))
    entry = find(browser, f"#graph-result-{reached['rank']}")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", entry)
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(browser).move_to_element(entry).perform()
    lit_nodes = {node.get_attribute("data-id")
                 for node in find_all(browser, "#evidence-graph circle.node.lit")}
    lit_edges = {(edge.get_attribute("data-citing"), edge.get_attribute("data-cited"))
                 for edge in find_all(browser, "#evidence-graph path.edge.lit")}
    path = {(edge["citing"], edge["cited"]) for edge in reached["evidence"]["path"]}
    assert reached["id"] in lit_nodes and reached["evidence"]["reached_from"] in lit_nodes
    assert lit_edges == path
    assert all(drawn(browser, edge) for edge in find_all(browser, "path.edge.lit"))
    assert "highlighting" in svg.get_attribute("class")
    browser.save_screenshot(str(shots / "evidence-graph-path.png"))

    # Click a paper of the drawing: its card, and the list scrolls to it.
    last = run["results"][-1]
    browser.execute_script("document.querySelector('#graph-results').scrollTop = 0")
    node = next(n for n in returned if n.get_attribute("data-id") == last["id"])
    browser.execute_script(
        "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", node)
    card = wait_for(browser, "#paper-card", 10)
    assert card.get_attribute("data-id") == last["id"]
    chosen = find(browser, "#graph-results li.chosen")
    assert chosen.get_attribute("data-id") == last["id"]
    assert browser.execute_script("""
        const list = document.querySelector('#graph-results').getBoundingClientRect();
        const item = arguments[0].getBoundingClientRect();
        return item.top >= list.top - 1 && item.bottom <= list.bottom + 1;""", chosen)

    # Every paper the run considered, on request.
    find(browser, "#show-context").click()
    assert all(drawn(browser, node) for node in context)
    find(browser, "#colour-by option[value=year]").click()
    assert "colour-year" in svg.get_attribute("class")
    browser.save_screenshot(str(shots / "evidence-graph-all-by-year.png"))


def test_the_force_layout_draws_labels_and_zooms(browser: Any, sample_server: LiveServer,
                                                 uniform_run: dict[str, Any],
                                                 tmp_path: Path) -> None:
    """`?layout=force`: the same papers and labels without axes, coloured by year, zoom on
    the view box; the Layout select goes back; any other layout is a 400 naming both."""
    from selenium.webdriver.support.ui import Select, WebDriverWait

    shots = screenshot_folder(tmp_path)
    run = uniform_run
    svg = open_graph(browser, sample_server, run["id"], layout="force")
    assert find(browser, "#layout").get_attribute("value") == "force"
    assert "force-directed" in find(browser, "#layout-explained").text
    assert not find_all(browser, "#evidence-graph .axes text")  # no year, no score
    assert_labels_and_results_drawn(browser)
    # Position shows no year here, so colour does.
    assert find(browser, "#colour-by").get_attribute("value") == "year"
    assert "colour-year" in svg.get_attribute("class")
    browser.execute_script("document.querySelector('.graph-controls').scrollIntoView()")
    browser.save_screenshot(str(shots / "evidence-graph-force.png"))

    whole = svg.get_dom_attribute("viewBox")
    find(browser, "#zoom-in").click()
    zoomed = svg.get_dom_attribute("viewBox")
    assert zoomed != whole and float(zoomed.split()[2]) < float(whole.split()[2])

    Select(find(browser, "#layout")).select_by_value("year-score")
    WebDriverWait(browser, 20).until(lambda b: "layout=year-score" in b.current_url)
    assert wait_for(browser, "#evidence-graph .axes text.tick", 20)
    assert find(browser, "#colour-by").get_attribute("value") == "role"

    status, reply = browser.execute_script(
        "return fetch(arguments[0], {credentials: 'same-origin'})"
        ".then(async (r) => [r.status, await r.text()])",
        f"/ui/runs/{run['id']}/graph?layout=spring")
    assert status == 400, reply
    assert "'spring' is not a layout" in reply and "year-score or force" in reply


def test_the_run_page_lists_and_the_connector(browser: Any, sample_server: LiveServer,
                                              uniform_run: dict[str, Any],
                                              tmp_path: Path) -> None:
    """A uniform run's evidence names no Delta; its prior and derivative works and its top
    authors and venues are listed and linked; the connector finds a known path."""
    from tests.api.conftest import API_KEY

    shots = screenshot_folder(tmp_path)
    run = uniform_run
    log_in(browser, sample_server, API_KEY)
    browser.get(f"{sample_server.url}/ui/runs/{run['id']}")
    results = wait_for(browser, "#results", 20).text
    assert "unweighted citation edge" in results
    assert not re.search(r"Delta \d", results)

    for list_id in ("prior-works", "derivative-works"):
        works = find_all(browser, f"#{list_id} li.related-work")
        assert len(works) >= 3, list_id
        assert all(work.find_elements("css selector", "a.paper-link") for work in works)
        assert all(re.search(r"(cited by|cites) \d+ of the 30 returned papers", work.text)
                   for work in works)
    # Strominger and Vafa's counting of black hole microstates is what these papers build on.
    assert "Microscopic Origin of the Bekenstein-Hawking Entropy" in find(
        browser, "#prior-works").text
    authors = find_all(browser, "#top-authors a.search-link")
    assert authors and find_all(browser, "#top-venues a.search-link")
    browser.execute_script("document.querySelector('#prior-works').scrollIntoView()")
    browser.save_screenshot(str(shots / "run-lists.png"))
    name = authors[0].text
    authors[0].click()
    query = wait_for(browser, "#search-form textarea[name=query]", 10)
    assert query.get_attribute("value") == name

    # The connector: Strominger-Vafa and a paper two citation steps away in the sample.
    browser.get(f"{sample_server.url}/ui/connect?source=hep-th/9601029&target=0001001")
    connection = wait_for(browser, "#connection", 20)
    assert "3 shortest paths of 2 steps" in connection.text
    middles = {"0007170", "0007195", "9603167"}
    drawn_ids = {n.get_attribute("data-id") for n in find_all(browser, "#path-graph circle")}
    assert drawn_ids == middles | {"9601029", "0001001"}
    assert len(find_all(browser, "#paths > li.path")) == 3
    assert len(find_all(browser, "#path-graph line.path-step")) == 6
    browser.save_screenshot(str(shots / "connector.png"))


def test_a_three_hundred_paper_run_draws(browser: Any, sample_server: LiveServer) -> None:
    """A run returning 300 papers of the sample (its full-text fills are not in the
    evidence graph) draws its returned papers and still zooms. The walk's order, which
    ranks 300 papers of the graph (the learned order also takes text hits outside it). How
    fast it paints is a benchmark's figure (`python -m crase.bench.page_draw`,
    docs/web.md), not a test's: a timing assertion would give another verdict on a busy
    machine."""
    run = finished_search(sample_server, k=300, order="walk")
    assert len(run["results"]) == 300
    open_graph(browser, sample_server, run["id"])
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 60).until(
        lambda b: b.execute_script("return window.craseGraphPaintedMs !== undefined"))
    assert len(find_all(browser, "#evidence-graph circle.node.returned")) >= 250
    click(browser, find(browser, "#zoom-in"))


# The searches below weigh edges by Delta and run the idea workflow, which add claims and
# runs to the sample: they come after the uniform runs above, as on a freshly loaded sample.
SAMPLE_QUERY = "tachyon condensation on unstable D-branes in open string field theory"
SAMPLE_RESULTS = 10
IDEA = ("Use level truncation of cubic open string field theory to show that the tachyon "
        "on an unstable D-brane condenses to the closed string vacuum.")


def test_a_search_on_the_committed_sample_reads_well(browser: Any, sample_server: LiveServer,
                                                     tmp_path: Path) -> None:
    """The README's pictures: a coverage-weighted search of the real sample, its ranked
    list (every paper linked to arXiv) and its evidence graph with an edge card open."""
    from tests.api.conftest import API_KEY

    shots = screenshot_folder(tmp_path)
    log_in(browser, sample_server, API_KEY)
    find(browser, "#search-form textarea[name=query]").send_keys(SAMPLE_QUERY)
    for name, value in (("k", SAMPLE_RESULTS), ("tau", 0.2)):
        field = find(browser, f"#search-form input[name={name}]")
        field.clear()
        field.send_keys(str(value))
    find(browser, "#search-form select[name=weighting] option[value=coverage]").click()
    find(browser, "#search-form button[type=submit]").click()
    wait_for(browser, "#results", 300)
    results = find_all(browser, "#results > li.result")
    assert len(results) == SAMPLE_RESULTS
    links = [r.find_elements("css selector", "a.paper-link") for r in results]
    assert all(any(a.get_attribute("href").startswith("https://arxiv.org/abs/hep-th/")
                   for a in found) for found in links)
    assert sum("tachyon" in r.text.lower() for r in results) >= SAMPLE_RESULTS // 2
    assert horizontal_overflow(browser) <= 0
    browser.execute_script("document.querySelector('#open-graph').scrollIntoView()")
    browser.save_screenshot(str(shots / "run-page.png"))
    browser.set_window_size(*PHONE)
    browser.refresh()
    wait_for(browser, "#results", 10)
    assert horizontal_overflow(browser) <= 0
    browser.save_screenshot(str(shots / "run-page-phone.png"))
    browser.set_window_size(*DESKTOP)

    find(browser, "#open-graph").click()
    wait_for(browser, "#evidence-graph", 20)
    assert len(find_all(browser, "#evidence-graph circle.node")) > SAMPLE_RESULTS
    click_an_edge(browser, find_all(browser, "#evidence-graph path.edge.retained"))
    edge_card = wait_for(browser, "#edge-card", 10)
    assert "Delta" in edge_card.text and edge_card.find_elements("css selector", "ol.pairs li")
    browser.save_screenshot(str(shots / "evidence-graph.png"))
    # A large run draws the retained edges of its seeds and results; the rest on request.
    context = find_all(browser, "#evidence-graph path.edge.context")
    assert context and not any(drawn(browser, edge) for edge in context)
    find(browser, "#show-context").click()
    assert all(drawn(browser, edge) for edge in context)


def test_an_idea_run_with_its_works_audit_summary_and_bibtex(
        browser: Any, sample_server: LiveServer, tmp_path: Path) -> None:
    """An idea run on the committed sample, from the form to its audit."""
    from tests.api.conftest import API_KEY

    shots = screenshot_folder(tmp_path)
    log_in(browser, sample_server, API_KEY)
    find(browser, "#idea-form textarea[name=idea]").send_keys(IDEA)
    find(browser, "#idea-form button[type=submit]").click()

    summary = wait_for(browser, "#audit-summary", 300)
    works = find_all(browser, "#results > li.result")
    assert len(works) == 5
    assert all(work.find_element("css selector", ".evidence p").text for work in works)
    assert all(any(a.get_attribute("href").startswith("https://arxiv.org/abs/hep-th/")
                   for a in work.find_elements("css selector", "a.paper-link"))
               for work in works)
    assert "Evidence from: abstract" in find(browser, "#results").text
    for stage in ("selection", "grade", "gate", "shortlist", "returned"):
        assert stage in summary.text
    assert horizontal_overflow(browser) <= 0
    browser.execute_script("document.querySelector('#audit-summary').scrollIntoView()")
    browser.save_screenshot(str(shots / "idea-run.png"))

    allow_downloads(browser)
    find(browser, "#download-bibtex").click()
    assert re.search(r"\brank 1\b", downloaded(browser, ".bib"))

    run_id = browser.current_url.rstrip("/").rsplit("/", 1)[-1]
    find(browser, "#audit-json").click()
    audit = json.loads(find(browser, "body").text)
    assert audit["run_id"] == run_id and audit["idea"] == IDEA
