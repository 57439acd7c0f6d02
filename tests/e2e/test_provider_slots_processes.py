"""Worker processes against hostile work (issue 11).

A worker SIGKILLed while its judge calls are in flight does not keep the provider's
concurrency slots: they come free when its heartbeat lapses, the new worker's calls take
them, and the job ends within the lease plus its own work, not after the old slots' 120 s
TTL, with every citation judged once. A document over the parse CPU budget fails fast in a
real worker process, and the rest of its upload parses."""

from __future__ import annotations

import os
import signal

import pytest

from analysis.settings import PipelineSettings, QueueSettings
from analysis.pipeline.intake import uploads
from analysis.queue import userqueue
from tests.conftest import query
from tests.faults import harness
from tests.integration.conftest import documents_by_name, job_status, open_account, parse_done, sample_files, wait_for

pytestmark = pytest.mark.e2e


def test_slots_of_a_worker_killed_mid_judging_come_free_and_the_job_finishes(processes, conn):
    with harness.SlowProvider(seconds=1.5) as provider:
        processes.env.pop("CITEQ_ANALYZE_WORK")
        processes.env.update(provider.env())  # 4 slots; the worker runs 4 threads
        harness.install_verdict_log(conn)
        try:
            first = processes.worker()
            jobs = []
            for user in (1, 2):
                open_account(conn, user)
                staged = uploads.stage_upload(user, [
                    *sample_files("thesis_urban_heat.pdf", kind="thesis"),
                    *sample_files("castillo_2018_green_roofs.pdf", "nakamura_heat_notes.txt")], settings=PipelineSettings())
                wait_for(lambda: parse_done(conn, staged.parse_job_id), timeout=60, message="parsed")
                docs = documents_by_name(conn, staged.session_id)
                jobs.append(userqueue.admit(user, docs["thesis_urban_heat.pdf"], [
                    docs["castillo_2018_green_roofs.pdf"], docs["nakamura_heat_notes.txt"]], settings=QueueSettings()).job_id)
            # Given the worker holds provider slots, its judge calls in flight
            wait_for(lambda: query(conn, "SELECT count(*) FROM provider_slots")[0][0] >= 2, timeout=60,
                     interval=0.01, message="slots taken")

            # When it is SIGKILLed and a new worker starts
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
            processes.worker()

            # Then the jobs end well before the old 120 s TTL would have freed the slots
            wait_for(lambda: harness.terminal(conn, jobs), timeout=60, interval=0.1, message="the jobs ended")
            assert [job_status(conn, j) for j in jobs] == ["succeeded", "succeeded"]
            assert query(conn, "SELECT count(*) FROM job_citations WHERE job_id = ANY(%s) AND verdict IS NULL",
                         jobs) == [(0,)]
            assert query(conn, "SELECT count(*) FROM (SELECT 1 FROM test_verdict_writes GROUP BY job_id, ordinal "
                               "HAVING count(*) > 1) twice")[0][0] == 0
            assert query(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'dead'")[0][0] == 0
        finally:
            harness.remove_verdict_log(conn)


def test_a_worker_process_stops_a_document_over_its_cpu_budget_and_parses_the_rest(processes, conn):
    from analysis.pipeline.intake.uploads import UploadFile
    from tests.hostile_pdfs import shared_stream_pdf, text_pdf

    processes.env["CITEQ_PARSE_CPU_SECONDS"] = "1"
    processes.worker()
    open_account(conn, 1)
    staged = uploads.stage_upload(1, [UploadFile(filename="shared-stream.pdf", data=shared_stream_pdf()),
                                      UploadFile(filename="nul.pdf", data=text_pdf(b"cool\\000 roofs")),
                                      *sample_files("nakamura_heat_notes.txt")], settings=PipelineSettings())

    assert wait_for(lambda: parse_done(conn, staged.parse_job_id), timeout=60, message="parsed") == "partial"
    items = {i.filename: i for i in uploads.parse_status(1, staged.parse_job_id, settings=PipelineSettings()).items}
    assert items["shared-stream.pdf"].error_code == "document_too_complex"
    assert items["nul.pdf"].status == items["nakamura_heat_notes.txt"].status == uploads.ParseItemStatus.PARSED
