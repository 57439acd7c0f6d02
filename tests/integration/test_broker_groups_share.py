"""A worker's share of a queue's grouped messages (broker/consumer.py ``_group_share``): a
key's next message goes to the process that finished the one before, so without a share one
process could keep every key it claimed first while the others idle.

The share is its threads' part of the threads of the live workers serving the queue, of the
grouped messages queued or running, and one more."""

from __future__ import annotations

import dramatiq
import pytest

from tests.conftest import query


@pytest.fixture
def keys(broker):
    @dramatiq.actor(broker=broker, actor_name="export", queue_name="mail", group_by=lambda key, n: key)
    def export(key, n):
        pass

    def send(count: int, per_key: int = 2) -> None:
        for n in range(per_key):
            for k in range(count):
                export.send(f"k{k}", n)

    return send


def serve(broker, worker_id: str, threads: int | None, queues=("mail",)) -> None:
    broker.store.heartbeat(worker_id, hostname="host", pid=1, queues=list(queues), connections=0, held=[],
                           threads=threads)


def test_the_share_is_the_worker_s_part_of_the_threads_serving_the_queue(broker, keys):
    keys(30)  # 30 heads queued, 30 next messages held
    serve(broker, broker.worker_id, None)
    serve(broker, "other-a", 4)
    serve(broker, "other-b", 3)
    serve(broker, "elsewhere", 16, queues=("default",))  # serves another queue: not counted
    # This process runs no Dramatiq worker here: it counts as one thread of 1 + 4 + 3.
    assert broker.worker_threads is None
    assert broker.group_share("mail", most=128) == -(-30 // 8) + 1


def test_a_worker_alone_on_its_queue_or_with_a_share_above_its_batch_has_no_limit(broker, keys, conn):
    keys(30)
    serve(broker, broker.worker_id, 1)
    assert broker.group_share("mail", most=128) is None
    serve(broker, "other", 1)
    assert broker.group_share("mail", most=128) == 16
    assert broker.group_share("mail", most=16) is None  # a share it would never reach
    query(conn, "UPDATE citeq_workers SET last_seen_at = now() - interval '1 hour' WHERE worker_id = 'other'")
    assert broker.group_share("mail", most=128) is None  # a worker gone quiet serves no one


def test_only_grouped_messages_in_flight_count(broker, keys, conn):
    keys(10)

    @dramatiq.actor(broker=broker, actor_name="plain", queue_name="mail")
    def plain():
        pass

    for _ in range(50):
        plain.send()
    serve(broker, broker.worker_id, 1)
    serve(broker, "other", 3)
    # 10 grouped heads queued (their 10 next messages are held, the 50 plain ones have no key)
    assert broker.group_share("mail", most=128) == -(-10 // 4) + 1


def test_a_step_claims_at_most_its_heads_and_leaves_the_other_keys_next_messages_queued(broker, keys, conn):
    keys(5)
    firsts, _ = broker.exchange("mail", [], [], 5)
    assert len(firsts) == 5
    acks = [(m.row_id, m.lease_token) for m in firsts]
    claimed, finished = broker.exchange("mail", [], [], 5, (acks, [], {f"k{k}" for k in range(5)}), heads=2)
    assert finished == 5 and len(claimed) == 2
    # the claimed ones are next messages (n = 1) of two keys, the three others wait for anyone
    assert sorted(m.args[1] for m in claimed) == [1, 1]
    assert query(conn, "SELECT state::text, count(*) FROM citeq_messages GROUP BY 1 ORDER BY 1") == \
        [("done", 5), ("queued", 3), ("running", 2)]
    again, _ = broker.exchange("mail", [], [], 5)
    assert len(again) == 3
