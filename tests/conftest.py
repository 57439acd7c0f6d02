"""Shared fixtures: a real PostgreSQL for every integration and end-to-end test.

With DATABASE_URL set, the tests create their own databases on that server (the role
needs CREATEDB); otherwise they start the embedded server under .citeq/pg/test.
Each test gets clean tables (TRUNCATE), which is what the worker processes of the
end-to-end tests see too: real commits on real connections, no rolled-back transactions.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg2
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citeq.devdb import EmbeddedPostgres, ensure_database, with_dbname  # noqa: E402

# One database per pytest run, so two runs on one server (two terminals, two developers,
# CI's two legs) never truncate or drop each other's tables.
TEST_DB = f"citeq_test_{os.getpid()}"


def _server_admin_url() -> tuple[str, EmbeddedPostgres | None, bool]:
    """(admin URL, the embedded server or None, whether this session started it)."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url, None, False
    server = EmbeddedPostgres.for_name("test", fsync=False)
    was_running = server.is_running()
    return server.start(), server, not was_running


@pytest.fixture(autouse=True)
def _worker_settings_from_the_environment():
    """After each test, the in-process worker's settings (actors/config.py) are read from the
    environment again: a test that configured its own leaves them to no other test. Autouse,
    so it is set up first and torn down last, after monkeypatch restored the environment."""
    yield
    config = sys.modules.get("actors.config")
    if config is not None:
        config.configure()


@pytest.fixture(autouse=True)
def _no_worker_outlives_its_test(monkeypatch):
    """Every in-process Dramatiq worker a test started and left running is stopped after it.
    A test that fails between a worker's start and its stop would otherwise leave that worker
    consuming the shared test database, dead-lettering the next tests' messages for actors it
    does not know (one failed assertion became eleven failed tests in CI)."""
    import dramatiq

    started = []
    start = dramatiq.Worker.start

    def recording_start(self, *args, **kwargs):
        started.append(self)
        return start(self, *args, **kwargs)

    monkeypatch.setattr(dramatiq.Worker, "start", recording_start)
    yield
    for w in started:
        if any(t.is_alive() for t in [*w.consumers.values(), *w.workers]):
            w.stop(timeout=10_000)


@pytest.fixture(scope="session")
def pg_server():
    """(admin URL, EmbeddedPostgres or None when DATABASE_URL names an external server).

    A session that started the embedded test server stops it at the end, so no server
    outlives the checkout it belongs to (one already running, say for another session in
    a second terminal, is left running).
    """
    admin, server, started = _server_admin_url()
    yield admin, server
    if started:
        server.stop()


#: ``session`` or ``transaction``: every test reaches its database through a real PgBouncer
#: in that pool mode (issue 26; tests/topologies/pgbouncer.py). In transaction mode the
#: processes get CITEQ_TRANSACTION_POOLING=1 and a direct CITEQ_LISTEN_URL, as an operator sets them.
VIA_PGBOUNCER = os.environ.get("CITEQ_TEST_PGBOUNCER", "")


@pytest.fixture(scope="session")
def db_url(pg_server) -> str:
    """A migrated database for this test session (through PgBouncer with CITEQ_TEST_PGBOUNCER)."""
    from broker.migrate import migrate

    admin, _ = pg_server
    ensure_database(admin, TEST_DB, recreate=True)
    url = with_dbname(admin, TEST_DB)
    with _through_pgbouncer(url) as url:
        migrate(url)
        yield url
        # The actors' broker is module-level and outlives every test: close it before its
        # database goes, or its listener reports the dropped connection after the summary.
        if "actors" in sys.modules:
            sys.modules["actors"].broker.close()
    _drop_database(admin, TEST_DB)


@contextmanager
def _through_pgbouncer(url: str) -> Iterator[str]:
    """``url``, or with CITEQ_TEST_PGBOUNCER a URL to the same database through PgBouncer."""
    if not VIA_PGBOUNCER:
        yield url
        return
    from tests.topologies.pgbouncer import PgBouncer, PgBouncerUnavailable

    try:
        bouncer = PgBouncer(url, VIA_PGBOUNCER).start()
    except PgBouncerUnavailable as exc:
        pytest.skip(f"CITEQ_TEST_PGBOUNCER={VIA_PGBOUNCER}: {exc}")
    saved = {k: os.environ.get(k) for k in ("CITEQ_TRANSACTION_POOLING", "CITEQ_LISTEN_URL")}
    if VIA_PGBOUNCER == "transaction":
        os.environ.update(CITEQ_TRANSACTION_POOLING="1", CITEQ_LISTEN_URL=url)
    try:
        yield bouncer.url(TEST_DB)
    finally:
        bouncer.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _drop_database(admin: str, name: str) -> None:
    c = psycopg2.connect(admin)
    c.autocommit = True
    with c.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    c.close()


@pytest.fixture
def fresh_db_url(pg_server, request) -> str:
    """An empty, unmigrated database of its own."""
    admin, _ = pg_server
    name = f"citeq_fresh_{os.getpid()}"
    ensure_database(admin, name, recreate=True)
    yield with_dbname(admin, name)
    _drop_database(admin, name)


def _truncate_all(url: str) -> None:
    conn = psycopg2.connect(url)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(
            "SELECT string_agg(format('%I.%I', schemaname, tablename), ', ') FROM pg_tables "
            "WHERE schemaname = 'public' AND tablename <> 'citeq_migrations'"
        )
        tables = cur.fetchone()[0]
        if tables:
            cur.execute(f"TRUNCATE {tables} RESTART IDENTITY CASCADE")
    conn.close()


@pytest.fixture
def db(db_url):
    """A clean, migrated database: its URL. Tables are emptied before the test."""
    _truncate_all(db_url)
    return db_url


@pytest.fixture
def conn(db):
    """An autocommit connection to the clean test database, for Given/Then SQL."""
    c = psycopg2.connect(db)
    c.autocommit = True
    yield c
    c.close()


def sigint_as_on_a_terminal() -> None:
    """``preexec_fn`` for a child a test stops with SIGINT (Ctrl-C, a fast shutdown): SIGINT at
    its default, as a terminal gives it. A suite started in the background by a non-interactive
    shell (``make test &``) inherits SIGINT ignored, and then Python installs no
    KeyboardInterrupt handler and bash cannot trap it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.02, message: str = "condition"):
    """Poll ``predicate`` until it returns something truthy (returned); fail at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{message} not met within {timeout}s")
        time.sleep(interval)


def noop_by_key(**options):
    """A no-op actor ``step(key)`` on the global broker whose messages are grouped by ``key``
    (``options``: further actor options, e.g. ``group_release``)."""
    import dramatiq

    @dramatiq.actor(actor_name="step", group_by=lambda key: key, **options)
    def step(key):
        pass

    return step


def query(conn, sql: str, *params):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall() if cur.description else None


@pytest.fixture
def broker(db):
    """A PostgresBroker on the clean database, set as Dramatiq's global broker, with the broker
    settings of this process's environment, as a process's entry point reads them (through
    PgBouncer in transaction mode, CITEQ_TRANSACTION_POOLING and CITEQ_LISTEN_URL)."""
    import dramatiq

    from broker import BrokerSettings, PostgresBroker

    b = PostgresBroker(url=db, settings=BrokerSettings.from_env(), lease_seconds=5, poll_interval=0.2, results=True)
    dramatiq.set_broker(b)
    yield b
    b.close()


@pytest.fixture
def worker(broker):
    """An in-process Dramatiq worker (4 threads) on the test broker."""
    import dramatiq

    w = dramatiq.Worker(broker, worker_threads=4, worker_timeout=100)
    w.start()
    yield w
    w.stop()


def explained(url: str, name: str, params: dict, *, session: tuple[str, ...] = ()) -> dict:
    """Run the named query as a generic prepared plan under EXPLAIN (ANALYZE, BUFFERS)
    (rolled back), after the ``session`` statements; the JSON plan's top object."""
    import json

    from broker.sql import broker_queries, prepared_query

    prepared = prepared_query(name, broker_queries()[name])
    head, _, execute = prepared.execute.rpartition(";\n")
    conn = psycopg2.connect(url)
    try:
        with conn.cursor() as cur:
            for statement in ("SET plan_cache_mode = force_generic_plan", *session):
                cur.execute(statement)
            if head:
                cur.execute(head)
            cur.execute(prepared.prepare)
            cur.execute(b"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + cur.mogrify(execute, params))
            plan = cur.fetchone()[0]
        conn.rollback()
    finally:
        conn.close()
    return (plan if isinstance(plan, list) else json.loads(plan))[0]


def index_reads(url: str, name: str, params: dict) -> dict[str, float]:
    """:func:`explained`'s plan of the named query: per index, the entries its scans
    returned or filtered out, summed over their loops."""
    plan = explained(url, name, params)
    read: dict[str, float] = {}

    def walk(node: dict) -> None:
        if "Index Name" in node:
            index = node["Index Name"]
            # entries the scan returned and those its filter dropped, over all its loops
            visited = node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)
            read[index] = read.get(index, 0) + visited * node.get("Actual Loops", 1)
        for child in node.get("Plans", []):
            walk(child)

    walk(plan["Plan"])
    return read
