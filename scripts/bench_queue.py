"""Benchmark the per-user analysis queue (issue 3).

    .venv/bin/python scripts/bench_queue.py                 # the full run
    .venv/bin/python scripts/bench_queue.py --users 200     # a quicker throughput run

Figures, all on this machine in one run:

* admit latency p50/p99: 16 client threads calling ``analysis.queue.userqueue.admit`` at once,
  all for one user (they serialize on that user's lock) and for 16 users (one each), after
  one unmeasured admission per thread (a serving process's pooled connections have
  prepared their statements; the first use of a connection prepares them);
* promotion latency p50/p99: 200 back-to-back no-op jobs of one user on a real worker
  process; per job, the time from the previous job's completion (its ``succeeded`` event,
  written in the completion transaction that also promotes and sends this job) to this
  job's ``started`` event — both taken with clock_timestamp() in the database;
* serialized throughput: --users x 5 no-op jobs admitted in one transaction, drained by
  real worker processes (``dramatiq actors scripts.bench_queue``), as a ratio to the raw
  broker draining as many no-op messages of a plain actor with the same processes;
* database work per job: with one client and no workers, the wall time per job of claiming
  and acking its message (all a raw message costs), of starting it, and of completing it
  (finish, promote the user's next job, send that job's message), in batches of 8 (what 8
  threads per process give) and of 128 (each statement's fixed cost spread thin: what is
  left is the work on the rows a job writes, which no batching removes).

Database: the server of DATABASE_URL when set, else the embedded one; the database
``citeq_bench_queue`` is created afresh and migrated.
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import dramatiq  # noqa: E402

from analysis.settings import QueueSettings
from analysis.queue import userqueue, work  # noqa: E402
from scripts._benchdb import Workers, database, sql  # noqa: E402

#: Targets of issue 3.
TARGET_PROMOTION_P50_MS = 20.0
TARGET_PROMOTION_P99_MS = 100.0
TARGET_ADMIT_P99_MS = 25.0
TARGET_THROUGHPUT_RATIO = 0.5


def _noop(i: int) -> None:
    """The raw broker's no-op."""


def simulated_work(job, settings) -> None:
    """The benchmark's stand-in analysis: sleeps ``analyze_seconds`` (CITEQ_ANALYZE_SECONDS,
    0 by default), so that the queue machinery alone is measured, not the pipeline."""
    if settings.analyze_seconds:
        time.sleep(settings.analyze_seconds)


#: The name the workers (which import this module next to ``actors``) know it by.
SIMULATED = "simulated"
work.register_work(SIMULATED, simulated_work)


def declare_noop():
    """Declare the no-op actor on the current global broker (the workers import this module
    after ``actors``; the benchmark process declares it once it has set up that broker)."""
    return dramatiq.actor(_noop, actor_name="bench_noop", queue_name="bench_raw", max_retries=0)


if __name__ != "__main__":
    bench_noop = declare_noop()


def say(msg: str) -> None:
    print(msg, flush=True)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def reset(url: str) -> None:
    sql(url, "TRUNCATE analysis_job_events, analysis_job_documents, held_runs, credit_ledger, analysis_jobs, "
             "documents, accounts, citeq_messages, citeq_results RESTART IDENTITY CASCADE")


def given_users(url: str, users: range, credits: int) -> dict[int, tuple[int, list[int]]]:
    sql(url, "INSERT INTO accounts (user_id, credits) SELECT u, %s FROM generate_series(%s, %s) u",
        credits, users.start, users.stop - 1)
    sql(url, "INSERT INTO documents (user_id, kind, filename, status) "
             "SELECT u, k::document_kind, k || '.pdf', 'parsed' FROM generate_series(%s, %s) u, "
             "unnest(ARRAY['thesis', 'source']) k", users.start, users.stop - 1)
    rows = sql(url, "SELECT user_id, kind::text, id FROM documents")
    docs: dict[int, tuple[int, list[int]]] = {}
    for user, kind, doc in rows:
        thesis, sources = docs.get(user, (0, []))
        docs[user] = (doc, sources) if kind == "thesis" else (thesis, [*sources, doc])
    return docs


def queue_workers(url: str, processes: int, threads: int) -> Workers:
    """Workers for no-op jobs: the queue machinery alone, not the analysis pipeline."""
    return Workers(url, processes, threads, modules=("actors", "scripts.bench_queue"),
                   env={"CITEQ_ANALYZE_WORK": SIMULATED})


# The finish lines, polled every 20 ms while the workers run: each half reads the first
# entry of a partial index of unfinished rows (the ORDER BY makes that the cheapest plan),
# so polling costs the measured server next to nothing (a count over the whole table took
# a fifth of its CPU in the throughput run).
DRAINED = ("SELECT NOT EXISTS (SELECT 1 FROM citeq_messages WHERE state = 'queued' ORDER BY queue_name, eta, id LIMIT 1)"
           " AND NOT EXISTS (SELECT 1 FROM citeq_messages WHERE state = 'running' ORDER BY lease_expires_at LIMIT 1)")
ALL_JOBS_DONE = ("SELECT NOT EXISTS (SELECT 1 FROM analysis_jobs WHERE status = 'queued' ORDER BY user_id, id LIMIT 1)"
                 " AND NOT EXISTS (SELECT 1 FROM analysis_jobs WHERE status IN ('pending', 'running')"
                 " ORDER BY status, id LIMIT 1)")


def wait_until(url: str, statement: str, timeout: float = 600.0) -> None:
    import psycopg2

    # One connection for all polls: a connection per poll would start a server backend
    # every 20 ms, CPU the measured workers and server then lack.
    conn = psycopg2.connect(url)
    conn.autocommit = True
    try:
        deadline = time.monotonic() + timeout
        with conn.cursor() as cur:
            while True:
                cur.execute(statement)
                if cur.fetchone()[0]:
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError(f"timed out waiting for: {statement}")
                time.sleep(0.02)
    finally:
        conn.close()


# -- scenarios --------------------------------------------------------------------------------


def bench_admit(url: str, *, one_user: bool, per_client: int) -> list[float]:
    from analysis.queue import userqueue
    from analysis.settings import QueueSettings

    reset(url)
    docs = given_users(url, range(1, 17), credits=10**6)
    settings = QueueSettings(max_active_jobs=10**6)
    barrier = threading.Barrier(16)
    # Warm the pool: a web process keeps its connections; connecting is not admission.
    with ExitStack() as stack:
        for _ in range(16):
            stack.enter_context(dramatiq.get_broker().connection())
    latencies: list[float] = []
    lock = threading.Lock()

    def client(n: int) -> None:
        user = 1 if one_user else n + 1
        thesis, sources = docs[user]
        mine = []
        # Warm up, unmeasured and all at once (so every pooled connection takes part): a
        # serving process's connections have prepared their statements.
        barrier.wait()
        userqueue.admit(user, thesis, sources, settings=settings)
        barrier.wait()
        for _ in range(per_client):
            t0 = time.perf_counter()
            userqueue.admit(user, thesis, sources, settings=settings)
            mine.append((time.perf_counter() - t0) * 1000)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies


def bench_promotion(url: str, jobs: int) -> list[float]:
    from analysis.queue import userqueue
    from analysis.settings import QueueSettings

    reset(url)
    thesis, sources = given_users(url, range(1, 2), credits=jobs)[1]
    workers = queue_workers(url, processes=1, threads=4)
    try:
        conn = _transaction_connection(url)
        for _ in range(jobs):
            userqueue.admit(1, thesis, sources, connection=conn, settings=QueueSettings(max_active_jobs=jobs))
        conn.commit()
        wait_until(url, ALL_JOBS_DONE)
    finally:
        workers.stop()
    rows = sql(url, """
        SELECT extract(epoch FROM s.at - f.at) * 1000
        FROM analysis_jobs j
        JOIN analysis_job_events s ON s.job_id = j.id AND s.event = 'started'
        JOIN analysis_job_events f ON f.job_id = j.id - 1 AND f.event = 'succeeded'
        WHERE j.user_id = 1""")
    return [float(r[0]) for r in rows]


def _transaction_connection(url: str):
    import psycopg2

    conn = psycopg2.connect(url)
    conn.autocommit = False
    return conn


def admitted_backlog(url: str, users: int, per_user: int = 5):
    """``users`` x ``per_user`` no-op jobs admitted on one connection, not yet committed (its
    commit is what the drains time), the users' first jobs pending and the rest queued; the
    connection."""
    from analysis.queue import userqueue

    docs = given_users(url, range(1, users + 1), credits=per_user)
    conn = _transaction_connection(url)
    settings = QueueSettings.from_env()
    for _ in range(per_user):
        for user in range(1, users + 1):
            userqueue.admit(user, *docs[user], connection=conn, settings=settings)
    return conn


def bench_throughput(url: str, users: int, per_user: int, processes: int, threads: int) -> tuple[float, float]:
    from analysis.queue import userqueue

    broker = dramatiq.get_broker()
    bench_noop = broker.get_actor("bench_noop")
    total = users * per_user

    reset(url)
    workers = queue_workers(url, processes, threads)
    try:
        with broker.transaction():
            broker.enqueue_many([bench_noop.message(i) for i in range(total)])
        t0 = time.perf_counter()
        wait_until(url, DRAINED)
        raw = total / (time.perf_counter() - t0)

        conn = admitted_backlog(url, users, per_user)
        conn.commit()
        # Statistics as autovacuum keeps them in a running system, not those of the table
        # before this bulk load (TRUNCATE keeps the old ones).
        sql(url, "ANALYZE analysis_jobs, held_runs, citeq_messages")
        t0 = time.perf_counter()
        wait_until(url, ALL_JOBS_DONE)
        serialized = total / (time.perf_counter() - t0)
    finally:
        workers.stop()
    return raw, serialized


def bench_row_work(url: str, users: int, batch: int) -> tuple[float, float, float]:
    """Per job, with one client and no workers, in batches of ``batch``: wall microseconds of
    claiming and acking a message (what the raw drain does per message), of starting a
    job, and of completing it (finish, promote the user's next job, send its message).

    Batches of 128 spread each statement's fixed cost over many jobs, so what is left is
    the work on the rows themselves: what no batching can remove.
    """
    from analysis.queue import userqueue
    from analysis.queue.jobs import JobStatus

    broker = dramatiq.get_broker()
    reset(url)
    docs = given_users(url, range(1, users + 1), credits=2)
    conn = _transaction_connection(url)
    for _ in range(2):  # one pending and one queued job per user
        for user in range(1, users + 1):
            userqueue.admit(user, *docs[user], connection=conn, settings=QueueSettings.from_env())
    conn.commit()
    conn.close()
    sql(url, "ANALYZE analysis_jobs, held_runs, citeq_messages")
    pending = sql(url, "SELECT id, user_id, message_id FROM analysis_jobs WHERE status = 'pending' ORDER BY id")
    batches = [pending[i:i + batch] for i in range(0, len(pending), batch)]

    def per_job(step) -> float:
        step(batches[0])  # unmeasured: the connection prepares its statements on first use
        t0 = time.perf_counter()
        for b in batches[1:]:
            step(b)
        return (time.perf_counter() - t0) / (len(pending) - len(batches[0]))

    start = per_job(lambda b: userqueue.start_jobs([(job_id, message_id) for job_id, _, message_id in b],
                                                   broker=broker, settings=QueueSettings.from_env()))
    complete = per_job(lambda b: userqueue.complete_jobs(
        [userqueue.Completion(job_id, user_id, JobStatus.SUCCEEDED) for job_id, user_id, _ in b], broker=broker))

    # Both jobs' messages of every user: claimed and acked the way a consumer does it, the
    # acks of one batch written with the next claim.
    queue_name = broker.get_actor(userqueue.ANALYZE_ACTOR).queue_name
    claimed, _ = broker.exchange(queue_name, [], [], batch)  # unmeasured, as above
    drained, acks = 0, [(m.row_id, m.lease_token) for m in claimed]
    t0 = time.perf_counter()
    while True:
        claimed, _ = broker.exchange(queue_name, acks, [], batch)
        if not claimed and not acks:
            break
        drained += len(claimed)
        acks = [(m.row_id, m.lease_token) for m in claimed]
    claim_ack = (time.perf_counter() - t0) / drained
    return claim_ack * 1e6, start * 1e6, complete * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=1000, help="users of the throughput run (x5 jobs)")
    parser.add_argument("--promotions", type=int, default=200, help="back-to-back jobs of one user")
    parser.add_argument("--admits", type=int, default=25, help="admissions per client thread")
    parser.add_argument("--processes", type=int, default=2, help="worker processes of the throughput run")
    parser.add_argument("--threads", type=int, default=8, help="threads per worker process")
    parser.add_argument("--row-work-users", type=int, default=4000,
                        help="users (one running and one queued job each) of the database-work figure")
    args = parser.parse_args()

    url = database("citeq_bench_queue")
    os.environ["DATABASE_URL"] = url
    # One pooled connection per client thread, as a web process serving 16 clients would have.
    os.environ.setdefault("CITEQ_POOL_SIZE", "20")
    import actors  # noqa: F401 - the broker, the middleware and the actors of the queue

    dramatiq.set_broker(actors.broker)
    declare_noop()

    ok = True
    for label, one_user in (("1 user", True), ("16 users", False)):
        lat = bench_admit(url, one_user=one_user, per_client=args.admits)
        p50, p99 = pct(lat, 50), pct(lat, 99)
        ok &= p99 <= TARGET_ADMIT_P99_MS
        say(f"admit latency, 16 clients, {label:8}: p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  "
            f"(n={len(lat)}, target p99 <= {TARGET_ADMIT_P99_MS:.0f} ms)")

    lat = bench_promotion(url, args.promotions)
    p50, p99 = pct(lat, 50), pct(lat, 99)
    ok &= p50 <= TARGET_PROMOTION_P50_MS and p99 <= TARGET_PROMOTION_P99_MS
    say(f"promotion latency, {args.promotions} jobs of one user: p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  "
        f"(targets {TARGET_PROMOTION_P50_MS:.0f} / {TARGET_PROMOTION_P99_MS:.0f} ms)")

    raw, serialized = bench_throughput(url, args.users, 5, args.processes, args.threads)
    ratio = serialized / raw
    ok &= ratio >= TARGET_THROUGHPUT_RATIO
    say(f"throughput, {args.users} users x 5 no-op jobs, {args.processes}x{args.threads} workers: "
        f"serialized {serialized:7.0f} jobs/s, raw broker {raw:7.0f} msg/s, ratio {ratio:.2f} "
        f"(target >= {TARGET_THROUGHPUT_RATIO:.2f})")
    # Batches of 8 are what 8 threads per process give; 128 is the limit of batching.
    for batch in (8, 128):
        claim_ack, start, complete = bench_row_work(url, args.row_work_users, batch=batch)
        say(f"database work per job, one client, batches of {batch:3}: claim+ack {claim_ack:4.0f} us, "
            f"start {start:4.0f} us, complete+promote+send {complete:4.0f} us: a job costs "
            f"{(claim_ack + start + complete) / claim_ack:.1f}x a raw message")
    say("all targets met" if ok else "SOME TARGETS MISSED")


if __name__ == "__main__":
    main()
