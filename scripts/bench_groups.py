"""Benchmark message groups (issue 25) against the same messages without groups, in one run.

    .venv/bin/python scripts/bench_groups.py                     # 10,000 messages, 2 processes x 4 threads
    .venv/bin/python scripts/bench_groups.py --messages 2000     # a quick run
    .venv/bin/python scripts/bench_groups.py --keys 100          # the 100-key drain alone

Figures, all on this machine, side by side:

* drain: a backlog of --messages no-op messages (citeq/groupsbench/app.py) is sent first, then
  real worker processes (``dramatiq citeq.groupsbench.app``) start; the rate counts from the
  first poll after the workers are up until nothing of the queue is held, queued or running
  (polled every 20 ms). Scenarios: no keys (the ungrouped drain, run first and again last),
  1 key (strictly one at a time), 100 keys and 10,000 keys (messages spread round-robin);
  the ratio of each to the mean of the two ungrouped drains;
* the busiest worker process's part of each drain (an even split is 1/processes: a key's
  next message goes to the process that ran the one before, up to its share of the keys);
* send rate: one ``send`` at a time, with and without a key (a grouped send takes its key's
  lock and checks the key in the same round trip);
* next-of-key gap: from the end of one message of a key to the start of the next (the
  ``recorded`` actor writes both), p50/p99 — on one key alone, and with 100 keys draining
  at once.

Database: DATABASE_URL when set, else the embedded server (database ``citeq_bench_groups``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts._benchdb import Workers, database, server_cpu_seconds, sql  # noqa: E402

#: Targets of issue 25.
TARGET_RATIO = 0.7
TARGET_GAP_P50_MS = 5.0
TARGET_GAP_P99_MS = 50.0


def say(msg: str) -> None:
    print(msg, flush=True)


def unfinished(url: str, queue: str) -> int:
    return sql(url, "SELECT count(*) FROM citeq_messages WHERE queue_name = %s "
                    "AND state IN ('held', 'queued', 'running')", queue)[0][0]


def wait_drained(conn, queue: str) -> None:
    """Poll every 20 ms, on ``conn``, until nothing of ``queue`` is held, queued or running.

    The poll is the benchmark's own load on the server it measures, so it is kept small: one
    connection (a new one per poll is a backend started 50 times a second) and "is anything
    left?" (EXISTS stops at the first live row; a count read every live row, up to the whole
    backlog: 2-7 ms per poll, 10-35 us per message drained in pg_stat_statements, more for
    the slower drains, as they are polled more often)."""
    with conn.cursor() as cur:
        while True:
            cur.execute("SELECT EXISTS (SELECT 1 FROM citeq_messages WHERE queue_name = %s "
                        "AND state IN ('held', 'queued', 'running'))", (queue,))
            if not cur.fetchone()[0]:
                return
            time.sleep(0.02)  # the benchmark's poll of the queue


def worker_cpu_seconds(workers: Workers) -> float:
    import psutil

    try:
        root = psutil.Process(workers.proc.pid)
        return sum(sum(p.cpu_times()[:2]) for p in [root, *root.children(recursive=True)])
    except psutil.Error:
        return 0.0


def drain(url: str, app, processes: int, threads: int, total: int) -> dict:
    """Start workers on the backlog and wait until it is gone: messages per second, seconds,
    and per message the server's CPU (embedded server only) and the workers' CPU over the
    same span."""
    import psycopg2

    workers = Workers(url, processes, threads, modules=("citeq.groupsbench.app",))
    poll = psycopg2.connect(url)
    poll.autocommit = True
    try:
        left0 = unfinished(url, app.QUEUE)
        server0, worker0 = server_cpu_seconds(), worker_cpu_seconds(workers)
        t0 = time.perf_counter()
        wait_drained(poll, app.QUEUE)
        seconds = time.perf_counter() - t0
        server1, worker1 = server_cpu_seconds(), worker_cpu_seconds(workers)
    finally:
        poll.close()
        workers.stop()
    return {"rate": left0 / seconds, "seconds": seconds,
            "server_cpu_us": None if server0 is None else (server1 - server0) / left0 * 1e6,
            "worker_cpu_us": (worker1 - worker0) / left0 * 1e6, "busiest": busiest_share(url, app.QUEUE)}


def busiest_share(url: str, queue: str) -> float:
    """The part of the drained messages that the busiest worker process ran (an acked message
    keeps its worker's id): 1/processes is an even split."""
    return sql(url, "SELECT coalesce(max(n)::float8 / nullif(sum(n), 0), 0) FROM (SELECT count(*) AS n "
                    "FROM citeq_messages WHERE queue_name = %s AND state = 'done' GROUP BY worker_id) AS w",
               queue)[0][0]


def send_backlog(app, total: int, keys: int | None) -> float:
    """Send the backlog one message at a time; sends per second."""
    t0 = time.perf_counter()
    if keys is None:
        for n in range(total):
            app.noop_plain.send(n)
    else:
        for n in range(total):
            app.noop_grouped.send(f"k{n % keys}", n)
    return total / (time.perf_counter() - t0)


def reset(url: str) -> None:
    sql(url, "TRUNCATE citeq_messages, citeq_workers, group_runs, group_kills")
    sql(url, "VACUUM ANALYZE citeq_messages")


def gaps(url: str) -> dict:
    """Milliseconds from the end of each run of a key to the start of the key's next run."""
    rows = sql(url, """
        SELECT extract(epoch FROM started_at - lag(ended_at) OVER (PARTITION BY key ORDER BY seq)) * 1000
        FROM group_runs""")
    xs = sorted(float(r[0]) for r in rows if r[0] is not None)
    q = statistics.quantiles(xs, n=100, method="inclusive")
    return {"n": len(xs), "p50": q[49], "p99": q[98], "max": xs[-1]}


def gap_run(url: str, app, keys: int, per_key: int, processes: int, threads: int) -> dict:
    reset(url)
    for seq in range(per_key):
        for k in range(keys):
            app.recorded.send(f"k{k}", seq)
    drain(url, app, processes, threads, keys * per_key)
    return gaps(url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--no-gaps", action="store_true", help="the drains alone (skip the next-of-key gaps)")
    parser.add_argument("--keys", type=int, action="append",
                        help="only the drains of this many keys (repeatable), no ratio and no gaps: "
                             "to alternate one drain between two checkouts")
    args = parser.parse_args()
    url = database("citeq_bench_groups")
    os.environ["DATABASE_URL"] = url
    from citeq.groupsbench import app

    sql(url, app.SCHEMA)
    n, p, t = args.messages, args.processes, args.threads
    say(f"== message groups: {n:,} no-op messages, {p} worker processes x {t} threads")
    results: dict = {"messages": n, "processes": p, "threads": t, "drain": {}}
    scenarios = [("no keys", None), ("1 key", 1), ("100 keys", 100), (f"{n:,} keys", n), ("no keys (again)", None)]
    if args.keys:
        scenarios = [(f"{k:,} keys", k) for k in args.keys]
    for name, keys in scenarios:
        reset(url)
        send_rate = send_backlog(app, n, keys)
        d = drain(url, app, p, t, n)
        results["drain"][name] = {"keys": keys, **d, "send_rate": send_rate}
        cpu = "" if d["server_cpu_us"] is None else f"server CPU {d['server_cpu_us']:4.0f} us/msg, "
        say(f"  {name:<16} drain {d['rate']:>8,.0f} msg/s ({d['seconds']:6.2f} s)   sends {send_rate:>7,.0f}/s   "
            f"{cpu}workers {d['worker_cpu_us']:4.0f} us/msg, busiest process {d['busiest']:4.0%}")
    if args.keys:
        print("BENCH_GROUPS " + json.dumps(results))
        return
    plain = statistics.mean(r["rate"] for r in results["drain"].values() if r["keys"] is None)
    say(f"  ungrouped drain (mean of the two): {plain:,.0f} msg/s")
    for name, r in results["drain"].items():
        if r["keys"] is not None:
            r["ratio"] = r["rate"] / plain
            target = f"  (target >= {TARGET_RATIO})" if r["keys"] >= 100 else ""
            say(f"  {name:<16} ratio to ungrouped {r['ratio']:.2f}{target}")

    if args.no_gaps:
        print("BENCH_GROUPS " + json.dumps(results))
        return
    say("== next message of a key: ms from the end of one run to the start of the next")
    one = gap_run(url, app, 1, 500, p, t)
    say(f"  1 key alone       p50 {one['p50']:6.2f}  p99 {one['p99']:6.2f}  max {one['max']:7.2f}  "
        f"(n={one['n']}; targets p50 <= {TARGET_GAP_P50_MS}, p99 <= {TARGET_GAP_P99_MS})")
    busy = gap_run(url, app, 100, 50, p, t)
    say(f"  100 keys at once  p50 {busy['p50']:6.2f}  p99 {busy['p99']:6.2f}  max {busy['max']:7.2f}  "
        f"(n={busy['n']})")
    results["gap_one_key"], results["gap_100_keys"] = one, busy
    app.broker.close()
    say("BENCH_GROUPS " + json.dumps(results))


if __name__ == "__main__":
    main()
