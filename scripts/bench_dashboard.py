"""Benchmark the dashboard in a real browser (issue 28): time to usable, 500-citation report.

    .venv/bin/python scripts/bench_dashboard.py                  # 500 citations, 10 rounds
    .venv/bin/python scripts/bench_dashboard.py --citations 2000 --rounds 5

The finished job of ``scripts/bench_report.py`` (``--citations`` judged citations over 20
sources) is written into a fresh database (``citeq_bench_dashboard``; the server of
DATABASE_URL when set, else the embedded one), 50 dead letters and a ready message with no
worker are added for the operator view, and the real web process (``create_app`` under
uvicorn on loopback) serves headless Chromium (selenium; ``make browser``). Per round, with a
cold page each time (new navigation, the browser's cache kept as a returning user has it):

* dashboard: navigation start until the job list shows the job (its row is in the page);
* report: the click on the job until every citation row and the "needs attention" block
  are in the page;
* in place: the click on "Open the source" until both pages are shown with their marks;
* operator view: navigation start until queues, the no-worker banner and every dead letter
  are in the page.

Each time is measured inside the page (``performance.now()`` in a requestAnimationFrame
loop, so it includes layout), not by polling from Python. It prints the median, minimum
and maximum (milliseconds), the transferred size of the report JSON and whether every page
was usable in under a second.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts._benchdb import database, sql  # noqa: E402
from scripts.bench_report import seed  # noqa: E402

#: Resolves when ``ready()`` holds, with performance.now() at that frame. Selenium passes
#: the callback as the last argument.
UNTIL = """
const done = arguments[arguments.length - 1];
const ready = new Function(arguments[0]);
const deadline = performance.now() + 30000;
(function check() {
  if (ready()) { done(performance.now()); return; }
  if (performance.now() > deadline) { done(null); return; }
  requestAnimationFrame(check);
})();
"""

CLICK_UNTIL = """
const done = arguments[arguments.length - 1];
const ready = new Function(arguments[0]);
const t0 = performance.now();
document.querySelector(arguments[1]).click();
(function check() {
  if (ready()) { done(performance.now() - t0); return; }
  if (performance.now() - t0 > 30000) { done(null); return; }
  requestAnimationFrame(check);
})();
"""


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        sys.exit("needs chromium and chromedriver: make browser")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--window-size=1366,900"]:
        options.add_argument(flag)
    b = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    b.set_script_timeout(60)
    return b


def serve(broker):
    import uvicorn

    from web.app import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(broker=broker), host="127.0.0.1", port=port,
                                           log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    return server, f"http://127.0.0.1:{port}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--citations", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()

    url = database("citeq_bench_dashboard")
    os.environ["DATABASE_URL"] = url
    job_id = seed(url, args.citations)
    # The pages the "open in place" view reads: each page holds the passages quoted from it,
    # among filler paragraphs, and the thesis pages hold the claims (documents parsed before
    # there was a stored structure: the view falls back to the page text).
    sql(url, """INSERT INTO document_pages (document_id, page, text)
                SELECT c.source_document_id, c.evidence_page,
                       'Introduction paragraph of the page.' || E'\n\n' || string_agg(c.evidence, E'\n\n' ORDER BY c.ordinal)
                FROM job_citations c WHERE c.job_id = %s AND c.evidence IS NOT NULL
                GROUP BY 1, 2""", job_id)
    sql(url, """INSERT INTO document_pages (document_id, page, text)
                SELECT j.thesis_id, c.page, string_agg(c.claim, E'\n\n' ORDER BY c.ordinal)
                FROM job_citations c JOIN analysis_jobs j ON j.id = c.job_id WHERE c.job_id = %s
                GROUP BY 1, 2""", job_id)

    import actors
    from actors.queue import stall_sweep
    from analysis.surface import accounts

    broker = actors.broker
    for i in range(50):
        stall_sweep.send()
    sql(url, "UPDATE citeq_messages SET state = 'dead', finished_at = now(), dead_reason = "
             "'Traceback (most recent call last):\n  File \"/srv/app/actors/queue.py\", line 1, in promote\n"
             "RuntimeError: benchmark'")
    stall_sweep.send()  # ready, and no worker: the banner shows
    user = accounts.mint_token(broker, 1)
    operator = accounts.mint_token(broker, None, operator=True)
    server, base = serve(broker)
    b = browser()

    rows = f"return document.querySelectorAll('#citations tr.citation').length === {args.citations}" \
           " && document.querySelectorAll('#triage-list button').length > 0"
    listed = f"return !!document.querySelector('#job-{job_id} button.open-report')"
    ops_ready = ("return !document.getElementById('stall-banner').hidden"
                 " && document.querySelectorAll('#dead-letters tr[id^=dead-]').length === 50")
    in_place = ("return !document.getElementById('evidence-view').hidden"
                " && !!document.querySelector('#pane-source mark') && !!document.querySelector('#pane-thesis mark')")
    times: dict[str, list[float]] = {"dashboard: job list usable": [], "report: 500 rows + triage usable": [],
                                     "citation opened in place": [], "operator view usable": []}
    try:
        for round_ in range(args.rounds + 1):  # the first round warms the server and the browser's cache
            b.get("about:blank")
            b.get(f"{base}/#token={user}")
            at = b.execute_async_script(UNTIL, listed)
            took = b.execute_async_script(CLICK_UNTIL, rows, f"#job-{job_id} button.open-report")
            number = 1 + (round_ * 37) % args.citations // 5 * 5  # a resolved citation (every fifth is not)
            placed = b.execute_async_script(CLICK_UNTIL, in_place, f"#detail-{number} button.open-evidence")
            b.execute_script("sessionStorage.clear()")
            b.get("about:blank")
            b.get(f"{base}/#token={operator}")
            ops_at = b.execute_async_script(UNTIL, ops_ready)
            b.execute_script("sessionStorage.clear()")
            if None in (at, took, placed, ops_at):
                raise RuntimeError(f"a page did not become usable within 30 s: {at}, {took}, {placed}, {ops_at}")
            if round_:
                times["dashboard: job list usable"].append(at)
                times["report: 500 rows + triage usable"].append(took)
                times["citation opened in place"].append(placed)
                times["operator view usable"].append(ops_at)
        b.get(f"{base}/#token={user}")
        b.execute_async_script(UNTIL, listed)
        b.execute_async_script(CLICK_UNTIL, rows, f"#job-{job_id} button.open-report")
        size = b.execute_script("""return performance.getEntriesByType('resource')
            .filter(e => e.name.includes('/report.json')).map(e => [e.transferSize, e.decodedBodySize])[0]""")
    finally:
        b.quit()
        server.should_exit = True
        broker.close()

    print(f"dashboard in headless Chromium, report of {args.citations} citations, {args.rounds} rounds "
          f"(ms: median, min-max)")
    for name, values in times.items():
        print(f"  {name:<36} {statistics.median(values):8.1f}   {min(values):.1f}-{max(values):.1f}")
    if size:
        print(f"  report JSON: {size[0] / 1024:.0f} KiB on the wire (gzip), {size[1] / 1024:.0f} KiB decoded")
    worst = max(max(v) for v in times.values())
    print(f"slowest page: {worst:.0f} ms -> {'under' if worst < 1000 else 'NOT under'} a second to usable")


if __name__ == "__main__":
    main()
