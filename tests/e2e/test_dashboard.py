"""The dashboard in headless Chromium, served by a real uvicorn on loopback.

Skipped, saying why, where Chromium, its driver or selenium are missing
(install: ``apt-get install -y chromium chromium-driver``; ``pip install selenium``).
"""

from __future__ import annotations

import shutil
import socket
import threading
import time

import pytest

from analysis.settings import QueueSettings
from analysis.queue import userqueue
from analysis.surface import accounts
from tests.conftest import query
from tests.e2e import hooks
from tests.integration.conftest import add_documents, configure_worker, queue_broker, running_worker, wait_for, worker_settings  # noqa: F401

pytestmark = pytest.mark.e2e

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
try:
    import selenium  # noqa: F401
except ImportError:
    selenium = None

if not (CHROMIUM and DRIVER and selenium):
    pytest.skip(f"headless Chromium test needs chromium ({CHROMIUM or 'missing'}), chromedriver "
                f"({DRIVER or 'missing'}) and selenium ({'ok' if selenium else 'missing'}): "
                "apt-get install -y chromium chromium-driver; pip install selenium", allow_module_level=True)

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402


@pytest.fixture
def server(queue_broker):
    """The web app on a free loopback port: its base URL."""
    import uvicorn

    from web.app import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(broker=queue_broker), host="127.0.0.1", port=port,
                                        log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    wait_for(lambda: srv.started, timeout=10, message="uvicorn started")
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)


@pytest.fixture
def browser(tmp_path):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--user-data-dir={tmp_path / 'chromium'}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=DRIVER))
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def status_of(browser, job_id: int) -> str | None:
    # Read in one script: the page re-renders its rows while it polls, so a located
    # element can go stale between finding it and reading it.
    return browser.execute_script(f"return document.getElementById('job-{job_id}')?.dataset.status ?? null")


def text_of(browser, selector: str) -> str | None:
    return browser.execute_script(f"return document.querySelector('{selector}')?.textContent ?? null")


def test_a_queued_job_moves_to_running_when_its_predecessor_finishes(server, browser, queue_broker, conn,
                                                                     monkeypatch):
    configure_worker(queue={"analyze_work": hooks.WORK})
    hooks.install(conn)
    user = accounts.create(queue_broker, "dana", credits=5)
    token = accounts.mint_token(queue_broker, user)
    thesis, sources = add_documents(conn, user)
    first = userqueue.admit(user, thesis, sources, options={"hold": "first"}, broker=queue_broker,
                            settings=worker_settings().queue).job_id
    second = userqueue.admit(user, thesis, sources, options={"hold": "second"}, broker=queue_broker,
                             settings=worker_settings().queue).job_id

    with running_worker(queue_broker, threads=2):
        browser.get(f"{server}/#token={token}")
        wait_for(lambda: status_of(browser, first) == "running", message="first job shown running")
        assert status_of(browser, second) == "queued"
        assert text_of(browser, f"#job-{second} .status") == "1st in your queue"
        loaded_at = browser.execute_script("return performance.timeOrigin")

        hooks.set_flag(conn, "first")
        wait_for(lambda: status_of(browser, second) == "running", message="second job shown running, live")
        assert status_of(browser, first) == "succeeded"
        assert browser.execute_script("return performance.timeOrigin") == loaded_at  # no reload happened
        hooks.set_flag(conn, "second")
        wait_for(lambda: status_of(browser, second) == "succeeded", message="second job shown succeeded")
    assert browser.find_element(By.ID, "ops-view").get_attribute("hidden") is not None  # a user token: no ops view


def test_the_retry_button_requeues_a_dead_letter(server, browser, queue_broker, conn):
    from actors.queue import stall_sweep

    stall_sweep.send()
    query(conn, "UPDATE citeq_messages SET state = 'dead', dead_reason = 'boom', finished_at = now()")
    letter = query(conn, "SELECT id FROM citeq_messages")[0][0]
    token = accounts.mint_token(queue_broker, None, operator=True)

    browser.get(f"{server}/#token={token}")
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, f"#dead-{letter} button.retry"), message="dead letter shown")
    assert "boom" in text_of(browser, f"#dead-{letter}")
    browser.find_element(By.CSS_SELECTOR, f"#dead-{letter} button.retry").click()

    wait_for(lambda: query(conn, "SELECT state::text FROM citeq_messages WHERE id = %s", letter)[0][0] == "queued",
             message="dead letter re-queued")
    wait_for(lambda: not browser.find_elements(By.ID, f"dead-{letter}"), message="dead letter gone from the page")
    time.sleep(0.1)
    assert browser.find_element(By.ID, "user-view").get_attribute("hidden") is not None  # operator only
