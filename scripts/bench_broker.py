"""Benchmark citeq's Postgres broker (and, with --peers, what a Dramatiq user would pick instead).

    .venv/bin/python scripts/bench_broker.py                       # citeq + StubBroker ceiling
    .venv/bin/python scripts/bench_broker.py --peers               # + dramatiq-pg, Redis, RabbitMQ
    .venv/bin/python scripts/bench_broker.py --memory --sustained  # + 100k RSS check, 500k sustained
    .venv/bin/python scripts/bench_broker.py --messages 2000       # a quick run
    .venv/bin/python scripts/bench_broker.py --scale               # drain with 1, 2, 4, 8 processes
    .venv/bin/python scripts/bench_broker.py --delays              # delayed messages / retries vs eta

The workload is a no-op actor (scripts/bench_app.py). Figures, all on this machine in one run:

* enqueue rate: ``actor.send`` one message at a time, and citeq's batch API
  ``broker.enqueue_many([...])`` (batches of --batch-size);
* drain rate: a backlog of --messages is sent first, then real worker processes start
  (``dramatiq scripts.bench_app --processes P --threads T``, 1x8 and 2x4); the rate is
  measured from the first progress seen until nothing is queued or running (the queue
  is polled every 50 ms, in the database for the Postgres brokers);
* enqueue->start latency p50/p99 on an idle system: the actor records when it started,
  compared with the send time, one message at a time;
* the in-process ceiling: Dramatiq's StubBroker and an in-process Worker with 8 threads.

--scale drains the backlog with 1, 2, 4 and 8 worker processes (4 threads each) side by
side, with the peak of citeq's connections during each drain and the PostgreSQL server's
CPU time per message (embedded server only), from which "messages per second per
PostgreSQL core" follows. --delays sends delayed messages (50-500 ms) and messages whose
first attempt fails (retried after 50-100 ms) to an idle worker and reports how late each
started after its eta (p50/p99, from eta and started_at in the database).

--peers runs the same on dramatiq-pg 0.12 (Dramatiq 1.x, in a virtual environment this
script creates under .citeq/bench-venvs/dramatiq-pg), and on Dramatiq's RedisBroker and
RabbitmqBroker (a venv with Dramatiq 2 + redis + pika under .citeq/bench-venvs/) when a
local Redis (127.0.0.1:6379) / RabbitMQ (127.0.0.1:5672, guest/guest) answers.

Database: DATABASE_URL when set, else the embedded server (database ``citeq_bench``);
the schema is migrated first and the tables are emptied between runs. Each scenario runs
in a subprocess (scripts/_bench_client.py) under the broker's own interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CLIENT = ROOT / "scripts" / "_bench_client.py"
VENVS = ROOT / ".citeq" / "bench-venvs"

#: Targets of issue 2.
TARGET_VS_DRAMATIQ_PG = 5.0
TARGET_VS_STUB = 0.25
TARGET_LATENCY_P50_MS = 10.0
TARGET_SUSTAINED = 0.20
#: "Flat" worker memory: growth allowed from 10% drained to the end (the backlog is never loaded).
MEMORY_SLACK_MB = 10.0


def say(msg: str) -> None:
    print(msg, flush=True)


# -- environments ----------------------------------------------------------------------

def database() -> str:
    from broker.migrate import migrate

    url = os.environ.get("DATABASE_URL")
    if not url:
        from citeq.devdb import database_url

        url = database_url("citeq_bench")  # starts the embedded server, creates the database
        from citeq.devdb import EmbeddedPostgres

        # Lets the scenarios read the server's CPU time (scripts/_bench_client.py).
        os.environ["BENCH_PG_DATA"] = str(EmbeddedPostgres.for_name("main").data_dir)
    migrate(url)
    return url


def ensure_venv(name: str, requirements: list[str], probe: str) -> Path:
    """A virtual environment under .citeq/bench-venvs/<name> with ``requirements``; its python."""
    venv = VENVS / name
    python = venv / "bin" / "python"
    if python.exists() and subprocess.run([python, "-c", probe], capture_output=True).returncode == 0:
        return python
    say(f"  creating {venv.relative_to(ROOT)}: pip install {' '.join(requirements)}")
    VENVS.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements], check=True)
    subprocess.run([python, "-c", probe], check=True)
    return python


def answers(host: str, port: int, hello: bytes | None = None) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0) as s:
            if hello:
                s.sendall(hello)
                return bool(s.recv(16))
            return True
    except OSError:
        return False


def run_client(python: Path, kind: str, url: str, *args: str, env: dict[str, str] | None = None) -> dict:
    env = {**os.environ, "BENCH_BROKER": kind, "DATABASE_URL": url, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.run([str(python), str(CLIENT), *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          text=True)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("BENCH_RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{kind} {' '.join(args)} failed (exit {proc.returncode})")
    return json.loads(lines[-1][len("BENCH_RESULT "):])


# -- one broker ------------------------------------------------------------------------

def bench_broker(python: Path, kind: str, url: str, args) -> dict:
    n = str(args.messages)
    out: dict = {}
    say(f"\n== {kind}: {args.messages:,} no-op messages")
    r = run_client(python, kind, url, "cycle", "--messages", n, "--fill", "single", "--processes", "1",
                   "--threads", "8")
    out["enqueue_single"] = r["enqueue_rate"]
    out["drain_1x8"] = r["drain_rate"]
    say(f"  enqueue (single sends) {r['enqueue_rate']:>9,.0f} msg/s")
    say(f"  drain 1 process x 8    {r['drain_rate']:>9,.0f} msg/s  ({r['drained']:,} in {r['drain_seconds']:.2f} s; "
        f"spawn to empty {r['spawn_to_empty_seconds']:.2f} s)")
    fill = "batch" if kind == "citeq" else "single"
    r = run_client(python, kind, url, "cycle", "--messages", n, "--fill", fill, "--processes", "2",
                   "--threads", "4", "--batch-size", str(args.batch_size))
    if kind == "citeq":
        out["enqueue_batch"] = r["enqueue_rate"]
        say(f"  enqueue (enqueue_many, batches of {args.batch_size}) {r['enqueue_rate']:>9,.0f} msg/s")
    out["drain_2x4"] = r["drain_rate"]
    say(f"  drain 2 processes x 4  {r['drain_rate']:>9,.0f} msg/s  ({r['drained']:,} in {r['drain_seconds']:.2f} s; "
        f"spawn to empty {r['spawn_to_empty_seconds']:.2f} s)")
    if args.latency_messages:
        r = run_client(python, kind, url, "latency", "--messages", str(args.latency_messages))
        out["p50"], out["p99"] = r["latency_p50_ms"], r["latency_p99_ms"]
        say(f"  idle enqueue->start    p50 {r['latency_p50_ms']:.1f} ms, p99 {r['latency_p99_ms']:.1f} ms, "
            f"max {r['latency_max_ms']:.1f} ms ({r['samples']} probes)")
    return out


# -- report ----------------------------------------------------------------------------

def rss_line(m: dict) -> str:
    return (f"at fork {m['rss_start_mb']:.1f} MB, first message {m['rss_first_progress_mb']:.1f} MB, "
            f"10% drained {m['rss_at_10pct_mb']:.1f} MB, 50% {m['rss_at_50pct_mb']:.1f} MB, "
            f"after {m['rss_after_mb']:.1f} MB, peak {m['rss_peak_mb']:.1f} MB")


def fmt(v, spec=",.0f") -> str:
    return "-" if v is None else format(v, spec)


def report(results: dict, skipped: dict, extra: dict) -> bool:
    citeq = results["citeq"]
    stub = results.get("StubBroker (in-process)", {})
    say("\n" + "=" * 96)
    say(f"Figures (msg/s unless noted; no-op actor; {platform.node()}, {os.cpu_count()} CPUs)")
    head = f"{'broker':<26}{'send 1-by-1':>12}{'batch send':>12}{'drain 1x8':>11}{'drain 2x4':>11}" \
           f"{'p50 ms':>8}{'p99 ms':>8}{'1x8 vs citeq':>14}"
    say(head)
    say("-" * len(head))
    for name, r in results.items():
        ratio = r.get("drain_1x8") and citeq["drain_1x8"] / r["drain_1x8"]
        say(f"{name:<26}{fmt(r.get('enqueue_single')):>12}{fmt(r.get('enqueue_batch')):>12}"
            f"{fmt(r.get('drain_1x8')):>11}{fmt(r.get('drain_2x4')):>11}{fmt(r.get('p50'), '.1f'):>8}"
            f"{fmt(r.get('p99'), '.1f'):>8}{('citeq ' + format(ratio, '.2f') + 'x') if name != 'citeq' and ratio else '':>14}")
    for name, why in skipped.items():
        say(f"{name:<26}skipped: {why}")
    if "memory" in extra:
        m = extra["memory"]
        say(f"\n{m['messages']:,} backlog, worker RSS: {rss_line(m)} (drained at {m['drain_rate']:,.0f} msg/s)")
    if "sustained" in extra:
        s = extra["sustained"]
        say(f"\nsustained {s['messages']:,} (sent with enqueue_many while draining, 1x8): first {s['window']:,} "
            f"at {s['first_rate']:,.0f} msg/s, last {s['window']:,} at {s['last_rate']:,.0f} msg/s, overall "
            f"{s['overall_rate']:,.0f} msg/s; {s['done']:,} done, {s['not_done']} not done")

    if "scale" in extra:
        report_scale(extra["scale"])
    if "delays" in extra:
        report_delays(extra["delays"])

    say("\nTargets (issue 2)")
    ok = True

    def check(label: str, passed: bool | None, detail: str) -> None:
        nonlocal ok
        mark = "n/a " if passed is None else ("PASS" if passed else "FAIL")
        ok = ok and passed is not False
        say(f"  [{mark}] {label:<44} {detail}")

    dpg = results.get("dramatiq-pg")
    best = max(citeq["drain_1x8"], citeq["drain_2x4"])
    if dpg:
        ratio = citeq["drain_1x8"] / dpg["drain_1x8"]
        check(f"drain >= {TARGET_VS_DRAMATIQ_PG:g}x dramatiq-pg (1x8)", ratio >= TARGET_VS_DRAMATIQ_PG,
              f"{ratio:.2f}x ({citeq['drain_1x8']:,.0f} vs {dpg['drain_1x8']:,.0f})")
    else:
        check(f"drain >= {TARGET_VS_DRAMATIQ_PG:g}x dramatiq-pg", None, "run with --peers")
    redis = results.get("RedisBroker")
    if redis:
        ratio = citeq["drain_1x8"] / redis["drain_1x8"]
        check("drain >= 2.5x RedisBroker (1x8)", ratio >= 2.5,
              f"{ratio:.2f}x ({citeq['drain_1x8']:,.0f} vs {redis['drain_1x8']:,.0f})")
    if stub:
        share = citeq["drain_1x8"] / stub["drain_1x8"]
        check(f"drain >= {TARGET_VS_STUB:.0%} of StubBroker (1x8)", share >= TARGET_VS_STUB,
              f"{share:.0%} ({citeq['drain_1x8']:,.0f} vs {stub['drain_1x8']:,.0f}; best of 1x8/2x4: "
              f"{best / stub['drain_1x8']:.0%})")
    if "p50" in citeq:
        check(f"idle enqueue->start p50 <= {TARGET_LATENCY_P50_MS:g} ms", citeq["p50"] <= TARGET_LATENCY_P50_MS,
              f"{citeq['p50']:.1f} ms (p99 {citeq['p99']:.1f} ms)")
    if "sustained" in extra:
        s = extra["sustained"]
        held = s["last_rate"] >= (1 - TARGET_SUSTAINED) * s["first_rate"]
        check("sustained: last 50k within 20% of first 50k", held and s["not_done"] == 0,
              f"last/first = {s['last_rate'] / s['first_rate']:.2f}")
    if "memory" in extra:
        m = extra["memory"]
        growth = m["rss_after_mb"] - m["rss_at_10pct_mb"]
        check(f"backlog: flat worker memory (< +{MEMORY_SLACK_MB:g} MB)", growth < MEMORY_SLACK_MB,
              f"{growth:+.1f} MB from 10% drained to after the drain (peak {m['rss_peak_mb']:.1f} MB)")
    return ok


def bench_scale(python: Path, url: str, args) -> list[dict]:
    """Drain the same backlog with 1, 2, 4 and 8 worker processes (4 threads each)."""
    say(f"\n== citeq: scaling out, {args.messages:,} no-op messages, 4 threads per process")
    rows = []
    for processes in (1, 2, 4, 8):
        r = run_client(python, "citeq", url, "cycle", "--messages", str(args.messages), "--fill", "batch",
                       "--processes", str(processes), "--threads", "4", "--batch-size", str(args.batch_size))
        r["processes"] = processes
        rows.append(r)
        cpu = r.get("postgres_cpu_seconds")
        per_msg = cpu / r["drained"] * 1e6 if cpu else None
        say(f"  {processes} x 4: drain {r['drain_rate']:>8,.0f} msg/s, peak connections "
            f"{r.get('peak_connections') or '-'}, PostgreSQL CPU "
            f"{format(per_msg, '.0f') + ' us/msg' if per_msg else '-'}")
    return rows


def report_scale(rows: list[dict]) -> None:
    say("\nScaling out (drain msg/s; 4 threads per process; PostgreSQL CPU per message and what one")
    say("fully used PostgreSQL core would drain at that cost)")
    say(f"{'processes':>10}{'drain':>10}{'vs 1':>7}{'peak conns':>12}{'PG us/msg':>11}{'msg/s per PG core':>19}")
    base = rows[0]["drain_rate"]
    for r in rows:
        cpu = r.get("postgres_cpu_seconds")
        per_msg = cpu / r["drained"] if cpu else None
        say(f"{r['processes']:>10}{r['drain_rate']:>10,.0f}{r['drain_rate'] / base:>7.2f}"
            f"{fmt(r.get('peak_connections')):>12}{fmt(per_msg and per_msg * 1e6):>11}"
            f"{fmt(per_msg and 1 / per_msg):>19}")


def report_delays(d: dict) -> None:
    say(f"\nDelays on time (idle 1x8 worker, CITEQ_POLL_INTERVAL {d['poll_interval']:g} s): start - eta")
    for key, label in (("delayed", "delayed messages (50-500 ms)"), ("retried", "retry backoffs (50-100 ms)")):
        q = d[key]
        say(f"  {label:<32} p50 {q['p50']:.1f} ms, p99 {q['p99']:.1f} ms, max {q['max']:.1f} ms ({q['n']} messages)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--messages", type=int, default=20_000, help="backlog per drain run (default 20,000)")
    p.add_argument("--batch-size", type=int, default=1000, help="messages per enqueue_many call (default 1,000)")
    p.add_argument("--latency-messages", type=int, default=200,
                   help="idle enqueue->start probes, one at a time (default 200; 0 skips)")
    p.add_argument("--peers", action="store_true", help="also run dramatiq-pg 0.12, RedisBroker, RabbitmqBroker")
    p.add_argument("--memory", action="store_true", help="worker RSS before/after draining a backlog")
    p.add_argument("--memory-messages", type=int, default=100_000)
    p.add_argument("--sustained", action="store_true", help="send while draining; first vs last window rate")
    p.add_argument("--sustained-messages", type=int, default=500_000)
    p.add_argument("--sustained-window", type=int, default=50_000)
    p.add_argument("--sustained-send-rate", type=float, default=0,
                   help="cap the sustained sender at this many msg/s (default: as fast as it can)")
    p.add_argument("--scale", action="store_true", help="drain with 1, 2, 4 and 8 worker processes side by side")
    p.add_argument("--delays", action="store_true", help="how late delayed messages and retries start vs their eta")
    p.add_argument("--delay-messages", type=int, default=200)
    p.add_argument("--only", action="store_true", help="skip the default citeq and StubBroker runs")
    args = p.parse_args(argv)

    started = time.monotonic()
    url = database()
    say(f"database: {url}")
    here = Path(sys.executable)
    results: dict[str, dict] = {}
    skipped: dict[str, str] = {}
    extra: dict[str, dict] = {}

    if args.only:
        if args.scale:
            report_scale(bench_scale(here, url, args))
        if args.delays:
            report_delays(run_client(here, "citeq", url, "delays", "--messages", str(args.delay_messages)))
        say(f"\n(benchmark took {time.monotonic() - started:.0f} s)")
        return 0

    results["citeq"] = bench_broker(here, "citeq", url, args)

    say("\n== StubBroker (in-process Worker, 8 threads): the ceiling")
    r = run_client(here, "stub", url, "stub", "--messages", str(args.messages), "--threads", "8")
    results["StubBroker (in-process)"] = {"enqueue_single": r["enqueue_rate"], "drain_1x8": r["drain_rate"]}
    say(f"  drain 1 process x 8    {r['drain_rate']:>9,.0f} msg/s  ({args.messages:,} in {r['drain_seconds']:.2f} s)")
    if args.scale:
        extra["scale"] = bench_scale(here, url, args)
    if args.delays:
        say(f"\n== citeq: delays, {args.delay_messages} delayed messages and as many retries")
        extra["delays"] = run_client(here, "citeq", url, "delays", "--messages", str(args.delay_messages))

    if args.peers:
        import dramatiq

        dpg = ensure_venv("dramatiq-pg", ["dramatiq<2", "dramatiq-pg==0.12.*", "psycopg2-binary"],
                          "import dramatiq, dramatiq_pg; assert dramatiq.__version__ < '2'")
        results["dramatiq-pg"] = bench_broker(dpg, "dramatiq-pg", url, args)
        have_redis = answers("127.0.0.1", 6379, b"PING\r\n")
        have_rabbit = answers("127.0.0.1", 5672, b"AMQP\x00\x00\x09\x01")
        if not have_redis:
            skipped["RedisBroker"] = "no Redis answered on 127.0.0.1:6379"
        if not have_rabbit:
            skipped["RabbitmqBroker"] = "no RabbitMQ answered on 127.0.0.1:5672"
        if have_redis or have_rabbit:
            peers = ensure_venv("dramatiq2-peers", [f"dramatiq[redis,rabbitmq]=={dramatiq.__version__}"],
                                "import dramatiq, redis, pika")
            for kind, name, here_ in (("redis", "RedisBroker", have_redis), ("rabbitmq", "RabbitmqBroker", have_rabbit)):
                if not here_:
                    say(f"\n== {name}: skipped, {skipped[name]}")
                    continue
                try:
                    results[name] = bench_broker(peers, kind, url, args)
                except RuntimeError as exc:
                    skipped[name] = str(exc)

    if args.memory:
        say(f"\n== citeq: {args.memory_messages:,}-message backlog, worker RSS")
        extra["memory"] = m = run_client(here, "citeq", url, "memory", "--messages", str(args.memory_messages))
        say(f"  RSS {rss_line(m)}; drain {m['drain_rate']:,.0f} msg/s")
    if args.sustained:
        say(f"\n== citeq: sustained, {args.sustained_messages:,} sent while draining (1x8)")
        extra["sustained"] = s = run_client(
            here, "citeq", url, "sustained", "--messages", str(args.sustained_messages),
            "--window", str(args.sustained_window), "--send-rate", str(args.sustained_send_rate),
            "--batch-size", str(args.batch_size))
        say(f"  first {s['window']:,}: {s['first_rate']:,.0f} msg/s, last {s['window']:,}: {s['last_rate']:,.0f} msg/s")

    ok = report(results, skipped, extra)
    say(f"\n(benchmark took {time.monotonic() - started:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
