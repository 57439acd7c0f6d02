"""A worker SIGKILLed while its judge calls are in flight does not keep the provider's
concurrency slots (issue 11): they come free when its heartbeat lapses, the new worker's
calls take them, and the job ends within the lease plus its own work, not after the old
slots' 120 s TTL, with every citation judged once."""

from __future__ import annotations

import os
import signal

import pytest

from analysis import uploads, userqueue
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
            open_account(conn, 1)
            staged = uploads.stage_upload(1, [*sample_files("thesis_urban_heat.pdf", kind="thesis"),
                                              *sample_files("castillo_2018_green_roofs.pdf", "nakamura_heat_notes.txt")])
            wait_for(lambda: parse_done(conn, staged.parse_job_id), timeout=60, message="parsed")
            docs = documents_by_name(conn, staged.session_id)
            job_id = userqueue.admit(1, docs["thesis_urban_heat.pdf"], [docs["castillo_2018_green_roofs.pdf"],
                                                                       docs["nakamura_heat_notes.txt"]]).job_id
            # Given the worker holds every provider slot, its judge calls in flight
            wait_for(lambda: query(conn, "SELECT count(*) FROM provider_slots")[0][0] == 4, timeout=60,
                     message="all four slots taken")

            # When it is SIGKILLed and a new worker starts
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
            processes.worker()

            # Then the job ends well before the old 120 s TTL would have freed the slots
            wait_for(lambda: job_status(conn, job_id) in ("succeeded", "failed"), timeout=60,
                     interval=0.1, message="the job ended")
            assert job_status(conn, job_id) == "succeeded"
            assert query(conn, "SELECT count(*) FROM job_citations WHERE job_id = %s AND verdict IS NULL",
                         job_id) == [(0,)]
            assert query(conn, "SELECT count(*) FROM (SELECT 1 FROM test_verdict_writes GROUP BY job_id, ordinal "
                               "HAVING count(*) > 1) twice")[0][0] == 0
            assert query(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'dead'")[0][0] == 0
        finally:
            harness.remove_verdict_log(conn)
