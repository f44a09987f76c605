"""The web pages against a real server: the app under uvicorn on a free loopback port,
sharing the session's Neo4j, and Chromium from the system packages driven by Selenium
through the system chromedriver (a browser that downloads itself cannot run here)."""

import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.bench.loopback_http import free_port
from crase.graph import Graph
from crase.ingest.corpus import locate_corpus
from crase.ingest.loader import load_corpus
from crase.settings import DatabaseSettings, Settings
from tests.api.conftest import (  # noqa: F401  (fixtures)
    API_KEY,
    api_settings,
    api_settings_for,
    client,
    corpus,
)
from tests.conftest import clean_graph
from tests.sample_slice import SAMPLE

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMEDRIVER = ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver")
DESKTOP = (1280, 800)
PHONE = (390, 844)
IDEA_POOLS = {"selection_budget": 30, "neighbour_read_limit": 20}


def first_existing(paths: tuple[str, ...]) -> str | None:
    return next((p for p in paths if Path(p).exists()), shutil.which(Path(paths[0]).name))


class LiveServer:
    """uvicorn serving the app in a thread, for as long as its with-block runs."""

    def __init__(self, settings: Settings, graph: Graph) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(create_app(settings, graph=graph), host="127.0.0.1",
                                port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)

    def __enter__(self) -> "LiveServer":
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@pytest.fixture
def live_server(api_settings: Settings, graph: Graph,  # noqa: F811
                corpus: dict[str, Any]) -> Iterator[LiveServer]:  # noqa: F811
    """The app on a real port, over the fixture corpus (loaded through the API)."""
    with LiveServer(api_settings, graph) as server:
        yield server


@pytest.fixture(scope="module")
def sample_server(database_settings: DatabaseSettings, session_graph: Graph,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The app on a real port over the committed sample (3,000 hep-th papers), loaded by
    the loader as `crase load data/sample` loads it: once for the module, whose tests
    only add runs to it (none takes the function-scoped `graph`, which would empty it);
    the graph is emptied when the module is done."""
    folder = tmp_path_factory.mktemp("sample")
    settings = api_settings_for(Settings(database=database_settings, var_dir=folder / "var"))
    # The idea run's pools smaller than the defaults (120 selected, 100 neighbours read per
    # seed and direction): embedding them took most of the browser tests' time. The pages
    # read the same; tests/idea tests the workflow at its budgets.
    settings = settings.model_copy(update={"idea": settings.idea.model_copy(
        update=IDEA_POOLS)})
    clean_graph(session_graph)
    try:
        load_corpus(session_graph, locate_corpus(SAMPLE), settings,
                    rejects_path=folder / "sample.rejects.jsonl", show_progress=False)
        with LiveServer(settings, session_graph) as server:
            yield server
    finally:
        clean_graph(session_graph)


def chromium_paths() -> tuple[str, str]:
    browser, driver = first_existing(CHROMIUM), first_existing(CHROMEDRIVER)
    if browser is None or driver is None:
        pytest.skip("no Chromium and chromedriver from the system packages "
                    "(apt-get install chromium chromium-driver; make test installs them)")
    return browser, driver


# Selenium runs its manager (a binary that looks for drivers and browsers on the internet
# and sends usage statistics) whenever it is not given a driver. The tests always give it
# the system's chromedriver; these settings keep the manager offline and quiet all the same.
SELENIUM_MANAGER_OFF = {"SE_OFFLINE": "true", "SE_AVOID_STATS": "true"}
# Chromium's own traffic: no component updates, no background requests, no first-run page.
CHROMIUM_ARGUMENTS = ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                      "--disable-gpu", f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
                      "--hide-scrollbars", "--disable-background-networking",
                      "--disable-component-update", "--no-first-run")


@pytest.fixture(scope="session", autouse=True)
def selenium_manager_off() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in SELENIUM_MANAGER_OFF.items():
            patch.setenv(name, value)
        yield


@contextmanager
def selenium_manager_refused() -> Iterator[None]:
    """Within the block, a call of Selenium Manager fails the test instead of running it."""
    from selenium.webdriver.common.selenium_manager import SeleniumManager

    def refuse(self: Any, args: list[str]) -> dict[str, str]:
        raise AssertionError(f"Selenium Manager was asked for a driver ({args}); give "
                             "selenium the system chromedriver instead")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SeleniumManager, "binary_paths", refuse)
        yield


def chrome_service(driver_path: str) -> Any:
    """The system chromedriver, named, so selenium never looks for one itself."""
    from selenium.webdriver.chrome.service import Service

    return Service(executable_path=driver_path)


def chrome_options(binary: str, downloads: Path) -> Any:
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in CHROMIUM_ARGUMENTS:
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    return options


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    """Headless Chromium at 1280x800 that saves downloads into tmp_path/downloads."""
    from selenium import webdriver

    binary, driver_path = chromium_paths()
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    with selenium_manager_refused():
        driver = webdriver.Chrome(service=chrome_service(driver_path),
                                  options=chrome_options(binary, downloads))
    driver.set_window_size(*DESKTOP)
    driver.downloads = downloads
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def page_client(api_settings: Settings, graph: Graph) -> Iterator[TestClient]:  # noqa: F811
    """A client with no key header, as a browser is; `base_url` https so the secure
    cookie is sent back."""
    with TestClient(create_app(api_settings, graph=graph),
                    base_url="https://testserver.local") as test_client:
        yield test_client


def log_in(test_client: TestClient, key: str = API_KEY) -> Any:
    return test_client.post("/ui/login", data={"key": key, "next": "/ui/"},
                            follow_redirects=False)
