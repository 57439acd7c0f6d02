"""A Dramatiq rate-limiter backend kept in Postgres.

Dramatiq ships rate-limiter backends for Redis and Memcached only. This one keeps every counter in
``rate_limit_counters`` (key, value, expires_at), so :class:`~dramatiq.rate_limits.
ConcurrentRateLimiter` and :class:`~dramatiq.rate_limits.WindowRateLimiter` work across
every worker and web process on nothing but the database::

    backend = PostgresRateLimiterBackend(broker)
    calls = ConcurrentRateLimiter(backend, "judge:openai", limit=4)
    with calls.acquire():
        ...

Each operation is one statement (``add``, ``incr``, ``decr``) or one short transaction
(``incr_and_sum``, which takes the window's keys' advisory locks in key order, so two
callers never both see room for the last slot). An expired row counts as absent.
``wait_notify``/``wait`` (``dramatiq.rate_limits.Barrier``, which Dramatiq's
``GroupCallbacks`` middleware uses) set an event key and poll for it every 50 ms.
"""

from __future__ import annotations

import time

from dramatiq.rate_limits import RateLimiterBackend

from . import locks

LOCK_SCOPE = "rate_limit"


class PostgresRateLimiterBackend(RateLimiterBackend):
    """Rate-limit counters in Postgres; see the module docstring."""

    def __init__(self, broker) -> None:
        self.broker = broker

    def add(self, key, value, ttl):
        return bool(self.broker.execute("rate_limit_add_one", key=key, value=value, ttl_ms=ttl))

    def incr(self, key, amount, maximum, ttl):
        return bool(self.broker.execute("rate_limit_incr_one", key=key, amount=amount, maximum=maximum,
                                        ttl_ms=ttl))

    def decr(self, key, amount, minimum, ttl):
        return bool(self.broker.execute("rate_limit_decr_one", key=key, amount=amount, minimum=minimum,
                                        ttl_ms=ttl))

    def incr_and_sum(self, key, keys, amount, maximum, ttl):
        window = sorted(set(keys()) | {key})
        with self.broker.transaction() as cur:
            for k in window:
                locks.xact_lock(cur, LOCK_SCOPE, k)
            values = dict(self.broker.queries.many(cur, "rate_limit_sum_many", keys=window))
            if values.get(key, 0) + amount > maximum or sum(values.values()) + amount > maximum:
                return False
            return self.broker.queries.one(cur, "rate_limit_incr_one", key=key, amount=amount, maximum=maximum,
                                           ttl_ms=ttl) is not None

    #: Seconds between two looks at a barrier's event key while waiting for it.
    WAIT_POLL = 0.05

    def wait(self, key, timeout):
        """Whether ``key`` was set (by :meth:`wait_notify`) within ``timeout`` ms (None: ever)."""
        deadline = None if timeout is None else time.monotonic() + timeout / 1000
        while not self.broker.execute("rate_limit_get_one", key=key):
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(self.WAIT_POLL)
        return True

    def wait_notify(self, key, ttl):
        """Set ``key`` until ``ttl`` ms from now: every :meth:`wait` on it returns True."""
        self.broker.execute("rate_limit_set", key=key, value=1, ttl_ms=ttl)

    def prune(self) -> None:
        """Delete expired counters (the stall sweeper calls this)."""
        self.broker.execute("rate_limit_prune")
