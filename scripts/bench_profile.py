"""The broker's cost per message (issue 27): where a no-op message's CPU, round trips and WAL go.

    .venv/bin/python scripts/bench_profile.py                  # 3 rounds of 10,000 messages
    .venv/bin/python scripts/bench_profile.py --rounds 5 --messages 20000
    .venv/bin/python scripts/bench_profile.py --statements-only # the per-statement table alone

Two parts, both on the embedded PostgreSQL (CPU is read from /proc, so DATABASE_URL's server
cannot be profiled):

1. **Drains, side by side.** Each round sends --messages no-op messages one by one and drains
   them with real worker processes (scripts/_bench_client.py ``cycle --meter``): citeq 1x8,
   RedisBroker 1x8 (a private redis-server on a unix socket under .citeq/, so its CPU and
   command counters are this benchmark's alone), the StubBroker ceiling (in-process, 8
   threads), citeq 2x4 (batch-sent). The brokers take turns within each round; each round
   ends with the durable commit floor (one-row INSERTs, each its own commit: what a send
   that survives a crash costs at least, one WAL flush). Per message:
   the server's CPU (PostgreSQL: postmaster and all its children, autovacuum and WAL writer
   included; Redis: the redis-server process), the workers' CPU (dramatiq master and
   children), round trips (PostgreSQL transactions: every round trip outside an explicit
   transaction is one; Redis commands), WAL bytes, records and full-page images, rows
   inserted / updated (heap-only or not) / deleted, and NOTIFYs heard. Ratios to Redis and
   Stub are taken within a round; the ranges are over rounds.

2. **Per hot statement.** One connection (pool_size=1), no workers: the same statements the
   worker and a sender run, each phase alone, with that backend's CPU (/proc/<pid>/stat),
   its WAL, round trips and rows: send one by one (insert, its NOTIFY decision, its durable
   commit), enqueue_many, the exchange (acks of the last batch + the next claim) at batch
   sizes 8 and 64, one
   message at a time on an idle queue (send, claim and ack: the path a NOTIFY wakes),
   heartbeat (worker row + leases_extend of 8 held messages), prune of the finished rows.
   Index entries written are derived from the row counters: a non-heap-only new row
   version gets an entry in every index whose predicate it satisfies (the predicates are
   evaluated on rows of each state); a heap-only one gets none.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts._benchdb import rng  # noqa: E402
from scripts.bench_broker import ensure_venv, run_client  # noqa: E402

REDIS_DIR = ROOT / ".citeq" / "bench-redis"


def say(msg: str = "") -> None:
    print(msg, flush=True)


def database() -> str:
    """The embedded server's ``citeq_bench`` database, migrated; BENCH_PG_DATA set for the
    clients (they read the server's CPU from /proc)."""
    from broker.migrate import migrate
    from citeq.devdb import EmbeddedPostgres, database_url

    if os.environ.get("DATABASE_URL"):
        raise SystemExit("bench_profile reads the server's CPU from /proc: run it on the embedded server "
                         "(unset DATABASE_URL)")
    url = database_url("citeq_bench")
    os.environ["BENCH_PG_DATA"] = str(EmbeddedPostgres.for_name("main").data_dir)
    migrate(url)
    return url


# -- a private Redis -------------------------------------------------------------------

class PrivateRedis:
    """redis-server on a unix socket of this worktree (its defaults otherwise: RDB snapshots
    as configured out of the box, no AOF), started and stopped by this script."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if not binary:
            raise RuntimeError("no redis-server on PATH")
        REDIS_DIR.mkdir(parents=True, exist_ok=True)
        self.socket = REDIS_DIR / "redis.sock"
        self.proc = subprocess.Popen([binary, "--port", "0", "--unixsocket", str(self.socket),
                                      "--unixsocketperm", "700", "--dir", str(REDIS_DIR)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not self.socket.exists():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    @property
    def url(self) -> str:
        return f"unix://{self.socket}?db=0"

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=10)


# -- part 1: drains side by side -------------------------------------------------------

PER_MESSAGE = ("server_cpu", "worker_cpu", "round_trips", "wal_bytes", "wal_records", "wal_fpi", "tup_ins",
               "tup_upd", "tup_hot_upd", "tup_del", "notifies")


def per_message(cost: dict | None, n: int) -> dict:
    return {k: (cost[k] / n if cost and cost.get(k) is not None else None) for k in PER_MESSAGE} if cost else {}


def drains(url: str, args) -> list[dict]:
    here = Path(sys.executable)
    redis = peers = None
    if not args.no_redis:
        try:
            redis = PrivateRedis()
            import dramatiq

            peers = ensure_venv("dramatiq2-peers", [f"dramatiq[redis,rabbitmq]=={dramatiq.__version__}"],
                                "import dramatiq, redis, pika")
            os.environ["BENCH_REDIS_URL"] = redis.url
        except RuntimeError as exc:
            say(f"  RedisBroker skipped: {exc}")
            redis = None
    n = str(args.messages)
    common = ("--messages", n, "--meter", "--settle", str(args.settle))
    runs = [("citeq 1x8", here, "citeq", ("cycle", *common, "--fill", "single", "--processes", "1",
                                           "--threads", "8")),
            ("RedisBroker 1x8", peers, "redis", ("cycle", *common, "--fill", "single", "--processes", "1",
                                                  "--threads", "8")),
            ("StubBroker 1x8", here, "stub", ("stub", "--messages", n, "--threads", "8")),
            ("citeq 2x4", here, "citeq", ("cycle", *common, "--fill", "batch", "--processes", "2",
                                           "--threads", "4"))]
    if args.async_sends:
        # The same 1x8 run with sends that return before their commit is flushed (opt-in).
        runs.insert(1, ("citeq 1x8 async", here, "citeq", runs[0][3], {"CITEQ_SYNCHRONOUS_SENDS": "0"}))
    if redis is None:
        runs = [r for r in runs if r[2] != "redis"]
    rounds = []
    try:
        for i in range(args.rounds):
            say(f"\n== round {i + 1} of {args.rounds}: {args.messages:,} no-op messages each")
            # Who goes first turns each round, so no broker always meets the same minute.
            order = runs[i % len(runs):] + runs[:i % len(runs)]
            got = {}
            for name, python, kind, argv, *env in order:
                r = run_client(python, kind, url, *argv, env=env[0] if env else None)
                got[name] = r
                line = f"  {name:<16} drain {r['drain_rate']:>8,.0f} msg/s"
                if "enqueue_rate" in r and kind != "stub" and "single" in argv:
                    line += f", send 1-by-1 {r['enqueue_rate']:>6,.0f}/s"
                c = per_message(r.get("cost"), r.get("drained") or args.messages)
                if c.get("server_cpu") is not None:
                    line += f", server CPU {c['server_cpu'] * 1e6:,.0f} us/msg"
                if c.get("worker_cpu") is not None:
                    line += f", worker CPU {c['worker_cpu'] * 1e6:,.0f} us/msg"
                say(line)
            got["floor"] = floor = commit_floor(url, args.floor_commits)
            say(f"  durable commit floor {floor:>6,.0f}/s (one-row INSERTs, each its own commit)")
            rounds.append(got)
    finally:
        if redis is not None:
            redis.stop()
    return rounds


def commit_floor(url: str, commits: int) -> float:
    """Durable commits per second one client gets now: a one-row INSERT, each its own
    transaction (what any send that survives a crash costs at least: a WAL flush)."""
    import psycopg2

    conn = psycopg2.connect(url)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS bench_commit_floor (x int)")
            cur.execute("TRUNCATE bench_commit_floor")
            start = time.perf_counter()
            for _ in range(commits):
                cur.execute("INSERT INTO bench_commit_floor VALUES (1)")
            rate = commits / (time.perf_counter() - start)
            cur.execute("DROP TABLE bench_commit_floor")
        return rate
    finally:
        conn.close()


def report_drains(rounds: list[dict], messages: int) -> None:
    say("\nDrain, per no-op message (ranges over rounds; server = PostgreSQL or redis-server)")
    rows = [
        ("drain msg/s", lambda r, c: r["drain_rate"], ",.0f"),
        ("server CPU us", lambda r, c: c.get("server_cpu") and c["server_cpu"] * 1e6, ",.0f"),
        ("worker CPU us", lambda r, c: c.get("worker_cpu") and c["worker_cpu"] * 1e6, ",.0f"),
        ("round trips", lambda r, c: c.get("round_trips"), ".3f"),
        ("WAL bytes", lambda r, c: c.get("wal_bytes"), ",.0f"),
        ("WAL records", lambda r, c: c.get("wal_records"), ".2f"),
        ("WAL full-page images", lambda r, c: c.get("wal_fpi"), ".3f"),
        ("rows inserted", lambda r, c: c.get("tup_ins"), ".2f"),
        ("rows updated", lambda r, c: c.get("tup_upd"), ".2f"),
        ("  of which heap-only", lambda r, c: c.get("tup_hot_upd"), ".2f"),
        ("rows deleted", lambda r, c: c.get("tup_del"), ".2f"),
        ("NOTIFYs", lambda r, c: c.get("notifies"), ".4f"),
    ]
    names = [n for n in rounds[0] if n != "floor"]
    say(f"{'':<22}" + "".join(f"{n:>20}" for n in names))
    for label, get, spec in rows:
        cells = []
        for name in names:
            vals = []
            for rd in rounds:
                r = rd[name]
                c = per_message(r.get("cost"), r.get("drained") or messages)
                vals.append(get(r, c))
            cells.append(rng(vals, spec))
        say(f"{label:<22}" + "".join(f"{c:>20}" for c in cells))

    say("\nSends one by one, per message (the backlog of the 1x8 drains)")
    senders = [n for n in ("citeq 1x8", "citeq 1x8 async", "RedisBroker 1x8") if n in rounds[0]]
    say(f"{'':<22}" + "".join(f"{n.replace(' 1x8', ''):>20}" for n in senders))
    for label, key, scale, spec in (("send msg/s", None, 1, ",.0f"), ("server CPU us", "server_cpu", 1e6, ",.0f"),
                                    ("client CPU us", "client_cpu", 1e6, ",.0f"),
                                    ("round trips", "round_trips", 1, ".2f"), ("WAL bytes", "wal_bytes", 1, ",.0f")):
        cells = []
        for name in senders:
            vals = []
            for rd in rounds:
                r = rd.get(name)
                if r is None:
                    continue
                if key is None:
                    vals.append(r["enqueue_rate"])
                else:
                    sc = r.get("send_cost") or {}
                    vals.append(sc.get(key) is not None and sc[key] / messages * scale or None)
            cells.append(rng(vals, spec))
        say(f"{label:<22}" + "".join(f"{c:>20}" for c in cells))

    say("\nRatios within each round")
    for i, rd in enumerate(rounds, 1):
        c18 = rd["citeq 1x8"]
        parts = []
        if "StubBroker 1x8" in rd:
            parts.append(f"1x8 / Stub {c18['drain_rate'] / rd['StubBroker 1x8']['drain_rate']:.2f}")
        if "RedisBroker 1x8" in rd:
            red = rd["RedisBroker 1x8"]
            parts.append(f"1x8 / Redis {c18['drain_rate'] / red['drain_rate']:.2f}")
            parts.append(f"send / Redis {c18['enqueue_rate'] / red['enqueue_rate']:.2f}")
            if "citeq 1x8 async" in rd:
                parts.append(f"async send / Redis {rd['citeq 1x8 async']['enqueue_rate'] / red['enqueue_rate']:.2f}")
        parts.append(f"send / durable commit floor {c18['enqueue_rate'] / rd['floor']:.2f}")
        if "citeq 2x4" in rd and "StubBroker 1x8" in rd:
            parts.append(f"2x4 / Stub {rd['citeq 2x4']['drain_rate'] / rd['StubBroker 1x8']['drain_rate']:.2f}")
        say(f"  round {i}: " + ", ".join(parts))


# -- part 2: per hot statement ---------------------------------------------------------

class Backend:
    """One pooled connection's server process: its CPU, the WAL, the table's row counters."""

    def __init__(self, broker, url: str) -> None:
        import psycopg2

        self.broker = broker
        with broker.connection() as conn, conn.cursor() as cur:
            cur.execute("SELECT pg_backend_pid()")
            self.pid = cur.fetchone()[0]
        self.admin = psycopg2.connect(url)
        self.admin.autocommit = True
        with self.admin.cursor() as cur:
            cur.execute("LISTEN citeq_wakeup")
        self.round_trips = 0
        self.notifies = 0

    def sql(self, statement: str, params=None):
        with self.admin.cursor() as cur:
            cur.execute(statement, params)
            return cur.fetchall() if cur.description else None

    def read(self) -> dict:
        from scripts._bench_client import proc_cpu_seconds

        with self.broker.connection() as conn, conn.cursor() as cur:
            cur.execute("SELECT pg_stat_force_next_flush()")  # its row counters, at once
        time.sleep(0.05)  # notifications of the last commit reach the listener
        self.admin.poll()
        while select.select([self.admin], [], [], 0)[0]:
            self.admin.poll()
        self.notifies += len(self.admin.notifies)
        self.admin.notifies.clear()
        (wal, ins, upd, hot, dele), = self.sql(
            "SELECT (pg_current_wal_insert_lsn() - '0/0')::float8, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del "
            "FROM pg_stat_user_tables WHERE relname = 'citeq_messages'")
        return {"cpu": proc_cpu_seconds(self.pid), "wal_bytes": wal, "tup_ins": ins, "tup_upd": upd,
                "tup_hot_upd": hot, "tup_del": dele, "notifies": self.notifies, "round_trips": self.round_trips}

    def indexes_for(self, state: str) -> list[str]:
        """The messages table's indexes that a new row version in ``state`` gets an entry in
        (predicates evaluated on a real row of that state; none: [])."""
        row = self.sql("SELECT id FROM citeq_messages WHERE state = %s LIMIT 1", (state,))
        if not row:
            return []
        out = []
        for name, pred in self.sql(
                "SELECT c.relname, pg_get_expr(i.indpred, i.indrelid) FROM pg_index i "
                "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'citeq_messages'::regclass "
                "ORDER BY c.relname"):
            # The predicate is the catalog's own text, run on one row (a benchmark, not the broker).
            if pred is None or self.sql(f"SELECT {pred} FROM citeq_messages WHERE id = %s", (row[0][0],))[0][0]:
                out.append(name)
        return out


def statements(url: str, args) -> list[dict]:
    import dramatiq

    from broker import PostgresBroker

    broker = PostgresBroker(url, pool_size=1, middleware=[], retention_seconds=0)
    queue = "profile"

    @dramatiq.actor(broker=broker, queue_name=queue, actor_name="profile_noop")
    def noop() -> None:
        pass

    store = broker.store
    b = Backend(broker, url)
    b.sql("TRUNCATE citeq_messages, citeq_results, citeq_workers RESTART IDENTITY")
    worker_id = broker.worker_id
    n = args.statement_messages
    phases: list[dict] = []
    indexes: dict[str, list[str]] = {}

    def counted(fn):
        def wrapped(*a, **kw):
            b.round_trips += 1
            return fn(*a, **kw)
        return wrapped

    exchange = counted(store.exchange)
    enqueue = counted(broker.enqueue)
    enqueue_many = counted(broker.enqueue_many)

    def phase(name: str, messages: int, run, transitions: list[tuple[str, str]]) -> None:
        """``transitions``: (counter, state of the new row versions) to derive index entries."""
        b.sql("VACUUM citeq_messages")  # every phase starts from a vacuumed table
        before = b.read()
        run()
        after = b.read()
        d = {k: after[k] - before[k] for k in before}
        entries = 0.0
        for counter, state in transitions:
            indexes.setdefault(state, b.indexes_for(state))
            rows = d[counter] - (d["tup_hot_upd"] if counter == "tup_upd" else 0)
            entries += rows * len(indexes[state])
        d["index_entries"] = entries
        d["messages"] = messages
        d["name"] = name
        phases.append(d)

    def send_single() -> None:
        for _ in range(n):
            enqueue(noop.message())

    phase(f"send 1-by-1 ({n:,})", n, send_single, [("tup_ins", "queued")])

    def drain(batch: int):
        def run() -> None:
            acks: list = []
            while True:
                rows = exchange(queue, acks, [], batch, worker_id)
                acks = [(r[1], r[2]) for r in rows if r[0] == "claimed"]
                if not acks:
                    return
        return run

    # The exchange leaves acked rows 'done' and claimed ones 'running': one claim and one ack
    # per message, half of the updates each.
    b.sql("UPDATE citeq_messages SET state = 'running', worker_id = 'x', lease_token = gen_random_uuid(), "
          "lease_expires_at = now() + interval '1 hour' WHERE id = (SELECT min(id) FROM citeq_messages)")
    indexes["running"] = b.indexes_for("running")
    b.sql("DELETE FROM citeq_messages WHERE state = 'running'")
    phase(f"exchange, batches of 8 ({n - 1:,})", n - 1, drain(8), [])
    phases[-1]["index_entries"] = (phases[-1]["tup_upd"] - phases[-1]["tup_hot_upd"]) / 2 * (
        len(indexes["running"]) + len(b.indexes_for("done")))
    indexes["done"] = b.indexes_for("done")

    def fill_batch() -> None:
        for i in range(0, n, 1000):
            enqueue_many([noop.message() for _ in range(min(1000, n - i))])

    b.sql("TRUNCATE citeq_messages RESTART IDENTITY")
    phase(f"enqueue_many, batches of 1,000 ({n:,})", n, fill_batch, [("tup_ins", "queued")])
    phase(f"exchange, batches of 64 ({n:,})", n, drain(64), [])
    phases[-1]["index_entries"] = (phases[-1]["tup_upd"] - phases[-1]["tup_hot_upd"]) / 2 * (
        len(indexes["running"]) + len(indexes["done"]))

    idle = max(n // 10, 100)

    def one_at_a_time() -> None:
        acks: list = []
        for _ in range(idle):
            enqueue(noop.message())
            rows = exchange(queue, acks, [], 1, worker_id)
            acks = [(r[1], r[2]) for r in rows if r[0] == "claimed"]
        exchange(queue, acks, [], 0, worker_id)

    phase(f"idle: send, claim, ack one at a time ({idle:,})", idle, one_at_a_time,
          [("tup_ins", "queued")])
    phases[-1]["index_entries"] += (phases[-1]["tup_upd"] - phases[-1]["tup_hot_upd"]) / 2 * (
        len(indexes["running"]) + len(indexes["done"]))

    # Heartbeat: a worker holding 8 leases renews them (and its row) once per call.
    for _ in range(8):
        enqueue(noop.message())
    held = [(r[1], r[2]) for r in exchange(queue, [], [], 8, worker_id) if r[0] == "claimed"]
    beats = args.heartbeats

    def heartbeat() -> None:
        for _ in range(beats):
            b.round_trips += 2
            store.heartbeat(worker_id, hostname="profile", pid=os.getpid(), queues=[queue], connections=1,
                            held=held)

    phase(f"heartbeat, 8 leases ({beats:,} calls)", beats, heartbeat, [("tup_upd", "running")])
    exchange(queue, held, [], 0, worker_id)

    done = b.sql("SELECT count(*) FROM citeq_messages WHERE state = 'done'")[0][0]

    def prune() -> None:
        while True:
            b.round_trips += 3
            if store.prune(limit=10_000) == 0:
                return

    phase(f"prune ({done:,} finished)", done, prune, [])
    broker.close()
    b.admin.close()
    return phases, indexes


def report_statements(phases: list[dict], indexes: dict) -> None:
    say("\nPer hot statement: one connection, no workers; per message (heartbeat: per call)")
    head = (f"{'phase':<46}{'backend CPU us':>15}{'round trips':>12}{'WAL bytes':>10}{'ins':>6}{'upd':>6}"
            f"{'HOT':>6}{'del':>6}{'index entries':>14}{'NOTIFYs':>9}")
    say(head)
    say("-" * len(head))
    for p in phases:
        m = p["messages"]
        say(f"{p['name']:<46}{p['cpu'] / m * 1e6:>15,.1f}{p['round_trips'] / m:>12.3f}{p['wal_bytes'] / m:>10,.0f}"
            f"{p['tup_ins'] / m:>6.2f}{p['tup_upd'] / m:>6.2f}{p['tup_hot_upd'] / m:>6.2f}{p['tup_del'] / m:>6.2f}"
            f"{p['index_entries'] / m:>14.2f}{p['notifies'] / m:>9.3f}")
    say("(CPU from /proc in 10 ms ticks: figures below ~5 us/message are within its resolution at "
        "these counts)")
    for state, names in indexes.items():
        say(f"  a new row version in state {state!r} gets entries in: {', '.join(names) or 'none'}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--messages", type=int, default=10_000, help="messages per drain (default 10,000)")
    p.add_argument("--rounds", type=int, default=3, help="rounds of the side-by-side drains (default 3)")
    p.add_argument("--settle", type=float, default=1.0, help="seconds between a backlog's sends and its drain")
    p.add_argument("--statement-messages", type=int, default=20_000,
                   help="messages of the per-statement phases (default 20,000)")
    p.add_argument("--heartbeats", type=int, default=2000, help="heartbeat calls measured (default 2,000)")
    p.add_argument("--floor-commits", type=int, default=2000,
                   help="one-row durable commits timed per round for the send floor (default 2,000)")
    p.add_argument("--statements-only", action="store_true", help="skip the drains")
    p.add_argument("--drains-only", action="store_true", help="skip the per-statement phases")
    p.add_argument("--no-redis", action="store_true", help="leave RedisBroker out")
    p.add_argument("--async-sends", action="store_true",
                   help="also run citeq 1x8 with CITEQ_SYNCHRONOUS_SENDS=0 (sends return before their commit "
                        "is flushed)")
    p.add_argument("--json", type=Path, help="also write the raw figures here")
    args = p.parse_args(argv)
    started = time.monotonic()
    url = database()
    say(f"database: {url}")
    out: dict = {}
    if not args.statements_only:
        out["rounds"] = drains(url, args)
    if not args.drains_only:
        out["phases"], indexes = statements(url, args)
    if "rounds" in out:
        report_drains(out["rounds"], args.messages)
    if "phases" in out:
        report_statements(out["phases"], indexes)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    say(f"\n(took {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
