"""Server time per job of the per-user queue's drain, by statement, from pg_stat_statements.

    DATABASE_URL=postgresql://…/any_db .venv/bin/python scripts/bench_queue_statements.py [--users 400]

Needs a PostgreSQL server with ``pg_stat_statements`` in ``shared_preload_libraries`` (the
embedded server's build has none; a distribution's server has). Admits --users x 5 no-op jobs
in one transaction (as ``scripts/bench_queue.py``'s throughput run does) with real worker
processes (2 x 8) running, analyzes the tables before the commit (the planner sees them
nearly empty: the plans must hold up without statistics), resets pg_stat_statements,
commits, waits until every job has ended,
and prints the statements' execution time summed over the drain and divided by the jobs. The
times include waiting for a core on a loaded machine: compare versions in alternated runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import dramatiq  # noqa: E402

from scripts import bench_queue as bq  # noqa: E402
from scripts._benchdb import database, sql  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=400, help="users (x5 no-op jobs)")
    parser.add_argument("--top", type=int, default=10, help="statements to list")
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL"):
        raise SystemExit("set DATABASE_URL to a server that loads pg_stat_statements")
    url = database("citeq_bench_queue")
    os.environ["DATABASE_URL"] = url
    import actors  # noqa: F401 - the broker, the middleware and the actors of the queue

    dramatiq.set_broker(actors.broker)
    bq.declare_noop()
    total = args.users * 5
    bq.reset(url)
    sql(url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    workers = bq.queue_workers(url, 2, 8)
    try:
        conn = bq.admitted_backlog(url, args.users)
        # Analyzed before the admissions commit, so the planner sees the tables nearly empty,
        # as on a system just deployed or bulk-loaded: the plans must hold up without statistics.
        sql(url, "ANALYZE analysis_jobs, held_runs, citeq_messages")
        sql(url, "SELECT pg_stat_statements_reset()")
        t0 = time.perf_counter()
        conn.commit()
        bq.wait_until(url, bq.ALL_JOBS_DONE)
        rate = total / (time.perf_counter() - t0)
        conn.close()
    finally:
        workers.stop()
    rows = sql(url, "SELECT calls, total_exec_time, "
                    "left(regexp_replace(regexp_replace(query, '--[^\\n]*', '', 'g'), '\\s+', ' ', 'g'), 70) "
                    "FROM pg_stat_statements WHERE query NOT LIKE '%%pg_stat_statements%%' "
                    "ORDER BY total_exec_time DESC")
    print(f"{total} jobs drained at {rate:.0f} jobs/s; server execution time "
          f"{sum(r[1] for r in rows) * 1000 / total:.0f} us per job", flush=True)
    for calls, ms, text in rows[:args.top]:
        print(f"  {ms * 1000 / total:7.0f} us/job  {calls:6d} calls  {text}")


if __name__ == "__main__":
    main()
