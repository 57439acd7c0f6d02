"""Many worker processes on one database: the connection budget holds and nothing deadlocks.

Thirty `dramatiq` worker processes drain a backlog as a role whose CONNECTION LIMIT is just
above the documented budget (``processes × (CITEQ_POOL_SIZE + 1)``: the pool plus the LISTEN
connection). Superusers ignore connection limits, so the workers log in as a role of their
own. A connection refused by that limit, or a deadlock between two processes' statements
(the server aborts one of them), shows up in the workers' logs as a connection error, and in
the embedded server's log as "deadlock detected" (with DATABASE_URL's server only the
workers' logs are read).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg2
import pytest
from dramatiq.message import Message
from psycopg2 import sql

from broker import PostgresBroker
from tests.conftest import query, wait_for

ROOT = Path(__file__).resolve().parents[2]
DRAMATIQ = str(Path(sys.executable).parent / "dramatiq")

pytestmark = pytest.mark.e2e

PROCESSES = 30
THREADS = 2
POOL_SIZE = 2
#: The documented budget (README, "Connections"): the pool plus the LISTEN connection.
BUDGET = PROCESSES * (POOL_SIZE + 1)
MESSAGES = 30_000


def _as_role(url: str, role: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{role}@{host}"))


@pytest.fixture
def limited_role(db, conn):
    """A login role limited to the budget plus two connections, with the rights of the app."""
    role = f"citeq_budget_{os.getpid()}"
    dbname = urlsplit(db).path.lstrip("/")
    with conn.cursor() as cur:
        try:
            cur.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
            cur.execute(sql.SQL("CREATE ROLE {} LOGIN CONNECTION LIMIT {}").format(
                sql.Identifier(role), sql.Literal(BUDGET + 2)))
        except psycopg2.Error as exc:
            pytest.skip(f"cannot create a role on this server: {exc}")
        for grant in ("GRANT ALL ON DATABASE {db} TO {r}", "GRANT ALL ON SCHEMA public TO {r}",
                      "GRANT ALL ON ALL TABLES IN SCHEMA public TO {r}",
                      "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {r}"):
            cur.execute(sql.SQL(grant).format(db=sql.Identifier(dbname), r=sql.Identifier(role)))
    yield _as_role(db, role)
    with conn.cursor() as cur:
        cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
        cur.execute(sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {r}; "
                            "REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {r}; "
                            "REVOKE ALL ON SCHEMA public FROM {r}; REVOKE ALL ON DATABASE {db} FROM {r}; "
                            "DROP ROLE {r}").format(r=sql.Identifier(role), db=sql.Identifier(dbname)))


def _server_log_size(server) -> int:
    return server.log_file.stat().st_size if server is not None and server.log_file.exists() else 0


def _server_log_since(server, offset: int) -> str:
    if server is None or not server.log_file.exists():
        return ""
    with server.log_file.open("rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace")


def test_thirty_processes_drain_a_backlog_within_the_connection_budget(db, conn, limited_role, pg_server,
                                                                       tmp_path):
    # Given thirty worker processes, logged in as the limited role
    _, server = pg_server
    log_offset = _server_log_size(server)
    # A lease far shorter than usual: on a loaded machine leases then expire mid-run, the
    # reapers re-queue them and late acks meet other processes' claims of the same rows,
    # which is what the deadlocks of issue 12 needed (with the old statements this run
    # logged three "deadlock detected" in 30 s). Enough deliveries that nothing dies of it.
    env = dict(os.environ, DATABASE_URL=limited_role, CITEQ_POOL_SIZE=str(POOL_SIZE), CITEQ_LEASE_SECONDS="0.5",
               CITEQ_MAX_DELIVERIES="100", CITEQ_POLL_INTERVAL="0.2", PYTHONUNBUFFERED="1")
    log_path = tmp_path / "workers.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen([DRAMATIQ, "tests.e2e.broker_app", "--processes", str(PROCESSES),
                                 "--threads", str(THREADS), "--path", ".", "--queues", "default"],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    sender = PostgresBroker(url=db)
    try:
        wait_for(lambda: query(conn, "SELECT count(*) FROM citeq_workers")[0][0] == PROCESSES, timeout=90,
                 interval=0.2, message="every worker process heartbeating")
        # When a backlog arrives
        sender.declare_queue("default")
        for start in range(0, MESSAGES, 5000):
            sender.enqueue_many([Message(queue_name="default", actor_name="noop", args=(i,), kwargs={}, options={})
                                 for i in range(start, min(start + 5000, MESSAGES))])

        def left() -> int:
            with conn.cursor() as cur:
                cur.execute("SELECT count(*) FROM citeq_messages WHERE state IN ('queued', 'running')")
                return cur.fetchone()[0]

        wait_for(lambda: left() == 0, timeout=150, interval=0.2, message="backlog drained")
        with conn.cursor() as cur:
            cur.execute("SELECT count(DISTINCT worker_id) FROM citeq_messages WHERE state = 'done'")
            busy = cur.fetchone()[0]
            cur.execute("SELECT count(*), max(connections) FROM citeq_workers")
            live, most = cur.fetchone()
    finally:
        proc.send_signal(signal.SIGTERM)  # to the master, which stops its worker processes
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        sender.close()

    # Then every message ran once, with many processes taking part, within the budget
    with conn.cursor() as cur:
        cur.execute("SELECT state::text, count(*) FROM citeq_messages GROUP BY 1")
        assert dict(cur.fetchall()) == {"done": MESSAGES}
    assert busy > 1
    assert live == PROCESSES and most <= POOL_SIZE + 1
    # And no process saw a refused connection or a deadlock, nor did the server
    worker_log = log_path.read_text()
    for symptom in ("too many connections", "deadlock detected", "connection error", "Traceback"):
        assert symptom not in worker_log, f"worker log shows {symptom!r}:\n{worker_log[-3000:]}"
    assert "deadlock detected" not in _server_log_since(server, log_offset)
    # And a stopping process removed its heartbeat row
    with conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM citeq_workers")
        assert cur.fetchone()[0] == 0
