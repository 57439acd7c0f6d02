"""A Dramatiq result backend that keeps results in Postgres (``citeq_results``).

Opt in as with any Dramatiq broker::

    broker = PostgresBroker(results=True)
    # or by hand:
    broker.add_middleware(Results(backend=PostgresBackend(broker)))

``message.get_result(block=True)`` polls with Dramatiq's usual backoff; results expire
with their TTL and the heartbeat thread prunes them.
"""

from __future__ import annotations

import threading

from dramatiq.results import ResultBackend
from dramatiq.results.backend import Missing

from . import sql
from .errors import ConfigurationError, DatabaseUnavailable
from .pool import BROKEN, Pool
from .settings import BrokerSettings


class PostgresBackend(ResultBackend):
    """Results in the broker's database, over the broker's connection pool.

    Parameters:
      broker: the :class:`~broker.PostgresBroker` whose database and pool to use; when
        omitted, a connection pool of its own on ``url``, sized as a broker's by default.
      namespace, encoder, use_namespace_prefix_keys: as for any Dramatiq result backend.
    """

    def __init__(self, broker=None, *, url: str | None = None, namespace: str = "citeq-results",
                 encoder=None, use_namespace_prefix_keys: bool = False) -> None:
        super().__init__(namespace=namespace, encoder=encoder, use_namespace_prefix_keys=use_namespace_prefix_keys)
        self.broker = broker
        self._database = broker if broker is not None else _Database(url)

    def close(self) -> None:
        """Close the pool of a backend made from a URL (one lent by a broker stays open)."""
        if self.broker is None:
            self._database.close()

    def _get(self, message_key: str):
        rows = self._database.execute("result_get_one", message_key=message_key)
        if not rows:
            return Missing
        return self.encoder.decode(bytes(rows[0][0]))

    def _store(self, message_key: str, result, ttl: int) -> None:
        self._database.execute(
            "result_upsert", message_key=message_key, result=self.encoder.encode(result), ttl_ms=ttl
        )


class _Database:
    """The broker's named queries over a pool of their own: all a backend made from a URL
    needs (a whole broker would be one more object to close, and an import cycle)."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self.queries = sql.broker_queries()
        self._pool: Pool | None = None
        self._lock = threading.Lock()

    @property
    def pool(self) -> Pool:
        with self._lock:
            if self._pool is None:
                settings = BrokerSettings(database_url=self.url)
                if not settings.database_url:
                    raise ConfigurationError("PostgresBackend needs a broker or url=...")
                self._pool = Pool(settings.database_url, size=settings.pool_size, timeout=settings.pool_timeout,
                                  idle_seconds=settings.pool_idle_seconds, application_name="citeq-results",
                                  prepared_statements=settings.prepared_statements)
            return self._pool

    def execute(self, query: str, **params) -> list[tuple]:
        """Run one named query on a pooled connection; return its rows (if any)."""
        try:
            with self.pool.connection() as conn:
                conn.autocommit = True
                with conn.cursor() as cur:
                    return self.queries.many(cur, query, **params)
        except BROKEN as exc:
            raise DatabaseUnavailable(str(exc).strip() or "database connection lost") from exc

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
