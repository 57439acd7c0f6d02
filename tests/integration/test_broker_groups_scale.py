"""A key's promotion reads the key's next held message, not every message waiting behind it.

The statements that promote (the grouped step, the grouped finish, the release) ask for a
key's held messages in the key's order (group_seq, id) and lock the heads they chose. Both
must stay one index probe per key however many messages wait: a plan that sorts the key's
held messages, or that ANDs a scan of the whole held index into the look-up of the heads by
id, costs every step time in proportion to the backlog (issue 25's 100-key drain spent most
of its server time there on PostgreSQL 15).

Each test runs the statement as the broker does (prepared, with a generic plan, as a
connection gets it after five executions) under EXPLAIN ANALYZE, and counts the entries of
the held index the plan actually read.
"""

from __future__ import annotations

from broker.store import MessageStore
from tests.conftest import index_reads, noop_by_key, query

WAITING = 2_000  # messages waiting behind the key's head
OTHER_KEYS = 20  # other keys, each with messages waiting too


def held_index_reads(url: str, name: str, params: dict) -> float:
    """The entries of the held index (citeq_messages_group_held) the named query read."""
    return index_reads(url, name, params).get("citeq_messages_group_held", 0)


def backlog(broker, conn, **options):
    """One key "k" with WAITING messages behind its head, and OTHER_KEYS keys with as many
    each; the head of "k" claimed (its lease: the returned message). The planner's
    statistics are those of the empty table, as on a system just deployed or bulk-loaded
    (the plans must hold up without them)."""
    query(conn, "ANALYZE citeq_messages")

    step = noop_by_key(**options)
    broker.enqueue_many([step.message("k") for _ in range(WAITING + 1)])
    broker.enqueue_many([step.message(f"o{n}") for n in range(OTHER_KEYS) for _ in range(WAITING // OTHER_KEYS)])
    (head,), _ = broker.exchange(step.queue_name, [], [], 1)
    assert head.args == ("k",)
    return step, head


def test_the_grouped_step_promotes_a_keys_next_by_one_probe(broker, db, conn):
    step, head = backlog(broker, conn)
    params = {**MessageStore._ack_params([], []), **MessageStore._ack_params([(head.row_id, head.lease_token)], [],
                                                                             prefix="group_"),
              "queue_name": step.queue_name, "limit": 1, "head_limit": 1, "worker_id": broker.worker_id,
              "lease_seconds": broker.settings.lease_seconds}
    # The key's next: one probe for its limit, one for its head; the head is locked by id.
    assert held_index_reads(db, "grouped_messages_exchange_many", params) <= 2


def test_the_grouped_finish_promotes_a_keys_next_by_one_probe(broker, db, conn):
    step, head = backlog(broker, conn)
    params = {**MessageStore._ack_params([(head.row_id, head.lease_token)], []),
              "queues": [step.queue_name], "keys": ["k"]}
    assert held_index_reads(db, "grouped_messages_finish_many", params) <= 2


def test_the_release_of_a_manual_message_promotes_a_keys_next_by_one_probe(broker, db, conn):
    step, head = backlog(broker, conn, group_release="manual")
    params = {"message_ids": [head.message_id], "queues": [step.queue_name], "keys": ["k"]}
    read = index_reads(db, "grouped_messages_release_many", params)
    assert read.get("citeq_messages_group_held", 0) <= 2
    # The released message by its id, not by a walk of every live message ...
    assert read.get("citeq_messages_message_id_live", 0) <= 2
    # ... and "a due message already waiting?" asked of its queue, not of every queue's
    # waiting messages gathered into a hash.
    assert read.get("citeq_messages_claim_priority", 0) <= 2
