"""Message groups under real `dramatiq` worker processes (citeq/groupsbench/app.py): a worker
SIGKILLed mid-message, a PostgreSQL restart, and a CI-sized chaos run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import dramatiq
import psycopg2
import pytest

from citeq.groupsbench import chaos as chaos_groups
from tests.conftest import query, wait_for

ROOT = Path(__file__).resolve().parents[2]
DRAMATIQ = str(Path(sys.executable).parent / "dramatiq")

pytestmark = pytest.mark.e2e


class Workers:
    def __init__(self, db: str, tmp_path: Path) -> None:
        self.env = dict(os.environ, DATABASE_URL=db, CITEQ_LEASE_SECONDS="2", CITEQ_POLL_INTERVAL="0.2",
                        PYTHONUNBUFFERED="1")
        self.tmp_path = tmp_path
        self.procs: list[subprocess.Popen] = []

    def start(self, threads: int = 4) -> subprocess.Popen:
        log = (self.tmp_path / f"worker-{len(self.procs)}.log").open("w")
        proc = subprocess.Popen([DRAMATIQ, "citeq.groupsbench.app", "--processes", "1", "--threads", str(threads),
                                 "--path", "."], cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.procs.append(proc)
        return proc

    def kill(self, proc: subprocess.Popen) -> None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                self.kill(proc)


@pytest.fixture
def app(db, conn, monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", db)
    from citeq.groupsbench import app as groups_app

    groups_app.broker.settings.database_url = db
    dramatiq.set_broker(groups_app.broker)
    query(conn, groups_app.SCHEMA)
    query(conn, "TRUNCATE group_runs, group_kills")
    workers = Workers(db, tmp_path)
    yield groups_app, workers
    workers.stop_all()
    groups_app.broker.close()
    groups_app.broker.connector._pool = None


def count(conn, sql: str, *params) -> int:
    return query(conn, sql, *params)[0][0]


def test_a_sigkilled_message_keeps_its_key_until_its_redelivery_ends(app, conn):
    groups_app, workers = app
    first = workers.start()
    groups_app.recorded.send("k", 0, 60_000)  # runs for a minute unless its worker dies
    groups_app.recorded.send("k", 1)
    groups_app.recorded.send("other", 0)
    wait_for(lambda: count(conn, "SELECT count(*) FROM group_runs WHERE key = 'k'") == 1, message="head started")
    wait_for(lambda: count(conn, "SELECT count(*) FROM group_runs WHERE key = 'other' AND ended_at IS NOT NULL"),
             message="the other key ran meanwhile")

    workers.kill(first)  # the head dies mid-message
    # Its lease is still running and no worker is alive: the key stays held.
    assert query(conn, "SELECT state::text FROM citeq_messages WHERE group_key = 'k' ORDER BY group_seq") == [
        ("running",), ("held",)]
    # The head's re-delivery: make it short, as if the work had been shorter this time.
    query(conn, "UPDATE citeq_messages SET payload = convert_to(replace(convert_from(payload, 'UTF8'), "
                "'60000', '300'), 'UTF8') WHERE group_key = 'k' AND state = 'running'")
    workers.start()
    wait_for(lambda: count(conn, "SELECT count(*) FROM group_runs WHERE key = 'k' AND ended_at IS NOT NULL") == 2,
             message="re-delivered head and the next message ran")
    runs = query(conn, "SELECT seq, ended_at IS NOT NULL FROM group_runs WHERE key = 'k' ORDER BY started_at")
    assert runs == [(0, False), (0, True), (1, True)]
    assert count(conn, chaos_groups.ORDER_VIOLATIONS) == 0
    # the next message started only after the re-delivered head had ended
    assert count(conn, "SELECT count(*) FROM group_runs a JOIN group_runs b ON a.key = b.key "
                       "WHERE a.key = 'k' AND a.seq = 0 AND a.ended_at IS NOT NULL AND b.seq = 1 "
                       "AND b.started_at >= a.ended_at") == 1


def test_groups_drain_through_a_postgres_restart(app, conn, pg_server):
    admin, server = pg_server
    if server is None:
        pytest.skip("DATABASE_URL names an external server; the test cannot restart it")
    groups_app, workers = app
    db = groups_app.broker.settings.database_url
    for seq in range(20):
        for k in range(5):
            groups_app.recorded.send(f"k{k}", seq, 20)
    workers.start()
    wait_for(lambda: count(conn, "SELECT count(*) FROM group_runs WHERE ended_at IS NOT NULL") >= 10,
             message="drain under way")
    conn.close()
    server.restart()
    conn = psycopg2.connect(db)
    conn.autocommit = True
    try:
        # (a run the restart broke is retried: a second row of the message, at its key's head)
        wait_for(lambda: count(conn, chaos_groups.LOST, 5, 20) == 0, timeout=120,
                 message="every message ran to its end after the restart")
        wait_for(lambda: count(conn, "SELECT count(*) FROM citeq_messages WHERE state <> 'done'") == 0,
                 message="nothing left unfinished")
        assert count(conn, chaos_groups.ORDER_VIOLATIONS) == 0
        assert count(conn, chaos_groups.OVERLAPS) == 0
    finally:
        conn.close()


def test_chaos_sigkills_lose_nothing_and_break_no_order(app, db, tmp_path):
    groups_app, _ = app
    with (tmp_path / "chaos-workers.log").open("w") as log:
        result = chaos_groups.run(db, keys=10, per_key=20, processes=3, threads=4, kill_every=0.7,
                                  work_ms=10, timeout=240, log=log, say=lambda _: None)
    assert result["kills"] >= 1
    assert result["order_violations"] == 0
    assert result["overlaps"] == 0
    assert result["lost"] == 0
    assert result["dead"] == 0


def test_a_worker_that_joins_late_takes_its_share_of_the_keys(app, conn):
    """A key's next message goes to the process that ran the one before: without a share of
    the keys, a worker started while another held every key got none of them until the backlog
    was gone. With one, the first gives up the keys beyond its share and the second runs them,
    in each key's order, never two of a key at once."""
    groups_app, workers = app
    keys, per_key = 8, 100
    for seq in range(per_key):
        for k in range(keys):
            groups_app.recorded.send(f"k{k}", seq, 30)
    first = workers.start()
    wait_for(lambda: count(conn, "SELECT count(DISTINCT key) FROM group_runs") == keys,
             message="the first worker holding every key")
    second = workers.start()
    wait_for(lambda: count(conn, "SELECT count(*) FROM citeq_workers") == 2, message="the second worker serving")
    joined = count(conn, "SELECT coalesce(max(id), 0) FROM group_runs")
    wait_for(lambda: count(conn, "SELECT count(*) FROM citeq_messages WHERE state <> 'done'") == 0, timeout=120,
             message="the backlog drained")
    after = dict(query(conn, "SELECT pgid, count(*) FROM group_runs WHERE id > %s GROUP BY pgid", joined))
    # Its share is half the keys but one; 0 of them without a share. (It starts in 1-3 s and
    # the first alone needs about 7 s for the backlog: hundreds of runs are left to share.)
    assert sum(after.values()) >= 100, after
    assert after.get(second.pid, 0) >= 0.2 * sum(after.values()), (after, first.pid, second.pid)
    assert count(conn, chaos_groups.ORDER_VIOLATIONS) == 0
    assert count(conn, chaos_groups.OVERLAPS) == 0
    assert count(conn, chaos_groups.LOST, keys, per_key) == 0
