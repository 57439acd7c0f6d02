"""A Dramatiq result backend that keeps results in Postgres (``citeq_results``).

``message.get_result(block=True)`` polls with Dramatiq's usual backoff; results expire
with their TTL and the heartbeat thread prunes them.
"""

from __future__ import annotations

from dramatiq.results import ResultBackend
from dramatiq.results.backend import Missing


class PostgresBackend(ResultBackend):
    def __init__(self, broker, *, namespace: str = "citeq-results", encoder=None) -> None:
        super().__init__(namespace=namespace, encoder=encoder)
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
