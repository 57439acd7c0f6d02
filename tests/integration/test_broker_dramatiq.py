"""What a Dramatiq user moving from StubBroker or RedisBroker relies on (issue 12): join
re-raises the dead letter's own exception, priorities, delays on time, results opt-in,
worker liveness and the pool's idle connections."""

from __future__ import annotations

import logging
import select
import threading
from contextlib import contextmanager
from unittest.mock import patch

import dramatiq
import dramatiq.worker
import psycopg2
import pytest
from dramatiq.errors import ActorNotFound, RateLimitExceeded
from dramatiq.message import Message
from dramatiq.middleware import SkipMessage
from dramatiq.results import Results

from broker import DeadLettered, PostgresBroker, admin
from broker import failures
from broker.failures import describe, rebuild
from broker.results import PostgresBackend
from tests.conftest import query, wait_for


class CustomError(Exception):
    """An application's own exception, importable by module path."""


class CodedError(Exception):
    """An exception whose constructor formats its text and keeps what it was given."""

    def __init__(self, code: int, detail: str = "") -> None:
        super().__init__(f"code {code}")
        self.code = code
        self.detail = detail


# -- join(fail_fast=True) ---------------------------------------------------------------------


def test_join_raises_the_actors_own_exception_with_the_traceback(broker, worker):
    @dramatiq.actor(max_retries=0)
    def fails():
        raise CustomError("bad input", 42)

    fails.send()

    with pytest.raises(CustomError) as raised:
        broker.join(fails.queue_name, timeout=10_000)
    assert raised.value.args == ("bad input", 42)
    cause = raised.value.__cause__
    assert isinstance(cause, DeadLettered)
    assert "was dead-lettered" in str(cause) and 'raise CustomError("bad input", 42)' in str(cause)


def test_join_raises_actor_not_found_for_an_unknown_actor(broker, worker):
    broker.declare_queue("some-queue")
    broker.enqueue(Message(queue_name="some-queue", actor_name="some-actor", args=(), kwargs={}, options={}))

    with pytest.raises(ActorNotFound, match=r"^some-actor$"):
        broker.join("some-queue", fail_fast=True, timeout=10_000)


def test_join_raises_skip_message_of_the_age_limit(broker, worker):
    runs = []

    @dramatiq.actor(max_age=1)
    def stale():
        runs.append(1)

    stale.send_with_options(delay=20)

    with pytest.raises(SkipMessage):
        broker.join(stale.queue_name, timeout=10_000)
    assert runs == []


def test_join_raises_rate_limit_exceeded(broker, worker):
    @dramatiq.actor(max_retries=0)
    def limited():
        raise RateLimitExceeded("exceeded")

    limited.send()

    with pytest.raises(RateLimitExceeded, match="exceeded"):
        broker.join(limited.queue_name, timeout=10_000)


def _a_local_exception_dead_lettered():
    """(the actor's queue, the exception class defined in here) after one message died of it."""
    class Local(Exception):
        pass

    @dramatiq.actor(max_retries=0)
    def fails():
        raise Local("nowhere to import me from")

    fails.send()
    return fails.queue_name, Local


def test_join_raises_a_local_exception_class_its_own_worker_saw(broker, worker):
    queue_name, local = _a_local_exception_dead_lettered()

    # This process's worker saw the type: found again by its path, as StubBroker raises it.
    with pytest.raises(local, match="nowhere to import me from") as raised:
        broker.join(queue_name, timeout=10_000)
    assert isinstance(raised.value.__cause__, DeadLettered)


def test_join_falls_back_to_dead_lettered_for_a_local_exception_class_seen_elsewhere(broker, worker, conn):
    queue_name, _ = _a_local_exception_dead_lettered()
    wait_for(lambda: query(conn, "SELECT count(*) FROM citeq_messages WHERE queue_name = %s AND state = 'dead'",
                           queue_name)[0][0], message="the message dead-lettered")
    failures._described.clear()  # as in a process whose workers never saw the type

    with pytest.raises(DeadLettered, match="nowhere to import me from"):
        broker.join(queue_name, timeout=10_000)


def test_join_raises_a_dead_letter_on_every_join_until_the_queue_is_flushed(broker, worker):
    @dramatiq.actor(max_retries=0)
    def fails():
        raise CustomError("until flushed")

    fails.send()
    broker.join(fails.queue_name, timeout=10_000, fail_fast=False)
    for _ in range(2):  # as StubBroker: its dead letters stay until flush_all
        with pytest.raises(CustomError, match="until flushed"):
            broker.join(fails.queue_name, timeout=10_000)

    broker.flush_all()
    broker.join(fails.queue_name, timeout=10_000)


def test_join_raises_only_once_the_queue_has_drained(broker, worker, conn):
    ran = []

    @dramatiq.actor(max_retries=0)
    def fails():
        raise CustomError("died first")

    @dramatiq.actor
    def later():
        ran.append("later")

    fails.send()
    wait_for(lambda: query(conn, "SELECT 1 FROM citeq_messages WHERE state = 'dead'"), message="a dead letter")
    later.send_with_options(delay=1000)

    # As StubBroker's: the dead letter is raised after the queue's other messages have run,
    # so a test can assert on what they did right after the raise.
    with pytest.raises(CustomError, match="died first"):
        broker.join(fails.queue_name, timeout=10_000)
    assert ran == ["later"]


def test_join_takes_fail_fast_none_from_the_brokers_default(broker, worker):
    @dramatiq.actor(max_retries=0)
    def fails():
        raise CustomError("default")

    fails.send()
    with pytest.raises(CustomError):
        broker.join(fails.queue_name, timeout=10_000, fail_fast=None)
    broker.fail_fast_default = False
    broker.join(fails.queue_name, timeout=10_000, fail_fast=None)


def test_join_raises_the_exception_with_its_attributes(broker, worker):
    @dramatiq.actor(max_retries=0)
    def fails():
        raise CodedError(5, detail="bad row")

    fails.send()
    with pytest.raises(CodedError, match=r"^code 5$") as raised:
        broker.join(fails.queue_name, timeout=10_000)
    assert raised.value.args == ("code 5",)
    assert (raised.value.code, raised.value.detail) == (5, "bad row")


def test_dead_letters_lists_the_messages_that_died_since_the_last_flush(broker, worker):
    @dramatiq.actor(max_retries=0)
    def fails(n):
        raise CodedError(n)

    sent = [fails.send(n) for n in range(2)]
    broker.join(fails.queue_name, timeout=10_000, fail_fast=False)

    # As StubBroker's: the messages themselves, each with the exception it died of.
    assert sorted(broker.dead_letters, key=lambda m: m.args[0]) == sent
    assert sorted(m._exception.code for m in broker.dead_letters) == [0, 1]
    assert len(broker.dead_letters_by_queue[fails.queue_name]) == 2

    broker.flush_all()
    assert broker.dead_letters == [] and broker.dead_letters_by_queue[fails.queue_name] == []


def test_exception_description_survives_arguments_json_cannot_carry():
    path, args = describe(CustomError(object()))
    assert path == f"{__name__}:CustomError"
    rebuilt = rebuild(path, __import__("json").loads(args))
    assert isinstance(rebuilt, CustomError) and "object" in rebuilt.args[0]
    assert rebuild("no.such.module:Thing", []) is None
    assert rebuild("builtins:len", []) is None  # not an exception type


def test_exception_description_keeps_attributes_json_can_carry_and_not_too_long():
    error = CodedError(7, detail="x" * (failures.MAX_ATTRIBUTE_CHARS + 1))
    error.sock = object()
    path, stored = describe(error)
    rebuilt = rebuild(path, __import__("json").loads(stored))
    assert rebuilt.args == ("code 7",) and rebuilt.code == 7
    assert not hasattr(rebuilt, "detail") and not hasattr(rebuilt, "sock")


# -- priority -------------------------------------------------------------------------------


def test_lower_priority_value_is_claimed_first_then_eta_then_id(broker, conn):
    @dramatiq.actor(priority=10)
    def lo(n):
        pass

    @dramatiq.actor(priority=0)
    def hi(n):
        pass

    for n in range(3):
        lo.send(n)
        hi.send(n)
    query(conn, "UPDATE citeq_messages SET eta = eta - (id || ' seconds')::interval "
                "WHERE actor_name = 'lo' AND payload IS NOT NULL")  # the last lo is the oldest

    c = broker.consume("default", prefetch=6, timeout=100)
    got = [next(c) for _ in range(6)]
    assert [m.actor_name for m in got] == ["hi"] * 3 + ["lo"] * 3
    assert [m.args[0] for m in got] == [0, 1, 2, 2, 1, 0]
    c.close()


@pytest.mark.parametrize("grouped", [False, True], ids=["plain", "grouped"])
def test_a_claim_passes_a_locked_message_and_fills_its_batch_from_the_next_priority(broker, db, conn, grouped):
    # The claim goes priority by priority (schema/0071): what another claim holds locked is
    # skipped within a priority, and a batch the first priority cannot fill goes on to the next.
    @dramatiq.actor(priority=0)
    def hi(n):
        pass

    @dramatiq.actor(priority=10)
    def lo(n):
        pass

    @dramatiq.actor(priority=20)
    def lowest(n):
        pass

    for n in range(3):
        lo.send(n)
        hi.send(n)
        lowest.send(n)
    other = psycopg2.connect(db)
    try:
        with other.cursor() as cur:  # another claim, still in its transaction, holds hi(0)
            cur.execute("SELECT id FROM citeq_messages WHERE actor_name = 'hi' ORDER BY id LIMIT 1 FOR UPDATE")
            held = cur.fetchone()[0]
            grouping = ([], [], {"no-such-key"}) if grouped else None  # the grouped statement
            claimed, _ = broker.exchange("default", [], [], 4, grouping)
        other.rollback()
    finally:
        other.close()
    assert [(m.actor_name, m.args[0]) for m in claimed] == [("hi", 1), ("hi", 2), ("lo", 0), ("lo", 1)]
    assert query(conn, "SELECT state FROM citeq_messages WHERE id = %s", (held,)) == [("queued",)]


def test_a_paused_worker_runs_higher_priority_messages_first(broker):
    calls = []

    with patch.object(dramatiq.worker, "QUEUE_PREFETCH", 20):
        w = dramatiq.Worker(broker, worker_timeout=100, worker_threads=1)
        w.start()
        try:
            for t in w.workers:
                t.pause()
                t.paused_event.wait()

            @dramatiq.actor(priority=10)
            def lo():
                calls.append("lo")

            @dramatiq.actor(priority=0)
            def hi():
                calls.append("hi")

            for _ in range(5):
                lo.send()
                hi.send()
            # Given every message is in the worker's hands (the consumer prefetches them all)
            wait_for(lambda: w.work_queue.qsize() == 10, timeout=10, message="all ten prefetched")
            w.resume()
            broker.join(lo.queue_name, timeout=10_000)
            w.join()
        finally:
            w.stop()
    assert calls == ["hi"] * 5 + ["lo"] * 5


# -- delays on time ----------------------------------------------------------------------------


@contextmanager
def no_notify(conn):
    """No NOTIFY reaches the consumers: they learn of messages some other way or not at all.
    (Sends decide their NOTIFY in the INSERT itself, so it is the listener that goes deaf.)"""
    with patch("broker.maintenance.Listener.dispatch", lambda self, payload: None):
        yield


def test_a_delayed_message_starts_at_its_eta_without_a_notify_or_a_poll(db, conn):
    # Given an idle worker that polls every 5 s (Dramatiq's worker_timeout bounds the poll too)
    b = PostgresBroker(url=db, poll_interval=30)
    dramatiq.set_broker(b)
    ran = []

    @dramatiq.actor
    def later():
        ran.append(1)

    w = dramatiq.Worker(b, worker_threads=1, worker_timeout=5_000)
    w.start()
    try:
        with no_notify(conn):
            # When this process sends a message due in 0.5 s, with no NOTIFY
            b.enqueue(later.message(), delay=500)
            # Then it runs before the next poll (5 s) would have found it
            wait_for(lambda: ran, timeout=4, message="the delayed message ran")
        lateness = query(conn, "SELECT extract(epoch FROM started_at - eta) FROM citeq_messages")[0][0]
        assert lateness >= 0
    finally:
        w.stop()
        b.close()


def test_a_due_send_wakes_this_processs_drained_consumer_without_a_notify(db, conn):
    # A send skips its NOTIFY while earlier messages still look queued, and a
    # claim in flight makes them look so (it takes them, not the new one). Dramatiq's suite
    # (test_actors_can_prioritize_work) lost sends that way: they waited for the next poll.
    b = PostgresBroker(url=db, poll_interval=30)
    dramatiq.set_broker(b)

    @dramatiq.actor
    def job(n):
        pass

    # Given a worker whose threads are paused and whose consumer has found the queue empty
    w = dramatiq.Worker(b, worker_threads=1, worker_timeout=5_000)
    w.queue_prefetch = 10
    w.start()
    try:
        for t in w.workers:
            t.pause()
            t.paused_event.wait()
        wait_for(lambda: b.queue_state(job.queue_name).drained, timeout=4, message="a claim found the queue empty")
        with no_notify(conn):
            # When this process sends due messages and no NOTIFY comes
            for n in range(5):
                job.send(n)
            # Then its consumer claims them all before the next poll (5 s)
            wait_for(lambda: w.work_queue.qsize() == 5, timeout=4, message="all five prefetched")
    finally:
        w.stop()
        b.close()


def test_a_delayed_send_notifies_its_delay(broker, db):
    @dramatiq.actor(queue_name="mail")
    def send_mail(to):
        pass

    listener = psycopg2.connect(db)
    listener.autocommit = True
    listener.cursor().execute("LISTEN citeq_wakeup")
    send_mail.send_with_options(args=("x",), delay=5_000)

    assert select.select([listener], [], [], 5)[0]
    listener.poll()
    [payload] = [n.payload for n in listener.notifies]
    queue, seconds = payload.split(" ")
    assert queue == "mail" and 4 < float(seconds) <= 5
    listener.close()


def test_a_retry_backoff_wakes_an_idle_consumer_at_its_eta(db, conn):
    b = PostgresBroker(url=db, poll_interval=30)
    dramatiq.set_broker(b)
    calls = []
    started, go = threading.Event(), threading.Event()

    @dramatiq.actor(max_retries=1, min_backoff=500, max_backoff=500)
    def flaky():
        calls.append(1)
        if len(calls) == 1:
            started.set()
            go.wait(10)
            raise RuntimeError("first try fails")

    w = dramatiq.Worker(b, worker_threads=1, worker_timeout=5_000)
    w.start()
    try:
        flaky.send()
        assert started.wait(10)
        with no_notify(conn):  # the retry is sent with no NOTIFY
            go.set()
            wait_for(lambda: len(calls) == 2, timeout=4, message="the retry ran (before the 5 s poll)")
    finally:
        w.stop()
        b.close()


# -- results opt-in ----------------------------------------------------------------------------


def test_results_are_opt_in_as_with_other_brokers(db, caplog):
    plain = PostgresBroker(url=db)
    dramatiq.set_broker(plain)

    @dramatiq.actor
    def answer():
        return 42

    assert not any(isinstance(m, Results) for m in plain.middleware)
    with pytest.raises(RuntimeError):
        answer.send().get_result()
    w = dramatiq.Worker(plain, worker_threads=1, worker_timeout=100)
    w.start()
    try:
        with caplog.at_level(logging.WARNING):
            answer.send()
            plain.join("default", timeout=10_000)
            w.join()
    finally:
        w.stop()
        plain.close()
    assert any("Consider adding the Results middleware" in r.getMessage() for r in caplog.records)


def test_results_by_flag_or_by_hand(db):
    flagged = PostgresBroker(url=db, results=True)
    [results] = [m for m in flagged.middleware if isinstance(m, Results)]
    assert isinstance(results.backend, PostgresBackend) and results.backend.broker is flagged
    by_hand = PostgresBroker(url=db)
    backend = PostgresBackend(url=db)
    by_hand.add_middleware(Results(backend=backend))
    dramatiq.set_broker(by_hand)

    @dramatiq.actor(store_results=True)
    def answer():
        return 42

    w = dramatiq.Worker(by_hand, worker_threads=1, worker_timeout=100)
    w.start()
    try:
        assert answer.send().get_result(block=True, timeout=10_000) == 42
    finally:
        w.stop()
        for b in (flagged, by_hand, backend):
            b.close()


# -- workers and connections --------------------------------------------------------------------


def test_only_processes_heartbeating_within_the_lease_are_live(broker, conn):
    query(conn, "INSERT INTO citeq_workers (worker_id, hostname, pid, queues, last_seen_at) VALUES "
                "('gone', 'h', 1, '{default}', now() - interval '4300 seconds'), "
                "('fresh', 'h', 2, '{default}', now())")

    assert [w.worker_id for w in admin.workers(broker)] == ["fresh"]
    broker.prune()
    assert [r[0] for r in query(conn, "SELECT worker_id FROM citeq_workers")] == ["fresh"]


def test_a_stopping_process_removes_its_row_and_reports_its_connections(broker, conn):
    @dramatiq.actor
    def job():
        pass

    w = dramatiq.Worker(broker, worker_threads=2, worker_timeout=100)
    w.start()
    try:
        wait_for(lambda: broker.consumed_queues == ["default"], timeout=30, message="the worker consuming")
        # on a loaded machine the listener may still be connecting and idle pooled connections closed
        wait_for(lambda: broker.connections >= 1, timeout=30, message="a connection open")
        broker._lease_keeper.renew()
        live = admin.workers(broker)
        assert [w.worker_id for w in live] == [broker.worker_id], live
        assert 1 <= live[0].connections <= broker.settings.pool_size + 1, live
    finally:
        w.stop()
    broker.close()
    assert query(conn, "SELECT count(*) FROM citeq_workers")[0][0] == 0


def test_a_heartbeat_that_finds_the_pool_emptied_counts_the_connection_it_writes_on(db, conn):
    # Given a process consuming a queue whose listener is not connected (yet, or again) and
    # whose pool the idle timeout has emptied
    from broker.maintenance import LeaseKeeper
    b = PostgresBroker(url=db, pool_idle_seconds=0.01)
    b._consumers["default"] += 1  # as consume() records it, without starting its threads
    c = b.pool.getconn()
    b.pool.putconn(c)
    wait_for(lambda: b.pool.close_idle() == 1, timeout=5, message="the idle connection closed")
    assert b.connections == 0
    # When it heartbeats (on a connection it opens to write the row)
    try:
        LeaseKeeper(b).renew()
        # Then its row counts the connection open while it wrote, not none
        assert query(conn, "SELECT connections FROM citeq_workers WHERE worker_id = %s", (b.worker_id,)) == [(1,)]
    finally:
        b._consumers["default"] -= 1
        b.close()


def test_the_pool_closes_connections_idle_past_the_setting(db):
    b = PostgresBroker(url=db, pool_size=4, pool_idle_seconds=0.05)
    conns = [b.pool.getconn() for _ in range(3)]
    for c in conns:
        b.pool.putconn(c)
    assert b.pool.open == 3
    wait_for(lambda: b.pool.close_idle() or b.pool.open == 0, timeout=5, message="idle connections closed")
    assert b.pool.open == 0 and all(c.closed for c in conns)
    b.close()


def test_an_idle_worker_keeps_only_its_listener_consumer_and_heartbeat_connections(db):
    # Given a worker whose eight threads all sent at once (eight pooled connections)
    b = PostgresBroker(url=db, pool_size=8, pool_idle_seconds=0.3, poll_interval=0.1)
    dramatiq.set_broker(b)
    go = threading.Barrier(8)

    @dramatiq.actor(queue_name="other")
    def sink(n):
        pass

    @dramatiq.actor
    def fan_out(n):
        go.wait(10)
        with b.connection():  # each thread holds a connection at the same time
            go.wait(10)
        sink.send(n)

    w = dramatiq.Worker(b, worker_threads=8, worker_timeout=100, queues={"default"})
    w.start()
    try:
        for n in range(8):
            fan_out.send(n)
        wait_for(lambda: b.pool.open >= 8, timeout=10, message="eight pooled connections in use")
        b.join("default", timeout=10_000)
        # When its threads are idle, then it holds its listener plus the connections its
        # consumer and heartbeat keep using: the rest are closed after the idle time
        wait_for(lambda: b.connections <= 3, timeout=10, message="idle connections closed")
    finally:
        w.stop()
        b.close()


def test_metrics_and_cli_count_a_stale_worker_as_gone(broker, conn, capsys, monkeypatch, db):
    import re

    from web import metrics

    def live_workers() -> int:
        return int(re.search(r"^citeq_workers (\d+)", metrics.render(broker), re.M).group(1))

    # (Counted against the live workers before it: a worker process an earlier test started
    # may still be heartbeating into this database while it shuts down.)
    live = live_workers()
    # Given a worker row whose last heartbeat is 4,300 s old (its process ended long ago)
    query(conn, "INSERT INTO citeq_workers (worker_id, hostname, pid, queues, last_seen_at) VALUES "
                "('gone', 'h', 1, '{default}', now() - interval '4300 seconds')")

    # Then /metrics and `citeq workers` do not count it as live
    assert live_workers() == live
    monkeypatch.setenv("DATABASE_URL", db)
    from citeq.cli import main

    assert main(["workers", "--json"]) == 0
    assert "gone" not in [w["worker_id"] for w in __import__("json").loads(capsys.readouterr().out)]
