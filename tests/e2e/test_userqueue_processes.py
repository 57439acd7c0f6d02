"""The per-user queue with real `dramatiq` workers and `periodiq` schedulers."""

from __future__ import annotations

import os
import signal

import pytest

from analysis.settings import QueueSettings
from analysis.queue import userqueue
from tests.conftest import query
from tests.e2e import hooks
from tests.integration.conftest import assert_no_overlap, balance, given_user, wait_for

pytestmark = pytest.mark.e2e


def status(conn, job_id) -> str:
    return query(conn, "SELECT status::text FROM analysis_jobs WHERE id = %s", job_id)[0][0]


def lease_holder_pid(conn, job_id) -> int | None:
    rows = query(conn, "SELECT m.worker_id FROM citeq_messages m JOIN analysis_jobs j ON j.message_id = m.message_id "
                       "WHERE j.id = %s AND m.state = 'running'", job_id)
    return int(rows[0][0].rsplit(":", 1)[1]) if rows else None


def test_a_killed_worker_loses_no_job_and_the_successor_waits(processes, conn):
    processes.worker()
    processes.worker()
    thesis, sources = given_user(conn, 1, credits=5)
    first = userqueue.admit(1, thesis, sources, options={"seconds": 1.5}, settings=QueueSettings())
    second = userqueue.admit(1, thesis, sources, settings=QueueSettings())
    pid = wait_for(lambda: lease_holder_pid(conn, first.job_id), message="first job claimed")
    wait_for(lambda: query(conn, "SELECT count(*) FROM test_runs WHERE job_id = %s", first.job_id)[0][0],
             message="first job working")

    os.kill(pid, signal.SIGKILL)

    # The user's turn stays with the killed message: its lease runs out, the same message is
    # delivered again, and the second job's message is held (its job queued) all along,
    # seen in one snapshot with the re-delivered message running.
    def redelivered_while_the_next_waits():
        rows = query(conn, "SELECT m.attempts, m.state::text, "
                           "(SELECT state::text FROM citeq_messages n JOIN analysis_jobs s ON s.slot_message_id = n.message_id "
                           " WHERE s.id = %s), (SELECT status::text FROM analysis_jobs WHERE id = %s) "
                           "FROM citeq_messages m JOIN analysis_jobs j ON j.slot_message_id = m.message_id WHERE j.id = %s",
                     second.job_id, second.job_id, first.job_id)
        attempts, state, next_state, next_status = rows[0]
        if attempts >= 2 and state == "running":
            return (next_state, next_status)
        assert state in ("running", "queued"), f"the first job's message ended before it was seen re-delivered: {state}"
        assert (next_state, next_status) == ("held", "queued"), "the next job waits while the first is unfinished"
        return None

    assert wait_for(redelivered_while_the_next_waits, timeout=60, interval=0.02,
                    message="the killed message re-delivered") == ("held", "queued")
    wait_for(lambda: status(conn, second.job_id) == "succeeded", timeout=60, message="both jobs finished")
    assert status(conn, first.job_id) == "succeeded"
    workers = query(conn, "SELECT DISTINCT pid FROM test_runs WHERE job_id = %s", first.job_id)
    assert len(workers) == 2 and (pid,) in workers, "the first job re-ran on the other worker"
    assert_no_overlap(conn, 1)
    second_start = query(conn, "SELECT min(started_at) FROM test_runs WHERE job_id = %s", second.job_id)[0][0]
    first_end = query(conn, "SELECT max(finished_at) FROM test_runs WHERE job_id = %s", first.job_id)[0][0]
    assert first_end <= second_start, "the successor waited for the recovered job"
    assert query(conn, "SELECT count(*) FROM credit_ledger WHERE kind = 'charge'")[0][0] == 2
    assert balance(conn, 1) == 3


def test_two_schedulers_and_two_workers_promote_and_refund_once(processes, conn):
    users = range(1, 7)
    jobs = {}
    for user in users:
        thesis, sources = given_user(conn, user, credits=3)
        jobs[user] = [userqueue.admit(user, thesis, sources, settings=QueueSettings()).job_id for _ in range(3)]
    # Stalled queues: users 1-3 lost their fast path (first job finished without its tail).
    for status in ("running", "succeeded"):  # the changes the database allows
        query(conn, "UPDATE analysis_jobs SET status = %s, finished_at = CASE WHEN %s = 'succeeded' THEN now() END "
                    "WHERE id = ANY(%s)", status, status, [jobs[u][0] for u in (1, 2, 3)])
    # User 4's messages were lost (an operator flushed them: the pending job's and the held
    # ones of the queued jobs, which the broker holds now that the user's turn is a group).
    query(conn, "DELETE FROM citeq_messages WHERE group_key = 'user:4'")
    # User 5's first job started, but the provider was down (its analyze message parked,
    # holding the user's turn) and the release window is over.
    first5 = jobs[5][0]
    message_id = query(conn, "SELECT message_id FROM analysis_jobs WHERE id = %s", first5)[0][0]
    query(conn, "UPDATE citeq_messages SET state = 'parked', finished_at = now() WHERE message_id = %s", message_id)
    query(conn, "UPDATE analysis_jobs SET status = 'running', started_at = now() WHERE id = %s", first5)
    query(conn, "UPDATE held_runs SET release_attempts = 9, next_attempt_at = now() - interval '1 s', "
                "window_ends_at = now() - interval '1 s' WHERE job_id = %s", first5)

    schedulers = [processes.scheduler(), processes.scheduler()]
    processes.worker()
    processes.worker()

    every_job = [j for js in jobs.values() for j in js]
    wait_for(lambda: query(conn, "SELECT bool_and(status IN ('succeeded', 'failed')) FROM analysis_jobs")[0][0],
             timeout=90, message="every queue drained by the sweepers")
    assert query(conn, "SELECT status::text, failure_reason FROM analysis_jobs WHERE id = %s", first5) == [
        ("failed", "release_timeout")]
    assert query(conn, "SELECT job_id, count(*) FROM credit_ledger WHERE kind = 'refund' GROUP BY 1") == [(first5, 1)]
    promoted = dict(query(conn, "SELECT job_id, count(*) FROM analysis_job_events WHERE event = 'promoted' GROUP BY 1"))
    assert set(promoted.values()) == {1}, "no job promoted twice"
    assert len(every_job) == 18
    for user in users:
        assert_no_overlap(conn, user)
    assert balance(conn, 5) == 1
    # Both schedulers tick (the other one's tick may have drained the queues before a
    # starved one got the CPU at the same minute); the broker keeps one message per actor
    # and minute.
    wait_for(lambda: all("Scheduling" in processes.log(proc) for proc in schedulers), timeout=90,
             message="both schedulers ticked")
    ticks = query(conn, "SELECT idempotency_key, count(*) FROM citeq_messages "
                        "WHERE idempotency_key LIKE 'periodic:%%' GROUP BY 1")
    assert ticks and all(n == 1 for _, n in ticks)
