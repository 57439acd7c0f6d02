"""Message groups (issue 25) on a real PostgreSQL: order and concurrency per key, parallel
keys, retries keep the head, dead letters release the key, delays hold the place,
transactional sends, the database's own constraint, and the sweep.

Every actor records its start and end in a table (real commits), and the assertions read
the table: the order of starts per key, and whether two runs of a key overlapped.
"""

from __future__ import annotations

import threading
import time

import dramatiq
import psycopg2
import psycopg2.errors
import pytest

from broker import PostgresBroker, locks
from broker.controls import pause_queue, resume_queue
from tests.conftest import noop_by_key, query, wait_for


@pytest.fixture
def runs(conn):
    """A table each test actor writes its runs to: (key, seq, started, ended)."""
    query(conn, "CREATE TABLE IF NOT EXISTS group_test_runs (id bigserial PRIMARY KEY, key text, seq int, "
                "started_at timestamptz NOT NULL DEFAULT clock_timestamp(), ended_at timestamptz)")
    query(conn, "TRUNCATE group_test_runs")
    return conn


def record(url: str):
    """An actor body that records its run: insert at start, update at end (own commits)."""
    local = threading.local()

    def connection():
        if getattr(local, "conn", None) is None:
            local.conn = psycopg2.connect(url)
            local.conn.autocommit = True
        return local.conn

    def start(key, seq) -> int:
        with connection().cursor() as cur:
            cur.execute("INSERT INTO group_test_runs (key, seq) VALUES (%s, %s) RETURNING id", (key, seq))
            return cur.fetchone()[0]

    def end(run_id) -> None:
        with connection().cursor() as cur:
            cur.execute("UPDATE group_test_runs SET ended_at = clock_timestamp() WHERE id = %s", (run_id,))

    return start, end


def overlaps(conn, limit: int = 1) -> int:
    """Instants at which a key had more than ``limit`` runs at once (runs whose start fell
    inside more than ``limit - 1`` other runs of the key)."""
    return query(conn, """
        SELECT count(*) FROM group_test_runs a
        WHERE (SELECT count(*) FROM group_test_runs b
               WHERE b.key = a.key AND b.id <> a.id
                 AND b.started_at <= a.started_at AND (b.ended_at IS NULL OR b.ended_at > a.started_at)) >= %s
    """, limit)[0][0]


def order_of(conn, key: str) -> list[int]:
    return [r[0] for r in query(conn, "SELECT seq FROM group_test_runs WHERE key = %s ORDER BY started_at, id", key)]


def states(conn) -> dict[str, int]:
    return dict(query(conn, "SELECT state::text, count(*) FROM citeq_messages GROUP BY 1"))


def test_one_key_runs_one_at_a_time_in_order_while_keys_run_in_parallel(broker, runs, db):
    start, end = record(db)
    gate = threading.Event()

    @dramatiq.actor(group_by=lambda key, seq: key)
    def step(key, seq):
        run = start(key, seq)
        if key == "slow" and seq == 0:
            gate.wait(10)  # the slow key's head blocks its key, not the others
        end(run)

    for seq in range(20):
        for key in ("a", "b", "slow"):
            step.send(key, seq)
    worker = dramatiq.Worker(broker, worker_threads=8, worker_timeout=100)
    worker.start()
    try:
        wait_for(lambda: query(runs, "SELECT count(*) FROM group_test_runs WHERE key IN ('a', 'b') "
                                     "AND ended_at IS NOT NULL")[0][0] == 40)
        # Then: the other keys finished while the slow key's head still runs, its others held.
        assert query(runs, "SELECT count(*) FROM group_test_runs WHERE key = 'slow'")[0][0] == 1
        assert query(runs, "SELECT count(*) FROM citeq_messages WHERE state = 'held'")[0][0] == 19
        gate.set()
        broker.join(step.queue_name, timeout=30_000)
    finally:
        gate.set()
        worker.stop()
    for key in ("a", "b", "slow"):
        assert order_of(runs, key) == list(range(20))
    assert overlaps(runs) == 0
    assert states(runs) == {"done": 60}


def test_group_concurrency_bounds_runs_per_key(broker, runs, db):
    start, end = record(db)
    release = threading.Event()

    @dramatiq.actor(group_by=lambda key, seq: key, group_concurrency=3)
    def step(key, seq):
        run = start(key, seq)
        release.wait(10)
        end(run)

    for seq in range(10):
        step.send("k", seq)
    worker = dramatiq.Worker(broker, worker_threads=8, worker_timeout=100)
    worker.start()
    try:
        wait_for(lambda: query(runs, "SELECT count(*) FROM group_test_runs")[0][0] == 3)
        # Then: 8 threads, but only 3 of the key start; the rest wait held.
        assert query(runs, "SELECT count(*) FROM citeq_messages WHERE state = 'held'")[0][0] == 7
        release.set()
        broker.join(step.queue_name, timeout=30_000)
    finally:
        release.set()
        worker.stop()
    assert overlaps(runs, limit=3) == 0
    assert query(runs, "SELECT count(*) FROM group_test_runs")[0][0] == 10


def test_messages_without_a_key_are_never_held(broker, runs, db):
    start, end = record(db)
    gate = threading.Event()

    @dramatiq.actor(group_by=lambda key, seq: key)
    def step(key, seq):
        run = start(key, seq)
        if seq == 0:
            gate.wait(10)
        end(run)

    step.send("k", 0)
    step.send("k", 1)
    for seq in range(1, 6):
        step.send_with_options(args=(None, seq))  # group_by returns None: no group
    step.send_with_options(args=("k", 9), group_key=None)  # overridden: no group
    worker = dramatiq.Worker(broker, worker_threads=8, worker_timeout=100)
    worker.start()
    try:
        wait_for(lambda: query(runs, "SELECT count(*) FROM group_test_runs WHERE ended_at IS NOT NULL")[0][0] == 6)
        assert query(runs, "SELECT count(*) FROM citeq_messages WHERE state = 'held'")[0][0] == 1
        gate.set()
        broker.join(step.queue_name, timeout=30_000)
    finally:
        gate.set()
        worker.stop()
    assert query(runs, "SELECT count(*) FROM citeq_messages WHERE group_key IS NULL")[0][0] == 6


def test_group_key_message_option_gives_and_overrides_the_key(broker, runs, db):
    @dramatiq.actor
    def plain(n):
        pass

    @dramatiq.actor(group_by=lambda n: "computed")
    def grouped(n):
        pass

    plain.send_with_options(args=(1,), group_key="given")
    grouped.send_with_options(args=(2,), group_key="override")
    grouped.send(3)
    assert query(runs, "SELECT group_key, group_limit FROM citeq_messages ORDER BY id") == [
        ("given", 1), ("override", 1), ("computed", 1)]


def test_options_are_validated(broker):
    with pytest.raises(ValueError, match="group_concurrency"):
        dramatiq.actor(group_by=lambda n: "k", group_concurrency=0)(lambda n: None)
    with pytest.raises(ValueError, match="group_by must be callable"):
        dramatiq.actor(actor_name="bad_group_by", group_by="tenant")(lambda n: None)

    @dramatiq.actor(group_by=lambda n: n)
    def keyed(n):
        pass

    with pytest.raises(ValueError, match="non-empty str"):
        keyed.send(42)
    with pytest.raises(ValueError, match="non-empty str"):
        keyed.send_with_options(args=("x",), group_key="")


def test_a_retried_message_keeps_its_keys_head(broker, runs, db):
    start, end = record(db)
    failures = []

    @dramatiq.actor(group_by=lambda key, seq: key, max_retries=3, min_backoff=200, max_backoff=300)
    def step(key, seq):
        run = start(key, seq)
        if seq == 0 and len(failures) < 2:
            failures.append(1)
            end(run)
            raise RuntimeError("transient")
        end(run)

    for seq in range(4):
        step.send("k", seq)
    worker = dramatiq.Worker(broker, worker_threads=8, worker_timeout=100)
    worker.start()
    try:
        broker.join(step.queue_name, timeout=30_000)
    finally:
        worker.stop()
    # Then: the head ran three times (two failures, one success) before any later message.
    assert order_of(runs, "k") == [0, 0, 0, 1, 2, 3]
    assert overlaps(runs) == 0


def test_dead_lettering_releases_the_key(broker, runs, db):
    start, end = record(db)

    @dramatiq.actor(group_by=lambda key, seq: key, max_retries=1, min_backoff=10, max_backoff=20)
    def step(key, seq):
        run = start(key, seq)
        end(run)
        if seq == 0:
            raise ValueError("always broken")

    for seq in range(3):
        step.send("k", seq)
    worker = dramatiq.Worker(broker, worker_threads=4, worker_timeout=100)
    worker.start()
    try:
        with pytest.raises(ValueError):
            broker.join(step.queue_name, timeout=30_000)
        broker.join(step.queue_name, timeout=30_000, fail_fast=False)
    finally:
        worker.stop()
    assert order_of(runs, "k") == [0, 0, 1, 2]
    assert states(runs) == {"done": 3, "dead": 1}


def test_a_delayed_message_holds_its_keys_place(broker, runs, db):
    start, end = record(db)

    @dramatiq.actor(group_by=lambda key, seq: key)
    def step(key, seq):
        end(start(key, seq))

    step.send_with_options(args=("k", 0), delay=500)
    step.send("k", 1)
    step.send("other", 0)
    worker = dramatiq.Worker(broker, worker_threads=4, worker_timeout=100)
    worker.start()
    try:
        broker.join(step.queue_name, timeout=30_000)
    finally:
        worker.stop()
    assert order_of(runs, "k") == [0, 1]
    # the other key did not wait for the delayed one
    first = query(runs, "SELECT key FROM group_test_runs ORDER BY started_at, id LIMIT 1")[0][0]
    assert first == "other"


def test_transactional_send_is_held_behind_and_visible_on_commit(broker, runs, db):
    @dramatiq.actor(group_by=lambda key, seq: key)
    def step(key, seq):
        pass

    with broker.transaction() as cur:
        cur.execute("SELECT 1")
        step.send("k", 0)
        step.send("k", 1)
        assert query(runs, "SELECT count(*) FROM citeq_messages")[0][0] == 0
    assert query(runs, "SELECT state::text FROM citeq_messages ORDER BY group_seq") == [("queued",), ("held",)]

    bound = psycopg2.connect(db)
    try:
        with broker.bind(bound):
            step.send("k", 2)
        assert query(runs, "SELECT count(*) FROM citeq_messages")[0][0] == 2  # not committed yet
        bound.rollback()
        with broker.bind(bound):
            step.send("k", 3)
        bound.commit()
    finally:
        bound.close()
    assert query(runs, "SELECT state::text, count(*) FROM citeq_messages GROUP BY 1 ORDER BY 1") == [
        ("held", 2), ("queued", 1)]


def test_a_send_waits_for_the_keys_lock(broker, runs, db):
    """Another transaction holding the key's lock (a finish or a send in progress) makes a send
    of the key wait; a send of another key does not."""
    step = noop_by_key()

    holder = psycopg2.connect(db)
    try:
        with holder.cursor() as cur:
            cur.execute(locks.group_lock_text(cur, step.queue_name, "k"))
        step.send("other")  # not blocked
        sent = threading.Thread(target=step.send, args=("k",))
        sent.start()
        wait_for(lambda: query(runs, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                                     "AND NOT granted")[0][0] == 1)
        assert query(runs, "SELECT count(*) FROM citeq_messages")[0][0] == 1
        holder.commit()
        sent.join(10)
    finally:
        holder.close()
    assert query(runs, "SELECT count(*) FROM citeq_messages")[0][0] == 2


def test_the_database_refuses_two_in_flight_of_a_key(broker, runs):
    step = noop_by_key()

    step.send("k")
    step.send("k")
    with pytest.raises(psycopg2.errors.UniqueViolation, match="citeq_messages_group_one_in_flight"):
        query(runs, "UPDATE citeq_messages SET state = 'queued' WHERE state = 'held'")


def test_the_sweep_promotes_a_key_freed_without_a_promotion(broker, runs):
    step = noop_by_key()

    for _ in range(3):
        step.send("k")
    # A head that vanished without its promotion (an operator's purge, a lost finish).
    query(runs, "DELETE FROM citeq_messages WHERE state = 'queued'")
    assert broker.group_sweeper.run_once() == 1
    assert broker.group_sweeper.run_once() == 0  # idempotent
    assert query(runs, "SELECT state::text FROM citeq_messages ORDER BY group_seq") == [("queued",), ("held",)]


def test_a_zombies_late_ack_finishes_and_promotes_nothing(broker, runs):
    step = noop_by_key()

    step.send("k")
    step.send("k")
    claimed, _ = broker.exchange(step.queue_name, [], [], 1)
    (zombie,) = claimed
    # The zombie's lease expired and the message was re-delivered to someone else.
    broker.reap(now=query(runs, "SELECT now() + interval '1 hour'")[0][0])
    (redelivered,), _ = broker.exchange(step.queue_name, [], [], 1)
    assert redelivered.row_id == zombie.row_id and redelivered.lease_token != zombie.lease_token

    assert broker.finish_grouped(step.queue_name, [(zombie.row_id, zombie.lease_token)], [], {"k"}) == 0
    assert query(runs, "SELECT state::text FROM citeq_messages ORDER BY id") == [("running",), ("held",)]
    assert broker.finish_grouped(step.queue_name, [(redelivered.row_id, redelivered.lease_token)], [], {"k"}) == 1
    assert query(runs, "SELECT state::text FROM citeq_messages ORDER BY id") == [("done",), ("queued",)]


def test_reaped_dead_letter_releases_the_key_and_retry_goes_back_in_order(db, runs):
    b = PostgresBroker(url=db, max_deliveries=1)
    try:
        @dramatiq.actor(broker=b, group_by=lambda key: key)
        def step(key):
            pass

        step.send("k")
        step.send("k")
        b.exchange(step.queue_name, [], [], 1)
        reaped = b.reap(now=query(runs, "SELECT now() + interval '1 hour'")[0][0])
        assert [r[1] for r in reaped] == ["dead"]
        assert query(runs, "SELECT state::text FROM citeq_messages ORDER BY id") == [("dead",), ("queued",)]
        # An operator's retry puts the letter back held (its key has one in flight)...
        assert b.store.retry_dead_letters(None, step.queue_name, lambda p: p) == 1
        assert query(runs, "SELECT state::text FROM citeq_messages ORDER BY id") == [("held",), ("queued",)]
        # ... and it runs when the key is free.
        (running,), _ = b.exchange(step.queue_name, [], [], 1)
        b.finish_grouped(step.queue_name, [(running.row_id, running.lease_token)], [], {"k"})
        assert query(runs, "SELECT state::text FROM citeq_messages ORDER BY id") == [("queued",), ("done",)]
    finally:
        b.close()


def test_a_key_with_a_long_line_does_not_starve_a_key_with_one(broker, runs, db):
    start, end = record(db)

    @dramatiq.actor(group_by=lambda key, seq: key)
    def step(key, seq):
        end(start(key, seq))

    for seq in range(300):
        step.send("long", seq)
    step.send("short", 0)
    worker = dramatiq.Worker(broker, worker_threads=4, worker_timeout=100)
    worker.start()
    try:
        broker.join(step.queue_name, timeout=60_000)
    finally:
        worker.stop()
    # Then: the short key started within the first few of the long key's, not after all 300
    # (read from the runs' own start times: a count taken when a poll first saw the short
    # run done also counted the long runs of the poll's interval).
    long_before_short = query(runs, """
        SELECT count(*) FROM group_test_runs
        WHERE key = 'long' AND started_at < (SELECT started_at FROM group_test_runs WHERE key = 'short')""")[0][0]
    assert long_before_short <= 5
    assert order_of(runs, "long") == list(range(300))


def test_join_waits_for_held_messages_and_flush_drops_them(broker, runs):
    step = noop_by_key()

    step.send("k")
    step.send("k")
    assert broker.store.count_unfinished(step.queue_name) == 2
    broker.flush(step.queue_name)
    assert states(runs) == {}


def test_two_sweepers_at_once_promote_each_stalled_key_once(db, runs):
    """Every worker process sweeps: two sweeps racing over the same stalled keys (each its own
    broker, as two processes) promote each key's head exactly once between them."""
    first, second = PostgresBroker(url=db), PostgresBroker(url=db)
    try:
        @dramatiq.actor(broker=first, group_by=lambda key: key)
        def step(key):
            pass

        for k in range(50):
            for _ in range(3):
                step.send(f"k{k}")
        query(runs, "DELETE FROM citeq_messages WHERE state = 'queued'")  # 50 heads gone unpromoted
        barrier = threading.Barrier(2)
        promoted = []

        def sweep(b):
            barrier.wait()
            promoted.append(b.group_sweeper.run_once())

        threads = [threading.Thread(target=sweep, args=(b,)) for b in (first, second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        first.close()
        second.close()
    assert sum(promoted) == 50
    assert query(runs, "SELECT count(*) FROM citeq_messages WHERE state = 'queued'")[0][0] == 50
    assert query(runs, "SELECT count(DISTINCT group_key) FROM citeq_messages WHERE state = 'queued'")[0][0] == 50


def test_sends_racing_a_finish_of_their_key_never_put_two_in_flight(db, runs):
    """Sends of one key from many threads while its messages are claimed and finished: at no
    point two in flight (the unique index would refuse it), none lost, order kept."""
    b = PostgresBroker(url=db)
    try:
        @dramatiq.actor(broker=b, group_by=lambda key, n: key)
        def step(key, n):
            pass

        sent = 200
        senders = [threading.Thread(target=lambda i=i: [step.send("k", i * 1000 + n) for n in range(sent // 4)])
                   for i in range(4)]
        for t in senders:
            t.start()
        order = []
        finished = 0
        deadline = time.monotonic() + 60
        while finished < sent and time.monotonic() < deadline:
            claimed, _ = b.exchange(step.queue_name, [], [], 5)
            assert len(claimed) <= 1
            for m in claimed:
                order.append(m.args[1])
                assert b.finish_grouped(step.queue_name, [(m.row_id, m.lease_token)], [], {"k"}) == 1
                finished += 1
        for t in senders:
            t.join(30)
    finally:
        b.close()
    assert finished == sent
    # each sender's messages ran in the order it sent them
    for i in range(4):
        mine = [n for n in order if n // 1000 == i]
        assert mine == sorted(mine) and len(mine) == sent // 4


def test_one_round_trip_finishes_a_grouped_ack_promotes_and_claims_the_next(broker, runs):
    """The consumer's step: grouped acks, their keys' promotions and the claim in one round
    trip (one transaction), so the key's next message is claimed by the same step; a
    zombie's grouped ack in it is refused by the fence and counted."""
    step = noop_by_key()

    for _ in range(3):
        step.send("k")
    (first,), _ = broker.exchange(step.queue_name, [], [], 5)
    broker.reap(now=query(runs, "SELECT now() + interval '1 hour'")[0][0])  # first's lease expired
    (again,), _ = broker.exchange(step.queue_name, [], [], 5)  # re-delivered to another worker

    claimed, finished = broker.exchange(step.queue_name, [], [], 5,
                                        ([(first.row_id, first.lease_token)], [], {"k"}))
    assert (claimed, finished) == ([], 0)  # the zombie's ack: refused, nothing promoted

    claimed, finished = broker.exchange(step.queue_name, [], [], 5,
                                        ([(again.row_id, again.lease_token)], [], {"k"}))
    assert finished == 1
    assert [m.row_id for m in claimed] == [again.row_id + 1]  # the next of the key, in this same step
    assert query(runs, "SELECT state::text FROM citeq_messages ORDER BY id") == [
        ("done",), ("running",), ("held",)]


def test_a_batch_send_decides_each_keys_messages_in_order(broker, runs, db):
    start, end = record(db)

    @dramatiq.actor(group_by=lambda key, seq: key, group_concurrency=2)
    def step(key, seq):
        end(start(key, seq))

    step.send("b", 0)  # key b already has one in flight
    batch = [step.message("a", seq) for seq in range(4)] + [step.message("b", seq) for seq in range(1, 4)] \
        + [step.message_with_options(args=("none", n), group_key=None) for n in range(2)]
    with broker.transaction() as cur:
        cur.execute("SELECT 1")
        broker.enqueue_many(batch)
        assert query(runs, "SELECT count(*) FROM citeq_messages")[0][0] == 1  # not before the commit
    by_key = query(runs, "SELECT coalesce(group_key, '-'), array_agg(state::text ORDER BY group_seq NULLS LAST, id) "
                         "FROM citeq_messages GROUP BY 1 ORDER BY 1")
    assert by_key == [("-", ["queued", "queued"]), ("a", ["queued", "queued", "held", "held"]),
                      ("b", ["queued", "queued", "held", "held"])]
    broker.enqueue_many([step.message("a", seq) for seq in range(4, 6)])  # behind the held ones
    assert query(runs, "SELECT count(*) FROM citeq_messages WHERE group_key = 'a' AND state = 'held'")[0][0] == 4

    worker = dramatiq.Worker(broker, worker_threads=8, worker_timeout=100)
    worker.start()
    try:
        broker.join(step.queue_name, timeout=30_000)
    finally:
        worker.stop()
    assert overlaps(runs, limit=2) == 0
    assert sorted(order_of(runs, "a")) == list(range(6))
    # Two at a time: the messages enter flight (are claimed) in the key's order; which of the
    # two in flight a worker thread starts first is not ordered.
    assert query(runs, "SELECT count(*) FROM citeq_messages x JOIN citeq_messages y ON x.group_key = y.group_key "
                       "AND x.group_seq < y.group_seq WHERE y.started_at < x.started_at")[0][0] == 0


def test_the_sweep_does_not_wait_on_a_transaction_holding_a_keys_lock(broker, runs, db):
    """An application transaction that sent to a key holds the key's lock until it commits; the
    sweep (on the lease keeper's thread, which also heartbeats) gives up on that key after its
    lock timeout, and promotes it with a later sweep."""
    step = noop_by_key()

    step.send("k")
    step.send("k")
    query(runs, "DELETE FROM citeq_messages WHERE state = 'queued'")  # a stalled key
    holder = psycopg2.connect(db)
    try:
        with holder.cursor() as cur:
            cur.execute(locks.group_lock_text(cur, step.queue_name, "k"))
        assert broker.group_sweeper.run_once() == 0  # returns, after the lock timeout
        assert query(runs, "SELECT count(*) FROM citeq_messages WHERE state = 'queued'") == [(0,)]
    finally:
        holder.rollback()
        holder.close()
    broker.group_sweeper.run_once()
    # Promoted by a later sweep: this one, or the lease keeper's if it came first.
    assert query(runs, "SELECT count(*) FROM citeq_messages WHERE state = 'queued'") == [(1,)]


def test_a_head_promoted_by_a_step_is_claimed_in_the_claims_order(broker, runs):
    """The step that finishes a key's message claims among the queued messages and the heads
    it promotes, lowest priority value first: an urgent message already queued goes before
    the promoted head when there is room for one; the head, not picked, is queued for the
    next claim (not lost, not skipped); with room for both, both are claimed, the head
    straight from 'held'."""
    @dramatiq.actor(group_by=lambda key: key, priority=10)
    def step(key):
        pass

    @dramatiq.actor(priority=0)
    def urgent():
        pass

    step.send("k")
    step.send("k")
    (first,), _ = broker.exchange(step.queue_name, [], [], 5)
    urgent.send()
    claimed, finished = broker.exchange(step.queue_name, [], [], 1,
                                        ([(first.row_id, first.lease_token)], [], {"k"}))
    assert finished == 1
    assert [m.actor_name for m in claimed] == ["urgent"]
    assert query(runs, "SELECT actor_name, state::text FROM citeq_messages ORDER BY id") == [
        ("step", "done"), ("step", "queued"), ("urgent", "running")]
    (head,), _ = broker.exchange(step.queue_name, [], [], 1)
    assert head.actor_name == "step"

    step.send("j")
    step.send("j")
    (j1,), _ = broker.exchange(step.queue_name, [], [], 1)
    urgent.send()
    claimed, _ = broker.exchange(step.queue_name, [], [], 5, ([(j1.row_id, j1.lease_token)], [], {"j"}))
    assert [(m.actor_name, m.row_id) for m in claimed] == [("urgent", j1.row_id + 2), ("step", j1.row_id + 1)]
    assert query(runs, "SELECT state::text FROM citeq_messages WHERE id = %s", j1.row_id + 1) == [("running",)]


def test_a_step_on_a_paused_queue_finishes_and_promotes_but_claims_nothing(broker, runs):
    step = noop_by_key()

    step.send("k")
    step.send("k")
    (first,), _ = broker.exchange(step.queue_name, [], [], 5)
    pause_queue(broker, step.queue_name)
    claimed, finished = broker.exchange(step.queue_name, [], [], 5,
                                        ([(first.row_id, first.lease_token)], [], {"k"}))
    assert (claimed, finished) == ([], 1)
    assert query(runs, "SELECT state::text FROM citeq_messages ORDER BY id") == [("done",), ("queued",)]
    resume_queue(broker, step.queue_name)
    (second,), _ = broker.exchange(step.queue_name, [], [], 5)
    assert second.row_id == first.row_id + 1


def test_a_head_not_yet_due_is_promoted_but_not_claimed(broker, runs):
    """A key's next message sent with a delay holds the key's place; the step that frees the
    key promotes it but does not claim it before its eta."""
    step = noop_by_key()

    step.send("k")
    step.send_with_options(args=("k",), delay=3_600_000)
    (first,), _ = broker.exchange(step.queue_name, [], [], 5)
    claimed, finished = broker.exchange(step.queue_name, [], [], 5,
                                        ([(first.row_id, first.lease_token)], [], {"k"}))
    assert (claimed, finished) == ([], 1)
    assert query(runs, "SELECT state::text, eta > now() FROM citeq_messages ORDER BY id") == [
        ("done", False), ("queued", True)]
