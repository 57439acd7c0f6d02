"""Broker settings: read from the environment at the edge, passed down as keywords."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import ClassVar

from pydantic import BaseModel, Field

#: Environment variable for each setting (``--help`` texts and README list these).
ENVIRONMENT = {
    "database_url": "DATABASE_URL",
    "lease_seconds": "CITEQ_LEASE_SECONDS",
    "poll_interval": "CITEQ_POLL_INTERVAL",
    "max_deliveries": "CITEQ_MAX_DELIVERIES",
    "max_message_bytes": "CITEQ_MAX_MESSAGE_BYTES",
    "pool_size": "CITEQ_POOL_SIZE",
    "pool_timeout": "CITEQ_POOL_TIMEOUT",
    "pool_idle_seconds": "CITEQ_POOL_IDLE_SECONDS",
    "retention_seconds": "CITEQ_RETENTION_SECONDS",
}


_validated: dict[tuple, "EnvSettings"] = {}


class EnvSettings(BaseModel):
    """Settings read from the environment once, at the edge; below it, keyword arguments.

    A subclass names the variable of each field in ``environment``.
    """

    environment: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object):
        """The settings from ``env`` (default: the process environment); non-None overrides win."""
        env = os.environ if env is None else env
        values = {field: env[var] for field, var in cls.environment.items() if env.get(var)}
        values.update({k: v for k, v in overrides.items() if v is not None})
        # Validating is the expensive part, and hot paths read their settings per message:
        # the same values give a copy of the model validated before.
        key = (cls, tuple(sorted((k, repr(v)) for k, v in values.items())))
        validated = _validated.get(key)
        if validated is None:
            validated = _validated[key] = cls(**values)
        return validated.model_copy()


class BrokerSettings(EnvSettings):
    """How the Postgres broker behaves. Every field has an environment variable."""

    environment: ClassVar[Mapping[str, str]] = ENVIRONMENT

    #: libpq URL of the database; None means "read DATABASE_URL when first needed".
    database_url: str | None = None
    #: A claimed message belongs to its worker this long without a heartbeat.
    lease_seconds: float = Field(30.0, gt=0)
    #: Consumers look for due messages at least this often, NOTIFY or not.
    poll_interval: float = Field(1.0, gt=0)
    #: Deliveries (claims) after which a message whose lease expired is dead-lettered.
    max_deliveries: int = Field(5, ge=1)
    #: Largest encoded message accepted at send.
    max_message_bytes: int = Field(256 * 1024, ge=1024)
    #: Connections per process for sends, claims, acks and results (plus one for LISTEN).
    pool_size: int = Field(8, ge=1)
    #: Seconds to wait for a free pooled connection before failing; also how long a keyed
    #: send retries through a broken connection.
    pool_timeout: float = Field(30.0, gt=0)
    #: A pooled connection unused this long is closed (a burst's connections do not linger).
    pool_idle_seconds: float = Field(30.0, gt=0)
    #: Finished messages are deleted after this many seconds (idempotency keys live as long).
    retention_seconds: float = Field(3600.0, ge=0)


    @property
    def heartbeat_interval(self) -> float:
        return max(self.lease_seconds / 3, 0.2)
