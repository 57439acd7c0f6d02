"""Fixtures for Dramatiq's own test suite run against citeq (scripts/dramatiq_suite.py).

Dramatiq's tests are written against ``stub_broker`` (a StubBroker), ``stub_worker``, and
result / rate-limiter backends for Redis, Memcached and in-memory stubs. Here every one of
those fixtures yields citeq's part instead: a :class:`broker.PostgresBroker`, a worker on it,
the Postgres result backend and the Postgres rate-limiter backend, all on a test database of
their own. Each test starts with empty tables: real commits on real connections.

The database: DATABASE_URL's server when it is set (the role needs CREATEDB), else the
embedded test server under .citeq/pg/test (as in citeq's own tests/conftest.py).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import dramatiq
import psycopg2
import pytest
from dramatiq import Worker

from broker import PostgresBroker
from broker.migrate import migrate
from broker.results import PostgresBackend
from citeq.devdb import EmbeddedPostgres, ensure_database, with_dbname

logging.basicConfig(level=logging.INFO,
                    format="[%(asctime)s] [%(threadName)s] [%(name)s] [%(levelname)s] %(message)s")

SUITE_DB = f"citeq_dramatiq_suite_{os.getpid()}"
#: Tables a test may leave rows in (the next test starts without them).
TABLES = "citeq_messages, citeq_results, citeq_workers, rate_limit_counters"


@pytest.fixture(scope="session")
def suite_db_url():
    admin = os.environ.get("DATABASE_URL")
    server = started = None
    if not admin:
        server = EmbeddedPostgres.for_name("test", fsync=False)
        started = not server.is_running()
        admin = server.start()
    ensure_database(admin, SUITE_DB, recreate=True)
    url = with_dbname(admin, SUITE_DB)
    migrate(url)
    yield url
    conn = psycopg2.connect(admin)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{SUITE_DB}" WITH (FORCE)')
    conn.close()
    if started:
        server.stop()


@pytest.fixture
def suite_db(suite_db_url):
    conn = psycopg2.connect(suite_db_url)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f"TRUNCATE {TABLES} RESTART IDENTITY")
    conn.close()
    return suite_db_url


@pytest.fixture()
def stub_broker(suite_db):
    """Dramatiq's ``stub_broker``, here a PostgresBroker with its default middleware."""
    broker = PostgresBroker(url=suite_db)
    broker.emit_after("process_boot")
    dramatiq.set_broker(broker)
    yield broker
    broker.flush_all()
    broker.close()


@pytest.fixture()
def stub_worker(stub_broker):
    worker = Worker(stub_broker, worker_timeout=100, worker_threads=32)
    worker.start()
    yield worker
    worker.stop()


@pytest.fixture
def result_backend(stub_broker):
    """The Postgres result backend (Dramatiq's suite runs memcached, redis and stub here)."""
    return PostgresBackend(stub_broker)


@pytest.fixture
def redis_result_backend(result_backend):
    return result_backend


@pytest.fixture
def stub_result_backend(result_backend):
    return result_backend


@pytest.fixture
def result_backends(result_backend):
    """Dramatiq's suite parametrizes over memcached, redis and stub; here there is one."""
    return {"stub": result_backend}


@pytest.fixture
def info_logging():
    logger = logging.getLogger()
    logger.setLevel(logging.INFO)
    yield
    logger.setLevel(logging.DEBUG)


@pytest.fixture
def start_cli():
    """Dramatiq's: start ``python -m dramatiq <broker module>``; terminated after the test."""
    proc = None

    def run(broker_module, *, extra_args=None, **kwargs):
        nonlocal proc
        kwargs.setdefault("bufsize", 0)
        proc = subprocess.Popen([sys.executable, "-m", "dramatiq", broker_module, *(extra_args or [])], **kwargs)
        return proc

    yield run
    if proc is not None:
        proc.terminate()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.fixture
def rate_limiter_backend(suite_db):
    """The Postgres rate-limiter backend, on a broker of its own (tests use it without one)."""
    from broker.ratelimits import PostgresRateLimiterBackend

    broker = PostgresBroker(url=suite_db)
    yield PostgresRateLimiterBackend(broker)
    broker.close()


@pytest.fixture
def stub_rate_limiter_backend(rate_limiter_backend):
    return rate_limiter_backend


@pytest.fixture
def rate_limiter_backends(rate_limiter_backend):
    """Dramatiq's suite parametrizes over memcached, redis and stub; here there is one."""
    return {"stub": rate_limiter_backend}
