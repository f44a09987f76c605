"""The browser tests start Chromium through the system chromedriver, never through
Selenium Manager (which looks for drivers on the internet and sends usage statistics), and
keep the manager offline and without statistics should anything still call it."""

import os
from pathlib import Path

import pytest

from tests.web.conftest import (
    SELENIUM_MANAGER_OFF,
    chrome_options,
    chrome_service,
    chromium_paths,
    selenium_manager_refused,
)


def test_selenium_is_given_the_system_driver_and_never_asks_its_manager(
        tmp_path: Path) -> None:
    from selenium.webdriver.common.driver_finder import DriverFinder

    binary, driver_path = chromium_paths()
    service = chrome_service(driver_path)
    assert service.path == driver_path and Path(driver_path).is_file()
    finder = DriverFinder(service, chrome_options(binary, tmp_path))
    with selenium_manager_refused():
        assert finder.get_driver_path() == driver_path
        # No browser path from the manager, so the options keep the system Chromium.
        assert finder.get_browser_path() == ""


def test_the_refusal_catches_a_call_of_selenium_manager(tmp_path: Path) -> None:
    from selenium.common.exceptions import NoSuchDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.driver_finder import DriverFinder

    finder = DriverFinder(Service(), chrome_options("/usr/bin/chromium", tmp_path))
    with selenium_manager_refused(), pytest.raises(NoSuchDriverException) as caught:
        finder.get_driver_path()
    assert "Selenium Manager was asked" in str(caught.value.__cause__)


def test_selenium_manager_is_offline_and_sends_no_statistics() -> None:
    assert SELENIUM_MANAGER_OFF == {"SE_OFFLINE": "true", "SE_AVOID_STATS": "true"}
    for name, value in SELENIUM_MANAGER_OFF.items():
        assert os.environ.get(name) == value
