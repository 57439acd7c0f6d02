"""What PgBouncer costs citeq's broker: direct vs session vs transaction pooling, in one run.

    .venv/bin/python scripts/bench_pgbouncer.py                    # 10,000 messages, 100 probes
    .venv/bin/python scripts/bench_pgbouncer.py --messages 2000 --latency-messages 50

For each topology the no-op workload of scripts/bench_broker.py (scripts/_bench_client.py):
drain rate of a backlog with 1 worker process x 8 threads and 2 x 4, and the enqueue->start
latency of single messages on an idle worker (p50/p99). The topologies:

* direct: DATABASE_URL on the server's socket;
* session: through PgBouncer, pool_mode=session, nothing else set;
* transaction + listen: pool_mode=transaction, CITEQ_TRANSACTION_POOLING=1 and a direct
  CITEQ_LISTEN_URL (wake-ups by NOTIFY);
* transaction, polling: the same without CITEQ_LISTEN_URL: consumers poll every
  CITEQ_POLL_INTERVAL (default 1 s), the wake-up latency is the poll's.

PgBouncer is Debian's package (``apt-get install pgbouncer``), started here in front of the
embedded server (or of DATABASE_URL's server, reached as PgBouncer's ``host=`` from that URL).
Figures are printed, not checked: they depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.bench_broker import database, run_client, say  # noqa: E402
from tests.topologies.pgbouncer import PgBouncer  # noqa: E402

DB = "citeq_bench"
SETTINGS = ("CITEQ_TRANSACTION_POOLING", "CITEQ_LISTEN_URL")


def measure(name: str, url: str, env: dict[str, str], args) -> dict:
    saved = {k: os.environ.pop(k, None) for k in SETTINGS}
    os.environ.update(env)
    try:
        say(f"\n== {name}")
        out: dict = {}
        for processes, threads in ((1, 8), (2, 4)):
            r = run_client(Path(sys.executable), "citeq", url, "cycle", "--messages", str(args.messages),
                           "--fill", "batch", "--processes", str(processes), "--threads", str(threads))
            out[f"drain_{processes}x{threads}"] = r["drain_rate"]
            say(f"  drain {processes} x {threads}  {r['drain_rate']:>9,.0f} msg/s ({r['drained']:,} in "
                f"{r['drain_seconds']:.2f} s)")
        r = run_client(Path(sys.executable), "citeq", url, "latency", "--messages", str(args.latency_messages))
        out["p50"], out["p99"] = r["latency_p50_ms"], r["latency_p99_ms"]
        say(f"  idle enqueue->start p50 {r['latency_p50_ms']:.1f} ms, p99 {r['latency_p99_ms']:.1f} ms "
            f"({r['samples']} probes)")
        return out
    finally:
        for k in SETTINGS:
            os.environ.pop(k, None)
        os.environ.update({k: v for k, v in saved.items() if v is not None})


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--messages", type=int, default=10_000, help="backlog per drain run (default 10,000)")
    p.add_argument("--latency-messages", type=int, default=100, help="latency probes (default 100)")
    p.add_argument("--pool-size", type=int, default=20, help="PgBouncer default_pool_size (default 20)")
    args = p.parse_args(argv)

    direct = database()  # the embedded server's citeq_bench (or DATABASE_URL), migrated
    rows: dict[str, dict] = {"direct": measure("direct", direct, {}, args)}
    with PgBouncer(direct, "session", pool_size=args.pool_size) as bouncer:
        rows["session"] = measure("PgBouncer session mode", bouncer.url(DB), {}, args)
    with PgBouncer(direct, "transaction", pool_size=args.pool_size) as bouncer:
        rows["transaction + listen"] = measure(
            "PgBouncer transaction mode, CITEQ_LISTEN_URL direct", bouncer.url(DB),
            {"CITEQ_TRANSACTION_POOLING": "1", "CITEQ_LISTEN_URL": direct}, args)
        rows["transaction, polling"] = measure(
            "PgBouncer transaction mode, no CITEQ_LISTEN_URL (polling)", bouncer.url(DB),
            {"CITEQ_TRANSACTION_POOLING": "1"}, args)

    say(f"\n{'topology':<24}{'drain 1x8':>12}{'drain 2x4':>12}{'wake p50':>12}{'wake p99':>12}")
    for name, r in rows.items():
        say(f"{name:<24}{r['drain_1x8']:>8,.0f}/s  {r['drain_2x4']:>8,.0f}/s  {r['p50']:>8.1f} ms "
            f"{r['p99']:>8.1f} ms")
    base = rows["direct"]
    for name, r in rows.items():
        if name != "direct":
            say(f"{name}: drain {r['drain_2x4'] / base['drain_2x4']:.2f}x direct (2x4), "
                f"wake-up p50 {r['p50'] - base['p50']:+.1f} ms")
    say(f"({args.messages:,} no-op messages per drain, {args.latency_messages} latency probes, "
        f"PgBouncer default_pool_size {args.pool_size})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
