"""Settings read from the environment at the edge, passed down as keywords below it.

Every settings class is a pydantic-settings ``BaseSettings`` whose fields name their
environment variable (``validation_alias``) and say what it means (``description``): that
one declaration is what the process reads, what a bad value's error names, and what
``citeq --help`` lists (:meth:`EnvSettings.environment`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar

from pydantic import Field
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

#: The environment :meth:`EnvSettings.from_env` reads instead of the process's, while it builds.
_environ: ContextVar[Mapping[str, str] | None] = ContextVar("citeq_settings_environ", default=None)
_validated: dict[tuple, "EnvSettings"] = {}
_variables: dict[type, dict[str, str]] = {}


class _MappingEnvSource(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping instead of ``os.environ``."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {name: value for name, value in self._environ.items() if value != ""}


class EnvSettings(BaseSettings):
    """Settings read from the environment once, at the edge; below it, keyword arguments.

    A subclass names each field's variable as its ``validation_alias`` (exactly, case
    matters) and its meaning as its ``description``. An empty variable counts as unset.
    :meth:`from_env` reads the environment; a field given by its name wins over it.
    Constructed directly (``BrokerSettings(lease_seconds=5)``), only defaults and keywords.
    """

    model_config = SettingsConfigDict(case_sensitive=True, env_ignore_empty=True, populate_by_name=True,
                                      extra="forbid")

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings) -> tuple[PydanticBaseSettingsSource, ...]:
        # Keywords, then the environment :meth:`from_env` reads; no .env file, no secrets
        # folder. Constructed directly (tests, benchmarks), the defaults and keywords only.
        environ = _environ.get()
        if environ is None:
            return (init_settings,)
        return init_settings, env_settings if environ is os.environ else _MappingEnvSource(settings_cls, environ)

    @classmethod
    def variables(cls) -> dict[str, str]:
        """{field: its environment variable} of every field that has one."""
        found = _variables.get(cls)
        if found is None:
            found = _variables[cls] = {name: f.validation_alias for name, f in cls.model_fields.items()
                                       if isinstance(f.validation_alias, str)}
        return found

    @classmethod
    def environment(cls) -> dict[str, str]:
        """{variable: what it means} (``--help`` lists these)."""
        return {var: cls.model_fields[name].description or name.replace("_", " ")
                for name, var in cls.variables().items()}

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object):
        """The settings from ``env`` (default: the process environment); non-None overrides win.

        A bad value raises pydantic's ``ValidationError`` naming the variable."""
        env = os.environ if env is None else env
        overrides = {k: v for k, v in overrides.items() if v is not None}
        # Validating is the expensive part, and hot paths read their settings per message:
        # the same variables and overrides give a copy of the model validated before.
        seen = tuple((var, value) for var in cls.variables().values() if (value := env.get(var)))
        key = (cls, seen, tuple(sorted((k, repr(v)) for k, v in overrides.items())))
        validated = _validated.get(key)
        if validated is None:
            token = _environ.set(env)
            try:
                validated = _validated[key] = cls(**overrides)
            finally:
                _environ.reset(token)
        return validated.model_copy()


def env_field(default, variable: str, description: str, **constraints):
    """A field read from ``variable``, meaning ``description`` (for ``--help``)."""
    return Field(default, validation_alias=variable, description=description, **constraints)


class BrokerSettings(EnvSettings):
    """How the Postgres broker behaves. Every field has an environment variable."""

    database_url: str | None = env_field(
        None, "DATABASE_URL", "PostgreSQL URL; unset: the embedded server under .citeq/ (CITEQ_HOME)")
    lease_seconds: float = env_field(
        30.0, "CITEQ_LEASE_SECONDS", "a claimed message belongs to its worker this long without a heartbeat",
        gt=0)
    poll_interval: float = env_field(
        1.0, "CITEQ_POLL_INTERVAL", "consumers look for due messages at least this often, NOTIFY or not", gt=0)
    max_deliveries: int = env_field(
        5, "CITEQ_MAX_DELIVERIES", "deliveries after which a message whose lease expired is dead-lettered", ge=1)
    max_message_bytes: int = env_field(
        256 * 1024, "CITEQ_MAX_MESSAGE_BYTES", "largest encoded message accepted at send", ge=1024)
    pool_size: int = env_field(
        8, "CITEQ_POOL_SIZE", "pooled connections per process (sends, claims, acks, results; plus one LISTEN)",
        ge=1)
    pool_timeout: float = env_field(
        30.0, "CITEQ_POOL_TIMEOUT",
        "seconds to wait for a free pooled connection before failing; also how long a keyed send "
        "retries through a broken connection", gt=0)
    pool_idle_seconds: float = env_field(
        30.0, "CITEQ_POOL_IDLE_SECONDS", "a pooled connection unused this long is closed", gt=0)
    batch_max: int = env_field(
        128, "CITEQ_BATCH_MAX",
        "with a backlog of short messages, a consumer holds up to this many (claiming and acking "
        "half at a time) instead of Dramatiq's prefetch; 0 keeps it to the prefetch", ge=0)
    transaction_pooling: bool = env_field(
        False, "CITEQ_TRANSACTION_POOLING",
        "DATABASE_URL is a transaction-pooling endpoint (PgBouncer pool_mode=transaction): no server-side "
        "prepared statements, and LISTEN only on CITEQ_LISTEN_URL (without it consumers poll)")
    listen_url: str | None = env_field(
        None, "CITEQ_LISTEN_URL",
        "PostgreSQL URL of a direct (or session-pooled) connection for LISTEN wake-ups; unset: DATABASE_URL, "
        "or none at all with CITEQ_TRANSACTION_POOLING")
    synchronous_acks: bool = env_field(
        False, "CITEQ_SYNCHRONOUS_ACKS",
        "workers' acks, claims and job transitions wait for the commit to be flushed (and, with synchronous "
        "replication, for the standby) like every other write; off, they skip it: a crash or failover then "
        "loses only the newest of them, in order, and the message runs again")
    synchronous_sends: bool = env_field(
        True, "CITEQ_SYNCHRONOUS_SENDS",
        "a send that commits by itself (not inside the application's transaction) returns once its commit is "
        "flushed; off, it returns before: 2-3x the single sends per second, and a crash of the PostgreSQL "
        "server (not of the sender) loses the sends of its last fraction of a second, as RedisBroker without "
        "an append-only file would")
    idle_transaction_seconds: float | None = env_field(
        None, "CITEQ_IDLE_TRANSACTION_SECONDS",
        "the server ends a citeq session that sits inside a transaction this long (its locks go with it: a "
        "worker host cut off mid-transaction holds no row past its lease); unset: the lease; 0: never",
        ge=0)
    retention_seconds: float = env_field(
        3600.0, "CITEQ_RETENTION_SECONDS", "finished messages (and idempotency keys) are deleted after this",
        ge=0)

    @property
    def prepared_statements(self) -> bool:
        """Whether the hot statements run as server-side prepared statements (broker/sql.py).

        A transaction pooler hands each transaction whichever server connection is free, so a
        statement prepared on one is missing on the next (PgBouncer before 1.21, and any
        version for SQL-level ``PREPARE``, which psycopg2 speaks)."""
        return not self.transaction_pooling

    @property
    def idle_transaction_timeout_ms(self) -> int | None:
        """The sessions' ``idle_in_transaction_session_timeout`` in ms, or None to leave the
        server's. Never set behind a transaction pooler: there a ``SET`` would stay on a server
        connection that other clients share (PgBouncer's own ``idle_transaction_timeout`` is
        the setting there)."""
        seconds = self.lease_seconds if self.idle_transaction_seconds is None else self.idle_transaction_seconds
        if self.transaction_pooling or seconds <= 0:
            return None
        return max(int(seconds * 1000), 1)

    @property
    def heartbeat_interval(self) -> float:
        return max(self.lease_seconds / 3, 0.2)
