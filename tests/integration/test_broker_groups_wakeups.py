"""Wake-ups of promoted messages (schema/0067): a key's next message, promoted when the one
before it finishes or is released, wakes its queue's idle consumers from the promoting
statement, as a send does — once per queue, not when a due message already waits, and with
its eta when it is delayed.

Absence is proven without waiting for time to pass: after the statement under test commits,
another connection notifies a marker, and notifications arrive in commit order, so the
listener has received whatever the promotion sent once it holds the marker.
"""

from __future__ import annotations

import select

import dramatiq
import psycopg2
import pytest

from tests.conftest import query

MARKER = "marker"


@pytest.fixture
def listener(db):
    conn = psycopg2.connect(db)
    conn.autocommit = True
    conn.cursor().execute("LISTEN citeq_wakeup")
    yield conn
    conn.close()


def heard_until_marker(listener, db) -> list[str]:
    """What the listener heard since the last call, up to a marker sent now."""
    sender = psycopg2.connect(db)
    sender.autocommit = True
    sender.cursor().execute("SELECT pg_notify('citeq_wakeup', %s)", (MARKER,))
    sender.close()
    heard: list[str] = []
    while MARKER not in heard:
        assert select.select([listener], [], [], 10)[0], f"no marker within 10 s (heard {heard})"
        listener.poll()
        heard.extend(n.payload for n in listener.notifies)
        listener.notifies.clear()
    return heard[:heard.index(MARKER)]


def grouped(broker, release=None, priority=0):
    options = {} if release is None else {"group_release": release}
    options["priority"] = priority

    @dramatiq.actor(broker=broker, actor_name="export", queue_name="mail", max_retries=0, **options)
    def export(n):
        pass

    return export


def claim_one(broker):
    (claimed,), _ = broker.exchange("mail", [], [], 1)
    return claimed


def test_a_key_s_next_message_wakes_its_idle_queue_when_the_one_before_is_acked(broker, conn, db, listener):
    export = grouped(broker)
    export.send_with_options(args=(1,), group_key="k")
    second = export.send_with_options(args=(2,), group_key="k")
    first = claim_one(broker)
    heard_until_marker(listener, db)  # the sends' own wake-ups

    broker.finish_grouped("mail", [(first.row_id, first.lease_token)], [], {"k"})

    assert query(conn, "SELECT state::text FROM citeq_messages WHERE message_id = %s", second.message_id) \
        == [("queued",)]
    assert heard_until_marker(listener, db) == ["mail"]


def test_a_released_message_s_successor_wakes_its_idle_queue(broker, conn, db, listener):
    export = grouped(broker, release="manual")
    first = export.send_with_options(args=(1,), group_key="k")
    export.send_with_options(args=(2,), group_key="k")
    claimed = claim_one(broker)
    broker.finish_grouped("mail", [(claimed.row_id, claimed.lease_token)], [], {"k"})  # parks it
    heard_until_marker(listener, db)

    with broker.transaction() as cur:
        promoted = broker.release_group_messages(cur, [first.message_id], [("mail", "k")])

    assert len(promoted) == 1
    assert heard_until_marker(listener, db) == ["mail"]


def test_promotions_into_a_queue_where_a_due_message_waits_wake_nobody(broker, conn, db, listener):
    export = grouped(broker)
    export.send_with_options(args=(1,), group_key="k")
    export.send_with_options(args=(2,), group_key="k")
    first = claim_one(broker)
    export.send(3)  # ungrouped, due, waiting: the queue's consumers know there is work
    heard_until_marker(listener, db)

    broker.finish_grouped("mail", [(first.row_id, first.lease_token)], [], {"k"})

    assert query(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'queued'") == [(2,)]
    assert heard_until_marker(listener, db) == []


def test_many_keys_promoted_in_one_statement_wake_their_queue_once(broker, conn, db, listener):
    export = grouped(broker)
    for key in ("a", "b", "c"):
        export.send_with_options(args=(1,), group_key=key)
        export.send_with_options(args=(2,), group_key=key)
    claimed, _ = broker.exchange("mail", [], [], 3)
    heard_until_marker(listener, db)

    broker.finish_grouped("mail", [(c.row_id, c.lease_token) for c in claimed], [], {"a", "b", "c"})

    assert query(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'queued'") == [(3,)]
    assert heard_until_marker(listener, db) == ["mail"]


def test_a_delayed_next_message_notifies_its_eta_when_promoted(broker, conn, db, listener):
    export = grouped(broker)
    export.send_with_options(args=(1,), group_key="k")
    export.send_with_options(args=(2,), group_key="k", delay=60_000)  # holds its place, due in a minute
    first = claim_one(broker)
    heard_until_marker(listener, db)

    broker.finish_grouped("mail", [(first.row_id, first.lease_token)], [], {"k"})

    [payload] = heard_until_marker(listener, db)
    queue, seconds = payload.split(" ")
    assert queue == "mail" and 50 < float(seconds) <= 60


def test_a_head_a_consumer_step_promotes_but_cannot_claim_wakes_the_others(broker, conn, db, listener):
    """The step that finishes a key's message claims the key's next one itself when it has
    room (no wake-up needed: it runs here); with no room left it queues it and wakes the
    queue's other consumers."""
    export = grouped(broker)
    export.send_with_options(args=(1,), group_key="k")
    export.send_with_options(args=(2,), group_key="k")
    first = claim_one(broker)
    heard_until_marker(listener, db)

    claimed, finished = broker.exchange("mail", [], [], 0, ([(first.row_id, first.lease_token)], [], {"k"}))

    assert (claimed, finished) == ([], 1)
    assert query(conn, "SELECT state::text FROM citeq_messages ORDER BY id") == [("done",), ("queued",)]
    assert heard_until_marker(listener, db) == ["mail"]


def test_a_head_a_consumer_step_claims_itself_wakes_nobody(broker, conn, db, listener):
    export = grouped(broker)
    export.send_with_options(args=(1,), group_key="k")
    export.send_with_options(args=(2,), group_key="k")
    first = claim_one(broker)
    heard_until_marker(listener, db)

    claimed, _ = broker.exchange("mail", [], [], 5, ([(first.row_id, first.lease_token)], [], {"k"}))

    assert len(claimed) == 1
    assert heard_until_marker(listener, db) == []


def test_a_step_that_claims_the_waiting_message_still_wakes_for_the_head_it_left(broker, conn, db, listener):
    """A due message was waiting, but this step claims it: the head it leaves queued is the
    only work left for the others, so they are woken."""
    export = grouped(broker, priority=10)

    @dramatiq.actor(broker=broker, actor_name="urgent", queue_name="mail", priority=0)
    def urgent():
        pass

    export.send_with_options(args=(1,), group_key="k")
    export.send_with_options(args=(2,), group_key="k")
    first = claim_one(broker)
    urgent.send()  # ungrouped, due, and first in the claim's order
    heard_until_marker(listener, db)

    claimed, _ = broker.exchange("mail", [], [], 1, ([(first.row_id, first.lease_token)], [], {"k"}))

    assert [m.actor_name for m in claimed] == ["urgent"]
    assert heard_until_marker(listener, db) == ["mail"]
