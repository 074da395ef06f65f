"""Driving the demo page (``export/demo/index.html``) in headless Chromium: the helpers shared by
``benchmarks/demo_page.py`` (its load and answer times) and ``tests/export/test_demo_page.py`` (what
it shows).

Debian's ``/usr/bin/chromium`` through ``/usr/bin/chromedriver`` with Selenium: :func:`missing`
names what is absent, :func:`start_browser` opens a headless session, :func:`open_page` loads ``/``
and returns its navigation timing, :func:`press` types as a keyboard does, :func:`wait_for_answer`
waits for the results region to say ``done`` or ``error``, :func:`full_page_png` takes a screenshot
of the whole page. Importing this module needs ``selenium`` (``requirements.txt``).
"""

from __future__ import annotations

import base64
import pathlib

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = pathlib.Path("/usr/bin/chromium")
CHROMEDRIVER = pathlib.Path("/usr/bin/chromedriver")
WAIT_SECONDS = 60
INSTALL = "apt-get install chromium chromium-driver"


def missing() -> list[str]:
    """The browser's files that are not there (empty when both are)."""
    return [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]


def start_browser(logs: bool = False) -> webdriver.Chrome:
    """A headless Chromium session, 1280×900; with ``logs`` it keeps its console and network logs
    (``driver.get_log("browser")`` and ``"performance"``)."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,900", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    if logs:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def open_page(driver, url: str) -> dict:
    """Load the page at ``url`` and wait for the model's metadata to be shown; the navigation timing
    entry (ms from ``startTime``: ``responseStart``, ``domContentLoadedEventEnd``, ``loadEventEnd``, …)."""
    driver.get(url)
    WebDriverWait(driver, WAIT_SECONDS).until(lambda d: d.find_element(By.ID, "model-info").text)
    return driver.execute_script("return performance.getEntriesByType('navigation')[0].toJSON()")


def wait_for_answer(driver, poll_seconds: float = 0.5) -> str:
    """Wait until the results region says ``done`` or ``error`` (checking every ``poll_seconds``);
    that state."""
    WebDriverWait(driver, WAIT_SECONDS, poll_frequency=poll_seconds).until(
        lambda d: d.find_element(By.ID, "results").get_attribute("data-state") in ("done", "error"))
    return driver.find_element(By.ID, "results").get_attribute("data-state")


def press(driver, *keys, hold: str = "") -> None:
    """Type ``keys`` on the focused element, as a keyboard does (with ``hold``, e.g. Ctrl, held down)."""
    actions = ActionChains(driver)
    if hold:
        actions.key_down(hold)
    actions.send_keys(*keys)
    if hold:
        actions.key_up(hold)
    actions.perform()


def full_page_png(driver) -> bytes:
    """A PNG of the whole page, beyond the window's height."""
    width, height = driver.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
    return base64.b64decode(shot["data"])
