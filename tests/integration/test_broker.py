"""The Postgres broker with Dramatiq's ordinary usage, on a real PostgreSQL."""

from __future__ import annotations

import select
import threading
import time
import uuid

import dramatiq
import psycopg2
import psycopg2.errors
import psycopg2.extensions
import pytest
from dramatiq.message import Message
from dramatiq.middleware import TimeLimitExceeded

from broker import DatabaseUnavailable, MessageTooLarge, PostgresBroker, admin
from broker.consumer import LeasedMessage
from tests.conftest import query, wait_for


def stop_lease_keeper(b):
    """Make a broker's process look dead to the others: no more heartbeats or reaping."""
    b._lease_keeper.stop()
    b._lease_keeper.join(10)


def states(conn):
    return dict(query(conn, "SELECT state::text, count(*) FROM citeq_messages GROUP BY 1"))


def test_send_with_args_and_result(broker, worker):
    @dramatiq.actor(store_results=True)
    def add(x, y, *, z=0):
        return x + y + z

    message = add.send(1, 2, z=3)

    assert message.get_result(block=True, timeout=10_000) == 6


def test_delay_holds_message_until_its_eta(broker, worker, conn):
    @dramatiq.actor(store_results=True)
    def now():
        return "ran"

    message = now.send_with_options(delay=400)

    assert message.get_result(block=True, timeout=10_000) == "ran"
    waited = query(conn, "SELECT extract(epoch FROM started_at - enqueued_at) FROM citeq_messages")[0][0]
    assert waited >= 0.4


def test_retries_with_backoff_then_success(broker, worker, conn):
    calls = []

    @dramatiq.actor(max_retries=3, min_backoff=10, max_backoff=50, store_results=True)
    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise RuntimeError("transient")
        return len(calls)

    message = flaky.send()

    assert message.get_result(block=True, timeout=10_000) == 3
    broker.join(flaky.queue_name, timeout=10_000)
    assert states(conn) == {"done": 3}


def test_max_retries_exhausted_dead_letters_with_the_traceback(broker, worker, conn):
    @dramatiq.actor(max_retries=1, min_backoff=10, max_backoff=20)
    def doomed():
        raise ValueError("always broken")

    doomed.send()

    # join raises the message's own exception (as StubBroker does), with the worker's traceback
    with pytest.raises(ValueError, match="always broken") as raised:
        broker.join(doomed.queue_name, timeout=10_000)
    assert 'in doomed\n    raise ValueError("always broken")' in str(raised.value.__cause__)
    [letter] = admin.dead_letters(broker)
    assert letter.actor_name == "doomed" and "ValueError: always broken" in letter.reason


def test_time_limit_kills_a_slow_actor(broker, worker):
    release = threading.Event()

    @dramatiq.actor(time_limit=200, max_retries=0)
    def slow():
        while not release.is_set():  # short waits: the time limit is an async exception
            time.sleep(0.01)

    broker.emit_after("process_boot")  # what `dramatiq` does in a worker process: starts the timer
    slow.send()

    try:
        with pytest.raises(TimeLimitExceeded):
            broker.join(slow.queue_name, timeout=10_000)
    finally:
        release.set()


def test_group_and_pipeline_with_results(broker, worker):
    @dramatiq.actor(store_results=True)
    def double(x):
        return 2 * x

    @dramatiq.actor(store_results=True)
    def inc(x):
        return x + 1

    g = dramatiq.group([double.message(i) for i in range(5)]).run()
    assert sorted(g.get_results(block=True, timeout=10_000)) == [0, 2, 4, 6, 8]

    p = dramatiq.pipeline([double.message(3), inc.message(), double.message()]).run()
    assert p.get_result(block=True, timeout=10_000) == 14


def test_send_inside_transaction_is_visible_only_after_commit(broker, conn):
    @dramatiq.actor
    def noop():
        pass

    with broker.transaction() as cur:
        cur.execute("SELECT 1")
        noop.send()
        assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 0
    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 1

    with pytest.raises(RuntimeError):
        with broker.transaction():
            noop.send()
            raise RuntimeError("application failed after sending")
    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 1


def test_send_bound_to_the_callers_own_connection(broker, db, conn):
    @dramatiq.actor
    def noop():
        pass

    own = psycopg2.connect(db)
    with broker.bind(own):
        noop.send()
    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 0
    own.rollback()
    own.close()
    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 0


def test_idempotency_key_returns_the_first_message(broker, conn):
    @dramatiq.actor
    def charge(amount):
        pass

    first = charge.send_with_options(args=(10,), idempotency_key="order-1")
    again = charge.send_with_options(args=(99,), idempotency_key="order-1")

    assert again.message_id == first.message_id and again.args == (10,)
    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 1


def test_idempotency_key_under_concurrent_sends(broker, conn):
    @dramatiq.actor
    def charge(n):
        pass

    barrier = threading.Barrier(16)
    ids = []

    def send(i):
        barrier.wait()
        ids.append(charge.send_with_options(args=(i,), idempotency_key="same").message_id)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(16)]
    [t.start() for t in threads]
    [t.join() for t in threads]

    assert len(set(ids)) == 1 and len(ids) == 16
    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 1


def test_32_threads_sending_lose_nothing_on_a_bounded_pool(broker, worker, conn):
    small = PostgresBroker(url=broker.settings.database_url, pool_size=4, pool_timeout=60)
    small.actors, small.queues = broker.actors, broker.queues
    seen = []
    sending = threading.Event()

    @dramatiq.actor
    def record(i):
        pass

    def sample_connections():
        while not sending.is_set():
            seen.append(query(conn, "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
                              small.application_name)[0][0])

    def send(t):
        for i in range(50):
            small.enqueue(record.message(t * 50 + i))

    sampler = threading.Thread(target=sample_connections)
    sampler.start()
    threads = [threading.Thread(target=send, args=(t,)) for t in range(32)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    sending.set()
    sampler.join()
    broker.join(record.queue_name, timeout=60_000)

    assert states(conn) == {"done": 1600}
    assert 1 <= max(seen) <= 4
    small.close()


def test_message_too_large_is_refused_at_send(db, conn):
    b = PostgresBroker(url=db, max_message_bytes=2048)

    @dramatiq.actor(broker=b)
    def upload(blob):
        pass

    with pytest.raises(MessageTooLarge, match="limit is 2048"):
        upload.send("x" * 5000)
    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 0
    b.close()


def test_unknown_actor_is_dead_lettered_and_the_worker_goes_on(broker, worker, conn):
    @dramatiq.actor(store_results=True)
    def known():
        return "fine"

    ghost = Message(queue_name="default", actor_name="ghost", args=(), kwargs={}, options={})
    query(conn, "INSERT INTO citeq_messages (message_id, queue_name, actor_name, payload) "
                "VALUES (%s, 'default', 'ghost', %s)", ghost.message_id, ghost.encode())
    query(conn, "INSERT INTO citeq_messages (message_id, queue_name, actor_name, payload) "
                "VALUES (%s, 'default', 'garbage', %s)", str(uuid.uuid4()), b"{not json")

    assert known.send().get_result(block=True, timeout=10_000) == "fine"
    wait_for(lambda: states(conn).get("dead") == 2)
    reasons = {r[0]: r[1] for r in query(conn, "SELECT actor_name, dead_reason FROM citeq_messages WHERE state='dead'")}
    assert "ghost" in reasons["ghost"] and "ActorNotFound" in reasons["ghost"]
    assert reasons["garbage"].startswith("undecodable payload")


def test_late_ack_of_a_redelivered_message_is_rejected(broker, conn):
    @dramatiq.actor
    def job():
        pass

    job.send()
    zombie = broker.consume("default", prefetch=1, timeout=100)
    [stale] = [next(zombie)]
    assert isinstance(stale, LeasedMessage)
    stop_lease_keeper(broker)
    # The zombie stops heartbeating: its lease runs out and the reaper re-queues the message.
    query(conn, "UPDATE citeq_messages SET lease_expires_at = now() - interval '1 second'")
    assert [r[1] for r in broker.reap()] == ["queued"]
    other_process = PostgresBroker(url=broker.settings.database_url)
    other_process.actors, other_process.queues = broker.actors, broker.queues
    fresh = other_process.consume("default", prefetch=1, timeout=100)
    redelivered = next(fresh)
    assert redelivered.row_id == stale.row_id and redelivered.lease_token != stale.lease_token

    zombie.ack(stale)
    zombie.close()  # writes the late ack

    assert broker.queue_state("default").rejected == 1
    assert states(conn) == {"running": 1}
    fresh.ack(redelivered)
    fresh.close()
    assert states(conn) == {"done": 1}
    other_process.close()


def test_expired_leases_dead_letter_after_max_deliveries(db, conn):
    b = PostgresBroker(url=db, max_deliveries=2)

    @dramatiq.actor(broker=b)
    def crashy():
        pass

    crashy.send()
    for expected in ["queued", "dead"]:
        process = PostgresBroker(url=db)  # each delivery goes to a new process that then dies
        process.actors, process.queues = b.actors, b.queues
        assert next(process.consume("default", prefetch=1, timeout=50)) is not None
        stop_lease_keeper(process)
        query(conn, "UPDATE citeq_messages SET lease_expires_at = now() - interval '1 second' WHERE state='running'")
        assert [r[1] for r in b.reap()] == [expected]
        process.close()
    reason = query(conn, "SELECT dead_reason FROM citeq_messages")[0][0]
    assert "lease expired on 2 delivery" in reason
    b.close()


def test_a_reaped_message_wakes_its_queue(db, conn):
    # Given a message claimed by a process that died, and a listener on the wake-up channel
    b = PostgresBroker(url=db)

    @dramatiq.actor(broker=b, queue_name="mail")
    def deliver():
        pass

    deliver.send()
    process = PostgresBroker(url=db)
    process.actors, process.queues = b.actors, b.queues
    assert next(process.consume("mail", prefetch=1, timeout=50)) is not None
    stop_lease_keeper(process)
    listener = psycopg2.connect(db)
    listener.autocommit = True
    listener.cursor().execute("LISTEN citeq_wakeup")
    query(conn, "UPDATE citeq_messages SET lease_expires_at = now() - interval '1 second' WHERE state='running'")
    # When the reaper re-queues it
    assert [r[1] for r in b.reap()] == ["queued"]
    # Then its queue is woken (the lease update before it woke nobody)
    assert select.select([listener], [], [], 5)[0]
    listener.poll()
    assert [n.payload for n in listener.notifies] == ["mail"]
    listener.close()
    process.close()
    b.close()


def test_heartbeat_extends_the_leases_of_held_messages(broker, conn):
    @dramatiq.actor
    def job():
        pass

    job.send()
    c = broker.consume("default", prefetch=1, timeout=50)
    assert next(c) is not None
    query(conn, "UPDATE citeq_messages SET lease_expires_at = now() + interval '1 second'")
    stop_lease_keeper(broker)  # its own beats would lock the rows this one extends (and skips)

    broker._lease_keeper.renew()

    left = query(conn, "SELECT extract(epoch FROM lease_expires_at - now()) FROM citeq_messages")[0][0]
    assert left > 4  # the broker fixture's lease is 5 s
    assert query(conn, "SELECT count(*) FROM citeq_workers WHERE worker_id = %s", broker.worker_id)[0][0] == 1


def test_a_claim_whose_answer_was_lost_is_not_kept_alive_by_the_heartbeat(broker, conn, monkeypatch):
    """The connection broke after the server had committed a claim (issue 11): the row is
    running under this worker's id, but no thread here will ever run it. Its lease must run
    out for the reaper to give it to another delivery; a heartbeat that extended every row
    under its name kept it alive for as long as the process lived."""
    @dramatiq.actor
    def job():
        pass

    job.send()
    consumer = broker.consume("default", prefetch=1, timeout=50)
    stop_lease_keeper(broker)  # its beats are called by the test below
    execute = broker.connector.execute

    def answer_lost(name, **params):
        rows = execute(name, **params)  # runs and commits on the real database
        if name == "messages_exchange_many":
            raise DatabaseUnavailable("server closed the connection unexpectedly")
        return rows

    monkeypatch.setattr(broker.connector, "execute", answer_lost)
    with pytest.raises(DatabaseUnavailable):
        next(consumer)
    monkeypatch.undo()
    assert states(conn) == {"running": 1}
    assert query(conn, "SELECT worker_id FROM citeq_messages")[0][0] == broker.worker_id
    query(conn, "UPDATE citeq_messages SET lease_expires_at = now() + interval '1 second'")

    broker._lease_keeper.renew()

    later = query(conn, "SELECT now() + interval '2 seconds'")[0][0]  # within a lease of the beat
    assert [r[1] for r in broker.reap(now=later)] == ["queued"]
    other_process = PostgresBroker(url=broker.settings.database_url)
    other_process.actors, other_process.queues = broker.actors, broker.queues
    fresh = other_process.consume("default", prefetch=1, timeout=100)
    redelivered = next(fresh)
    assert redelivered is not None and redelivered.message_id == query(conn, "SELECT message_id FROM citeq_messages")[0][0]
    fresh.ack(redelivered)
    fresh.close()
    assert states(conn) == {"done": 1}
    other_process.close()


def test_a_requeue_that_failed_leaves_the_leases_to_run_out(broker, conn, monkeypatch):
    """Claimed messages given back while the database is away stay running under this
    worker's id; they are not its leases any more, so the heartbeat lets them lapse."""
    @dramatiq.actor
    def job():
        pass

    job.send()
    consumer = broker.consume("default", prefetch=1, timeout=50)
    stop_lease_keeper(broker)
    held = next(consumer)

    def database_away(rows):
        raise DatabaseUnavailable("server closed the connection unexpectedly")

    monkeypatch.setattr(broker, "requeue_rows", database_away)
    with pytest.raises(DatabaseUnavailable):
        consumer.requeue([held])
    monkeypatch.undo()

    assert broker.queue_state("default").outstanding == 0  # its prefetch room is free again
    query(conn, "UPDATE citeq_messages SET lease_expires_at = now() + interval '1 second'")
    broker._lease_keeper.renew()
    later = query(conn, "SELECT now() + interval '2 seconds'")[0][0]
    assert [r[1] for r in broker.reap(now=later)] == ["queued"]


def test_a_keyed_send_waits_out_a_database_blip(broker, conn, monkeypatch):
    """periodiq's scheduler dies of an error raised by a send, and then no sweep runs any
    more (issue 11). Its ticks are keyed, so the broker tries a keyed send again until the
    database answers; the key keeps it one message."""
    @dramatiq.actor
    def sweep():
        pass

    insert_on, failures = broker.store._insert_on, []

    def connection_breaks(connection, params):
        if len(failures) < 3:
            failures.append(params["idempotency_key"])
            raise psycopg2.OperationalError("server closed the connection unexpectedly")
        return insert_on(connection, params)

    monkeypatch.setattr(broker.store, "_insert_on", connection_breaks)
    sweep.send_with_options(scheduled_at="2026-12-01T07:05:00+00:00")
    sweep.send_with_options(scheduled_at="2026-12-01T07:05:00+00:00")  # a second scheduler's tick

    assert failures == ["periodic:sweep:2026-12-01T07:05Z"] * 3
    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 1


def test_enqueue_notifies_the_queue_name_only(broker, db):
    @dramatiq.actor(queue_name="mail")
    def send_mail(to):
        pass

    listener = psycopg2.connect(db)
    listener.autocommit = True
    listener.cursor().execute("LISTEN citeq_wakeup")
    send_mail.send("someone@example.org")

    assert select.select([listener], [], [], 5)[0]
    listener.poll()
    assert [n.payload for n in listener.notifies] == ["mail"]
    listener.close()


def test_a_lost_notification_costs_only_a_poll(broker, conn):
    @dramatiq.actor(store_results=True)
    def ping():
        return "pong"

    w = dramatiq.Worker(broker, worker_threads=1, worker_timeout=100)
    w.start()
    wait_for(lambda: broker._listener is not None and broker._listener.is_alive())
    broker._listener.stop()  # no wake-ups any more: the consumers must find work by polling
    broker._listener.join(5)
    try:
        assert ping.send().get_result(block=True, timeout=10_000) == "pong"
    finally:
        w.stop()


def test_periodic_ticks_are_deduplicated_per_actor_and_minute(broker, conn):
    @dramatiq.actor
    def sweep():
        pass

    sweep.send_with_options(scheduled_at="2026-11-29T10:15:00+00:00")
    sweep.send_with_options(scheduled_at="2026-11-29T11:15:01+01:00")  # same minute, late scheduler
    sweep.send_with_options(scheduled_at="2026-11-29T10:16:00+00:00")

    keys = [r[0] for r in query(conn, "SELECT idempotency_key FROM citeq_messages ORDER BY id")]
    assert keys == ["periodic:sweep:2026-11-29T10:15Z", "periodic:sweep:2026-11-29T10:16Z"]


def test_dead_letters_can_be_listed_retried_and_purged(broker, conn):
    @dramatiq.actor(max_retries=0)
    def fails_once(flag):
        pass

    for i in range(3):
        fails_once.send(i)
    query(conn, "UPDATE citeq_messages SET state='dead', dead_reason='boom', finished_at=now()")

    letters = admin.dead_letters(broker)
    assert [letter.args for letter in letters] == [[2], [1], [0]]
    assert admin.retry_dead_letters(broker, ids=[letters[0].id]) == 1
    assert states(conn) == {"dead": 2, "queued": 1}
    assert admin.purge_dead_letters(broker, queue_name="default") == 2
    assert states(conn) == {"queued": 1}


def test_a_retried_dead_letter_gets_its_full_retries_again(broker, worker, conn):
    calls = []

    @dramatiq.actor(max_retries=1, min_backoff=10, max_backoff=20, store_results=True)
    def flaky_twice():
        calls.append(1)
        if len(calls) <= 3:
            raise RuntimeError("transient")  # the delivery and its one retry die, and once more
        return len(calls)

    message = flaky_twice.send()
    with pytest.raises(RuntimeError, match="transient"):
        broker.join(flaky_twice.queue_name, timeout=10_000)

    [letter] = admin.dead_letters(broker)
    assert admin.retry_dead_letters(broker, ids=[letter.id]) == 1
    broker.join(flaky_twice.queue_name, timeout=10_000)  # fails fast if it died again

    assert len(calls) == 4 and message.get_result() == 4  # its one retry was available again
    assert admin.dead_letters(broker) == []


def test_queue_stats_in_one_query(broker, conn):
    @dramatiq.actor(queue_name="a")
    def a():
        pass

    @dramatiq.actor(queue_name="b")
    def b():
        pass

    for _ in range(3):
        a.send()
    a.send_with_options(delay=60_000)
    b.send()
    query(conn, "UPDATE citeq_messages SET enqueued_at = now() - interval '10 s', eta = now() - interval '10 s' "
                "WHERE queue_name = 'b'")
    query(conn, "UPDATE citeq_messages SET state='dead' WHERE id = (SELECT min(id) FROM citeq_messages)")

    stats = {s.queue_name: s for s in admin.queue_stats(broker)}

    assert (stats["a"].ready, stats["a"].delayed, stats["a"].dead) == (2, 1, 1)
    assert stats["b"].ready == 1 and stats["b"].oldest_age_seconds >= 10


def test_finished_messages_are_pruned_after_the_retention(db, conn):
    b = PostgresBroker(url=db, retention_seconds=60)

    @dramatiq.actor(broker=b)
    def job():
        pass

    b.enqueue_many([job.message() for _ in range(5)])
    query(conn, "UPDATE citeq_messages SET state='done', finished_at = now() - interval '2 minutes' "
                "WHERE id <= 3")

    assert b.prune() == 3
    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 2
    b.close()


def test_join_and_flush(broker, conn):
    @dramatiq.actor
    def job():
        pass

    for _ in range(4):
        job.send()
    broker.flush("default")
    broker.join("default", timeout=1000)

    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 0


def test_a_statement_deferred_to_the_commit_that_fails_rolls_back_the_whole_transaction(broker, conn):
    @dramatiq.actor
    def noop():
        pass

    query(conn, "CREATE TABLE deferred_probe (n int CHECK (n > 0))")
    with pytest.raises(psycopg2.errors.CheckViolation):
        with broker.transaction() as cur:
            cur.execute("INSERT INTO deferred_probe VALUES (1)")
            noop.send()  # written with the commit, like the statement below
            broker.execute_at_commit(cur, b"INSERT INTO deferred_probe VALUES (-1)")
            assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 0
    assert query(conn, "SELECT count(*) FROM deferred_probe")[0][0] == 0
    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 0

    with broker.transaction() as cur:
        broker.execute_at_commit(cur, b"INSERT INTO deferred_probe VALUES (2)")
    assert query(conn, "SELECT n FROM deferred_probe") == [(2,)]
    with broker.connection() as c:
        assert c.get_transaction_status() == psycopg2.extensions.TRANSACTION_STATUS_IDLE


def test_a_transaction_whose_error_was_caught_inside_fails_loudly_instead_of_committing(broker, conn):
    @dramatiq.actor
    def noop():
        pass

    with pytest.raises(psycopg2.errors.InFailedSqlTransaction):
        with broker.transaction() as cur:
            noop.send()
            try:
                cur.execute("SELECT 1 / 0")
            except psycopg2.errors.DivisionByZero:
                pass  # swallowed: the transaction is aborted all the same
    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 0
