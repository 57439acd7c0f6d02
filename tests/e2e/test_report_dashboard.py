"""The report view of the dashboard in headless Chromium (a real uvicorn on loopback, the real
pipeline on the sample corpus): open a finished job, filter, unfold a row; watch a running
job's report fill in as verdicts are committed. Skipped where Chromium is missing, like
tests/e2e/test_dashboard.py, whose fixtures it uses."""

from __future__ import annotations

import pytest

from analysis.settings import PipelineSettings, QueueSettings
from analysis.pipeline import analyze as pipeline
from analysis.queue import userqueue
from analysis.queue.jobs import Outcome
from analysis.surface import accounts
from tests.conftest import query, wait_for
from tests.e2e.test_dashboard import browser, server  # noqa: F401 - fixtures (skips without Chromium)
from tests.integration.conftest import queue_broker, worker_settings  # noqa: F401
from tests.integration.test_pipeline import judge_all, parsed_session, rule_table, start_analysis  # noqa: F401

pytestmark = pytest.mark.e2e

THESIS = "thesis_retrieval_practice.pdf"


def js(browser, script: str):
    # One script per read: the page re-renders while it polls, so a located element can go
    # stale between finding and reading it.
    return browser.execute_script(script)


def open_report(browser, server, token: str, job_id: int) -> float:
    """Load the dashboard, click the job's report button; the page's load time."""
    browser.get(f"{server}/#token={token}")
    wait_for(lambda: js(browser, f"return !!document.querySelector('#job-{job_id} button.open-report')"),
             message="job listed")
    js(browser, f"document.querySelector('#job-{job_id} button.open-report').click()")
    wait_for(lambda: js(browser, "return document.getElementById('report-view').dataset.job") == str(job_id),
             message="report opened")
    return js(browser, "return performance.timeOrigin")


def shown_rows(browser) -> list[dict]:
    return js(browser, """return [...document.querySelectorAll('#citations tr.citation')].map(r => ({
        id: r.id, verdict: r.dataset.verdict, hidden: r.hidden, claim: r.querySelector('.claim').textContent}))""")


def test_a_finished_report_filters_to_not_supported_and_unfolds_a_row_with_its_evidence_and_page(
        server, browser, queue_broker, conn, rule_table):  # noqa: F811 (the raw rule table: verdicts of each kind)
    session, docs = parsed_session(queue_broker, conn, 1)
    sources = [docs[n] for n in docs if not n.startswith("thesis")]
    job_id = start_analysis(conn, queue_broker, 1, docs[THESIS], sources)
    judge_all(conn, job_id, queue_broker)
    rows = query(conn, "SELECT ordinal, verdict::text, evidence, evidence_page FROM job_citations "
                       "WHERE job_id = %s ORDER BY ordinal", job_id)
    not_supported = [r for r in rows if r[1] == "not_supported"]
    assert not_supported and any(r[2] for r in not_supported)

    open_report(browser, server, accounts.mint_token(queue_broker, 1), job_id)
    wait_for(lambda: len(shown_rows(browser)) == len(rows), message="every citation shown")
    assert js(browser, "return document.getElementById('report-view').dataset.status") == "succeeded"
    assert js(browser, "return document.querySelector('#report-counts [data-verdict=not_supported]').textContent") == \
        f"{len(not_supported)} not supported"

    js(browser, "const s = document.getElementById('verdict-filter'); s.value = 'not_supported';"
                "s.dispatchEvent(new Event('change'))")
    visible = [r for r in shown_rows(browser) if not r["hidden"]]
    assert [r["id"] for r in visible] == [f"cit-{o + 1}" for o, *_ in not_supported]
    assert all(r["verdict"] == "not_supported" for r in visible)

    ordinal, _, evidence, page = next(r for r in not_supported if r[2])
    number = ordinal + 1
    assert js(browser, f"return document.getElementById('detail-{number}').hidden") is True
    js(browser, f"document.getElementById('cit-{number}').click()")
    wait_for(lambda: js(browser, f"return !document.getElementById('detail-{number}').hidden"), message="row unfolded")
    detail = js(browser, f"""const d = document.getElementById('detail-{number}');
        return {{quote: d.querySelector('.evidence-quote').textContent,
                page: d.querySelector('.evidence-page').textContent,
                claim: d.querySelector('.detail-claim').textContent,
                rationale: d.querySelector('.rationale').textContent,
                visible: d.getBoundingClientRect().height > 0}}""")
    assert detail["visible"]
    assert detail["quote"] == evidence
    assert detail["page"] == f"source p. {page}"
    assert detail["rationale"]


def test_a_running_jobs_report_gains_rows_and_verdicts_without_a_reload(server, browser, queue_broker, conn):  # noqa: F811
    session, docs = parsed_session(queue_broker, conn, 1)
    sources = [docs[n] for n in docs if not n.startswith("thesis")]
    admission = userqueue.admit(1, docs[THESIS], sources, broker=queue_broker, settings=worker_settings().queue)
    message_id = query(conn, "SELECT message_id FROM analysis_jobs WHERE id = %s", admission.job_id)[0][0]
    job, held = userqueue.start_job(admission.job_id, message_id, broker=queue_broker,
                                    settings=worker_settings().queue)  # running, not extracted

    loaded_at = open_report(browser, server, accounts.mint_token(queue_broker, 1), job.id)
    wait_for(lambda: js(browser, "return document.getElementById('report-view').dataset.status") == "running",
             message="running job's report shown")
    assert shown_rows(browser) == []

    # The worker's analyze step, as a worker runs it: the citations are committed, the page shows them.
    assert userqueue.run_job(job, held, broker=queue_broker, settings=worker_settings().queue) == Outcome.deferred()
    total = query(conn, "SELECT count(*) FROM job_citations WHERE job_id = %s", job.id)[0][0]
    wait_for(lambda: len(shown_rows(browser)) == total, message="extracted citations appear")
    unjudged = [o for (o,) in query(conn, "SELECT ordinal FROM job_citations WHERE job_id = %s AND verdict IS NULL "
                                          "ORDER BY ordinal", job.id)]
    assert len(unjudged) >= 2
    assert {r["id"] for r in shown_rows(browser) if r["verdict"] == "pending"} == {f"cit-{o + 1}" for o in unjudged}

    # Each verdict committed by the pipeline's own judge step appears on the open page.
    for ordinal in unjudged:
        pipeline.judge_citation(job.id, ordinal, settle=userqueue.settle, broker=queue_broker,
                                settings=worker_settings().pipeline)
        verdict = query(conn, "SELECT verdict::text FROM job_citations WHERE job_id = %s AND ordinal = %s",
                        job.id, ordinal)[0][0]
        wait_for(lambda: js(browser, f"return document.getElementById('cit-{ordinal + 1}')?.dataset.verdict") == verdict,
                 message=f"verdict of citation {ordinal + 1} appears")
    wait_for(lambda: js(browser, "return document.getElementById('report-view').dataset.status") == "succeeded",
             message="the finished job shown")
    assert js(browser, "return performance.timeOrigin") == loaded_at  # no reload happened
    assert not any(r["verdict"] == "pending" for r in shown_rows(browser))


def test_upload_form_parses_files_starts_an_analysis_and_opens_its_report(server, browser, queue_broker, conn):  # noqa: F811
    from selenium.webdriver.common.by import By

    from tests.integration.conftest import SAMPLES, open_account, running_worker

    open_account(conn, 1, credits=5)
    browser.get(f"{server}/#token={accounts.mint_token(queue_broker, 1)}")
    wait_for(lambda: js(browser, "return !document.getElementById('user-view').hidden"), message="user view")
    with running_worker(queue_broker, threads=4):
        browser.find_element(By.ID, "upload-thesis").send_keys(str(SAMPLES / "thesis_urban_heat.pdf"))
        browser.find_element(By.ID, "upload-sources").send_keys(
            "\n".join(str(SAMPLES / n) for n in ("castillo_2018_green_roofs.pdf", "nakamura_heat_notes.txt")))
        js(browser, "document.querySelector('#upload-form button[type=submit]').click()")
        wait_for(lambda: js(browser, "return [...document.querySelectorAll('#upload-files tr.upload-item')]"
                                     ".map(r => r.dataset.status).join()") == "parsed,parsed,parsed",
                 message="each file's parse status shown, then parsed")
        wait_for(lambda: js(browser, "return !document.getElementById('start-analysis').disabled"),
                 message="start enabled")
        js(browser, "document.getElementById('start-analysis').click()")
        job_id = wait_for(lambda: query(conn, "SELECT max(id) FROM analysis_jobs")[0][0], message="job admitted")
        wait_for(lambda: js(browser, "return document.getElementById('report-view').dataset.job") == str(job_id),
                 message="the new job's report opened")
        wait_for(lambda: js(browser, "return document.getElementById('report-view').dataset.status") == "succeeded",
                 message="the analysis finished on the open report")
    total = query(conn, "SELECT count(*) FROM job_citations WHERE job_id = %s", job_id)[0][0]
    wait_for(lambda: len(shown_rows(browser)) == total > 0, message="every citation shown")
    assert query(conn, "SELECT filename FROM documents WHERE id = (SELECT thesis_id FROM analysis_jobs "
                       "WHERE id = %s)", job_id) == [("thesis_urban_heat.pdf",)]


def test_a_delta_recheck_starts_from_the_report_after_uploading_a_corrected_source(
        server, browser, queue_broker, conn, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select

    from tests.integration.conftest import SAMPLES, running_worker

    session, docs = parsed_session(queue_broker, conn, 1)
    sources = [docs[n] for n in ("okafor_lindqvist_2019.pdf", "hartmann_2020_feedback.pdf",
                                 "mueller_2021_spaced_homework.txt")]
    base = start_analysis(conn, queue_broker, 1, docs[THESIS], sources)
    judge_all(conn, base, queue_broker)
    corrected = tmp_path / "mueller_2021_spaced_homework_v2.txt"
    corrected.write_bytes((SAMPLES / "mueller_2021_spaced_homework.txt").read_bytes() + b"\n\nA corrected remark.\n")

    open_report(browser, server, accounts.mint_token(queue_broker, 1), base)
    wait_for(lambda: js(browser, "return document.getElementById('delta-replace').options.length") == 4,
             message="the job's sources offered for replacement")
    with running_worker(queue_broker, threads=4):
        Select(browser.find_element(By.ID, "delta-replace")).select_by_value(
            str(docs["mueller_2021_spaced_homework.txt"]))
        browser.find_element(By.ID, "delta-file").send_keys(str(corrected))
        js(browser, "document.querySelector('#delta-form button[type=submit]').click()")
        delta = wait_for(lambda: query(conn, "SELECT id FROM analysis_jobs WHERE delta_of_job_id = %s", base),
                         message="delta re-check admitted")[0][0]
        wait_for(lambda: js(browser, "return document.getElementById('report-view').dataset.job") == str(delta),
                 message="the re-check's report opened")
        wait_for(lambda: js(browser, "return document.getElementById('report-view').dataset.status") == "succeeded",
                 message="the re-check finished on the open report")
    new_source = query(conn, "SELECT id FROM documents WHERE filename = %s", corrected.name)[0][0]
    assert sorted(r[0] for r in query(conn, "SELECT document_id FROM analysis_job_documents WHERE job_id = %s "
                                            "AND document_id <> %s", delta, docs[THESIS])) == sorted(
        [*sources[:2], new_source])
    carried = {f"cit-{o + 1}" for (o,) in query(conn, "SELECT ordinal FROM job_citations WHERE job_id = %s "
                                                      "AND carried_from_id IS NOT NULL", delta)}
    assert carried  # the unchanged claims and sources kept their verdicts
    wait_for(lambda: {r["id"] for r in js(browser, "return [...document.querySelectorAll('#citations tr.citation')]"
                                                   ".filter(r => r.querySelector('.carried')).map(r => ({id: r.id}))")}
             == carried, message="carried-over verdicts marked")
