"""Where a durable single send's time goes (issue 27): the broker's send beside its own
statement sent from a bare client, the message row's INSERT alone, and the durable commit floor.

    .venv/bin/python scripts/bench_send.py                  # 4 rounds of 4,000 sends each
    .venv/bin/python scripts/bench_send.py --rounds 6 --sends 10000

One client, one connection per variant, each send its own durable commit; the variants take
turns within a round (the order reverses every other round). Per variant and round: sends per
second, the backend's CPU per send (/proc/<pid>/stat of the connection's server process: the
server must run on this machine) and the client's CPU per send (this process):

* ``broker.enqueue``: ``PostgresBroker.enqueue`` of a no-op message, no middleware (what
  ``actor.send`` costs beyond Dramatiq's own message building and middleware, which every
  broker pays);
* ``its statement, bare client``: the same prepared ``message_insert_one`` (the insert, its
  idempotency ``ON CONFLICT`` and its wake-up decision) executed from a loop of psycopg2 calls;
* ``the row's INSERT alone``: a prepared INSERT of the same row, nothing else;
* ``durable commit floor``: a one-integer-row INSERT, each its own commit.

Database: the server of DATABASE_URL when set, else the embedded one; ``citeq_bench_send`` is
created afresh and migrated. The table is emptied and a CHECKPOINT taken before each variant.

``--emptied``: instead, sends into a table that was emptied and vacuumed (as pruning and
autovacuum leave it after a quiet spell), plain and grouped (400 keys) in turn on fresh
connections: the backend's CPU per send over each 1,000 sends, until autovacuum's ANALYZE
replans them, and over 1,000 sends after an explicit ANALYZE (docs/howto/operating.md,
"After the messages table was empty").

``--delayed N``: instead, due sends into a queue that holds N messages delayed by an hour
and nothing due (each send is deleted by another connection once it has committed, as an
idle consumer would take it), plain and grouped: the sending backend's CPU per send over 3 ×
1,000 (docs/howto/operating.md, "PostgreSQL versions": before 18, the wake-up probe across
priorities read every delayed message). Then, beside the same backlog (plain only): a batch
send of 10 due messages (``enqueue_many``, taken as the sends are), an idle consumer's claim
of 8 that finds nothing due, a claim of 8 that finds one (sent just before,
acked by the next claim), and the look-up of the queue's next eta, the backend's CPU per call
over 3 x 1,000 (before 18, the batch's wake-up probe, the claim and the look-up across
priorities read every delayed message too; schema/0071 and 0072).
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from _benchdb import database, proc_cpu_seconds, rng  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--sends", type=int, default=4000, help="sends per variant and round")
    p.add_argument("--emptied", type=int, metavar="N", default=0,
                   help="send N messages (in steps of 1,000) into an emptied table instead (see above)")
    p.add_argument("--delayed", type=int, metavar="N", default=0,
                   help="send into a queue of N delayed messages instead (see above)")
    args = p.parse_args(argv)
    if args.emptied or args.delayed:
        return beside_a_table_state(args.emptied, args.delayed)

    import dramatiq
    import psycopg2

    from broker import PostgresBroker
    from broker.sql import broker_queries, prepared_query

    url = database("citeq_bench_send")
    broker = PostgresBroker(url, pool_size=1, middleware=[], retention_seconds=0)

    @dramatiq.actor(broker=broker, queue_name="bench_send", actor_name="bench_send_noop")
    def noop() -> None:
        pass

    with broker.connector.connection() as conn, conn.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        broker_pid = cur.fetchone()[0]
    raw = psycopg2.connect(url)
    raw.autocommit = True
    cur = raw.cursor()
    cur.execute("SELECT pg_backend_pid()")
    raw_pid = cur.fetchone()[0]
    statement = prepared_query("message_insert_one", broker_queries()["message_insert_one"])
    cur.execute(statement.prepare)
    cur.execute("PREPARE bench_row(text, text, text, bytea, int) AS INSERT INTO citeq_messages "
                "(message_id, queue_name, actor_name, payload, eta, priority) VALUES ($1, $2, $3, $4, now(), $5)")
    cur.execute("CREATE TABLE bench_send_floor (x int)")
    payload = noop.message().encode()

    def params() -> dict:
        return {"message_id": str(uuid.uuid4()), "queue_name": "bench_send", "actor_name": "bench_send_noop",
                "payload": payload, "delay_ms": 0, "idempotency_key": None, "priority": 0}

    def enqueue() -> None:
        for _ in range(args.sends):
            broker.enqueue(noop.message())

    def bare_statement() -> None:
        for _ in range(args.sends):
            cur.execute(statement.execute, params())
            cur.fetchall()

    def row_alone() -> None:
        for _ in range(args.sends):
            p = params()
            cur.execute("EXECUTE bench_row(%s, %s, %s, %s, 0)",
                        (p["message_id"], p["queue_name"], p["actor_name"], p["payload"]))

    def floor() -> None:
        for _ in range(args.sends):
            cur.execute("INSERT INTO bench_send_floor VALUES (1)")

    variants = [("broker.enqueue", enqueue, broker_pid), ("its statement, bare client", bare_statement, raw_pid),
                ("the row's INSERT alone", row_alone, raw_pid), ("durable commit floor", floor, raw_pid)]
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _, _ in variants}
    print(f"database: {url}")
    for r in range(args.rounds):
        for name, run, pid in variants if r % 2 == 0 else variants[::-1]:
            cur.execute("TRUNCATE citeq_messages, bench_send_floor")
            cur.execute("CHECKPOINT")
            backend, client, start = proc_cpu_seconds(pid), time.process_time(), time.perf_counter()
            run()
            wall = time.perf_counter() - start
            results[name].append((args.sends / wall, (proc_cpu_seconds(pid) - backend) / args.sends * 1e6,
                                  (time.process_time() - client) / args.sends * 1e6))
        print(f"round {r + 1}: " + ", ".join(f"{n} {results[n][-1][0]:,.0f}/s" for n, _, _ in variants))

    print(f"\n{'':<28}{'sends/s':>16}{'backend CPU us':>18}{'client CPU us':>17}{'÷ enqueue':>12}")
    base = [r[0] for r in results["broker.enqueue"]]
    for name, _, _ in variants:
        rows = results[name]
        ratio = [r[0] / b for r, b in zip(rows, base)]
        print(f"{name:<28}{rng([r[0] for r in rows], ',.0f'):>16}{rng([r[1] for r in rows], ',.0f'):>18}"
              f"{rng([r[2] for r in rows], ',.0f'):>17}{rng(ratio, '.2f'):>12}")
    print("(CPU from /proc in 10 ms ticks; ÷ enqueue: the variant's rate over the broker's in the same round)")
    raw.close()
    broker.close()
    return 0


def beside_a_table_state(emptied: int, delayed: int) -> int:
    import random

    import dramatiq
    import psycopg2

    from broker import PostgresBroker
    from broker.groups import MessageGroups

    url = database("citeq_bench_send")
    print(f"database: {url}")
    for kind in ("plain", "grouped"):
        broker = PostgresBroker(url, pool_size=1, middleware=[MessageGroups()], retention_seconds=0)

        @dramatiq.actor(broker=broker, queue_name="bench_send", actor_name="bench_send_noop")
        def noop() -> None:
            pass

        @dramatiq.actor(broker=broker, queue_name="bench_send", actor_name="bench_send_keyed", group_by=str)
        def keyed(key) -> None:
            pass

        def message(key=None):
            return noop.message() if kind == "plain" else keyed.message(key or str(random.randrange(400)))

        def costs(n: int) -> str:
            backend = proc_cpu_seconds(pid)
            for _ in range(n):
                # beside a delayed backlog, each grouped send has a key of its own: born queued, it probes
                sent = broker.enqueue(message(str(uuid.uuid4()) if delayed else None))
                if delayed:  # taken, as by an idle consumer: nothing due is left waiting
                    taker.execute("DELETE FROM citeq_messages WHERE message_id = %s AND state <> 'done'",
                                  (sent.message_id,))
            return f"{(proc_cpu_seconds(pid) - backend) / n * 1e6:,.0f}"

        with broker.connector.connection() as conn, conn.cursor() as cur:
            cur.execute("TRUNCATE citeq_messages")
            cur.execute("VACUUM citeq_messages")
            cur.execute("SELECT pg_backend_pid()")
            pid = cur.fetchone()[0]
        if delayed:
            other = psycopg2.connect(url)
            other.autocommit = True
            taker = other.cursor()
            for i in range(0, delayed, 1000):
                broker.enqueue_many([message() for _ in range(min(1000, delayed - i))], delay=3_600_000)
            with broker.connector.connection() as conn, conn.cursor() as cur:
                cur.execute("ANALYZE citeq_messages")
            steps = [costs(1000) for _ in range(3)]
            print(f"{kind:>8} sends beside {delayed:,} delayed messages, backend CPU us per send over each "
                  f"1,000: {', '.join(steps)}")
            other.close()
            if kind == "plain":
                print(f"{'':>8} beside them, backend CPU us per call over each 1,000: "
                      f"a batch send of 10 {batch_costs(broker, pid, noop, url)}; "
                      f"an idle consumer's claim of 8 (nothing due) {claim_costs(broker, pid, 0)}; "
                      f"a claim of 8 that finds one due {claim_costs(broker, pid, 1, noop)}; "
                      f"the next eta's look-up {eta_costs(broker, pid)}")
        else:
            steps = [costs(1000) for _ in range(max(emptied // 1000, 1))]
            with broker.connector.connection() as conn, conn.cursor() as cur:
                cur.execute("ANALYZE citeq_messages")
            print(f"{kind:>8} sends, backend CPU us per send over each 1,000: {', '.join(steps)}; "
                  f"after an ANALYZE: {costs(1000)}")
        broker.close()
    return 0


def claim_costs(broker, pid: int, due: int, actor=None) -> str:
    """Backend CPU per claim of 8 on the benchmark's queue, over 3 x 1,000 claims, each
    after ``due`` due messages were sent (and each claimed one acked by the next claim)."""
    steps = []
    for _ in range(3):
        cpu, acks = 0.0, []
        for _ in range(1000):
            if due:
                broker.enqueue_many([actor.message() for _ in range(due)])
            before = proc_cpu_seconds(pid)
            claimed, _ = broker.exchange("bench_send", acks, [], 8)
            cpu += proc_cpu_seconds(pid) - before
            acks = [(m.row_id, m.lease_token) for m in claimed]
        broker.exchange("bench_send", acks, [], 0)
        steps.append(f"{cpu / 1000 * 1e6:,.0f}")
    return ", ".join(steps)


def batch_costs(broker, pid: int, actor, url: str) -> str:
    """Backend CPU per batch send of 10 due messages over 3 x 1,000, each batch deleted by
    another connection once committed (as an idle consumer would take it), so that the
    next batch's wake-up probe finds nothing due."""
    import psycopg2

    other = psycopg2.connect(url)
    other.autocommit = True
    taker = other.cursor()
    steps = []
    for _ in range(3):
        cpu = 0.0
        for _ in range(1000):
            before = proc_cpu_seconds(pid)
            sent = broker.enqueue_many([actor.message() for _ in range(10)])
            cpu += proc_cpu_seconds(pid) - before
            taker.execute("DELETE FROM citeq_messages WHERE message_id = ANY (%s)", ([m.message_id for m in sent],))
        steps.append(f"{cpu / 1000 * 1e6:,.0f}")
    other.close()
    return ", ".join(steps)


def eta_costs(broker, pid: int) -> str:
    steps = []
    for _ in range(3):
        before = proc_cpu_seconds(pid)
        for _ in range(1000):
            broker.next_eta("bench_send")
        steps.append(f"{(proc_cpu_seconds(pid) - before) / 1000 * 1e6:,.0f}")
    return ", ".join(steps)


if __name__ == "__main__":
    raise SystemExit(main())
