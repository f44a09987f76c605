"""How long the evidence-graph page of a large run takes to draw in a real browser.

    python -m crase.bench.page_draw                   # 300 papers, 3,000 edges, 5 loads
    python -m crase.bench.page_draw --papers 600 --edges 6000 --repeats 3
    python -m crase.bench.page_draw --layout force

Starts a disposable Neo4j + GDS from the assembled jars (`make jars`) in a temporary
folder, writes a generated corpus whose 1.5-hop neighbourhood from ten hub papers is the
whole corpus, runs one real search over it (so the Run, its considered papers and their
edges are recorded as any search's), serves the app with `crase serve` on a free loopback
port, and loads the run's graph page in headless Chromium (the system package, driven by
Selenium through the system chromedriver) at 1280x800. For each load it reports the time
from navigation start until the page has painted the drawing (two animation frames after
the page's script ran), the server's share of it (until the last byte of HTML), and the
size of the page. Everything is removed afterwards.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from crase.bench.api_load import wait_until_healthy
from crase.bench.loopback_http import free_port
from crase.database import Neo4jServer
from crase.graph import Graph
from crase.ingest.corpus import locate_corpus
from crase.ingest.loader import load_corpus
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.settings import DatabaseSettings, SearchSettings, Settings

QUERY = "tachyon condensation on unstable branes"
HUBS = 10
KEY = "page-draw-benchmark-key"
PASSWORD = "page-draw-benchmark"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FILLER = ("lattice", "moduli", "anomaly", "flux", "orbifold", "monopole", "instanton",
          "twistor", "spinor", "soliton", "vortex", "duality", "gauge", "axion", "boson")


def generate_corpus(folder: Path, papers: int, edges: int, seed: int = 7) -> None:
    """`papers` papers over 20 years and `edges` citations (later cites earlier). The first
    ten are hubs whose titles match the query; every other paper cites or is cited by one
    hub, so the search's 1.5-hop neighbourhood holds all of them."""
    rng = random.Random(seed)
    years = [1990 + (i * 20) // papers for i in range(papers)]
    rows = []
    for i in range(papers):
        words = " ".join(rng.sample(FILLER, 4))
        title = f"{QUERY.title()} {i}" if i < HUBS else f"On {words} {i}"
        rows.append({"id": f"p{i:04d}", "title": title, "year": years[i],
                     "abstract": f"We study {words} in paper {i}.",
                     "authors": [f"Author {i % 37}"], "arxiv_id": f"hep-th/{9000000 + i}"})
    pairs: set[tuple[int, int]] = set()
    for i in range(HUBS, papers):
        pairs.add(ordered(i, rng.randrange(HUBS), years))
    while len(pairs) < edges:
        a, b = rng.randrange(papers), rng.randrange(papers)
        if a != b and years[a] != years[b]:
            pairs.add(ordered(a, b, years))
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "papers.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
    with (folder / "citations.csv").open("w", encoding="utf-8") as handle:
        handle.write("citing_id,cited_id\n")
        handle.writelines(f"p{a:04d},p{b:04d}\n" for a, b in sorted(pairs))


def ordered(a: int, b: int, years: list[int]) -> tuple[int, int]:
    """(citing, cited): the later paper cites the earlier one."""
    return (a, b) if (years[a], a) > (years[b], b) else (b, a)


@contextmanager
def disposable_database(home: Path) -> Iterator[DatabaseSettings]:
    settings = DatabaseSettings(home=home, bolt_port=free_port(), http_port=free_port(),
                                password=PASSWORD, heap="1g", pagecache="256m")
    server = Neo4jServer(settings)
    try:
        server.start()
        yield settings
    finally:
        server.stop()


def record_run(settings: Settings, graph: Graph, corpus: Path, k: int,
               weighting: str) -> tuple[str, dict[str, Any]]:
    load_corpus(graph, locate_corpus(corpus), settings,
                rejects_path=corpus.parent / "rejects.jsonl", restart=True, show_progress=False)
    params = SearchSettings.model_validate({"query_seeds": HUBS, "k": k, "weighting": weighting})
    result = run_search(graph, build_search_backends(settings),
                        SearchRequest(query=QUERY, params=params))
    return result.run_id, result.counts


@contextmanager
def crase_server(settings: Settings, port: int) -> Iterator[str]:
    """`crase serve` as a user starts it, on the disposable database."""
    database = settings.database
    env = {**os.environ, "CRASE_DATABASE__URI": database.bolt_uri(),
           "CRASE_DATABASE__USER": database.user,
           "CRASE_DATABASE__PASSWORD": database.password or "",
           "CRASE_API__API_KEYS": json.dumps([KEY]), "CRASE_VAR_DIR": str(settings.var_dir)}
    process = subprocess.Popen([sys.executable, "-m", "crase.api.cli", "serve", "--port",
                                str(port), "--log-level", "warning"], env=env,
                               stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def start_browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--window-size=1280,800"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def measure_loads(browser: Any, url: str, run_id: str, repeats: int,
                  layout: str) -> list[dict[str, Any]]:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{url}/ui/login")
    browser.find_element(By.ID, "key").send_keys(KEY)
    browser.find_element(By.CSS_SELECTOR, "form[action='/ui/login'] button").click()
    WebDriverWait(browser, 10).until(lambda b: "/ui/login" not in b.current_url)
    loads = []
    for _ in range(repeats):
        browser.get(f"{url}/ui/runs/{run_id}/graph?layout={layout}")
        WebDriverWait(browser, 30).until(
            lambda b: b.execute_script("return window.craseGraphPaintedMs !== undefined"))
        loads.append(browser.execute_script("""
            const nav = performance.getEntriesByType('navigation')[0];
            return {painted_ms: window.craseGraphPaintedMs, html_done_ms: nav.responseEnd,
                    html_bytes: nav.transferSize,
                    nodes: document.querySelectorAll('#evidence-graph circle.node').length,
                    edges: document.querySelectorAll('#evidence-graph path.edge').length,
                    retained: document.querySelectorAll('#evidence-graph path.retained').length};
        """))
    return loads


def save_small_png(png: bytes, path: Path) -> None:
    """The screenshot in 256 colours: about half the size, and as readable (Pillow comes
    with matplotlib, a development dependency)."""
    import io

    from PIL import Image

    Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=256).save(path, optimize=True)


def report(counts: dict[str, Any], loads: list[dict[str, Any]]) -> None:
    first = loads[0]
    print(f"run: {counts.get('nodes')} papers, {counts.get('edges')} edges "
          f"({counts.get('retained_edges')} retained), {counts.get('results')} returned")
    print(f"page: {first['nodes']} circles, {first['edges']} edge paths "
          f"({first['retained']} retained shown by default), {first['html_bytes']:,} bytes")
    painted = [load["painted_ms"] for load in loads]
    server = [load["html_done_ms"] for load in loads]
    print("load  painted_ms  html_received_ms")
    for number, load in enumerate(loads, start=1):
        print(f"{number:>4}  {load['painted_ms']:>10.0f}  {load['html_done_ms']:>16.0f}")
    print(f"median painted {statistics.median(painted):.0f} ms (max {max(painted):.0f} ms), "
          f"of which until the HTML was received {statistics.median(server):.0f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=300)
    parser.add_argument("--edges", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--weighting", choices=["uniform", "coverage"], default="uniform",
                        help="coverage scores every edge first (minutes on a CPU)")
    parser.add_argument("--layout", choices=["year-score", "force"], default="year-score",
                        help="the drawing's layout (the page's ?layout=)")
    parser.add_argument("--screenshot", type=Path,
                        help="save the last load's window (1280x800) as this PNG")
    args = parser.parse_args(argv)
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        print("needs Chromium and chromedriver: apt-get install chromium chromium-driver")
        return 2
    work = Path(tempfile.mkdtemp(prefix="crase-page-draw-"))
    try:
        with disposable_database(work / "neo4j") as database:
            settings = Settings(database=database, var_dir=work / "var")
            graph = Graph.connect(database)
            try:
                graph.apply_schema()
                generate_corpus(work / "corpus", args.papers, args.edges)
                run_id, counts = record_run(settings, graph, work / "corpus",
                                            k=args.papers, weighting=args.weighting)
            finally:
                graph.close()
            with crase_server(settings, free_port()) as url:
                browser = start_browser()
                try:
                    loads = measure_loads(browser, url, run_id, args.repeats, args.layout)
                    if args.screenshot:
                        save_small_png(browser.get_screenshot_as_png(), args.screenshot)
                finally:
                    browser.quit()
        report(counts, loads)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
