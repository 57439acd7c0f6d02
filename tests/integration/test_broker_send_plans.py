"""A send reads a few rows, whatever the table held when its plans were made.

A sending connection prepares each send statement once and keeps its generic plan (and
PL/pgSQL keeps the plans of the functions it calls). Made while citeq_messages was empty (a
new install, the first sends after pruning emptied it), those plans read the whole table
until autovacuum's next ANALYZE: the wake-up probe hashed every due message of every queue,
and a grouped send's lookups of its key scanned the table. Over the first 8,000 sends into an
emptied table that was 290-1,920 us of server CPU per plain send and 390-1,250 per grouped
one, against 110-250 and 180-350 now (scripts/bench_send.py --emptied). Each test makes the
plans on an emptied table, as such a connection does, then sends once beside a backlog and
counts the rows its transaction read (functions included, which EXPLAIN does not show).
"""

from __future__ import annotations

import json
import uuid

import dramatiq
import psycopg2
import pytest

from broker.sql import broker_queries, prepared_query
from tests.conftest import query

BACKLOG = 3_000
DELAYED = 20_000


def single(**extra) -> dict:
    return {"message_id": str(uuid.uuid4()), "queue_name": "default", "actor_name": "probe", "payload": b"{}",
            "delay_ms": 0, "idempotency_key": None, "priority": 0, **extra}


def batch(**extra) -> dict:
    return {"message_ids": [str(uuid.uuid4())], "queue_names": ["default"], "actor_names": ["probe"],
            "payloads": [b"{}"], "delays_ms": [0], "priorities": [0], **extra}


STATEMENTS = {
    "message_insert_one": single,
    "grouped_message_insert_one": lambda: single(group_key="new-key", group_limit=1, group_release=None),
    "messages_insert_many": batch,
    "grouped_messages_insert_many": lambda: batch(group_keys=["new-key"], group_limits=[1], group_releases=[None]),
}


def rows_read(cur) -> int:
    """Rows of citeq_messages this transaction has read so far, by scans and through indexes
    (the functions a statement calls included, which EXPLAIN does not show)."""
    cur.execute("SELECT seq_tup_read + coalesce(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables "
                "WHERE relname = 'citeq_messages'")
    return cur.fetchone()[0]


@pytest.mark.parametrize("name", list(STATEMENTS))
def test_a_send_planned_on_an_empty_table_probes_one_message_of_a_backlog(broker, db, conn, name):
    @dramatiq.actor(queue_name="default")
    def backlog():
        pass

    query(conn, "VACUUM citeq_messages")  # emptied, as pruning and autovacuum leave it
    broker.enqueue_many([backlog.message() for _ in range(5)])  # the first few sends after
    prepared = prepared_query(name, broker_queries()[name])
    sender = psycopg2.connect(db)  # a sending connection: its generic plan, made on the emptied table
    try:
        with sender.cursor() as cur:
            cur.execute("SET plan_cache_mode = force_generic_plan")
            cur.execute(prepared.prepare)
            sender.commit()
            cur.execute(prepared.execute, STATEMENTS[name]())
            sender.rollback()
            broker.enqueue_many([backlog.message() for _ in range(BACKLOG)])
            cur.execute(prepared.execute, STATEMENTS[name]())
            read = rows_read(cur)
            cur.execute(b"EXPLAIN (ANALYZE, FORMAT JSON) " + cur.mogrify(prepared.execute, STATEMENTS[name]()))
            plan = cur.fetchone()[0]
            sender.rollback()
    finally:
        sender.close()
    assert read <= 10, json.dumps(plan, indent=1)[:4000]


def pages_probed(plan: dict) -> int:
    """Buffers the plan's scans of citeq_messages touched (the wake-up probe's), over their loops."""
    touched = 0
    if plan.get("Relation Name") == "citeq_messages" and plan["Node Type"] != "ModifyTable":
        touched += plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)
    return touched + sum(pages_probed(child) for child in plan.get("Plans", []))


@pytest.mark.parametrize("name", ["message_insert_one", "grouped_message_insert_one"])
def test_a_send_into_a_queue_of_delayed_messages_probes_none_of_them(broker, db, conn, name):
    """A queue whose messages all wait for their eta (retries in backoff, scheduled work):
    the probe asks the claim index for a due message of the sent one's priority, which bounds
    the eta. Across priorities, PostgreSQL before 18 read every delayed entry on each send
    (.ci/run's PostgreSQL 16 leg); 18 skipped over them, at a few pages more."""
    @dramatiq.actor(queue_name="default")
    def later():
        pass

    broker.enqueue_many([later.message() for _ in range(DELAYED)], delay=3_600_000)
    query(conn, "ANALYZE citeq_messages")
    prepared = prepared_query(name, broker_queries()[name])
    sender = psycopg2.connect(db)
    try:
        with sender.cursor() as cur:
            cur.execute(prepared.prepare)
            cur.execute(b"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + cur.mogrify(prepared.execute, STATEMENTS[name]()))
            plan = cur.fetchone()[0]
            sender.rollback()
    finally:
        sender.close()
    plan = (plan if isinstance(plan, list) else json.loads(plan))[0]["Plan"]
    # 3 pages: one descent of the claim index. Before: 123 on PostgreSQL 16, 14 on 18.
    assert pages_probed(plan) <= 6, json.dumps(plan, indent=1)[:4000]
