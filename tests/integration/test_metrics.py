"""Job metrics folded from the event audit equal what counting the whole history gives,
whatever the order in which transactions commit and however many scrapes run at once."""

from __future__ import annotations

import threading

import psycopg2

from analysis.settings import QueueSettings
from analysis.queue import userqueue
from analysis.surface import metrics
from analysis.queue.jobs import JobStatus
from tests.integration.conftest import given_user, query, wait_for


def counted(conn) -> dict:
    """The metrics as a scan of every row computes them: the ground truth."""
    bounds = [float(b) for b in metrics.BUCKETS]
    waits = [r[0] for r in query(conn, """
        SELECT extract(epoch FROM min(e.at) - j.created_at)::float8 FROM analysis_job_events e
        JOIN analysis_jobs j ON j.id = e.job_id WHERE e.event = 'started' GROUP BY j.id, j.created_at""")]
    runs = [r[0] for r in query(conn, """
        SELECT extract(epoch FROM finished_at - started_at)::float8 FROM analysis_jobs
        WHERE status IN ('succeeded', 'failed') AND started_at IS NOT NULL""")]

    def histogram(values):
        return ([(b, sum(1 for v in values if v <= b)) for b in bounds], len(values), round(sum(values), 6))

    return {
        "jobs": {**dict.fromkeys(["queued", "pending", "running", "succeeded", "failed", "canceled"], 0),
                 **dict(query(conn, "SELECT status::text, count(*) FROM analysis_jobs GROUP BY status"))},
        "events": dict(query(conn, "SELECT event, count(*) FROM analysis_job_events GROUP BY event")),
        "refunds": query(conn, "SELECT count(*) FROM credit_ledger WHERE kind = 'refund'")[0][0],
        "wait": histogram(waits),
        "run": histogram(runs),
    }


def folded(broker) -> dict:
    m = metrics.job_metrics(broker)
    return {"jobs": m.jobs_by_status, "events": m.events, "refunds": m.refunds,
            "wait": (m.wait.buckets, m.wait.count, round(m.wait.sum, 6)),
            "run": (m.run.buckets, m.run.count, round(m.run.sum, 6))}


def pending_jobs(conn) -> list[tuple[int, int, str]]:
    return [tuple(r) for r in query(conn, "SELECT id, user_id, message_id FROM analysis_jobs "
                                          "WHERE status = 'pending' ORDER BY id")]


def some_work(broker, conn, users: range) -> None:
    """Admit three jobs per user; run the first: one succeeds, one fails (refunded), one is
    started twice (a re-delivery after a crash); cancel a queued job."""
    for user in users:
        thesis, sources = given_user(conn, user, credits=5)
        for _ in range(3):
            userqueue.admit(user, thesis, sources, broker=broker, settings=QueueSettings())
    started = pending_jobs(conn)
    userqueue.start_jobs([(job_id, message_id) for job_id, _, message_id in started], broker=broker,
                         settings=QueueSettings())
    userqueue.start_jobs([(job_id, message_id) for job_id, _, message_id in started[:1]], broker=broker,
                         settings=QueueSettings())
    outcomes = [JobStatus.SUCCEEDED, JobStatus.FAILED] * len(started)
    userqueue.complete_jobs([userqueue.Completion(job_id, user_id, outcome)
                             for (job_id, user_id, _), outcome in zip(started, outcomes)], broker=broker)
    queued = query(conn, "SELECT max(id) FROM analysis_jobs WHERE status = 'queued'")[0][0]
    userqueue.cancel(queued, broker=broker)


def test_folded_totals_equal_a_count_of_the_whole_history(queue_broker, conn):
    some_work(queue_broker, conn, range(1, 4))
    assert folded(queue_broker) == counted(conn)
    some_work(queue_broker, conn, range(4, 6))  # folded on top of the first totals
    assert folded(queue_broker) == counted(conn)
    assert metrics.fold(queue_broker) == 0  # nothing new: nothing folded twice


def test_an_event_that_commits_after_later_ones_is_counted_once(queue_broker, conn, db):
    thesis, sources = given_user(conn, 1)
    some_work(queue_broker, conn, range(2, 3))
    early = psycopg2.connect(db)
    try:
        # This transaction writes its event first (the lower transaction id) and commits last.
        userqueue.admit(1, thesis, sources, broker=queue_broker, connection=early, settings=QueueSettings())
        some_work(queue_broker, conn, range(3, 5))
        m = metrics.job_metrics(queue_broker)
        assert m.events["admitted"] < counted(conn)["events"]["admitted"]  # held back, not lost
        early.commit()
    finally:
        early.close()
    assert folded(queue_broker) == counted(conn)


def test_a_scrape_during_another_fold_skips_it_and_nothing_is_counted_twice(queue_broker, conn, db):
    some_work(queue_broker, conn, range(1, 4))
    first = psycopg2.connect(db)
    second: list[int] = []
    try:
        with first.cursor() as cur:
            assert metrics.fold_in(cur) > 0  # folded, not committed yet
            scrape = threading.Thread(target=lambda: second.append(metrics.fold(queue_broker)))
            scrape.start()
            # Done at once (it skipped), or stuck behind the first fold's rows (it did not).
            wait_for(lambda: not scrape.is_alive() or query(conn, "SELECT count(*) FROM pg_locks "
                                                                  "WHERE NOT granted")[0][0],
                     message="the second fold returned or waits")
        first.commit()
    finally:
        first.close()
    scrape.join()
    assert second == [0]
    assert folded(queue_broker) == counted(conn)


def test_other_histogram_bounds_start_the_totals_over(queue_broker, conn, monkeypatch):
    some_work(queue_broker, conn, range(1, 4))
    folded(queue_broker)
    monkeypatch.setattr(metrics, "BUCKETS", (0.001, 1, 60))
    assert folded(queue_broker) == counted(conn)
