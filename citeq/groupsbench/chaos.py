"""The chaos run of message groups: worker processes SIGKILLed in a loop while keys drain,
then the recorded runs checked (scripts/chaos_groups.py is its command line).

Each message (:mod:`citeq.groupsbench.app` ``recorded``) writes its start and end to the
database; every ``kill_every`` seconds (jittered) one worker process group is SIGKILLed and a
fresh one started in its place, until every message is done. Then, from the rows:

* order violations: a run that started after a run of a later message of its key;
* overlaps: two runs of a key at the same instant (a killed run ends when it was killed);
* lost: messages of which no run ended; duplicates (at-least-once, reported, allowed):
  messages with more than one finished run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from citeq.devdb import sql

ROOT = Path(__file__).resolve().parents[2]


ORDER_VIOLATIONS = """
SELECT count(*) FROM (
    SELECT seq, max(seq) OVER (PARTITION BY key ORDER BY started_at, id
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
    FROM group_runs) AS r
WHERE r.before > r.seq
"""

# A run's end: its ended_at, else the moment its process group was killed, else (it never
# ended and was not killed: a failed attempt whose retry came after its nack) its start.
OVERLAPS = """
WITH runs AS (
    SELECT r.id, r.key, r.started_at,
           coalesce(r.ended_at, (SELECT min(k.killed_at) FROM group_kills k
                                 WHERE k.pgid = r.pgid AND k.killed_at >= r.started_at), r.started_at) AS ended_at
    FROM group_runs r
)
SELECT count(*) FROM runs a JOIN runs b ON a.key = b.key AND a.id < b.id
WHERE a.started_at < b.ended_at AND b.started_at < a.ended_at
"""

LOST = """
SELECT count(*) FROM (SELECT 'k' || k AS key, s AS seq FROM generate_series(0, %s - 1) AS k,
                      generate_series(0, %s - 1) AS s) AS expected
WHERE NOT EXISTS (SELECT 1 FROM group_runs r WHERE r.key = expected.key AND r.seq = expected.seq
                  AND r.ended_at IS NOT NULL)
"""

DUPLICATES = """
SELECT count(*) FROM (SELECT key, seq FROM group_runs WHERE ended_at IS NOT NULL
                      GROUP BY key, seq HAVING count(*) > 1) AS d
"""


def _start_worker(url: str, threads: int, log) -> subprocess.Popen:
    env = dict(os.environ, DATABASE_URL=url, CITEQ_LEASE_SECONDS="2", CITEQ_POLL_INTERVAL="0.2",
               CITEQ_MAX_DELIVERIES="1000", PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "dramatiq"), "citeq.groupsbench.app", "--processes", "1",
         "--threads", str(threads), "--path", "."],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def run(url: str, *, keys: int = 50, per_key: int = 100, processes: int = 3, threads: int = 4,
        kill_every: float = 1.0, work_ms: int = 5, timeout: float = 900, seed: int = 25,
        log=subprocess.DEVNULL, say=print) -> dict:
    """Drain ``keys`` x ``per_key`` recorded messages while killing workers; the counts."""
    os.environ["DATABASE_URL"] = url
    from citeq.groupsbench import app as groups_app

    rng = random.Random(seed)
    sql(url, groups_app.SCHEMA)
    sql(url, "TRUNCATE group_runs, group_kills")
    for seq in range(per_key):
        for k in range(keys):
            groups_app.recorded.send(f"k{k}", seq, work_ms)
    total = keys * per_key
    say(f"sent {total} messages over {keys} keys")
    workers = [_start_worker(url, threads, log) for _ in range(processes)]
    kills = 0
    started = time.monotonic()
    try:
        while True:
            unfinished = sql(url, "SELECT count(*) FROM citeq_messages WHERE queue_name = %s "
                                  "AND state IN ('held', 'queued', 'running')", groups_app.QUEUE)[0][0]
            if unfinished == 0:
                break
            if time.monotonic() - started > timeout:
                raise TimeoutError(f"chaos run: {unfinished} of {total} unfinished after {timeout}s")
            time.sleep(kill_every * rng.uniform(0.5, 1.5))  # the kill loop's own pace
            victim = rng.randrange(len(workers))
            proc = workers[victim]
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            sql(url, "INSERT INTO group_kills (pgid) VALUES (%s)", proc.pid)
            kills += 1
            workers[victim] = _start_worker(url, threads, log)
    finally:
        for proc in workers:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        groups_app.broker.close()
    seconds = time.monotonic() - started
    result = {
        "messages": total, "keys": keys, "kills": kills, "seconds": round(seconds, 1),
        "order_violations": sql(url, ORDER_VIOLATIONS)[0][0],
        "overlaps": sql(url, OVERLAPS)[0][0],
        "lost": sql(url, LOST, keys, per_key)[0][0],
        "dead": sql(url, "SELECT count(*) FROM citeq_messages WHERE state = 'dead'")[0][0],
        "duplicates": sql(url, DUPLICATES)[0][0],
        "runs": sql(url, "SELECT count(*) FROM group_runs")[0][0],
    }
    say(json.dumps(result))
    return result
