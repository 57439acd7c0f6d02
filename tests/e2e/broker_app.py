"""A tiny Dramatiq application for the broker's end-to-end tests (run by real workers).

    dramatiq tests.e2e.broker_app --processes 1 --threads 2

``record`` writes one row per run; ``slow`` writes 'started', waits until the test sets
the flag named by its argument, then writes 'finished'.
"""

from __future__ import annotations

import os
import time

import dramatiq
import psycopg2

from broker import BrokerSettings, PostgresBroker

broker = PostgresBroker(settings=BrokerSettings.from_env())
dramatiq.set_broker(broker)

SCHEMA = """
CREATE TABLE IF NOT EXISTS broker_events (
    n integer NOT NULL, kind text NOT NULL, pid integer NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS broker_flags (name text PRIMARY KEY);
"""


def _conn():
    conn = psycopg2.connect(os.environ["DATABASE_URL"])
    conn.autocommit = True
    return conn


def _event(cur, n: int, kind: str) -> None:
    cur.execute("INSERT INTO broker_events (n, kind, pid) VALUES (%s, %s, %s)", (n, kind, os.getpid()))


@dramatiq.actor(max_retries=0)
def record(n: int) -> None:
    conn = _conn()
    with conn.cursor() as cur:
        _event(cur, n, "ran")
    conn.close()


@dramatiq.actor(max_retries=0)
def noop(n: int) -> None:
    pass


@dramatiq.actor(max_retries=0)
def slow(n: int, flag: str) -> None:
    conn = _conn()
    with conn.cursor() as cur:
        _event(cur, n, "started")
        while True:  # the actor's own wait for the test's go; not test synchronisation
            cur.execute("SELECT 1 FROM broker_flags WHERE name = %s", (flag,))
            if cur.fetchone():
                break
            time.sleep(0.05)
        _event(cur, n, "finished")
    conn.close()
