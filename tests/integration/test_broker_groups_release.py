"""Message groups with manual release (issue 25): a message that holds its key until the
application releases it. Its success parks it, its dead letter keeps the key, the reaper and
the pruning never touch it, the application's release (in its own transaction) frees the key
and promotes the next message, and releasing twice changes nothing.
"""

from __future__ import annotations

import dramatiq
import psycopg2.errors
import pytest

from broker import PostgresBroker
from tests.conftest import query, wait_for


def states(conn) -> list[tuple[str, str]]:
    return query(conn, "SELECT message_id, state::text FROM citeq_messages ORDER BY group_seq, id")


def state_list(conn) -> list[str]:
    return [s for _, s in states(conn)]


def declare(broker, name="export"):
    @dramatiq.actor(broker=broker, actor_name=name, group_release="manual", max_retries=0)
    def export(n):
        pass

    return export


def send(actor, n, key="acme"):
    return actor.send_with_options(args=(n,), group_key=key)


def release(broker, message_ids, key="acme", queue="default"):
    with broker.transaction() as cur:
        return broker.release_group_messages(cur, message_ids, [(queue, key)])


def run_one(broker, queue="default"):
    """Claim one message and ack it, as a worker would (grouped: with its key's promotion)."""
    (claimed,), _ = broker.exchange(queue, [], [], 1)
    key = claimed.options["group_key"]
    broker.finish_grouped(queue, [(claimed.row_id, claimed.lease_token)], [], {key})
    return claimed


def test_the_release_option_is_validated(broker):
    with pytest.raises(ValueError, match="group_release"):
        dramatiq.actor(actor_name="bad_release", group_release="later")(lambda n: None)
    export = declare(broker)
    with pytest.raises(ValueError, match="group_release"):
        export.send_with_options(args=(1,), group_key="k", group_release="sometime")
    # Ungrouped, the option means nothing and is dropped.
    assert "group_release" not in export.send(1).options


def test_a_succeeded_message_parks_and_holds_its_key_until_released(broker, conn):
    export = declare(broker)
    first, second = send(export, 1), send(export, 2)
    assert state_list(conn) == ["queued", "held"]

    run_one(broker)
    # Given the handler returned, the key is still taken: the next message stays held.
    assert state_list(conn) == ["parked", "held"]
    assert broker.group_sweeper.run_once() == 0, "a parked message is in flight for the sweep"

    # When the application releases it, in its own transaction, the next one runs.
    promoted = release(broker, [first.message_id])
    assert promoted == [(second.message_id, "default", "acme")]
    assert state_list(conn) == ["done", "queued"]

    # Releasing twice (or a message that is done) changes nothing.
    assert release(broker, [first.message_id]) == []
    assert state_list(conn) == ["done", "queued"]


def test_a_release_rolled_back_frees_nothing(broker, conn):
    export = declare(broker)
    first, _ = send(export, 1), send(export, 2)
    run_one(broker)
    with pytest.raises(RuntimeError), broker.transaction() as cur:
        broker.release_group_messages(cur, [first.message_id], [("default", "acme")])
        raise RuntimeError("the application's transaction failed")
    assert state_list(conn) == ["parked", "held"]


SETTINGS = ("enable_seqscan", "plan_cache_mode", "jit", "synchronous_commit")


@pytest.mark.parametrize("ahead", [False, True], ids=["release", "statements ahead of the caller's"])
def test_a_release_leaves_the_callers_transaction_its_own_settings(broker, ahead):
    # The release runs with the plan settings it needs, for itself: the application's next
    # statements in the same transaction plan as they would have.
    export = declare(broker)
    first, _ = send(export, 1), send(export, 2)
    run_one(broker)
    show = ", ".join(f"current_setting('{name}')" for name in SETTINGS)
    with broker.transaction() as cur:
        cur.execute("SET LOCAL plan_cache_mode = force_custom_plan")  # the application's own, kept too
        cur.execute(f"SELECT {show}")
        before = cur.fetchone()
        if ahead:
            cur.execute(broker.release_group_messages_text(cur, [first.message_id], [("default", "acme")])
                        + f";\nSELECT {show}".encode())
        else:
            broker.release_group_messages(cur, [first.message_id], [("default", "acme")])
            cur.execute(f"SELECT {show}")
        after = cur.fetchone()
    assert dict(zip(SETTINGS, after)) == dict(zip(SETTINGS, before))


def test_a_message_released_while_it_runs_is_finished_and_its_ack_is_harmless(broker, conn):
    export = declare(broker)
    first, second = send(export, 1), send(export, 2)
    (claimed,), _ = broker.exchange("default", [], [], 1)

    assert release(broker, [first.message_id]) == [(second.message_id, "default", "acme")]
    assert state_list(conn) == ["done", "queued"]
    # The worker's ack comes after: it finishes nothing more and is no zombie's.
    (nxt,), finished = broker.exchange("default", [], [], 1, ([(claimed.row_id, claimed.lease_token)], [], {"acme"}))
    assert finished == 1  # counted as finished, not refused by the fence
    assert state_list(conn) == ["done", "running"]


def test_releasing_a_message_not_yet_delivered_withdraws_it(broker, conn):
    export = declare(broker)
    first, second, third = send(export, 1), send(export, 2), send(export, 3)
    # A held one (the application canceled that work): gone, the line moves up behind it.
    assert release(broker, [second.message_id]) == []
    assert state_list(conn) == ["queued", "held"]
    # The runnable head: gone, the next runs.
    assert release(broker, [first.message_id]) == [(third.message_id, "default", "acme")]
    assert states(conn) == [(third.message_id, "queued")]


def test_a_dead_letter_keeps_the_key_until_released_and_stays_a_dead_letter(broker, conn):
    export = declare(broker)
    first, second = send(export, 1), send(export, 2)
    (claimed,), _ = broker.exchange("default", [], [], 1)
    broker.finish_grouped("default", [], [(claimed.row_id, claimed.lease_token, "boom", "ValueError", None)], {"acme"})
    assert state_list(conn) == ["dead", "held"]
    assert broker.group_sweeper.run_once() == 0

    assert release(broker, [first.message_id]) == [(second.message_id, "default", "acme")]
    assert query(conn, "SELECT state::text, group_release FROM citeq_messages ORDER BY id") == [
        ("dead", "released"), ("queued", "manual")]


def test_a_parked_message_is_never_reaped_nor_pruned(db, conn):
    b = PostgresBroker(url=db, max_deliveries=1, retention_seconds=0)
    try:
        export = declare(b)
        first = send(export, 1)
        send(export, 2)
        run_one(b)
        later = query(conn, "SELECT now() + interval '1 day'")[0][0]
        assert b.reap(now=later) == []
        b.prune()
        assert state_list(conn) == ["parked", "held"]
        release(b, [first.message_id])
        b.prune()
        assert state_list(conn) == ["queued"]
    finally:
        b.close()


def test_a_reaped_running_message_keeps_its_key_and_is_delivered_again(db, conn):
    b = PostgresBroker(url=db, max_deliveries=3)
    try:
        export = declare(b)
        first = send(export, 1)
        send(export, 2)
        (killed,), _ = b.exchange("default", [], [], 1)  # its worker is SIGKILLed now
        later = query(conn, "SELECT now() + interval '1 hour'")[0][0]
        assert [r[1] for r in b.reap(now=later)] == ["queued"]
        assert state_list(conn) == ["queued", "held"]
        again = run_one(b)
        assert again.message_id == first.message_id
        assert state_list(conn) == ["parked", "held"]
    finally:
        b.close()


def test_the_database_counts_a_parked_message_as_in_flight(broker, conn):
    export = declare(broker)
    send(export, 1), send(export, 2)
    run_one(broker)
    with pytest.raises(psycopg2.errors.UniqueViolation, match="citeq_messages_group_one_in_flight"):
        query(conn, "UPDATE citeq_messages SET state = 'queued' WHERE state = 'held'")


def test_redeliver_runs_a_parked_message_again_keeping_its_slot(broker, conn):
    export = declare(broker)
    first = send(export, 1)
    send(export, 2)
    run_one(broker)
    with broker.transaction() as cur:
        assert broker.redeliver_group_messages(cur, [first.message_id]) == [first.message_id]
    assert state_list(conn) == ["queued", "held"]


def test_operators_see_parked_messages_in_flight(broker, conn):
    export = declare(broker)
    send(export, 1), send(export, 2)
    run_one(broker)
    ((queue, waiting_keys, held, in_flight, busy_keys, _),) = broker.group_stats()
    assert (queue, waiting_keys, held, in_flight, busy_keys) == ("default", 1, 1, 1, 1)
    assert [m[3] for m in broker.group_messages("default", "acme")] == ["parked", "held"]


def test_a_worker_parks_a_manual_message_and_runs_the_next_once_it_is_released(broker, conn):
    ran = []

    @dramatiq.actor(broker=broker, actor_name="export", group_release="manual", max_retries=0)
    def export(n):
        ran.append(n)

    first, second = send(export, 1), send(export, 2)
    worker = dramatiq.Worker(broker, worker_threads=2, worker_timeout=100)
    worker.start()
    try:
        wait_for(lambda: state_list(conn) == ["parked", "held"], message="the first message parked")
        assert ran == [1]
        release(broker, [first.message_id])
        wait_for(lambda: state_list(conn) == ["done", "parked"], message="the second ran and parked")
        assert ran == [1, 2]
        release(broker, [second.message_id])
        assert state_list(conn) == ["done", "done"]
    finally:
        worker.stop()


def test_the_ack_of_a_message_released_while_it_ran_is_no_zombies_on_the_plain_path(broker, conn):
    export = declare(broker)
    first, _ = send(export, 1), send(export, 2)
    (claimed,), _ = broker.exchange("default", [], [], 1)
    release(broker, [first.message_id])
    # A manual message's finish takes no group lock: it goes with the ungrouped acks.
    (nxt,), finished = broker.exchange("default", [(claimed.row_id, claimed.lease_token)], [], 1)
    assert finished == 1
    assert state_list(conn) == ["done", "running"]
    # A real zombie (another token) is still refused.
    _, finished = broker.exchange("default", [(claimed.row_id, nxt.lease_token)], [], 0)
    assert finished == 0
