"""Where a serialized job's database work goes (issue 27): per job, beside a raw message.

    .venv/bin/python scripts/bench_queue_profile.py                 # 3 rounds, 400 users x 5 jobs
    .venv/bin/python scripts/bench_queue_profile.py --rounds 5 --users 800

Each round drains, with the same real worker processes (2x8 unless told), first users x 5
no-op messages of a plain actor (the raw drain), then users x 5 no-op jobs of the per-user
queue (admitted in one transaction, as ``scripts/bench_queue.py`` does). Per message and per
job, over the drain:

* round trips and statements: what the workers' pooled connections sent, counted in the
  workers (this module, loaded by them, wraps their cursors and writes its counts to a file
  five times a second); a statement is one of the ``;``-separated statements of a round
  trip, named by its prepared statement (``EXECUTE citeq_<query>``) or its first words;
* transactions (``pg_stat_database``);
* server CPU: the postmaster and all its children (backends, WAL writer, autovacuum), from
  /proc (the embedded server only); worker CPU: the dramatiq master and its children.

(The embedded server's build has no ``pg_stat_statements``, so the statements are counted
where they are sent.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts._benchdb import proc_cpu_seconds  # noqa: E402

#: Where the workers write their round-trip counts (set by the benchmark for its workers).
COUNT_DIR_ENV = "CITEQ_BENCH_COUNT_DIR"
_STATEMENT = re.compile(rb";\s*\n")
_EXECUTE = re.compile(rb"EXECUTE (citeq_\w+)")


def statement_kinds(query: bytes) -> list[str]:
    """The statements of one round trip, each by its prepared statement's name or its first words."""
    kinds = []
    for statement in _STATEMENT.split(query.strip().rstrip(b";")):
        lines = [ln for ln in statement.strip().splitlines() if not ln.lstrip().startswith(b"--")]
        text = b" ".join(lines).strip()
        if not text:
            continue
        execute = _EXECUTE.match(text)
        kinds.append(execute.group(1).decode() if execute else " ".join(text.decode(errors="replace").split()[:3]))
    return kinds


# -- in the workers: counting round trips -------------------------------------------------


def _install_counting(count_dir: Path) -> None:
    """Count every query a pooled connection of this process sends, and write the count to
    ``count_dir/<pid>.json`` five times a second (the benchmark reads the files after a drain)."""
    import psycopg2
    import psycopg2.extensions

    from broker import connector

    counts = {"round_trips": 0, "statements": {}}
    lock = threading.Lock()

    def counted(base):
        class Counting(base):
            def execute(self, query, vars=None):
                text = query if isinstance(query, bytes) else self.mogrify(query, vars)
                kinds = statement_kinds(text)
                if base is connector._BeginFirstCursor and \
                        self.connection.info.transaction_status == psycopg2.extensions.TRANSACTION_STATUS_IDLE:
                    kinds.insert(0, "BEGIN")
                with lock:
                    counts["round_trips"] += 1
                    for kind in kinds:
                        counts["statements"][kind] = counts["statements"].get(kind, 0) + 1
                return super().execute(query, vars)
        return Counting

    plain, begin_first = counted(psycopg2.extensions.cursor), counted(connector._BeginFirstCursor)
    factories = {None: plain, psycopg2.extensions.cursor: plain, connector._BeginFirstCursor: begin_first}

    class CountingConnection(psycopg2.extensions.connection):
        def cursor(self, *args, **kwargs):
            if "cursor_factory" not in kwargs:
                kwargs["cursor_factory"] = factories.get(self.cursor_factory, self.cursor_factory)
            return super().cursor(*args, **kwargs)

    connect = psycopg2.connect
    psycopg2.connect = lambda *a, **kw: connect(*a, connection_factory=CountingConnection, **kw)

    def flush() -> None:
        path = count_dir / f"{os.getpid()}.json"
        scratch = path.with_suffix(".tmp")
        while True:
            with lock:
                data = json.dumps(counts)
            scratch.write_text(data)
            os.replace(scratch, path)  # the benchmark never reads half a file
            time.sleep(0.2)

    threading.Thread(target=flush, daemon=True, name="bench-round-trips").start()


if __name__ != "__main__" and os.environ.get(COUNT_DIR_ENV):
    # Loaded first by the workers (``dramatiq scripts.bench_queue_profile actors ...``), so
    # that every connection is counted; the broker Dramatiq takes from the first module.
    _install_counting(Path(os.environ[COUNT_DIR_ENV]))
    from actors import broker  # noqa: E402, F401


# -- in the benchmark ---------------------------------------------------------------------


def say(msg: str = "") -> None:
    print(msg, flush=True)


def sent(count_dir: Path) -> tuple[int, dict[str, int]]:
    """Round trips and statements (by kind) all workers have sent so far."""
    total, statements = 0, {}
    for path in count_dir.glob("*.json"):
        try:
            counts = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        total += counts["round_trips"]
        for kind, n in counts["statements"].items():
            statements[kind] = statements.get(kind, 0) + n
    return total, statements


def proc_children(pid: int) -> list[int]:
    import psutil

    try:
        return [p.pid for p in psutil.Process(pid).children()]
    except psutil.Error:
        return []


class Meter:
    """The counters a drain is measured by, read before and after it."""

    def __init__(self, url: str, data_dir: Path, workers, count_dir: Path) -> None:
        import psycopg2

        self.conn = psycopg2.connect(url)
        self.conn.autocommit = True
        self.data_dir = data_dir
        self.workers = workers
        self.count_dir = count_dir
        self.seen_workers: set[int] = set()
        self.listen = psycopg2.connect(url)
        self.listen.autocommit = True
        with self.listen.cursor() as cur:
            cur.execute("LISTEN citeq_wakeup")
        self.notifies = 0

    def sql(self, statement: str, *params):
        with self.conn.cursor() as cur:
            cur.execute(statement, params)
            return cur.fetchall() if cur.description else None

    def server_cpu(self) -> dict[str, float]:
        """CPU seconds of the server's processes by kind: the workers' backends (by their
        application name), the benchmark's own, autovacuum, and the rest (postmaster, WAL
        writer, checkpointer, ...)."""
        pid = int((self.data_dir / "postmaster.pid").read_text().split()[0])
        workers = {p for (p,) in self.sql(
            "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'citeq:%%' "
            "AND application_name NOT LIKE %s", f"citeq:{os.getpid()}:%")}
        cpu = {"worker backends": 0.0, "autovacuum": 0.0, "other": proc_cpu_seconds(pid)}
        for child in proc_children(pid):
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_text()
            except OSError:
                continue
            kind = ("worker backends" if child in workers or child in self.seen_workers else
                    "autovacuum" if "autovacuum" in cmdline else "other")
            if kind == "worker backends":
                self.seen_workers.add(child)
            cpu[kind] += proc_cpu_seconds(child)
        return cpu

    def worker_cpu(self) -> float:
        master = self.workers.proc.pid
        return proc_cpu_seconds(master) + sum(proc_cpu_seconds(c) for c in proc_children(master))

    def read(self) -> dict:
        self.sql("SELECT pg_stat_force_next_flush()")
        (xacts,), = self.sql("SELECT xact_commit + xact_rollback FROM pg_stat_database "
                             "WHERE datname = current_database()")
        trips, statements = sent(self.count_dir)
        self.listen.poll()
        self.notifies += len(self.listen.notifies)
        self.listen.notifies.clear()
        return {"notifies": self.notifies, **self.server_cpu(), "worker_cpu": self.worker_cpu(), "xacts": xacts,
                "round_trips": trips, "statements": statements, "at": time.perf_counter()}

    def wait_until(self, statement: str, timeout: float = 600.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.sql(statement)[0][0]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for: {statement}")
            time.sleep(0.02)


def measured(meter: Meter, start, done: str) -> dict:
    """Run ``start()`` (which makes the work visible), wait for ``done``; the counters' change."""
    before = meter.read()
    start()
    meter.wait_until(done)
    finished = time.perf_counter()
    time.sleep(0.5)  # the workers' count files are written every 0.2 s
    after = meter.read()
    delta = {k: after[k] - before.get(k, 0) for k in after if k != "statements"}
    delta["server_cpu"] = delta["worker backends"] + delta["autovacuum"] + delta["other"]
    delta["at"] = finished - before["at"]
    delta["statements"] = {k: n - before["statements"].get(k, 0) for k, n in after["statements"].items()
                           if n - before["statements"].get(k, 0)}
    return delta


def per(delta: dict, n: int) -> str:
    return (f"{n / delta['at']:7.0f}/s  server CPU {delta['server_cpu'] / n * 1e6:5.0f} us  worker CPU "
            f"{delta['worker_cpu'] / n * 1e6:5.0f} us  round trips {delta['round_trips'] / n:6.3f}  "
            f"statements {sum(delta['statements'].values()) / n:6.3f}  transactions {delta['xacts'] / n:6.3f}  "
            f"NOTIFYs {delta['notifies'] / n:6.3f}\n"
            f"        server CPU of the workers' backends {delta['worker backends'] / n * 1e6:5.0f} us, "
            f"autovacuum {delta['autovacuum'] / n * 1e6:5.0f} us, other {delta['other'] / n * 1e6:5.0f} us")


def statement_table(statements: dict[str, int], n: int) -> list[str]:
    return [f"      {calls / n:6.3f} per job  {kind}"
            for kind, calls in sorted(statements.items(), key=lambda kv: -kv[1])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--users", type=int, default=400, help="users (x5 jobs) of each drain")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()

    import tempfile

    import dramatiq

    from scripts._benchdb import database

    if os.environ.get("DATABASE_URL"):
        raise SystemExit("the server's CPU is read from /proc: run on the embedded server (unset DATABASE_URL)")
    from citeq.devdb import EmbeddedPostgres

    url = database("citeq_bench_queue_profile")
    data_dir = EmbeddedPostgres.for_name("main").data_dir
    os.environ["DATABASE_URL"] = url
    import actors  # before bench_queue, whose import declares its actor on the global broker
    from analysis.queue import userqueue
    from scripts import bench_queue as bq

    dramatiq.set_broker(actors.broker)
    broker = dramatiq.get_broker()
    noop = broker.get_actor("bench_noop")
    count_dir = Path(tempfile.mkdtemp(prefix="citeq-round-trips-"))
    try:
        rounds(args, url, data_dir, broker, noop, userqueue, bq, count_dir)
    finally:
        shutil.rmtree(count_dir, ignore_errors=True)


def rounds(args, url, data_dir, broker, noop, userqueue, bq, count_dir: Path) -> None:
    """Each round: the raw drain, then the serialized one, with the same fresh workers."""
    from scripts._benchdb import Workers, sql

    total = args.users * 5
    for r in range(1, args.rounds + 1):
        bq.reset(url)
        workers = Workers(url, args.processes, args.threads,
                          modules=("scripts.bench_queue_profile", "actors", "scripts.bench_queue"),
                          env={"CITEQ_ANALYZE_WORK": bq.SIMULATED, COUNT_DIR_ENV: str(count_dir)})
        meter = Meter(url, data_dir, workers, count_dir)
        try:
            def raw():
                with broker.transaction():
                    broker.enqueue_many([noop.message(i) for i in range(total)])
            raw_delta = measured(meter, raw, bq.DRAINED)

            conn = bq.admitted_backlog(url, args.users)
            sql(url, "ANALYZE analysis_jobs, held_runs, citeq_messages")
            jobs_delta = measured(meter, conn.commit, bq.ALL_JOBS_DONE)
            conn.close()
        finally:
            meter.conn.close()
            meter.listen.close()
            workers.stop()
        say(f"round {r}: raw drain   {per(raw_delta, total)}")
        say(f"round {r}: serialized  {per(jobs_delta, total)}  ratio {raw_delta['at'] / jobs_delta['at']:.2f}")
        for line in statement_table(raw_delta["statements"], total):
            say("   raw " + line)
        for line in statement_table(jobs_delta["statements"], total):
            say("   job " + line)


if __name__ == "__main__":
    main()
