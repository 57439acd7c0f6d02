"""What the broker's pooled sessions are told by the settings (issue 26): a session left
inside a transaction is ended by the server after the idle-transaction timeout (by default
the lease), so a worker cut off mid-transaction holds no lock past its lease; and with
``CITEQ_SYNCHRONOUS_ACKS`` the workers' acks and transitions commit synchronously."""

from __future__ import annotations

import dramatiq
import pytest

from broker import DatabaseUnavailable, PostgresBroker, sql
from tests.conftest import query, wait_for


def _session_setting(broker: PostgresBroker, name: str) -> str:
    with broker.connection() as conn, conn.cursor() as cur:
        cur.execute("SELECT current_setting(%s)", (name,))
        return cur.fetchone()[0]


@pytest.mark.parametrize("settings,timeout", [
    ({"lease_seconds": 7}, "7s"),                       # by default, the lease
    ({"idle_transaction_seconds": 2.5}, "2500ms"),
    ({"idle_transaction_seconds": 0}, "0"),             # 0: the server's own (here: none)
    ({"transaction_pooling": True}, "0"),               # never sent through a transaction pooler
], ids=["lease", "set", "zero", "transaction-pooler"])
def test_each_session_is_told_its_idle_transaction_timeout(db, settings, timeout) -> None:
    broker = PostgresBroker(url=db, **settings)
    try:
        assert _session_setting(broker, "idle_in_transaction_session_timeout") == timeout
    finally:
        broker.close()


def test_a_session_left_inside_a_transaction_loses_its_locks_to_the_server(db, conn) -> None:
    query(conn, "CREATE TABLE IF NOT EXISTS lock_probe (id int PRIMARY KEY)")
    query(conn, "INSERT INTO lock_probe VALUES (1) ON CONFLICT DO NOTHING")
    broker = PostgresBroker(url=db, idle_transaction_seconds=0.5)
    try:
        with pytest.raises(DatabaseUnavailable), broker.connection() as held, held.cursor() as cur:
            # A worker mid-transaction whose link went down: it holds a row lock and sends nothing.
            cur.execute("BEGIN; SELECT pg_backend_pid(); ")
            cur.execute("SELECT id FROM lock_probe WHERE id = 1 FOR UPDATE")
            pid = query(conn, "SELECT pid FROM pg_stat_activity WHERE state = 'idle in transaction' "
                              "AND query LIKE '%%lock_probe%%'")[0][0]
            wait_for(lambda: not query(conn, "SELECT 1 FROM pg_stat_activity WHERE pid = %s", pid),
                     timeout=30, message="the server ended the idle transaction's session")
            # Its lock went with it: another session takes the row at once.
            assert query(conn, "SELECT id FROM lock_probe WHERE id = 1 FOR UPDATE NOWAIT") == [(1,)]
            cur.execute("SELECT 1")  # the session is gone: the broker says so, typed
    finally:
        broker.close()
        query(conn, "DROP TABLE IF EXISTS lock_probe")


@pytest.mark.parametrize("synchronous", [False, True])
def test_synchronous_acks_keep_the_worker_side_commits_synchronous(db, synchronous) -> None:
    broker = PostgresBroker(url=db, synchronous_acks=synchronous)
    named = "SET LOCAL synchronous_commit = off;\nSELECT current_setting('synchronous_commit')"
    try:
        with broker.connection() as conn, conn.cursor() as cur:
            # The transaction's own level, as a server with synchronous replication would have.
            cur.execute("BEGIN; SET LOCAL synchronous_commit = remote_apply")
            cur.execute(sql.statement_text(cur, "probe", named, {}))
            setting = cur.fetchone()[0]
            cur.execute("ROLLBACK")
        assert setting == ("remote_apply" if synchronous else "off")
    finally:
        broker.close()


def test_every_asynchronous_commit_of_the_named_queries_is_the_line_the_setting_removes() -> None:
    from analysis import db

    for queries in (sql.broker_queries(), db.QUERIES):
        for name, text in queries.items():
            if "synchronous_commit" in text:
                assert sql.ASYNC_COMMIT in text + "\n", f"{name}: spelled otherwise than sql.ASYNC_COMMIT"


@pytest.mark.parametrize("synchronous", [True, False])
def test_synchronous_sends_decide_how_a_send_that_commits_by_itself_commits(db, conn, synchronous) -> None:
    """Each inserted message records the commit level of its transaction (a trigger): sends and
    batches that commit by themselves follow ``CITEQ_SYNCHRONOUS_SENDS``; a send inside the
    application's transaction, and a keyed send, commit as that transaction does."""
    query(conn, "CREATE TABLE commit_probe (message_id text, level text)")
    query(conn, "CREATE FUNCTION commit_probe_record() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "INSERT INTO commit_probe VALUES (NEW.message_id, current_setting('synchronous_commit')); "
                "RETURN NEW; END $$")
    query(conn, "CREATE TRIGGER commit_probe AFTER INSERT ON citeq_messages FOR EACH ROW "
                "EXECUTE FUNCTION commit_probe_record()")
    # The test server commits asynchronously by default (it has no fsync): these sessions do not.
    url = f"{db}{'&' if '?' in db else '?'}options=-c%20synchronous_commit%3Don"
    broker = PostgresBroker(url=url, synchronous_sends=synchronous)
    try:
        dramatiq.set_broker(broker)

        @dramatiq.actor(broker=broker)
        def probe(n):
            pass

        alone = broker.enqueue(probe.message(1))
        batch = broker.enqueue_many([probe.message(2), probe.message(3)])
        keyed = broker.enqueue(probe.message_with_options(args=(4,), idempotency_key="k4"))
        with broker.transaction():
            inside = broker.enqueue(probe.message(5))
        levels = dict(query(conn, "SELECT message_id, level FROM commit_probe"))
        own = "on" if synchronous else "off"
        assert [levels[m.message_id] for m in (alone, *batch, keyed)] == [own] * 4
        assert levels[inside.message_id] == "on"  # the application's transaction decides
    finally:
        broker.close()
        query(conn, "DROP TRIGGER IF EXISTS commit_probe ON citeq_messages")
        query(conn, "DROP FUNCTION IF EXISTS commit_probe_record()")
        query(conn, "DROP TABLE IF EXISTS commit_probe")
