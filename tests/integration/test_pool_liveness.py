"""An idle pooled connection whose session the server ended is not handed out.

After a PostgreSQL restart (or a failover, or an administrator's pg_terminate_backend) every
idle connection in a pool is dead, and the first statement on one failed: a click got a 503
though the server was back. The pool now notices, without a round trip, that the server
ended the session, and connects anew.
"""

from __future__ import annotations

import psycopg2
import pytest

from broker.pool import Pool
from tests.conftest import query, wait_for


def backend_pid(pool: Pool) -> int:
    with pool.connection() as conn:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("SELECT pg_backend_pid()")
            return cur.fetchone()[0]


def test_a_connection_whose_backend_was_terminated_is_replaced(db, conn):
    pool = Pool(db, size=2, timeout=5)
    try:
        first = backend_pid(pool)
        assert query(conn, "SELECT pg_terminate_backend(%s)", first) == [(True,)]
        # Gone: its FATAL was sent to the idle socket, and the socket closed.
        wait_for(lambda: not query(conn, "SELECT 1 FROM pg_stat_activity WHERE pid = %s", first),
                 timeout=10, message="the terminated backend exited")
        second = backend_pid(pool)  # no error: a new session
        assert second != first
        assert pool.open == 1
    finally:
        pool.close()


def test_a_live_idle_connection_is_reused(db):
    pool = Pool(db, size=2, timeout=5)
    try:
        assert backend_pid(pool) == backend_pid(pool)
    finally:
        pool.close()


def test_every_idle_connection_survives_a_server_restart_unseen(db, pg_server):
    _, server = pg_server
    if server is None:
        pytest.skip("DATABASE_URL names an external server; the test cannot restart it")
    pool = Pool(db, size=3, timeout=5)
    try:
        conns = [pool.getconn() for _ in range(3)]
        for c in conns:
            pool.putconn(c)
        server.restart()
        for _ in range(3):  # each checkout works, though every idle connection died
            with pool.connection() as c:
                c.autocommit = True
                with c.cursor() as cur:
                    cur.execute("SELECT 1")
                    assert cur.fetchone() == (1,)
    except psycopg2.Error as exc:  # pragma: no cover - the failure this test is for
        pytest.fail(f"a dead pooled connection was handed out: {exc}")
    finally:
        pool.close()
