"""The worker module of the message-group benchmark and chaos run (and their tests).

    DATABASE_URL=... dramatiq citeq.groupsbench.app --processes 1 --threads 8

* ``noop_grouped(key, n)``: nothing, grouped by ``key``; ``noop_plain(n)``: nothing, no group
  (the drain benchmark sends the same messages with and without keys);
* ``recorded(key, seq, work_ms)``: grouped by ``key``; writes its start (with its process
  group, which the chaos run SIGKILLs) and its end to ``group_runs``, with ``work_ms`` of
  work between them. From these rows the chaos run counts order violations, overlaps and
  lost messages, and the benchmark the gap from one run of a key to the next.
"""

from __future__ import annotations

import os
import threading
import time

import dramatiq
import psycopg2

from broker import BrokerSettings, PostgresBroker

QUEUE = "groups"

SCHEMA = """
CREATE TABLE IF NOT EXISTS group_runs (
    id bigserial PRIMARY KEY, key text NOT NULL, seq integer NOT NULL, pgid integer NOT NULL,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp(), ended_at timestamptz
);
CREATE TABLE IF NOT EXISTS group_kills (pgid integer NOT NULL, killed_at timestamptz NOT NULL DEFAULT clock_timestamp());
"""

broker = PostgresBroker(settings=BrokerSettings.from_env())
dramatiq.set_broker(broker)
_local = threading.local()


def _cursor():
    if getattr(_local, "conn", None) is None or _local.conn.closed:
        _local.conn = psycopg2.connect(os.environ["DATABASE_URL"])
        _local.conn.autocommit = True
    return _local.conn.cursor()


@dramatiq.actor(queue_name=QUEUE, max_retries=0, group_by=lambda key, n: key)
def noop_grouped(key: str, n: int) -> None:
    """Nothing, in the key's order."""


@dramatiq.actor(queue_name=QUEUE, max_retries=0)
def noop_plain(n: int) -> None:
    """Nothing, no group."""


@dramatiq.actor(queue_name=QUEUE, max_retries=0, group_by=lambda key, seq, work_ms=0: key)
def recorded(key: str, seq: int, work_ms: int = 0) -> None:
    """Record the run's start and end around ``work_ms`` of (simulated) work."""
    run_id = _write("INSERT INTO group_runs (key, seq, pgid) VALUES (%s, %s, %s) RETURNING id",
                    (key, seq, os.getpgid(0)))[0]
    if work_ms:
        time.sleep(work_ms / 1000)  # the work itself, not a synchronisation
    _write("UPDATE group_runs SET ended_at = clock_timestamp() WHERE id = %s RETURNING id", (run_id,))


def _write(statement: str, params: tuple, patience: float = 120.0) -> tuple:
    """One write, waiting out a database restart (as an application's own write would): a
    failed run could not be retried while the database is down either (Dramatiq's retry is a
    send, and a send then fails too)."""
    deadline = time.monotonic() + patience
    while True:
        try:
            with _cursor() as cur:
                cur.execute(statement, params)
                return cur.fetchone()
        except psycopg2.OperationalError:
            _local.conn = None
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)  # waiting for the database to come back
