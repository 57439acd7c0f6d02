"""One benchmark scenario against one broker, run under that broker's Python.

scripts/bench_broker.py runs this file with the interpreter of the broker under test
(the project's venv for citeq and the StubBroker, a Dramatiq 1.x venv for dramatiq-pg,
a Dramatiq 2 venv with redis/pika for RedisBroker and RabbitmqBroker), with
``BENCH_BROKER`` and ``DATABASE_URL`` in the environment. Each command prints one line
``BENCH_RESULT {json}`` on stdout as its last line.

    python scripts/_bench_client.py cycle --messages 20000 --fill single --processes 1 --threads 8
    python scripts/_bench_client.py latency --messages 200
    python scripts/_bench_client.py delays --messages 200
    python scripts/_bench_client.py stub --messages 20000 --threads 8
    python scripts/_bench_client.py memory --messages 100000
    python scripts/_bench_client.py sustained --messages 500000 --window 50000
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts import bench_app  # noqa: E402  (builds the broker named by BENCH_BROKER)
from scripts import _benchdb  # noqa: E402
from scripts._benchdb import proc_cpu_seconds  # noqa: E402

KIND = bench_app.BROKER
QUEUE = bench_app.QUEUE
LOG_DIR = ROOT / ".citeq" / "bench-logs"
#: Seconds between two looks at the queue while a drain runs.
POLL = 0.05


def result(**data) -> None:
    print("BENCH_RESULT " + json.dumps(data), flush=True)


def log(msg: str) -> None:
    print(f"  [{KIND}] {msg}", file=sys.stderr, flush=True)


# -- per-broker plumbing ---------------------------------------------------------------

class Backend:
    """Clean and count one broker's queue the way an operator would."""

    def __init__(self) -> None:
        self.broker = bench_app.broker
        self._conn = None
        if KIND in ("citeq", "dramatiq-pg"):
            import psycopg2

            self._conn = psycopg2.connect(os.environ["DATABASE_URL"])
            self._conn.autocommit = True
        if KIND == "dramatiq-pg":
            self._ensure_dramatiq_pg_schema()

    def _sql(self, query: str, params=None):
        with self._conn.cursor() as cur:
            cur.execute(query, params)
            return cur.fetchall() if cur.description else None

    def _ensure_dramatiq_pg_schema(self) -> None:
        # dramatiq-pg ships its schema as dramatiq_pg/schema.sql (psql syntax); its
        # generate_init_sql() turns it into plain SQL.
        if self._sql("SELECT to_regclass('dramatiq.queue')")[0][0] is None:
            from dramatiq_pg.schema import generate_init_sql

            self._sql(generate_init_sql())

    def clean(self) -> None:
        if KIND == "citeq":
            self._sql("TRUNCATE citeq_messages, citeq_results, citeq_workers RESTART IDENTITY")
        elif KIND == "dramatiq-pg":
            self._sql("TRUNCATE dramatiq.queue")
        else:
            self.broker.flush_all()

    def unfinished(self) -> int:
        """Messages still to run: queued or running (claimed, not yet acked)."""
        if KIND == "citeq":
            return self._sql("SELECT count(*) FROM citeq_messages WHERE state IN ('queued', 'running')")[0][0]
        if KIND == "dramatiq-pg":
            return self._sql("SELECT count(*) FROM dramatiq.queue WHERE state IN ('queued', 'consumed')")[0][0]
        if KIND == "redis":
            # RedisBroker keeps every message in <ns>:<queue>.msgs until its ack deletes it.
            return self.broker.client.hlen(f"{self.broker.namespace}:{QUEUE}.msgs")
        if KIND == "rabbitmq":
            # Ready messages only: RabbitMQ does not tell a client about unacked ones, so
            # the last prefetched batch (at most 2 x threads no-op messages) is not seen.
            counts = self.broker.get_queue_message_counts(QUEUE)
            return counts[0] + counts[1]
        raise SystemExit(f"no unfinished count for {KIND}")

    def fill(self, n: int, mode: str, batch_size: int) -> float:
        """Send n no-op messages; return the send rate (msg/s)."""
        actor = bench_app.noop
        start = time.perf_counter()
        if mode == "batch":
            if not hasattr(self.broker, "enqueue_many"):
                raise SystemExit(f"{KIND} has no batch API")
            for i in range(0, n, batch_size):
                self.broker.enqueue_many([actor.message() for _ in range(min(batch_size, n - i))])
        else:
            for _ in range(n):
                actor.send()
        return n / (time.perf_counter() - start)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        try:
            self.broker.close()
        except Exception:  # noqa: BLE001
            pass


# -- worker processes ------------------------------------------------------------------

class Workers:
    """``dramatiq scripts.bench_app -p P -t T`` as a subprocess of its own session."""

    def __init__(self, processes: int, threads: int, name: str, env: dict | None = None) -> None:
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        self.log_path = LOG_DIR / f"{name}.log"
        self.log_file = open(self.log_path, "w")
        cmd = [sys.executable, "-m", "dramatiq", "scripts.bench_app", "--processes", str(processes),
               "--threads", str(threads), "--path", str(ROOT), "--queues", QUEUE]
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **(env or {})},
                                     stdout=self.log_file, stderr=subprocess.STDOUT, start_new_session=True)

    def children(self) -> list[int]:
        """Pids of the worker processes the dramatiq master forked."""
        out = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == self.proc.pid:
                out.append(int(entry))
        return sorted(out)

    @staticmethod
    def rss_mb(pid: int) -> float | None:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise SystemExit(f"worker exited with {self.proc.returncode}; see {self.log_path}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the session this object started
                self.proc.wait()
        self.log_file.close()


def proc_children(pid: int) -> list[int]:
    """Pids of the direct children of ``pid``."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return out


#: Meter figures that PostgreSQL reports late (read over the whole run, see cmd_cycle).
COUNTED = ("round_trips", "wal_records", "wal_fpi", "tup_ins", "tup_upd", "tup_hot_upd", "tup_del")


class Meter:
    """Counters of one broker's server and workers, read at two points of a run; the
    difference is the run's cost (scripts/bench_profile.py divides it by the messages).

    citeq: the PostgreSQL server's CPU (postmaster and every child, from /proc; embedded
    server only), transactions (pg_stat_database: a round trip outside an explicit
    transaction is one), WAL (pg_stat_wal), the messages table's row counters and NOTIFYs
    heard on the wake-up channel. RedisBroker: the server's CPU and commands (INFO).
    Both: the CPU of the worker processes (the dramatiq master and its children)."""

    def __init__(self, backend: "Backend", workers: "Workers | None" = None) -> None:
        self.backend = backend
        self.workers = workers
        self.listen = None
        if KIND == "citeq":
            import psycopg2

            self.listen = psycopg2.connect(os.environ["DATABASE_URL"])
            self.listen.autocommit = True
            with self.listen.cursor() as cur:
                cur.execute("LISTEN citeq_wakeup")
        self.notifies = 0

    def _worker_cpu(self) -> float:
        if self.workers is None or self.workers.proc.poll() is not None:
            return 0.0
        master = self.workers.proc.pid
        return proc_cpu_seconds(master) + sum(proc_cpu_seconds(c) for c in proc_children(master))

    def read(self) -> dict:
        out = {"worker_cpu": self._worker_cpu()}
        if KIND == "citeq":
            self.listen.poll()
            self.notifies += len(self.listen.notifies)
            self.listen.notifies.clear()
            b = self.backend
            b._sql("SELECT pg_stat_force_next_flush()")  # this session's own counters, too
            (xacts, wal_bytes, wal_records, fpi), = b._sql(
                "SELECT (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()),"
                " (pg_current_wal_insert_lsn() - '0/0')::float8, w.wal_records, w.wal_fpi FROM pg_stat_wal w")
            (ins, upd, hot, dele), = b._sql(
                "SELECT n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables "
                "WHERE relname = 'citeq_messages'")
            out.update(server_cpu=postgres_cpu_seconds(), round_trips=xacts, wal_bytes=wal_bytes,
                       wal_records=wal_records, wal_fpi=fpi, tup_ins=ins, tup_upd=upd, tup_hot_upd=hot,
                       tup_del=dele, notifies=self.notifies)
        elif KIND == "redis":
            client = self.backend.broker.client
            cpu = client.info("cpu")
            out.update(server_cpu=cpu["used_cpu_user"] + cpu["used_cpu_sys"],
                       round_trips=client.info("stats")["total_commands_processed"])
        return out

    @staticmethod
    def delta(before: dict, after: dict) -> dict:
        return {k: (after[k] - before[k] if after.get(k) is not None and before.get(k) is not None else None)
                for k in after}

    def close(self) -> None:
        if self.listen is not None:
            self.listen.close()


def postgres_cpu_seconds() -> float | None:
    """CPU seconds used so far by the embedded PostgreSQL server (postmaster and backends),
    or None when the server is not ours to see (BENCH_PG_DATA unset, DATABASE_URL's server)."""
    data = os.environ.get("BENCH_PG_DATA")
    if not data or KIND != "citeq":
        return None
    return _benchdb.postgres_cpu_seconds(Path(data))


def connections_now(backend: Backend) -> int | None:
    if KIND != "citeq":
        return None
    return backend._sql("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'citeq:%%'")[0][0]


def wait_drained(backend: Backend, n: int, workers: Workers, timeout: float, sample=None,
                 meter: Meter | None = None) -> dict:
    """Poll until nothing is queued or running; time from the first progress seen. With a
    ``meter``, its counters over the same span (``cost``)."""
    first_t = first_left = None
    cpu_first = None
    meter_first = meter_end = None
    peak_connections = 0
    deadline = time.perf_counter() + timeout
    while True:
        left = backend.unfinished()
        now = time.perf_counter()
        if sample:
            sample(left)
        if first_t is None and left < n:
            first_t, first_left = now, left
            cpu_first = postgres_cpu_seconds()
            meter_first = meter and meter.read()
        peak_connections = max(peak_connections, connections_now(backend) or 0)
        if left == 0:
            end = now
            cpu_end = postgres_cpu_seconds()
            meter_end = meter and meter.read()
            break
        if now > deadline:
            raise SystemExit(f"drain timed out with {left} of {n} left; see {workers.log_path}")
        workers.check_alive()
        time.sleep(POLL)
    # Messages finished between the first progress seen and the end, over that time.
    # (The first poll that sees progress is at most POLL late: those few messages are left out.)
    drained = first_left
    seconds = max(end - first_t, 1e-6)
    pg_cpu = cpu_end - cpu_first if cpu_first is not None and cpu_end is not None else None
    return {"drain_rate": drained / seconds, "drain_seconds": seconds, "drained": drained,
            "spawn_to_empty_seconds": end - workers.started,
            "spawn_to_first_progress_seconds": first_t - workers.started,
            "postgres_cpu_seconds": pg_cpu, "peak_connections": peak_connections or None,
            "cost": Meter.delta(meter_first, meter_end) if meter else None}


# -- commands --------------------------------------------------------------------------

def cmd_cycle(args) -> None:
    """Clean, send a backlog (timed: the enqueue rate), drain it with real workers (timed)."""
    backend = Backend()
    backend.clean()
    meter = Meter(backend) if args.meter else None
    before = meter and meter.read()
    cpu = time.process_time()
    rate = backend.fill(args.messages, args.fill, args.batch_size)
    send_cost = meter and {**Meter.delta(before, meter.read()), "client_cpu": time.process_time() - cpu}
    log(f"sent {args.messages} ({args.fill}) at {rate:,.0f} msg/s; draining with {args.processes}x{args.threads}")
    if args.settle:
        time.sleep(args.settle)  # autovacuum of the sends' inserts, not charged to the drain
    pre = meter and meter.read()
    workers = Workers(args.processes, args.threads, f"{KIND}-drain-{args.processes}x{args.threads}")
    if meter:
        meter.workers = workers
    try:
        drained = wait_drained(backend, args.messages, workers, args.timeout, meter=meter)
    finally:
        workers.stop()
    if meter:
        # A backend reports its row and transaction counters at most once a second, and
        # always when it exits: these are read over the whole run, workers' start and
        # stop included (CPU and WAL are read over the drain alone).
        time.sleep(0.5)
        whole = Meter.delta(pre, meter.read())
        drained["cost"].update({k: whole[k] for k in COUNTED if k in whole})
        meter.close()
    backend.clean()
    backend.close()
    result(enqueue_mode=args.fill, enqueue_rate=rate, processes=args.processes, threads=args.threads,
           send_cost=send_cost, **drained)


def cmd_latency(args) -> None:
    """Idle system: one message at a time, each sent after the previous one started."""
    backend = Backend()
    backend.clean()
    fd, path = tempfile.mkstemp(prefix=f"bench-latency-{KIND}-", suffix=".txt")
    os.close(fd)
    workers = Workers(1, 8, f"{KIND}-latency", env={"BENCH_LATENCY_FILE": path})

    def lines() -> list[float]:
        return [float(x) for x in Path(path).read_text().split()]

    def send_and_wait(count: int, timeout: float) -> None:
        bench_app.stamp.send(time.time())
        deadline = time.monotonic() + timeout
        while len(lines()) < count:
            if time.monotonic() > deadline:
                raise SystemExit(f"latency probe not run within {timeout}s; see {workers.log_path}")
            workers.check_alive()
            time.sleep(0.002)

    try:
        send_and_wait(1, 60)  # the worker is up and idle
        time.sleep(1.0)
        for i in range(args.messages):
            send_and_wait(i + 2, 10)
            time.sleep(args.interval)  # idle between probes
        samples = lines()[1:]
    finally:
        workers.stop()
        os.unlink(path)
    backend.clean()
    backend.close()
    samples.sort()
    q = statistics.quantiles(samples, n=100, method="inclusive")
    result(latency_p50_ms=1000 * statistics.median(samples), latency_p99_ms=1000 * q[98],
           latency_max_ms=1000 * samples[-1], samples=len(samples))


def cmd_delays(args) -> None:
    """Idle worker: delayed messages and retry backoffs, how late each started after its eta.

    Lateness is read from the database (started_at - eta of each delayed row, one clock):
    --messages sends with random delays of 50-500 ms, one every 20 ms, and as many messages
    whose first attempt fails and is retried after Dramatiq's backoff (50-100 ms)."""
    import random

    if KIND != "citeq":
        raise SystemExit("delays reads eta and started_at from citeq's table")
    backend = Backend()
    backend.clean()
    workers = Workers(1, 8, f"{KIND}-delays")
    try:
        bench_app.stamp.send(time.time())
        deadline = time.monotonic() + 60
        while backend.unfinished():  # the worker is up and idle
            if time.monotonic() > deadline:
                raise SystemExit(f"worker did not start; see {workers.log_path}")
            workers.check_alive()
            time.sleep(0.05)
        time.sleep(1.0)
        for _ in range(args.messages):
            bench_app.noop.send_with_options(delay=random.randint(50, 500))
            bench_app.fail_once.send(time.time() + 0.01)
            time.sleep(args.interval)
        deadline = time.monotonic() + 60
        while backend.unfinished():
            if time.monotonic() > deadline:
                raise SystemExit(f"delayed messages not finished; see {workers.log_path}")
            time.sleep(0.05)
    finally:
        workers.stop()
    rows = backend._sql(
        "SELECT actor_name, 1000 * extract(epoch FROM started_at - eta)::float8 FROM citeq_messages "
        "WHERE eta > enqueued_at + interval '20 milliseconds' AND started_at IS NOT NULL")
    backend.clean()
    backend.close()

    def quantiles(xs: list[float]) -> dict:
        xs = sorted(xs)
        q = statistics.quantiles(xs, n=100, method="inclusive") if len(xs) > 1 else xs * 99
        return {"p50": statistics.median(xs), "p99": q[98], "max": xs[-1], "n": len(xs)}

    delayed = [ms for actor, ms in rows if actor == "noop"]
    retried = [ms for actor, ms in rows if actor == "fail_once"]
    result(delayed=quantiles(delayed), retried=quantiles(retried),
           poll_interval=float(os.environ.get("CITEQ_POLL_INTERVAL") or 1.0))


def cmd_stub(args) -> None:
    """The in-process ceiling: StubBroker and an in-process Worker, same no-op workload."""
    from dramatiq import Worker

    broker = bench_app.broker
    start = time.perf_counter()
    for _ in range(args.messages):
        bench_app.noop.send()
    enqueue_rate = args.messages / (time.perf_counter() - start)
    worker = Worker(broker, worker_threads=args.threads)
    start = time.perf_counter()
    cpu = time.process_time()
    worker.start()
    broker.join(QUEUE)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    worker.stop()
    result(enqueue_rate=enqueue_rate, drain_rate=args.messages / seconds, drain_seconds=seconds,
           threads=args.threads, cost={"worker_cpu": cpu})


def cmd_memory(args) -> None:
    """Worker RSS before, during and after draining a large backlog (batch-sent)."""
    backend = Backend()
    backend.clean()
    rate = backend.fill(args.messages, "batch" if KIND == "citeq" else "single", args.batch_size)
    log(f"sent {args.messages} at {rate:,.0f} msg/s; draining with 1x8 and watching RSS")
    workers = Workers(1, 8, f"{KIND}-memory")
    samples: list[tuple[float, float]] = []

    def sample(left: int | None = None) -> None:
        kids = workers.children()
        if kids:
            rss = sum(Workers.rss_mb(p) or 0 for p in kids)
            samples.append((args.messages - left if left is not None else args.messages, rss))

    try:
        drained = wait_drained(backend, args.messages, workers, args.timeout, sample=sample)
        time.sleep(2.0)  # settle: idle worker after the drain
        sample()
        pids = workers.children()
    finally:
        workers.stop()
    backend.clean()
    backend.close()
    # (messages done, RSS) pairs; the first samples are of a worker still starting up.
    working = [s for s in samples if s[0] > 0]
    if not working:
        raise SystemExit("no worker process RSS sampled while draining")

    def at(done: int) -> float:
        return next((rss for d, rss in working if d >= done), working[-1][1])

    result(messages=args.messages, worker_pids=pids, rss_start_mb=samples[0][1], rss_first_progress_mb=working[0][1],
           rss_at_10pct_mb=at(args.messages // 10), rss_at_50pct_mb=at(args.messages // 2),
           rss_peak_mb=max(s[1] for s in samples), rss_after_mb=samples[-1][1], samples=len(samples), **drained)


def cmd_sustained(args) -> None:
    """Send --messages with the batch API from a sender thread while one worker drains them."""
    if KIND != "citeq":
        raise SystemExit("sustained mode reads completion times from citeq's table")
    backend = Backend()
    backend.clean()
    sent = [0]
    send_done = threading.Event()
    errors: list[BaseException] = []

    def sender() -> None:
        try:
            per_batch_s = args.batch_size / args.send_rate if args.send_rate else 0
            next_t = time.perf_counter()
            while sent[0] < args.messages:
                k = min(args.batch_size, args.messages - sent[0])
                bench_app.broker.enqueue_many([bench_app.noop.message() for _ in range(k)])
                sent[0] += k
                if per_batch_s:
                    next_t += per_batch_s
                    time.sleep(max(0.0, next_t - time.perf_counter()))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            send_done.set()

    workers = Workers(args.processes, args.threads, f"{KIND}-sustained")
    # Start sending once the worker is up, so the drain starts with the sends.
    time.sleep(0.5)
    start = time.perf_counter()
    thread = threading.Thread(target=sender, daemon=True)
    thread.start()
    try:
        last_report = start
        while True:
            time.sleep(1.0)
            workers.check_alive()
            if errors:
                raise errors[0]
            left = backend.unfinished()
            now = time.perf_counter()
            if now - last_report >= 15:
                log(f"{now - start:5.0f}s: sent {sent[0]:,}, unfinished {left:,}")
                last_report = now
            if send_done.is_set() and left == 0:
                break
            if now - start > args.timeout:
                raise SystemExit(f"sustained run timed out; see {workers.log_path}")
        send_seconds_total = time.perf_counter() - start
    finally:
        workers.stop()
    rows = backend._sql("SELECT extract(epoch FROM finished_at)::float8 FROM citeq_messages "
                        "WHERE state = 'done' ORDER BY finished_at")
    done = [r[0] for r in rows]
    w = args.window
    first = w / max(done[w - 1] - done[0], 1e-6)
    last = w / max(done[-1] - done[-w], 1e-6)
    dead = backend._sql("SELECT count(*) FROM citeq_messages WHERE state <> 'done'")[0][0]
    backend.clean()
    backend.close()
    result(messages=args.messages, done=len(done), not_done=dead, window=w, first_rate=first, last_rate=last,
           overall_rate=len(done) / max(done[-1] - done[0], 1e-6), wall_seconds=send_seconds_total)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cycle")
    c.add_argument("--messages", type=int, default=20_000)
    c.add_argument("--fill", choices=["single", "batch"], default="single")
    c.add_argument("--processes", type=int, default=1)
    c.add_argument("--threads", type=int, default=8)
    c.add_argument("--batch-size", type=int, default=1000)
    c.add_argument("--timeout", type=float, default=600)
    c.add_argument("--meter", action="store_true", help="also measure the cost (Meter) of the sends and the drain")
    c.add_argument("--settle", type=float, default=0, help="seconds between the sends and the drain")
    c.set_defaults(func=cmd_cycle)
    c = sub.add_parser("latency")
    c.add_argument("--messages", type=int, default=200)
    c.add_argument("--interval", type=float, default=0.02)
    c.set_defaults(func=cmd_latency)
    c = sub.add_parser("delays")
    c.add_argument("--messages", type=int, default=200)
    c.add_argument("--interval", type=float, default=0.02)
    c.set_defaults(func=cmd_delays)
    c = sub.add_parser("stub")
    c.add_argument("--messages", type=int, default=20_000)
    c.add_argument("--threads", type=int, default=8)
    c.set_defaults(func=cmd_stub)
    c = sub.add_parser("memory")
    c.add_argument("--messages", type=int, default=100_000)
    c.add_argument("--batch-size", type=int, default=1000)
    c.add_argument("--timeout", type=float, default=1200)
    c.set_defaults(func=cmd_memory)
    c = sub.add_parser("sustained")
    c.add_argument("--messages", type=int, default=500_000)
    c.add_argument("--window", type=int, default=50_000)
    c.add_argument("--processes", type=int, default=1)
    c.add_argument("--threads", type=int, default=8)
    c.add_argument("--batch-size", type=int, default=1000)
    c.add_argument("--send-rate", type=float, default=0, help="msg/s cap for the sender (0: as fast as it can)")
    c.add_argument("--timeout", type=float, default=3600)
    c.set_defaults(func=cmd_sustained)
    args = p.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
