"""Faults injected into real processes mid-batch lose nothing (issue 11).

Each case runs a batch of several users' analyses through real `dramatiq` workers and a
`periodiq` scheduler, judged by a loopback provider slow enough that the fault lands while
judge calls are in flight. After it, every admitted job ends (succeeded, or failed with a
reason and refunded), each job is charged once, no verdict is written twice, and no message
is lost (:func:`harness.check_and_tally`). ``scripts/fault_suite.py`` runs this module and
prints the tally; ``--long`` runs the long size.
"""

from __future__ import annotations

import os
import signal
import time
from datetime import datetime, timedelta, timezone

import dramatiq
import psycopg2
import pytest

from analysis.settings import PipelineSettings, QueueSettings
from analysis import maintenance
from analysis.queue import sweepers
from tests.conftest import wait_for
from tests.faults import harness

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(
    harness.BATCH_DEADLINE + harness.SCHEDULER_AWAY_SECONDS + harness.PROVIDER_DOWN_SECONDS + 300)]


def _batch_judging_behind(proxy, faulty, conn) -> list[int]:
    """Two workers and a scheduler talking to PostgreSQL through ``proxy``, a batch
    submitted, and its judge calls under way: the moment a fault is injected."""
    faulty.env["DATABASE_URL"] = proxy.url
    faulty.worker()
    faulty.worker()
    faulty.scheduler()
    jobs = harness.submit_batch(conn)
    wait_for(lambda: harness.judge_calls_in_flight(conn), timeout=120, message="judging under way")
    return jobs


def test_connections_cut_at_random_between_workers_and_postgres(faulty, conn, db):
    with harness.CuttingProxy(db) as proxy:
        jobs = _batch_judging_behind(proxy, faulty, conn)
        proxy.cutting.set()
        wait_for(lambda: proxy.cuts >= (40 if harness.LONG else 10) or harness.terminal(conn, jobs),
                 timeout=120, interval=0.1, message="connections cut")
        proxy.cutting.clear()
        harness.check_and_tally(conn, "connections cut", jobs, proxy.cuts)
        assert proxy.cuts > 0


def test_answers_lost_after_claims_and_starts_committed(faulty, conn, db):
    """The cut that random cuts hit rarely (issue 11's intermittent): a claim or a job's
    start commits and its answer is lost with the connection. Claimed messages nobody in
    the process knows of must be re-delivered once their leases run out; a start must not
    be taken for a failure and its message acked. Faults last until every job has been
    started at least once, so each start and each analyze claim ran under them."""
    statements = [b"EXECUTE citeq_messages_exchange_many", b"EXECUTE citeq_job_start_many"]
    with harness.AnswerDroppingProxy(db, statements) as proxy:
        jobs = _batch_judging_behind(proxy, faulty, conn)
        proxy.cutting.set()
        until = time.monotonic() + 60  # a job stuck unstarted is for the checks below to report
        wait_for(lambda: harness.all_started(conn, jobs) or harness.terminal(conn, jobs) or time.monotonic() > until,
                 timeout=120, interval=0.2, message="every job started under the fault")
        proxy.cutting.clear()
        harness.check_and_tally(conn, "answers lost", jobs, proxy.cuts)
        assert proxy.dropped.get(b"EXECUTE citeq_messages_exchange_many", 0) > 0


def test_postgres_restarted_mid_batch(faulty, conn, db, pg_server):
    _, server = pg_server
    if server is None:
        pytest.skip("DATABASE_URL names an external server; the suite cannot restart it")
    faulty.worker()
    faulty.scheduler()
    jobs = harness.submit_batch(conn)
    wait_for(lambda: harness.judge_calls_in_flight(conn), timeout=120, message="judging under way")

    conn.close()
    server.restart()
    dramatiq.get_broker().pool.close()  # this test process's idle connections died with the server

    conn = psycopg2.connect(db)
    conn.autocommit = True
    try:
        harness.check_and_tally(conn, "postgres restarted", jobs, 1)
    finally:
        conn.close()


def test_a_worker_sigkilled_while_judge_calls_are_in_flight(faulty, conn):
    first = faulty.worker()
    faulty.scheduler()
    jobs = harness.submit_batch(conn)
    wait_for(lambda: harness.judge_calls_in_flight(conn), timeout=120, message="judging under way")

    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    faulty.worker()

    harness.check_and_tally(conn, "worker SIGKILLed", jobs, 1)


def test_the_provider_answering_500_for_a_while_then_recovering(faulty, conn, provider):
    faulty.worker()
    faulty.scheduler()
    jobs = harness.submit_batch(conn)
    wait_for(lambda: harness.judge_calls_in_flight(conn), timeout=120, message="judging under way")

    provider.down()
    time.sleep(harness.PROVIDER_DOWN_SECONDS)  # the fault's length, not a synchronisation
    provider.up()

    harness.check_and_tally(conn, "provider 500s", jobs, 1)


def test_the_scheduler_absent_then_back(faulty, conn):
    """Without a scheduler nothing re-sends what a killed worker's job left behind. The
    scheduler stops, the only worker is SIGKILLed mid-judging and its messages are
    dead-lettered (as after CITEQ_MAX_DELIVERIES), a new worker starts; then the scheduler
    comes back. In CI its first sweeps are run with a moved clock (the sweepers' ``now``)
    instead of waiting; the long size keeps it away ten real minutes."""
    scheduler = faulty.scheduler()
    first = faulty.worker()
    jobs = harness.submit_batch(conn)
    wait_for(lambda: harness.judge_calls_in_flight(conn), timeout=120, message="judging under way")

    os.killpg(scheduler.pid, signal.SIGTERM)
    scheduler.wait()
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    with conn.cursor() as cur:  # the killed worker's deliveries used up: only a sweeper recovers them
        cur.execute("UPDATE citeq_messages SET state = 'dead', dead_reason = 'fault suite: deliveries used up', "
                    "finished_at = now(), worker_id = NULL, lease_token = NULL, lease_expires_at = NULL "
                    "WHERE state = 'running'")
    faulty.worker()
    time.sleep(harness.SCHEDULER_AWAY_SECONDS)  # the fault's length (0 in CI), not a synchronisation

    faulty.scheduler()
    if not harness.LONG:
        later = datetime.now(timezone.utc) + timedelta(minutes=10)
        maintenance.recover_lost_work(now=later, settings=QueueSettings(), pipeline_settings=PipelineSettings())
        sweepers.resume(settings=QueueSettings())

    harness.check_and_tally(conn, "scheduler absent", jobs, 1)
