"""A claim reads the queue's claim index in its order, whatever the statistics last saw,
and a few pages of it however many delayed messages the queue holds.

A queue that sat idle is analyzed with no queued row in it; the next burst of sends finds
those statistics still in place. A generic plan of the worker's step made on them read every
live message through the message_id index and sorted them, on every claim: the claim cost
grew with the backlog (scripts/bench_profile.py's 2x4 drains spent 170-256 us of server CPU
per message when they hit it, 41-50 when they did not). Each test runs the step as a
worker's connection does (prepared, generic plan) under EXPLAIN ANALYZE and counts the index
entries it read.

A queue's messages waiting for their eta (retries in backoff, scheduled work) sit in the
same index (queue, priority, eta, id), behind the due ones of their priority. Across
priorities the eta bounds no scan: before PostgreSQL 18 (no skip scan) a claim that found
nothing due, a batch send's or a promotion's wake-up probe that found none waiting, and (on
every version) an idle consumer's look-up of the next eta read every delayed entry of the
queue (.ci/run's PostgreSQL 16 leg). They go priority by priority now (schema/0071, 0072).
"""

from __future__ import annotations

import dramatiq
import psycopg2
import pytest

from broker.store import MessageStore
from tests.conftest import explained, index_reads, noop_by_key, query

BACKLOG = 3_000
LIMIT = 8
DELAYED = 20_000


def idle_then_burst(broker, conn, actor) -> None:
    """Statistics of an idle queue (every message finished), then a backlog of BACKLOG (of
    as many keys, when the actor groups by its argument: each message is born runnable)."""
    broker.enqueue_many([actor.message(f"k{n}") for n in range(200)])
    query(conn, "UPDATE citeq_messages SET state = 'done', finished_at = now()")
    query(conn, "ANALYZE citeq_messages")
    broker.enqueue_many([actor.message(f"k{n}") for n in range(BACKLOG)])


def params(broker, queue_name: str, **extra) -> dict:
    return {**MessageStore._ack_params([], []), "queue_name": queue_name, "limit": LIMIT,
            "worker_id": broker.worker_id, "lease_seconds": broker.settings.lease_seconds, **extra}


def test_a_claim_after_an_idle_spell_reads_a_batch_not_the_backlog(broker, db, conn):
    @dramatiq.actor
    def step(key):
        pass

    idle_then_burst(broker, conn, step)
    read = index_reads(db, "messages_exchange_many", params(broker, step.queue_name))
    assert read.get("citeq_messages_message_id_live", 0) <= LIMIT, read
    assert sum(read.values()) <= 4 * LIMIT, read


def test_a_grouped_step_after_an_idle_spell_reads_a_batch_not_the_backlog(broker, db, conn):
    actor = noop_by_key()
    idle_then_burst(broker, conn, actor)
    p = params(broker, actor.queue_name, head_limit=LIMIT,
               **MessageStore._ack_params([], [], prefix="group_"))
    read = index_reads(db, "grouped_messages_exchange_many", p)
    assert sum(read.values()) <= 4 * LIMIT, read


def jit_available(conn) -> bool:
    (available,), = query(conn, "SELECT pg_jit_available()")
    return available


@pytest.mark.parametrize("grouped", [False, True], ids=["plain", "grouped"])
def test_a_step_is_never_compiled_by_jit(broker, db, conn, grouped):
    """Before PostgreSQL 18, enable_sort = off added 1e10 to the step's cost (its final sort
    stays), past every jit threshold: a server built with LLVM compiled each step anew,
    400-500 ms a claim on PostgreSQL 15. Thresholds at 0 make any plan cost enough here.
    Runs where the server can JIT (an external DATABASE_URL; the embedded build cannot)."""
    if not jit_available(conn):
        pytest.skip("this server has no JIT provider (LLVM)")

    def step(key):
        pass

    actor = noop_by_key() if grouped else dramatiq.actor(step)
    idle_then_burst(broker, conn, actor)
    name, p = "messages_exchange_many", params(broker, actor.queue_name)
    if grouped:
        name = "grouped_messages_exchange_many"
        p.update(head_limit=LIMIT, **MessageStore._ack_params([], [], prefix="group_"))
    session = ("SET jit = on", "SET jit_above_cost = 0", "SET jit_inline_above_cost = 0",
               "SET jit_optimize_above_cost = 0")
    plan = explained(db, name, p, session=session)
    assert plan["Plan"]["Actual Rows"] == LIMIT  # the step claimed a batch
    assert "JIT" not in plan, plan["JIT"]


@pytest.fixture
def delayed(broker, conn):
    """The default queue: DELAYED messages due in an hour at priority 0, ten at priority 5,
    none due."""
    @dramatiq.actor
    def later():
        pass

    @dramatiq.actor(priority=5)
    def later_still():
        pass

    broker.enqueue_many([later.message() for _ in range(DELAYED)], delay=3_600_000)
    broker.enqueue_many([later_still.message() for _ in range(10)], delay=3_600_000)
    query(conn, "ANALYZE citeq_messages")


def pages(plan: dict) -> int:
    """Buffers the statement touched (its top node's figure includes every other node's)."""
    return plan["Plan"].get("Shared Hit Blocks", 0) + plan["Plan"].get("Shared Read Blocks", 0)


@pytest.mark.parametrize("grouped", [False, True], ids=["plain", "grouped"])
def test_a_claim_that_finds_nothing_due_reads_a_few_pages_of_a_queue_of_delayed_messages(
        broker, db, delayed, grouped):
    name, p = "messages_exchange_many", params(broker, "default")
    if grouped:
        name = "grouped_messages_exchange_many"
        p.update(head_limit=LIMIT, **MessageStore._ack_params([], [], prefix="group_"))
    plan = explained(db, name, p)
    assert plan["Plan"]["Actual Rows"] == 0
    # A descent per priority and one past the last, a bounded scan per priority, the pause
    # look-up: 23-25 pages on PostgreSQL 16 and 18. Before: 133-135 on 16 (every delayed
    # entry), 20-21 on 18.
    assert pages(plan) <= 40, plan


def test_the_next_eta_of_a_queue_of_delayed_messages_reads_a_few_pages(broker, db, delayed):
    plan = explained(db, "queue_next_eta_one", {"queue_name": "default"})
    assert plan["Plan"]["Actual Rows"] == 1
    # 14 pages on PostgreSQL 16 and 18. Before: 770 on both (the whole table).
    assert pages(plan) <= 40, plan


def test_a_promotion_beside_a_queue_of_delayed_messages_probes_a_few_pages(broker, db, delayed):
    # A key's next message promoted when its running one is acked: the promotion wakes the
    # queue unless a due message was already waiting, a probe that walks the priorities too.
    actor = noop_by_key(queue_name="default")
    actor.send("k")
    actor.send("k")  # held behind the first
    (running,), _ = broker.exchange("default", [], [], 1)
    p = MessageStore._finish_params([(running.row_id, running.lease_token)], [], [("default", "k")])
    # (a connection's first call plans the probe's function: catalog pages, once)
    plan = explained(db, "grouped_messages_finish_many", p, session=("SELECT citeq_queue_due_waiting('default')",))
    assert plan["Plan"]["Actual Rows"] == 2  # acked, promoted
    # The whole statement (the ack, the promotion, their index entries): 73 pages on
    # PostgreSQL 16 and 18. Before: 182 on 16 (the probe read every delayed entry), 70 on 18.
    assert pages(plan) <= 100, plan


def test_the_wake_up_probe_of_batches_and_promotions_reads_a_few_pages(broker, db, conn, delayed):
    # citeq_queue_due_waiting (schema/0072): whether a due message waits, priority by priority.
    # 12 pages on PostgreSQL 16 and 18. Across priorities (the probe it replaced), 16 read
    # every delayed entry: 122 pages (18: 13).
    c = psycopg2.connect(db)
    try:
        with c.cursor() as cur:
            cur.execute("SELECT citeq_queue_due_waiting('default')")  # plans its query (once a connection)
            assert cur.fetchone() == (False,)
            cur.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT citeq_queue_due_waiting('default')")
            plan = cur.fetchone()[0][0]
    finally:
        c.close()
    assert pages(plan) <= 15, plan
