"""citeq behind a real PgBouncer in transaction mode (issue 26).

Transaction pooling hands each transaction whichever server connection is free. What needs a
session therefore moves: the hot statements are sent unprepared (CITEQ_TRANSACTION_POOLING),
LISTEN goes to a direct connection (CITEQ_LISTEN_URL) or is dropped for polling, and the
migration lock is transaction-scoped. Session mode needs nothing: the e2e suites run through
it with ``CITEQ_TEST_PGBOUNCER=session`` (and through transaction mode with
``CITEQ_TEST_PGBOUNCER=transaction``; see docs/howto/pgbouncer.md).
"""

from __future__ import annotations

import threading

import dramatiq
import psycopg2
import pytest
from dramatiq.message import Message

from broker import PostgresBroker
from broker import migrate as migrations
from tests.conftest import TEST_DB, query, wait_for
from tests.topologies import tally

pytestmark = pytest.mark.timeout(180)


def _message(n: int, **options) -> Message:
    return Message(queue_name="default", actor_name="record", args=(n,), kwargs={}, options=options)


def _broker(url: str, **settings) -> PostgresBroker:
    b = PostgresBroker(url=url, lease_seconds=5, **settings)
    b.declare_queue("default")
    return b


def test_prepared_statements_collide_on_a_shared_server_connection_unless_turned_off(pgbouncer, conn):
    """Two processes, one server connection (the pooler's pool of one): the second one's
    PREPARE of the same hot statement fails while prepared statements are on, and both
    send with CITEQ_TRANSACTION_POOLING."""
    bouncer = pgbouncer("transaction", pool_size=1)
    url = bouncer.url(TEST_DB)
    first, second = _broker(url), _broker(url)
    try:
        first.enqueue(_message(1))
        with pytest.raises(psycopg2.Error, match="already exists"):
            second.enqueue(_message(2))
    finally:
        first.close()
        second.close()

    first, second = _broker(url, transaction_pooling=True), _broker(url, transaction_pooling=True)
    try:
        first.enqueue(_message(3))
        second.enqueue(_message(4))
        first.enqueue(_message(5))
    finally:
        first.close()
        second.close()
    assert query(conn, "SELECT count(*) FROM citeq_messages")[0][0] == 4


def test_concurrent_migrations_through_a_transaction_pooler_apply_each_once(pgbouncer, fresh_db_url):
    """Six boots at once, all through the pooler (fewer server connections than boots): each
    migration is applied by exactly one of them, and none waits on a lock left behind on a
    server connection."""
    bouncer = pgbouncer("transaction", pool_size=3)
    url = bouncer.url(psycopg2.extensions.parse_dsn(fresh_db_url)["dbname"])
    barrier = threading.Barrier(6)
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def boot() -> None:
        try:
            barrier.wait(timeout=30)
            results.append(migrations.migrate(url))
        except BaseException as exc:  # noqa: BLE001 - reported by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=boot) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and len(results) == 6
    expected = [name for _, name, _ in migrations.discover()]
    assert sorted(name for r in results for name in r) == sorted(expected)
    c = psycopg2.connect(fresh_db_url)
    try:
        with c.cursor() as cur:
            cur.execute("SELECT name FROM citeq_migrations ORDER BY version")
            assert [r[0] for r in cur.fetchall()] == expected
            cur.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
            assert cur.fetchone()[0] == 0, "no advisory lock outlives the migrations"
    finally:
        c.close()


class _App:
    """A broker through the pooler, a ``record`` actor counting its runs, an in-process worker."""

    def __init__(self, url: str, **settings) -> None:
        self.broker = _broker(url, transaction_pooling=True, **settings)
        self.runs: dict[int, int] = {}
        self.lock = threading.Lock()

        def record(n: int) -> None:
            with self.lock:
                self.runs[n] = self.runs.get(n, 0) + 1

        self.record = dramatiq.actor(record, broker=self.broker, actor_name="record", max_retries=0)
        self.worker = dramatiq.Worker(self.broker, worker_threads=4, worker_timeout=100)

    def __enter__(self) -> _App:
        self.worker.start()
        return self

    def __exit__(self, *exc) -> None:
        self.worker.stop()
        self.broker.close()


def test_wake_ups_come_from_the_direct_listen_url(pgbouncer, direct_db):
    """Consumers that poll only every 30 s still start a message at once: the wake-up came
    over the LISTEN connection to CITEQ_LISTEN_URL, past the pooler."""
    bouncer = pgbouncer("transaction")
    with _App(bouncer.url(TEST_DB), listen_url=direct_db, poll_interval=30) as app:
        wait_for(lambda: app.broker._listener is not None and app.broker._listener.connected,
                 timeout=10, message="the listener connected")
        for n in range(5):
            app.record.send(n)
            wait_for(lambda: app.runs.get(n), timeout=10,  # noqa: B023 - n of this iteration
                     message=f"message {n} started by a wake-up, well before the 30 s poll")
    assert app.runs == dict.fromkeys(range(5), 1)


def test_without_a_listen_url_consumers_poll_and_nothing_listens_through_the_pooler(pgbouncer, conn):
    bouncer = pgbouncer("transaction")
    with _App(bouncer.url(TEST_DB), poll_interval=0.2) as app:
        for n in range(20):
            app.record.send(n)
        wait_for(lambda: len(app.runs) == 20, timeout=30, message="every message ran, by polling")
        assert app.broker._listener is None
        # (Other tests' brokers may be listening on this server: only this one's connections count.)
        assert query(conn, "SELECT count(*) FROM pg_stat_activity WHERE query ILIKE 'LISTEN%%' "
                           "AND application_name = %s", app.broker.application_name)[0][0] == 0
    assert app.runs == dict.fromkeys(range(20), 1)


def test_the_broker_keeps_its_promises_through_transaction_pooling(pgbouncer, direct_db, conn):
    """Concurrent sends from eight threads (plain, keyed twice, inside committed and rolled-back
    transactions) drained by a worker, all through a pooler with fewer server connections than
    client connections: every committed message runs once, nothing else runs."""
    bouncer = pgbouncer("transaction", pool_size=4)
    threads, per_thread = 8, 40
    with _App(bouncer.url(TEST_DB), listen_url=direct_db, poll_interval=0.5) as app:
        def send(t: int) -> None:
            for i in range(per_thread):
                n = t * per_thread + i
                if i % 4 == 0:
                    app.record.send_with_options(args=(n,), idempotency_key=f"k{n}")
                    app.record.send_with_options(args=(n,), idempotency_key=f"k{n}")
                elif i % 4 == 1:
                    with app.broker.transaction():
                        app.record.send(n)
                elif i % 4 == 2:
                    try:
                        with app.broker.transaction():
                            app.record.send(-n - 1)
                            raise LookupError("rolled back")
                    except LookupError:
                        pass
                    app.record.send(n)
                else:
                    app.record.send(n)

        senders = [threading.Thread(target=send, args=(t,)) for t in range(threads)]
        for s in senders:
            s.start()
        for s in senders:
            s.join(timeout=120)
        expected = set(range(threads * per_thread))
        wait_for(lambda: set(app.runs) >= expected, timeout=120, message="every committed message ran")
        app.broker.join("default", timeout=60_000)
    lost = len(expected - set(app.runs))
    twice = sum(1 for v in app.runs.values() if v > 1)
    tally.record("PgBouncer transaction mode", messages=len(expected), lost=lost, run_twice=twice)
    assert lost == 0 and twice == 0
    assert set(app.runs) == expected, "no rolled-back send ran"
    assert query(conn, "SELECT count(*) FROM citeq_messages WHERE state <> 'done'")[0][0] == 0
