"""The broker under real `dramatiq` worker processes: crashes, shutdowns, restarts, backlogs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import dramatiq
import psutil
import psycopg2
import pytest

from broker import PostgresBroker
from broker.consumer import LeasedMessage
from dramatiq.message import Message
from tests.conftest import wait_for

ROOT = Path(__file__).resolve().parents[2]
DRAMATIQ = str(Path(sys.executable).parent / "dramatiq")

pytestmark = pytest.mark.e2e


class Workers:
    """Real worker processes on the test database, each in its own process group."""

    def __init__(self, db: str, tmp_path: Path) -> None:
        self.env = dict(os.environ, DATABASE_URL=db, CITEQ_LEASE_SECONDS="2", CITEQ_POLL_INTERVAL="0.2",
                        PYTHONUNBUFFERED="1")
        self.tmp_path = tmp_path
        self.procs: list[subprocess.Popen] = []

    def start(self, threads: int = 2) -> subprocess.Popen:
        log = (self.tmp_path / f"worker-{len(self.procs)}.log").open("w")
        proc = subprocess.Popen(
            [DRAMATIQ, "tests.e2e.broker_app", "--processes", "1", "--threads", str(threads), "--path", "."],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture
def app(db, monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", db)
    from tests.e2e import broker_app

    broker_app.broker.settings.database_url = db
    dramatiq.set_broker(broker_app.broker)
    conn = psycopg2.connect(db)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(broker_app.SCHEMA)
        cur.execute("TRUNCATE broker_events, broker_flags")
    workers = Workers(db, tmp_path)
    yield broker_app, workers, conn
    workers.stop_all()
    conn.close()
    broker_app.broker.close()
    broker_app.broker.connector._pool = None


def rows(conn, sql, *params):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def count(conn, sql, *params) -> int:
    return rows(conn, sql, *params)[0][0]


def set_flag(conn, name):
    rows(conn, "INSERT INTO broker_flags VALUES (%s) ON CONFLICT DO NOTHING RETURNING name", name)


def test_sigkilled_worker_message_runs_again_exactly_once_and_its_late_ack_is_rejected(app):
    broker_app, workers, conn = app
    workers.start()
    broker_app.slow.send(1, "go")
    wait_for(lambda: count(conn, "SELECT count(*) FROM broker_events WHERE kind = 'started'") == 1,
             message="first delivery started")
    row_id, token, holder = rows(conn, "SELECT id, lease_token::text, worker_id FROM citeq_messages")[0]
    child_pid = int(holder.rsplit(":", 1)[1])

    os.kill(child_pid, signal.SIGKILL)  # the process running the message dies mid-message
    os.killpg(workers.procs[0].pid, signal.SIGKILL)
    workers.procs[0].wait()
    workers.start()
    wait_for(lambda: count(conn, "SELECT count(*) FROM broker_events WHERE kind = 'started'") == 2,
             message="re-delivery after the lease expired")
    set_flag(conn, "go")
    wait_for(lambda: rows(conn, "SELECT state::text FROM citeq_messages")[0][0] == "done", message="completion")

    assert count(conn, "SELECT count(*) FROM broker_events WHERE kind = 'finished'") == 1
    assert rows(conn, "SELECT attempts FROM citeq_messages")[0][0] == 2
    # The killed worker's ack arrives late (a zombie): the lease it names is gone.
    zombie = PostgresBroker(settings=broker_app.broker.settings)
    zombie.actors, zombie.queues = broker_app.broker.actors, broker_app.broker.queues
    consumer = zombie.consume("default", prefetch=1, timeout=10)
    message = Message(queue_name="default", actor_name="slow", args=(1, "go"), kwargs={}, options={})
    with zombie.queue_state("default").cond:
        zombie.queue_state("default").outstanding += 1
    consumer.ack(LeasedMessage(message, row_id, token))
    consumer.close()
    assert zombie.queue_state("default").rejected == 1
    assert rows(conn, "SELECT state::text, attempts FROM citeq_messages")[0] == ("done", 2)
    zombie.close()


def test_sigterm_finishes_or_returns_in_flight_messages(app):
    broker_app, workers, conn = app
    first = workers.start(threads=2)
    for n in range(10):
        broker_app.slow.send(n, "go")
    wait_for(lambda: count(conn, "SELECT count(*) FROM broker_events WHERE kind = 'started'") == 2,
             message="two messages running")

    os.kill(first.pid, signal.SIGTERM)  # as a supervisor does; Dramatiq forwards it to its workers
    set_flag(conn, "go")  # the running messages may now finish
    first.wait(timeout=60)
    assert count(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'running'") == 0

    workers.start(threads=4)
    wait_for(lambda: count(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'done'") == 10,
             message="all ten done")
    finished = rows(conn, "SELECT n, count(*) FROM broker_events WHERE kind = 'finished' GROUP BY n ORDER BY n")
    assert finished == [(n, 1) for n in range(10)]


def _answers(url: str) -> bool:
    try:
        c = psycopg2.connect(url, connect_timeout=2)
        try:
            with c.cursor() as cur:
                cur.execute("SELECT 1")
        finally:
            c.close()
        return True
    except psycopg2.OperationalError:
        return False


def test_worker_survives_a_postgres_restart(app, pg_server):
    admin, server = pg_server
    if server is None:
        pytest.skip("DATABASE_URL names an external server; the test cannot restart it")
    broker_app, workers, conn = app
    db = broker_app.broker.settings.database_url
    workers.start(threads=4)
    for n in range(20):
        broker_app.record.send(n)
    wait_for(lambda: count(conn, "SELECT count(*) FROM broker_events") == 20, message="first batch")

    conn.close()
    server.restart()
    # Through PgBouncer (CITEQ_TEST_PGBOUNCER) the pooler refuses clients for a moment after
    # the restart (server_login_retry); directly, the first attempt answers.
    wait_for(lambda: _answers(db), timeout=30, message="the database answers again")

    for n in range(20, 40):
        broker_app.record.send(n)  # the sender's pool replaces its dead connections
    conn = psycopg2.connect(db)
    conn.autocommit = True
    wait_for(lambda: count(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'done'") == 40,
             timeout=60, message="second batch after the restart")
    assert rows(conn, "SELECT count(DISTINCT n) FROM broker_events")[0][0] == 40
    conn.close()


def test_a_100k_backlog_drains_with_flat_worker_memory_and_a_healthy_postgres(app):
    broker_app, workers, conn = app
    total = 100_000
    for start in range(0, total, 10_000):
        broker_app.broker.enqueue_many([broker_app.noop.message(n) for n in range(start, start + 10_000)])

    workers.start(threads=8)

    def done() -> int:
        return count(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'done'")

    pid = wait_for(lambda: rows(conn, "SELECT pid FROM citeq_workers") and
                   rows(conn, "SELECT pid FROM citeq_workers")[0][0], message="worker heartbeat")
    wait_for(lambda: done() >= total // 10, timeout=120, message="10% drained")
    rss_early = psutil.Process(pid).memory_info().rss
    # Postgres stays open for business: new sessions connect, and no lock piles up per message.
    fresh = psycopg2.connect(broker_app.broker.settings.database_url)
    with fresh.cursor() as cur:
        cur.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
        assert cur.fetchone()[0] == 0
    fresh.close()
    wait_for(lambda: done() >= total * 9 // 10, timeout=300, message="90% drained")
    rss_late = psutil.Process(pid).memory_info().rss

    assert rss_late - rss_early < 16 * 2**20, (rss_early, rss_late)
    wait_for(lambda: done() == total, timeout=120, message="all drained")
