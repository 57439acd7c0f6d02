"""The dashboard and the API docs work in headless Chromium under the strict Content-Security-Policy.

Chrome reports every blocked script, style or image as a console error: none may appear.
Skipped, saying why, where Chromium, its driver or selenium are missing.
"""

from __future__ import annotations

import pytest

from tests.e2e.test_dashboard import CHROMIUM, DRIVER, browser, server  # noqa: F401 - fixtures
from tests.integration.conftest import queue_broker, wait_for  # noqa: F401

pytestmark = pytest.mark.e2e


def csp_violations(browser) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if "Content Security Policy" in e["message"]]


def test_swagger_ui_renders_from_this_origin_under_the_csp(server, browser):  # noqa: F811
    browser.get(f"{server}/docs")
    wait_for(lambda: browser.execute_script(
        "return document.querySelector('.swagger-ui .info .title')?.textContent ?? null"), timeout=30,
        message="Swagger UI rendered the title")
    wait_for(lambda: browser.execute_script(
        "return document.querySelectorAll('.opblock').length"), timeout=30, message="operations listed")
    assert "citeq" in browser.execute_script("return document.querySelector('.swagger-ui .info .title').textContent")
    hosts = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => new URL(e.name).host)")
    assert set(hosts) <= {server.split("//")[1]}, hosts
    assert csp_violations(browser) == []


def test_the_dashboard_runs_under_the_csp(server, browser):  # noqa: F811
    browser.get(server)
    wait_for(lambda: browser.execute_script("return document.readyState") == "complete", message="loaded")
    assert browser.execute_script("return getComputedStyle(document.body).fontFamily") != ""
    assert csp_violations(browser) == []
