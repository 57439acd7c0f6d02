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
``GroupCallbacks`` middleware uses) set an event key with a NOTIFY, which wakes its waiters
at once (they poll every 50 ms only behind a transaction pooler).
"""

from __future__ import annotations

import select
import time

from dramatiq.rate_limits import RateLimiterBackend

from . import locks

LOCK_SCOPE = "rate_limit"
#: The channel :meth:`PostgresRateLimiterBackend.wait_notify` notifies (its payload: the key).
BARRIER_CHANNEL = "citeq_barrier"


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

    #: Seconds between two looks at a barrier's event key when no LISTEN is possible (behind a
    #: transaction pooler); with LISTEN, the longest a waiter goes without looking anyway.
    WAIT_POLL = 0.05
    WAIT_RECHECK = 1.0

    def wait(self, key, timeout):
        """Whether ``key`` was set (by :meth:`wait_notify`) within ``timeout`` ms (None: ever).

        The waiter LISTENs on ``citeq_barrier`` on a pooled connection before it first looks at
        the key, so a :meth:`wait_notify` committed after that look wakes it at once (as Redis's
        BLPOP does: the parties of a barrier go on within milliseconds of each other). Behind a
        transaction pooler, where a LISTEN hears nothing, it looks every :data:`WAIT_POLL` s."""
        deadline = None if timeout is None else time.monotonic() + timeout / 1000
        if self.broker.settings.transaction_pooling:
            return self._poll(key, deadline)
        with self.broker.connection() as conn, conn.cursor() as cur:
            cur.execute(f"LISTEN {BARRIER_CHANNEL}")
            try:
                while not self.broker.queries.one(cur, "rate_limit_get_one", key=key):
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    select.select([conn], [], [], self.WAIT_RECHECK if left is None else min(left, self.WAIT_RECHECK))
                    conn.poll()
                    conn.notifies.clear()
                return True
            finally:
                cur.execute(f"UNLISTEN {BARRIER_CHANNEL}")
                conn.notifies.clear()

    def _poll(self, key, deadline: float | None) -> bool:
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
