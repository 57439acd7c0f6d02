"""A Dramatiq result backend that keeps results in Postgres (``citeq_results``).

Opt in as with any Dramatiq broker::

    broker = PostgresBroker(results=True)
    # or by hand:
    broker.add_middleware(Results(backend=PostgresBackend(broker)))

``message.get_result(block=True)`` polls with Dramatiq's usual backoff; results expire
with their TTL and the heartbeat thread prunes them.
"""

from __future__ import annotations

from dramatiq.results import ResultBackend
from dramatiq.results.backend import Missing


class PostgresBackend(ResultBackend):
    """Results in the broker's database, over the broker's connection pool.

    Parameters:
      broker: the :class:`~broker.PostgresBroker` whose database and pool to use; when
        omitted, a broker of its own on ``url`` (default ``DATABASE_URL``) that only lends
        its connections.
      namespace, encoder, use_namespace_prefix_keys: as for any Dramatiq result backend.
    """

    def __init__(self, broker=None, *, url: str | None = None, namespace: str = "citeq-results",
                 encoder=None, use_namespace_prefix_keys: bool = False) -> None:
        super().__init__(namespace=namespace, encoder=encoder, use_namespace_prefix_keys=use_namespace_prefix_keys)
        if broker is None:
            from .postgres import PostgresBroker

            broker = PostgresBroker(url, middleware=[])
        self.broker = broker

    def _get(self, message_key: str):
        rows = self.broker.execute("get_result", message_key=message_key)
        if not rows:
            return Missing
        return self.encoder.decode(bytes(rows[0][0]))

    def _store(self, message_key: str, result, ttl: int) -> None:
        self.broker.execute(
            "store_result", message_key=message_key, result=self.encoder.encode(result), ttl_ms=ttl
        )
