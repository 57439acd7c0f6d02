"""Operator controls of the broker's queues on a real PostgreSQL: pause and resume (the
claim gives nothing out of a paused queue), and processed / failed counts of the last hour
that survive pruning, purging and retrying."""

from __future__ import annotations

import dramatiq

from broker import PostgresBroker, admin, controls
from tests.conftest import query, wait_for


def history(broker) -> dict[str, tuple[int, int]]:
    return {h.queue_name: (h.processed, h.failed) for h in controls.queue_history(broker)}


def test_a_paused_queue_gives_nothing_out_until_it_is_resumed(broker, conn):
    @dramatiq.actor(queue_name="reports")
    def job():
        pass

    # Given a paused queue with a due message
    controls.pause_queue(broker, "reports", by="test")
    job.send()
    # When a consumer claims, Then it gets nothing, and the message waits
    assert broker.exchange("reports", [], [], 10)[0] == []
    assert query(conn, "SELECT state::text FROM citeq_messages") == [("queued",)]
    assert next(h for h in controls.queue_history(broker) if h.queue_name == "reports").paused_at is not None

    # When it is resumed, Then the next claim takes the message
    assert controls.resume_queue(broker, "reports") is True
    claimed, _ = broker.exchange("reports", [], [], 10)
    assert len(claimed) == 1
    assert controls.resume_queue(broker, "reports") is False  # resuming twice is harmless


def test_pausing_one_queue_leaves_the_others_running(broker, worker, conn):
    ran = []

    @dramatiq.actor(queue_name="held")
    def held():
        ran.append("held")

    @dramatiq.actor(queue_name="free")
    def free():
        ran.append("free")

    worker.stop()  # restart the worker so it consumes the queues declared above
    controls.pause_queue(broker, "held")
    w = dramatiq.Worker(broker, worker_threads=2, worker_timeout=100)
    w.start()
    try:
        held.send()
        free.send()
        wait_for(lambda: ran == ["free"], message="the free queue's message ran")
        assert query(conn, "SELECT state::text FROM citeq_messages WHERE queue_name = 'held'") == [("queued",)]
        controls.resume_queue(broker, "held")
        wait_for(lambda: sorted(ran) == ["free", "held"], message="the resumed queue's message ran")
    finally:
        w.stop()


def test_processed_and_failed_counts_survive_prune_purge_and_retry(db, conn):
    b = PostgresBroker(url=db, retention_seconds=60)

    @dramatiq.actor(broker=b, queue_name="reports")
    def job():
        pass

    b.enqueue_many([job.message() for _ in range(6)])
    query(conn, "UPDATE citeq_messages SET state='done', finished_at = now() - interval '2 minutes' WHERE id <= 3")
    query(conn, "UPDATE citeq_messages SET state='dead', dead_reason='boom', finished_at = now() WHERE id > 3")
    query(conn, "INSERT INTO citeq_messages (message_id, queue_name, actor_name, state, payload, finished_at) "
                "VALUES ('old', 'reports', 'job', 'done', '\\x00', now() - interval '2 hours')")
    assert history(b) == {"reports": (3, 3)}  # the two-hour-old one is outside the hour

    assert b.prune() == 4
    assert query(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'done'")[0][0] == 0
    assert history(b) == {"reports": (3, 3)}

    dead = [d.id for d in admin.dead_letters(b)]
    assert admin.purge_dead_letters(b, ids=dead[:1]) == 1
    assert admin.retry_dead_letters(b, ids=dead[1:2]) == 1
    assert history(b) == {"reports": (3, 3)}
    later = query(conn, "SELECT now() + interval '2 hours'")[0][0]
    assert {h.queue_name: (h.processed, h.failed) for h in controls.queue_history(b, now=later)} == {"reports": (0, 0)}
    b.close()
