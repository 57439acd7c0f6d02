"""A send's wake-up probe stops at the first due message, whatever the table held when its
plan was made.

Each send asks whether a due message of its queue was already waiting (then nobody needs
waking). A sending connection prepares the statement once and keeps its generic plan; made
while the table was near empty (a new install, the first sends after pruning emptied it),
that plan hashed every due message of every queue on each send, until the next ANALYZE:
635-1,625 us of server CPU per send over the first 8,000 sends of an emptied table, against
165-280 after. Each test makes the plan on the emptied table, as such a connection does, then
runs it under EXPLAIN ANALYZE against a backlog and counts the rows it read.
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


def single(**extra) -> dict:
    return {"message_id": str(uuid.uuid4()), "queue_name": "default", "actor_name": "probe", "payload": b"{}",
            "delay_ms": 0, "idempotency_key": None, "priority": 0, **extra}


def batch(**extra) -> dict:
    return {"message_ids": [str(uuid.uuid4())], "queue_names": ["default"], "actor_names": ["probe"],
            "payloads": [b"{}"], "delays_ms": [0], "priorities": [0], **extra}


#: The sends of messages without a group. A grouped send's plan made on an empty table also
#: reads its key's messages by a scan of the whole table (docs/howto/operating.md).
STATEMENTS = {"message_insert_one": single, "messages_insert_many": batch}


def rows_read(plan: dict) -> float:
    """Rows the plan's scans of citeq_messages returned or filtered out, over their loops."""
    read = 0.0
    if plan.get("Relation Name") == "citeq_messages" and plan["Node Type"] != "ModifyTable":
        read += (plan.get("Actual Rows", 0) + plan.get("Rows Removed by Filter", 0)) * plan.get("Actual Loops", 1)
    return read + sum(rows_read(child) for child in plan.get("Plans", []))


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
            cur.execute(b"EXPLAIN (ANALYZE, FORMAT JSON) " + cur.mogrify(prepared.execute, STATEMENTS[name]()))
            plan = cur.fetchone()[0]
            sender.rollback()
    finally:
        sender.close()
    plan = (plan if isinstance(plan, list) else json.loads(plan))[0]["Plan"]
    assert rows_read(plan) <= 10, json.dumps(plan, indent=1)[:4000]
