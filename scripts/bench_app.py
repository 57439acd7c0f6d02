"""The benchmark's worker module: one broker, a no-op actor and a latency probe.

    DATABASE_URL=... dramatiq scripts.bench_app --processes 1 --threads 8

``BENCH_BROKER`` picks the broker (default ``citeq``): ``citeq`` (broker.PostgresBroker from
DATABASE_URL), ``dramatiq-pg`` (dramatiq_pg.PostgresBroker, Dramatiq 1.x), ``redis``
(Dramatiq's RedisBroker, ``BENCH_REDIS_URL``), ``rabbitmq`` (Dramatiq's RabbitmqBroker,
``BENCH_RABBITMQ_URL``) or ``stub`` (Dramatiq's StubBroker, the in-process ceiling).
The same module must import under Dramatiq 1.x (dramatiq-pg's venv) and 2.x, so it
imports only what the chosen broker needs. Used by scripts/bench_broker.py.
"""

from __future__ import annotations

import os
import time

import dramatiq

BROKER = os.environ.get("BENCH_BROKER", "citeq")
QUEUE = "bench"
#: Where the ``stamp`` actor appends "<seconds from send to start>" lines (one per message).
LATENCY_FILE = os.environ.get("BENCH_LATENCY_FILE")


def build_broker(kind: str = BROKER) -> dramatiq.Broker:
    if kind == "citeq":
        from broker import BrokerSettings, PostgresBroker

        return PostgresBroker(settings=BrokerSettings.from_env())  # DATABASE_URL, CITEQ_*
    if kind == "dramatiq-pg":
        import dramatiq_pg

        return dramatiq_pg.PostgresBroker(url=os.environ["DATABASE_URL"])
    if kind == "redis":
        from dramatiq.brokers.redis import RedisBroker

        return RedisBroker(url=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"))
    if kind == "rabbitmq":
        from dramatiq.brokers.rabbitmq import RabbitmqBroker

        return RabbitmqBroker(url=os.environ.get("BENCH_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/%2F"))
    if kind == "stub":
        from dramatiq.brokers.stub import StubBroker

        return StubBroker()
    raise SystemExit(f"unknown BENCH_BROKER {kind!r}")


broker = build_broker()
dramatiq.set_broker(broker)


@dramatiq.actor(queue_name=QUEUE, max_retries=0)
def noop() -> None:
    """The benchmark's workload: nothing at all, so the broker's own cost is what is measured."""


@dramatiq.actor(queue_name=QUEUE, max_retries=1, min_backoff=100, max_backoff=100)
def fail_once(until: float) -> None:
    """Fails when run before ``until`` (its first attempt), so it is retried after a backoff."""
    if time.time() < until:
        raise RuntimeError("first attempt fails")


@dramatiq.actor(queue_name=QUEUE, max_retries=0)
def stamp(sent_at: float) -> None:
    """Record how long after its send (wall clock, same machine) this message started."""
    started = time.time()
    if LATENCY_FILE:
        fd = os.open(LATENCY_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{started - sent_at:.6f}\n".encode())  # one small write: atomic append
        finally:
            os.close(fd)
