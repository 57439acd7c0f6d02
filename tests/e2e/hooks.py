"""Work and release check for the queue tests, steered through the database so that
worker processes of the end-to-end tests obey the test too. Importing this module
registers them with the queue service (a worker loads it next to the actors:
``dramatiq actors tests.e2e.hooks``); the environment chooses them by name:

    CITEQ_ANALYZE_WORK=hooks
    CITEQ_RELEASE_CHECK=hooks

``held_judge`` (registered as ``CITEQ_JUDGE_FACTORY=held``) is the offline judge's raw rule
table (uncalibrated: every rule decides), except that while the flag ``hold_judges`` is set, every call after the first two waits
for the flag to go away: the end-to-end tests kill a worker with judges in hand.

A job's ``options`` choose what its work does: ``seconds`` to run, ``fail`` to raise,
``hold`` to wait until the flag of that name is set. ``release_check`` fails while the
flag ``provider_down`` is set.
"""

from __future__ import annotations

import os
import time

import psycopg2

from analysis.errors import TransientReleaseError
from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.registry import register_judge_factory
from analysis.queue.work import register_release_check, register_work

#: The names this module registers its work, release check and judge under.
WORK = RELEASE_CHECK = "hooks"
HELD_JUDGE = "held"

SCHEMA = """
CREATE TABLE IF NOT EXISTS test_flags (name text PRIMARY KEY);
CREATE TABLE IF NOT EXISTS test_judged (pid integer NOT NULL, claim text NOT NULL);
CREATE TABLE IF NOT EXISTS test_runs (
    job_id bigint NOT NULL, pid integer NOT NULL,
    started_at timestamptz NOT NULL, finished_at timestamptz
);
"""


def _connect():
    conn = psycopg2.connect(os.environ["DATABASE_URL"])
    conn.autocommit = True
    return conn


def install(conn) -> None:
    with conn.cursor() as cur:
        cur.execute(SCHEMA)


def set_flag(conn, name: str, on: bool = True) -> None:
    with conn.cursor() as cur:
        if on:
            cur.execute("INSERT INTO test_flags VALUES (%s) ON CONFLICT DO NOTHING", (name,))
        else:
            cur.execute("DELETE FROM test_flags WHERE name = %s", (name,))


def _flag(cur, name: str) -> bool:
    cur.execute("SELECT 1 FROM test_flags WHERE name = %s", (name,))
    return cur.fetchone() is not None


def work(job, settings) -> None:
    conn = _connect()
    try:
        with conn.cursor() as cur:
            cur.execute("INSERT INTO test_runs (job_id, pid, started_at) VALUES (%s, %s, clock_timestamp())",
                        (job.id, os.getpid()))
            hold = job.options.get("hold")
            deadline = time.monotonic() + 60
            while hold and not _flag(cur, hold) and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(job.options.get("seconds", 0))
            if job.options.get("fail"):
                raise RuntimeError("the analysis broke")
            cur.execute("UPDATE test_runs SET finished_at = clock_timestamp() "
                        "WHERE job_id = %s AND pid = %s AND finished_at IS NULL", (job.id, os.getpid()))
    finally:
        conn.close()


def release_check(job) -> None:
    conn = _connect()
    try:
        with conn.cursor() as cur:
            if _flag(cur, "provider_down"):
                raise TransientReleaseError("judge provider unreachable")
    finally:
        conn.close()


class _HeldJudge(OfflineJudge):
    def __init__(self) -> None:
        # the raw rule table (every rule decides): the processes tests compare verdicts the rules
        # give; which of them the shipped judge keeps is tested in tests/unit/test_judge_rules.py
        super().__init__(calibration=None)

    def judge(self, claim, passages):
        conn = _connect()
        try:
            with conn.cursor() as cur:
                deadline = time.monotonic() + 60
                while _flag(cur, "hold_judges") and _judged(cur) >= 2 and time.monotonic() < deadline:
                    time.sleep(0.05)
                judgement = super().judge(claim, passages)
                cur.execute("INSERT INTO test_judged (pid, claim) VALUES (%s, %s)", (os.getpid(), claim))
                return judgement
        finally:
            conn.close()


def _judged(cur) -> int:
    cur.execute("SELECT count(*) FROM test_judged")
    return cur.fetchone()[0]


def held_judge() -> OfflineJudge:
    return _HeldJudge()


register_work(WORK, work)
register_release_check(RELEASE_CHECK, release_check)
register_judge_factory(HELD_JUDGE, held_judge)
