"""The dashboard's flows of issue 28 in headless Chromium (a real uvicorn on loopback, a real
PostgreSQL, in-process workers where work must run): errors that stay beside their control,
token problems, the triage block, the operator view's no-worker banner, pause and resume,
retry and purge with their results, the 390 px layout and the accessibility checks.
Skipped where Chromium is missing, like tests/e2e/test_dashboard.py, whose fixtures it uses."""

from __future__ import annotations

import json
import threading

import dramatiq
import pytest

from analysis.settings import QueueSettings
from analysis.queue import userqueue
from analysis.surface import accounts
from tests.conftest import query, wait_for
from tests.e2e.test_dashboard import browser, server  # noqa: F401 - fixtures (skips without Chromium)
from tests.integration.conftest import SAMPLES, add_documents, open_account, queue_broker, running_worker, worker_settings  # noqa: F401
from tests.integration.test_pipeline import judge_all, parsed_session, start_analysis

pytestmark = pytest.mark.e2e

THESIS = "thesis_retrieval_practice.pdf"
ATTENTION = ["not_supported", "partially_supported", "uncertain", "source_missing"]


def js(browser, script: str):
    # One script per read: the page re-renders while it polls.
    return browser.execute_script(script)


def text(browser, element_id: str) -> str:
    return js(browser, f"return document.getElementById('{element_id}').textContent")


def visible(browser, element_id: str) -> bool:
    return js(browser, f"""const e = document.getElementById('{element_id}');
        return !e.closest('[hidden]') && e.getClientRects().length > 0""")


def polls(browser) -> str:
    return js(browser, "return document.body.dataset.refreshed || ''")


def wait_polls(browser, n: int) -> None:
    """Wait until the page has polled the API ``n`` more times."""
    seen = [polls(browser)]

    def more():
        now = polls(browser)
        if now != seen[-1]:
            seen.append(now)
        return len(seen) > n
    wait_for(more, message=f"{n} polls")


def sign_in(browser, server, token: str, view: str) -> None:
    browser.get(f"{server}/#token={token}")
    wait_for(lambda: visible(browser, view), message=f"{view} shown")


def finished_report(queue_broker, conn) -> int:
    """A judged analysis of the sample thesis by user 1: its job id."""
    _, docs = parsed_session(queue_broker, conn, 1)
    sources = [docs[n] for n in docs if not n.startswith("thesis")]
    job_id = start_analysis(conn, queue_broker, 1, docs[THESIS], sources)
    judge_all(conn, job_id, queue_broker)
    return job_id


def open_report(browser, job_id: int) -> None:
    wait_for(lambda: js(browser, f"return !!document.querySelector('#job-{job_id} button.open-report')"),
             message="job listed")
    js(browser, f"document.querySelector('#job-{job_id} button.open-report').click()")
    wait_for(lambda: js(browser, "return document.getElementById('report-view').dataset.job") == str(job_id),
             message="report opened")


# -- state that stays put ---------------------------------------------------------------------


def test_a_refused_admission_stays_beside_start_until_the_user_acts_and_uploads_add_up(
        server, browser, queue_broker, conn, tmp_path):  # noqa: F811
    # Given a user without credits and two uploads made one after the other
    open_account(conn, 1, credits=0)
    thesis = tmp_path / "thesis_small.md"
    thesis.write_text("# Heat\n\nGreen roofs lower roof temperatures (Castillo, 2018).\n\n"
                      "## References\n\nCastillo, M. (2018). Green roofs. Urban Climate.\n")
    sign_in(browser, server, accounts.mint_token(queue_broker, 1), "user-view")
    wait_for(lambda: text(browser, "account").startswith("0 credits left; an analysis costs 1 credit"),
             message="credits and cost shown")
    assert text(browser, "cost-note") == "Costs 1 credit (you have 0)."
    with running_worker(queue_broker, threads=2):
        browser.find_element("id", "upload-thesis").send_keys(str(thesis))
        js(browser, "document.querySelector('#upload-form button[type=submit]').click()")
        wait_for(lambda: js(browser, "return [...document.querySelectorAll('#upload-files tr.upload-item')]"
                                     ".map(r => r.dataset.status).join()") == "parsed", message="thesis parsed")
        browser.find_element("id", "upload-sources").send_keys(str(SAMPLES / "nakamura_heat_notes.txt"))
        js(browser, "document.querySelector('#upload-form button[type=submit]').click()")
        wait_for(lambda: js(browser, "return [...document.querySelectorAll('#upload-files tr.upload-item')]"
                                     ".map(r => r.cells[0].textContent + ':' + r.dataset.status).join()")
                 == "thesis_small.md:parsed,nakamura_heat_notes.txt:parsed", message="second upload added to the list")

    # When the analysis is refused for want of credits
    wait_for(lambda: js(browser, "return !document.getElementById('start-analysis').disabled"), message="start enabled")
    js(browser, "document.getElementById('start-analysis').click()")
    wait_for(lambda: "fewer credits than the analysis costs" in text(browser, "start-error"), message="error shown")
    error = text(browser, "start-error")

    # Then it stays through many refreshes, beside the button, and nothing was admitted
    wait_polls(browser, 4)
    assert text(browser, "start-error") == error and visible(browser, "start-error")
    assert query(conn, "SELECT count(*) FROM analysis_jobs")[0][0] == 0

    # Credits shown follow the database without a reload
    query(conn, "UPDATE accounts SET credits = 3 WHERE user_id = 1")
    wait_for(lambda: text(browser, "account").startswith("3 credits left"), message="credits current")
    assert text(browser, "start-error") == error

    # When the user acts on that control again, the old error goes
    js(browser, "document.getElementById('start-analysis').click()")
    job_id = wait_for(lambda: query(conn, "SELECT max(id) FROM analysis_jobs")[0][0], message="admitted")
    wait_for(lambda: js(browser, "return document.getElementById('report-view').dataset.job") == str(job_id),
             message="report opened")
    assert text(browser, "start-error") == ""


def test_a_refused_token_reads_as_a_sentence_hides_the_views_and_a_new_link_works_in_the_open_tab(
        server, browser, queue_broker, conn):  # noqa: F811
    open_account(conn, 1, credits=2)
    thesis, sources = add_documents(conn, 1)
    first = userqueue.admit(1, thesis, sources, broker=queue_broker, settings=worker_settings().queue).job_id
    second = userqueue.admit(1, thesis, sources, broker=queue_broker, settings=worker_settings().queue).job_id
    good = accounts.mint_token(queue_broker, 1)

    browser.get(f"{server}/#token=cq_not-a-token")
    wait_for(lambda: "was not accepted" in text(browser, "login-error"), message="refusal shown")
    assert "Bearer" not in text(browser, "login-error")
    assert not visible(browser, "user-view") and not visible(browser, "upload-form")
    assert visible(browser, "welcome")
    loaded_at = js(browser, "return performance.timeOrigin")

    # A #token= link pasted into the open tab signs in without a reload
    js(browser, f"location.hash = 'token={good}'")
    wait_for(lambda: visible(browser, "user-view"), message="user view after the new link")
    assert js(browser, "return performance.timeOrigin") == loaded_at
    assert text(browser, "login-error") == ""
    wait_for(lambda: js(browser, f"return document.querySelector('#job-{second} .status')?.textContent")
             == "1st in your queue", message="queue position in words")
    assert js(browser, f"return document.querySelector('#job-{first} .status').textContent") == "waiting for a worker"
    open_report(browser, second)
    wait_for(lambda: text(browser, "report-state").startswith("1st in your queue"), message="the report says where it waits")
    js(browser, "document.getElementById('report-close').click()")

    # A token revoked while the page is open: the next poll hides the user's data
    query(conn, "UPDATE api_tokens SET revoked_at = now()")
    wait_for(lambda: not visible(browser, "user-view"), message="user view hidden after revocation")
    assert "was not accepted" in text(browser, "login-error")


# -- triage -----------------------------------------------------------------------------------


def test_the_report_opens_with_what_needs_attention_in_verdict_order_and_words_not_identifiers(
        server, browser, queue_broker, conn):  # noqa: F811
    job_id = finished_report(queue_broker, conn)
    counts = dict(query(conn, "SELECT verdict::text, count(*) FROM job_citations WHERE job_id = %s GROUP BY 1", job_id))
    needs = [v for v in ATTENTION if counts.get(v)]
    assert len(needs) >= 2  # the sample thesis has more than one kind of trouble

    sign_in(browser, server, accounts.mint_token(queue_broker, 1), "user-view")
    open_report(browser, job_id)
    wait_for(lambda: js(browser, "return document.querySelectorAll('#triage-list button').length") == len(needs),
             message="triage block filled")
    triage = js(browser, """return [...document.querySelectorAll('#triage-list button')].map(b => ({
        verdict: b.dataset.verdict, text: b.textContent, cls: b.className,
        bg: getComputedStyle(b).backgroundColor}))""")
    assert [t["verdict"] for t in triage] == needs
    assert [t["text"] for t in triage] == [f"{counts[v]} {v.replace('_', ' ')}" for v in needs]
    assert len({t["bg"] for t in triage}) == len(needs)  # each in its own verdict colour
    # the block comes before the table, and the verdict is the first cell of every row
    assert js(browser, "return !!(document.getElementById('triage').compareDocumentPosition("
                       "document.getElementById('citations')) & Node.DOCUMENT_POSITION_FOLLOWING)")
    assert set(js(browser, "return [...document.querySelectorAll('#citations tr.citation')].map("
                           "r => r.cells[0].className)")) == {"verdict"}
    # summaries in one fixed order on the job list and in the report
    order = ATTENTION + ["supported"]
    shown = js(browser, "return [...document.querySelectorAll('#report-counts .badge')].map(b => b.dataset.verdict)")
    assert shown == [v for v in order if counts.get(v)]

    # clicking a triage count shows only those citations
    js(browser, f"document.querySelector('#triage-list button[data-verdict={needs[0]}]').click()")
    rows = js(browser, "return [...document.querySelectorAll('#citations tr.citation')].filter(r => !r.hidden)"
                       ".map(r => r.dataset.verdict)")
    assert rows and set(rows) == {needs[0]}

    # an unfolded row says in a sentence what was found; its toggle says it is expanded
    number = js(browser, "return document.querySelector('#citations tr.citation:not([hidden])').id.slice(4)")
    assert js(browser, f"return document.querySelector('#cit-{number} .toggle').getAttribute('aria-expanded')") == "false"
    js(browser, f"document.querySelector('#cit-{number} .toggle').click()")
    assert js(browser, f"return document.querySelector('#cit-{number} .toggle').getAttribute('aria-expanded')") == "true"
    sentence = js(browser, f"return document.querySelector('#detail-{number} .verdict-sentence').textContent")
    assert sentence.endswith(".") and needs[0] not in sentence and len(sentence.split()) >= 6

    js(browser, "const s = document.getElementById('verdict-filter'); s.value = ''; s.dispatchEvent(new Event('change'))")
    js(browser, "document.querySelectorAll('#citations tr.citation').forEach(r => r.click())")
    page = js(browser, "return document.body.innerText")
    for jargon in ("not_supported", "partially_supported", "source_missing", "author_year", "bm25"):
        assert jargon not in page, jargon
    facts = text(browser, "report-facts")
    assert "Judge" not in facts and "Retrieval" not in facts and "offline" not in facts
    judge, mode = query(conn, "SELECT judge, retrieval_mode FROM analysis_jobs WHERE id = %s", job_id)[0]
    assert (judge, mode.split()[0]) == ("offline", "bm25") or mode.startswith("hybrid")
    assert "Checked bybuilt-in rules (no network)" in facts
    assert "Passages found by" + ("keyword search" if mode.startswith("bm25") else "keyword and meaning search") in facts

    js(browser, "document.getElementById('report-close').click()")
    wait_for(lambda: visible(browser, "user-view"), message="back on the list")
    listed = js(browser, f"return [...document.querySelectorAll('#job-{job_id} .counts .badge')].map(b => b.dataset.verdict)")
    assert listed == [v for v in order if counts.get(v)]


# -- the operator view ------------------------------------------------------------------------


def test_a_red_banner_says_when_work_is_ready_and_no_worker_consumes_its_queue(server, browser, queue_broker, conn):  # noqa: F811
    from actors.queue import stall_sweep

    token = accounts.mint_token(queue_broker, None, operator=True)
    sign_in(browser, server, token, "ops-view")
    wait_for(lambda: js(browser, "return !!document.getElementById('queue-maintenance')"), message="queues listed")
    declared = {q for q in queue_broker.get_declared_queues() if not q.endswith((".DQ", ".XQ"))}
    listed = set(js(browser, "return [...document.querySelectorAll('#queues tbody tr')].map(r => r.id.slice(6))"))
    assert declared <= listed  # empty queues are listed too
    assert not visible(browser, "stall-banner")

    stall_sweep.send()  # ready work, no worker
    wait_for(lambda: visible(browser, "stall-banner"), message="banner shown")
    assert "queue maintenance has 1 ready message and no live worker consumes it" in text(browser, "stall-banner")
    assert js(browser, "return getComputedStyle(document.getElementById('stall-banner')).backgroundColor") == \
        "rgb(170, 17, 17)"
    assert js(browser, "return document.getElementById('queue-maintenance').dataset.stalled") == "true"
    # polls rewrite the waiting time, not the row: a click on its button is never swallowed
    js(browser, "window.pauseButton = document.querySelector('#queue-maintenance button.pause')")
    shown_age = js(browser, "return document.querySelector('#queue-maintenance .oldest').textContent")
    wait_for(lambda: js(browser, "return document.querySelector('#queue-maintenance .oldest').textContent") != shown_age,
             message="the waiting time moves on")
    assert js(browser, "return window.pauseButton.isConnected")

    release = threading.Event()

    @dramatiq.actor(queue_name="ops-slow")
    def ops_slow_step():
        release.wait(30)

    with running_worker(queue_broker, threads=2):
        wait_for(lambda: not visible(browser, "stall-banner"), message="banner gone once a worker runs")
        wait_for(lambda: js(browser, "return [...document.querySelectorAll('#workers tbody tr')]"
                                     ".some(r => r.id.startsWith('worker-'))"), message="the worker listed")
        wait_for(lambda: js(browser, "return document.querySelector('#queue-maintenance .processed').textContent")
                 == "1", message="processed in the last hour counted")

        # the workers panel: busy and idle threads, and the message a thread runs
        try:
            ops_slow_step.send()
            wait_for(lambda: query(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'running'")[0][0] == 1,
                     message="the slow message claimed")
            row_id = query(conn, "SELECT id FROM citeq_messages WHERE state = 'running'")[0][0]
            queue_broker._lease_keeper.renew()  # the heartbeat reports the threads now, not in a second
            wait_for(lambda: js(browser, "return document.querySelector('#workers tbody tr').dataset.busyThreads") == "1",
                     message="one thread shown busy")
            assert js(browser, "return document.querySelector('#workers tbody tr').dataset.idleThreads") == "1"
            assert "1 busy, 1 idle of 2 threads" in js(browser, "return document.querySelector('#workers .threads').textContent")
            shown = js(browser, "return document.querySelector('#workers .current-message').textContent")
            assert f"ops_slow_step on ops-slow, message {row_id}, running since " in shown
            assert js(browser, A11Y) == []  # the panel keeps the landmarks, heading order and contrast
        finally:
            release.set()
        wait_for(lambda: js(browser, "return document.querySelector('#workers tbody tr').dataset.busyThreads") == "0",
                 message="the thread idle again")
        assert js(browser, "return document.querySelector('#workers .current').textContent") == "—"


def test_pause_and_resume_a_queue_from_the_operator_view(server, browser, queue_broker, conn):  # noqa: F811
    from actors.queue import stall_sweep

    token = accounts.mint_token(queue_broker, None, operator=True)
    sign_in(browser, server, token, "ops-view")
    with running_worker(queue_broker, threads=2):
        wait_for(lambda: js(browser, "return !!document.querySelector('#queue-maintenance button.pause')"),
                 message="pause button")
        js(browser, "document.querySelector('#queue-maintenance button.pause').click()")
        wait_for(lambda: "Queue maintenance is paused" in text(browser, "queue-result"), message="pause result shown")
        assert query(conn, "SELECT queue_name FROM citeq_queue_pauses") == [("maintenance",)]
        wait_for(lambda: js(browser, "return document.getElementById('queue-maintenance').dataset.paused") == "true",
                 message="row shows paused")
        assert "Paused: maintenance" in text(browser, "pause-banner")

        stall_sweep.send()
        wait_for(lambda: js(browser, "return document.querySelector('#queue-maintenance td:nth-child(3)').textContent")
                 == "1", message="the message waits in the paused queue")
        assert not visible(browser, "stall-banner")  # paused on purpose is not a missing worker
        wait_polls(browser, 2)
        assert "Queue maintenance is paused" in text(browser, "queue-result")  # the result stays

        js(browser, "document.querySelector('#queue-maintenance button.resume').click()")
        wait_for(lambda: "running again" in text(browser, "queue-result"), message="resume result shown")
        wait_for(lambda: query(conn, "SELECT state::text FROM citeq_messages") == [("done",)],
                 message="the worker ran the message after the resume")
    assert query(conn, "SELECT count(*) FROM citeq_queue_pauses")[0][0] == 0


def test_retry_and_purge_show_their_result_and_bulk_purge_asks_first(server, browser, queue_broker, conn):  # noqa: F811
    from actors.queue import stall_sweep

    for _ in range(3):
        stall_sweep.send()
    trace = ('Traceback (most recent call last):\n  File "/srv/app/.venv/lib/python3.11/site-packages/dramatiq/worker.py",'
             ' line 1, in process\n  File "/srv/app/analysis/queue/userqueue.py", line 2, in promote\n'
             'RuntimeError: database at /srv/app/.citeq/run refused')
    query(conn, "UPDATE citeq_messages SET state = 'dead', dead_reason = %s, finished_at = now()", trace)
    letters = [r[0] for r in query(conn, "SELECT id FROM citeq_messages ORDER BY id")]
    token = accounts.mint_token(queue_broker, None, operator=True)
    sign_in(browser, server, token, "ops-view")
    wait_for(lambda: js(browser, f"return !!document.querySelector('#dead-{letters[0]} button.retry')"),
             message="dead letters shown")
    assert js(browser, f"return document.querySelector('#dead-{letters[0]} .exception').textContent") == \
        "RuntimeError: database at run refused"

    # the traceback on demand, without server paths
    toggle = f"#dead-{letters[0]} button.show-traceback"
    assert js(browser, f"return document.querySelector('{toggle}').getAttribute('aria-expanded')") == "false"
    js(browser, f"document.querySelector('{toggle}').click()")
    assert js(browser, f"return document.querySelector('{toggle}').getAttribute('aria-expanded')") == "true"
    shown = text(browser, f"traceback-{letters[0]}")
    assert 'File "dramatiq/worker.py"' in shown and 'File "analysis/queue/userqueue.py"' in shown
    assert "/srv" not in shown and ".venv" not in shown

    # Retry: the row goes, the result stays
    js(browser, f"document.querySelector('#dead-{letters[0]} button.retry').click()")
    wait_for(lambda: f"Dead letter {letters[0]}" in text(browser, "dead-result"), message="retry result shown")
    assert "back on queue maintenance" in text(browser, "dead-result")
    wait_for(lambda: not js(browser, f"return !!document.getElementById('dead-{letters[0]}')"), message="row gone")
    assert query(conn, "SELECT state::text FROM citeq_messages WHERE id = %s", letters[0]) == [("queued",)]

    # Purge one
    js(browser, f"document.querySelector('#dead-{letters[1]} button.purge').click()")
    wait_for(lambda: f"Dead letter {letters[1]}" in text(browser, "dead-result") and "purged" in text(browser, "dead-result"),
             message="purge result shown")
    assert query(conn, "SELECT count(*) FROM citeq_messages WHERE id = %s", letters[1])[0][0] == 0

    # Purge all asks first; cancelling changes nothing, confirming purges
    wait_for(lambda: js(browser, "return document.querySelectorAll('#dead-letters tbody tr[id^=dead-]').length") == 1,
             message="one dead letter left")
    js(browser, "document.getElementById('purge-all').click()")
    assert visible(browser, "bulk-confirm")
    assert "Delete all 1 dead letter for good?" in text(browser, "bulk-question")
    js(browser, "document.getElementById('bulk-no').click()")
    assert not visible(browser, "bulk-confirm")
    assert query(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'dead'")[0][0] == 1
    js(browser, "document.getElementById('purge-all').click()")
    js(browser, "document.getElementById('bulk-yes').click()")
    wait_for(lambda: text(browser, "dead-result") == "Purged 1 dead letter.", message="bulk purge result")
    assert query(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'dead'")[0][0] == 0
    wait_for(lambda: js(browser, "return document.querySelector('#queue-maintenance .failed').textContent") == "3",
             message="the three failures still counted for the last hour")


def send_invoices(broker, keys: dict[str, int]) -> None:
    """Grouped messages no worker consumes: per key, the first is in flight, the rest are held."""
    import dramatiq

    if "invoice" in broker.actors:  # declared by an earlier test on this broker
        invoice = broker.get_actor("invoice")
    else:
        @dramatiq.actor(queue_name="invoices", group_by=lambda tenant, n: tenant, broker=broker)
        def invoice(tenant, n):
            pass

    for tenant, count in keys.items():
        for n in range(count):
            invoice.send(tenant, n)


def test_the_message_groups_panel_counts_keys_and_lists_a_keys_messages_on_request(
        server, browser, queue_broker, conn):  # noqa: F811
    sign_in(browser, server, accounts.mint_token(queue_broker, None, operator=True), "ops-view")
    wait_for(lambda: "no message groups" in text(browser, "groups"), message="the empty state")
    assert not visible(browser, "group-keys-box")

    send_invoices(queue_broker, {"acme corp/eu": 3, "globex": 2, "initech": 1})
    row = "document.getElementById('group-queue-invoices')"
    wait_for(lambda: js(browser, f"return {row}?.querySelector('.waiting-keys').textContent") == "2",
             message="two keys with waiting messages")
    counts = js(browser, f"return [...{row}.cells].map(c => c.textContent)")[1:5]
    assert counts == ["2", "3", "3", "3"]  # keys waiting, held, in flight, keys in flight
    assert visible(browser, "group-keys-box")
    keys = js(browser, "return [...document.querySelectorAll('#group-keys tbody tr[id^=group-key-]')]"
                       ".map(r => [r.dataset.groupKey, r.querySelector('.held').textContent])")
    assert keys == [["acme corp/eu", "2"], ["globex", "1"], ["initech", "0"]]  # waiting longest first

    acme = "[...document.querySelectorAll('#group-keys tbody tr')].find(r => r.dataset.groupKey === 'acme corp/eu')"
    toggle = f"{acme}.querySelector('button.show-messages')"
    assert js(browser, f"return {toggle}.getAttribute('aria-expanded')") == "false"
    js(browser, f"{toggle}.click()")
    assert js(browser, f"return {toggle}.getAttribute('aria-expanded')") == "true"
    listed = f"document.getElementById({toggle}.getAttribute('aria-controls'))"
    wait_for(lambda: js(browser, f"return {listed}.querySelectorAll('li').length") == 3, message="the key's messages")
    ids = [r[0] for r in query(conn, "SELECT id FROM citeq_messages WHERE group_key = 'acme corp/eu' ORDER BY group_seq")]
    assert js(browser, f"return [...{listed}.querySelectorAll('li')].map(li => [Number(li.dataset.id), li.dataset.state])") == \
        [[ids[0], "queued"], [ids[1], "held"], [ids[2], "held"]]
    shown = js(browser, f"return {listed}.querySelector('li:last-child').textContent")
    assert shown.startswith(f"invoice, message {ids[2]}: waiting for its key's turn; sent ")
    wait_polls(browser, 2)
    assert js(browser, f"return {toggle}.getAttribute('aria-expanded')") == "true"  # the poll keeps it open
    assert js(browser, f"return {listed}.querySelectorAll('li').length") == 3
    assert js(browser, A11Y) == []

    js(browser, f"{toggle}.click()")
    assert js(browser, f"return [{toggle}.getAttribute('aria-expanded'), {listed}.hidden]") == ["false", True]


# -- mobile and accessibility -----------------------------------------------------------------

#: In-page checks: landmarks, heading order, the names and states of expandable controls,
#: and WCAG contrast (4.5:1) of every visible text against its effective background.
A11Y = """
function rgba(s) { const m = s.match(/[\\d.]+/g).map(Number); return m.length === 3 ? [...m, 1] : m; }
function lum([r, g, b]) { return [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
                                  .reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0); }
function background(e) {
  let layers = [];
  for (let n = e; n; n = n.parentElement) { const c = rgba(getComputedStyle(n).backgroundColor); if (c[3] > 0) { layers.push(c); if (c[3] === 1) break; } }
  let bg = [255, 255, 255];
  for (const c of layers.reverse()) bg = bg.map((v, i) => v * (1 - c[3]) + c[i] * c[3]);
  return bg;
}
const shown = e => !e.closest('[hidden]') && e.getClientRects().length > 0;
const problems = [];
if (document.querySelectorAll('main').length !== 1) problems.push('one <main>');
if (!document.querySelector('header')) problems.push('a <header>');
let last = 0;
for (const h of document.querySelectorAll('h1, h2, h3, h4, h5, h6')) {
  if (!shown(h)) continue;
  const level = Number(h.tagName[1]);
  if (level > last + 1) problems.push('heading ' + h.tagName + ' "' + h.textContent + '" after h' + last);
  last = level;
}
for (const b of document.querySelectorAll('[aria-controls]')) {
  if (!['true', 'false'].includes(b.getAttribute('aria-expanded'))) problems.push('aria-expanded on ' + b.outerHTML.slice(0, 80));
  if (!document.getElementById(b.getAttribute('aria-controls'))) problems.push('aria-controls target of ' + b.textContent);
}
for (const e of document.querySelectorAll('body *')) {
  if (!shown(e) || e.closest(':disabled')) continue;
  if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
  const fg = rgba(getComputedStyle(e).color), bg = background(e);
  const text = fg.slice(0, 3).map((v, i) => v * fg[3] + bg[i] * (1 - fg[3]));
  const [a, b] = [lum(text), lum(bg)].sort((x, y) => y - x);
  const ratio = (a + 0.05) / (b + 0.05);
  if (ratio < 4.5) problems.push(ratio.toFixed(2) + ':1 "' + e.textContent.trim().slice(0, 40) + '" (' + e.className + ')');
}
return problems;
"""

NO_SIDEWAYS = "return [document.documentElement.scrollWidth, window.innerWidth]"


def test_at_390_px_rows_stack_without_sideways_scrolling_and_the_pages_pass_the_accessibility_checks(
        server, browser, queue_broker, conn):  # noqa: F811
    job_id = finished_report(queue_broker, conn)
    sign_in(browser, server, accounts.mint_token(queue_broker, 1), "user-view")
    wait_for(lambda: js(browser, f"return !!document.getElementById('job-{job_id}')"), message="job listed")
    assert js(browser, A11Y) == []

    open_report(browser, job_id)
    wait_for(lambda: js(browser, "return document.querySelectorAll('#citations tr.citation').length") > 0,
             message="citations shown")
    js(browser, "document.querySelectorAll('#citations tr.citation').forEach(r => r.click())")
    js(browser, "document.querySelector('#citations button.open-evidence').click()")
    wait_for(lambda: visible(browser, "evidence-view") and js(browser, "return !!document.querySelector('#pane-source mark')"),
             message="a citation opened in place")
    assert js(browser, A11Y) == []

    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    wait_for(lambda: js(browser, "return window.innerWidth") == 390, message="390 px viewport")
    wide, inner = js(browser, NO_SIDEWAYS)
    assert wide <= inner, f"report is {wide} px wide at {inner} px"
    cells = js(browser, """const r = document.querySelector('#citations tr.citation');
        return [...r.cells].map(c => ({display: getComputedStyle(c).display, left: c.getBoundingClientRect().left,
                                       label: getComputedStyle(c, '::before').content}))""")
    assert {c["display"] for c in cells} == {"block"}  # stacked, one above the other
    assert len({round(c["left"]) for c in cells}) == 1
    assert cells[3]["label"] == '"Claim: "'
    verdict_box = js(browser, "const b = document.querySelector('#citations tr.citation .badge').getBoundingClientRect();"
                              "return [b.left, b.right]")
    assert 0 <= verdict_box[0] and verdict_box[1] <= 390  # the verdict is on screen

    js(browser, "document.getElementById('report-close').click()")
    wait_for(lambda: visible(browser, "user-view"), message="back on the list")
    wide, inner = js(browser, NO_SIDEWAYS)
    assert wide <= inner, f"job list is {wide} px wide at {inner} px"


def test_the_operator_view_at_390_px_and_its_accessibility(server, browser, queue_broker, conn):  # noqa: F811
    from actors.queue import stall_sweep

    stall_sweep.send()
    query(conn, "UPDATE citeq_messages SET state = 'dead', finished_at = now(), dead_reason = "
                "'Traceback (most recent call last):\n  File \"/srv/x/y.py\", line 1, in f\nValueError: a very long "
                "message without spaces_______________________________________________________________end'")
    stall_sweep.send()  # ready, no worker: the banner is on
    send_invoices(queue_broker, {"a-tenant-key-long-enough-to-need-wrapping-" + "x" * 60: 2})
    sign_in(browser, server, accounts.mint_token(queue_broker, None, operator=True), "ops-view")
    wait_for(lambda: visible(browser, "stall-banner"), message="banner shown")
    js(browser, "document.querySelector('button.show-traceback').click()")
    wait_for(lambda: js(browser, "return !!document.querySelector('#group-keys button.show-messages')"),
             message="a message group listed")
    js(browser, "document.querySelector('#group-keys button.show-messages').click()")
    wait_for(lambda: js(browser, "return document.querySelectorAll('#group-keys li').length") == 2,
             message="its messages listed")
    assert js(browser, A11Y) == []
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    wait_for(lambda: js(browser, "return window.innerWidth") == 390, message="390 px viewport")
    wide, inner = js(browser, NO_SIDEWAYS)
    assert wide <= inner, f"operator view is {wide} px wide at {inner} px"
    cells = js(browser, "return [...document.querySelector('#group-keys tbody tr').cells].map(c => "
                        "[getComputedStyle(c).display, getComputedStyle(c, '::before').content])")
    assert {c[0] for c in cells} == {"block"} and cells[1][1] == '"Key: "'  # a key's row stacks, labelled
    assert js(browser, A11Y) == []


# -- evidence in place ------------------------------------------------------------------------


def squash(text: str) -> str:
    return " ".join(text.split()).casefold()


def test_a_citation_opens_in_place_with_the_quote_marked_on_its_source_page_beside_the_thesis_page(
        server, browser, queue_broker, conn):  # noqa: F811
    job_id = finished_report(queue_broker, conn)
    ordinal, claim, page, evidence, evidence_page, source = query(
        conn, "SELECT c.ordinal, c.claim, c.page, c.evidence, c.evidence_page, d.filename FROM job_citations c "
              "JOIN documents d ON d.id = c.source_document_id WHERE c.job_id = %s AND c.evidence IS NOT NULL "
              "AND c.evidence_page IS NOT NULL AND c.page IS NOT NULL ORDER BY c.ordinal LIMIT 1", job_id)[0]
    number = ordinal + 1
    # a claim judged in two parts (stored as the judge stores it): the quote for one, a sentence of
    # another page for the other
    parts = [{"part": "the first part", "sentence": evidence, "page": evidence_page, "coverage": 0.9},
             {"part": "the second part", "sentence": "A sentence of another page.", "page": evidence_page + 1,
              "coverage": 0.3}]
    query(conn, "UPDATE job_citations SET evidence_parts = %s::jsonb WHERE job_id = %s AND ordinal = %s",
          json.dumps(parts), job_id, ordinal)
    browser.set_window_size(1366, 900)
    sign_in(browser, server, accounts.mint_token(queue_broker, 1), "user-view")
    assert js(browser, "return window.innerWidth") >= 1000
    open_report(browser, job_id)
    wait_for(lambda: js(browser, f"return !!document.querySelector('#detail-{number} button.open-evidence')"),
             message="the open button in the row's details")
    js(browser, f"document.getElementById('cit-{number}').click()")
    assert text(browser, f"detail-{number}").count(f"Open the source at p. {evidence_page}") == 1
    js(browser, f"document.querySelector('#detail-{number} button.open-evidence').click()")
    wait_for(lambda: js(browser, "return document.getElementById('evidence-view').dataset.citation") == str(number),
             message="the citation opened in place")
    assert visible(browser, "evidence-view")
    assert js(browser, "return document.activeElement.id") == "h-evidence"

    panes = js(browser, """return ['thesis', 'source'].map(n => {
        const p = document.getElementById('pane-' + n), r = p.getBoundingClientRect();
        return {title: p.querySelector('h4').textContent, found: p.dataset.found, left: r.left, top: r.top,
                marks: [...p.querySelectorAll('mark')].map(m => m.textContent),
                paragraphs: p.querySelectorAll('.pane-text p').length}})""")
    thesis, src = panes
    assert src["title"].startswith(f"Source, p. {evidence_page}") and src["title"].endswith(source)
    assert src["found"] == "true"
    assert squash(" ".join(src["marks"])) == squash(evidence).rstrip(".!?;:,")
    assert src["paragraphs"] > 1  # the whole page, not only the quote
    assert thesis["title"].startswith(f"Thesis, p. {page}")
    assert thesis["found"] == "true" and squash(claim).startswith(squash(thesis["marks"][0])[:20])
    assert thesis["top"] == src["top"] and thesis["left"] < src["left"]  # side by side on a wide screen

    # the sentence for each part of the claim, above the pages
    assert visible(browser, "evidence-parts")
    shown = js(browser, "return [...document.querySelectorAll('#evidence-parts-list li')].map(li => li.textContent)")
    assert len(shown) == 2
    assert shown[0].startswith("“the first part”") and squash(evidence) in squash(shown[0])
    assert "marked on the source page below" in shown[0]
    assert shown[1] == (f"“the second part”Source p. {evidence_page + 1}: “A sentence of another page.”"
                        "30 % of this part's key terms in that sentence; on another page than the one below")
    assert js(browser, A11Y) == []

    js(browser, "document.getElementById('evidence-close').click()")
    assert not visible(browser, "evidence-view")
    assert js(browser, "return document.activeElement.classList.contains('open-evidence')")


def test_another_users_citation_is_404(server, queue_broker, conn):  # noqa: F811
    import httpx

    job_id = finished_report(queue_broker, conn)
    open_account(conn, 2)
    mine = httpx.get(f"{server}/api/analyses/{job_id}/citations/1/evidence",
                     headers={"Authorization": f"Bearer {accounts.mint_token(queue_broker, 1)}"})
    theirs = httpx.get(f"{server}/api/analyses/{job_id}/citations/1/evidence",
                       headers={"Authorization": f"Bearer {accounts.mint_token(queue_broker, 2)}"})
    assert mine.status_code == 200 and theirs.status_code == 404
    assert theirs.json()["error"]["code"] == "unknown_citation"
