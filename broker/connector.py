"""The connector: how citeq reaches PostgreSQL. One per broker.

It owns the pool of connections (at most ``pool_size``; idle ones closed after
``pool_idle_seconds``), the database's clock at first use, the application's transactions
(:meth:`Connector.transaction`, with ``BEGIN`` sent with the first statement and deferred writes
sent with the ``COMMIT``), and the connection a caller binds for sends
(:meth:`Connector.bind`). Driver failures become :class:`~broker.errors.DatabaseUnavailable`.
Nothing here knows about messages: that is the message store's (broker/store.py).
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import psycopg2.errors
import psycopg2.extensions

from . import sql
from .errors import ConfigurationError, DatabaseUnavailable
from .pool import Pool, connection_lost
from .settings import BrokerSettings

_bound_connection: contextvars.ContextVar = contextvars.ContextVar("citeq_bound_connection", default=None)


class Connector:
    """Connections, transactions and named queries on one database (``settings.database_url``)."""

    def __init__(self, settings: BrokerSettings, queries: sql.Queries) -> None:
        self.settings = settings
        self.queries = queries
        self._pool: Pool | None = None
        self._pool_lock = threading.Lock()
        self._first_use: datetime | None = None

    @property
    def url(self) -> str:
        url = self.settings.database_url
        if not url:
            raise ConfigurationError(
                "DATABASE_URL is not set. Point it at your PostgreSQL, "
                "or run `citeq db start` and use the URL `citeq db url` prints."
            )
        return url

    @property
    def listen_url(self) -> str | None:
        """Where the LISTEN connection goes: ``listen_url``, else the database's URL, except
        behind a transaction pooler, where a LISTEN would sit on a server connection other
        clients share and hear nothing (then None: consumers poll)."""
        if self.settings.listen_url:
            return self.settings.listen_url
        if self.settings.transaction_pooling:
            return None
        return self.url

    @property
    def application_name(self) -> str:
        """What pg_stat_activity shows for this connector's connections."""
        return f"citeq:{os.getpid()}:{id(self):x}"

    @property
    def pool(self) -> Pool:
        with self._pool_lock:
            if self._pool is None:
                self._pool = Pool(self.url, size=self.settings.pool_size, timeout=self.settings.pool_timeout,
                                  idle_seconds=self.settings.pool_idle_seconds,
                                  application_name=self.application_name,
                                  prepared_statements=self.settings.prepared_statements,
                                  synchronous_acks=self.settings.synchronous_acks,
                                  idle_transaction_timeout_ms=self.settings.idle_transaction_timeout_ms)
            return self._pool

    @property
    def open_connections(self) -> int:
        """Pooled connections open now."""
        return self._pool.open if self._pool is not None else 0

    @property
    def first_use(self) -> datetime:
        """The database's clock when this connector first used it."""
        if self._first_use is None:
            with self.connection():
                pass
        return self._first_use

    @contextmanager
    def connection(self) -> Iterator:
        """A pooled connection in autocommit mode; driver failures become DatabaseUnavailable."""
        try:
            with self.pool.connection() as conn:
                conn.autocommit = True
                if self._first_use is None:
                    with conn.cursor() as cur:
                        self._first_use = self.queries.one(cur, "database_now_one")[0]
                yield conn
        except psycopg2.Error as exc:
            if connection_lost(exc):
                raise DatabaseUnavailable(str(exc).strip() or "database connection lost") from exc
            raise

    def execute(self, query: str, **params) -> list[tuple]:
        """Run one named query on a pooled connection; return its rows (if any)."""
        with self.connection() as conn, conn.cursor() as cur:
            return self.queries.many(cur, query, **params)

    @contextmanager
    def transaction(self) -> Iterator:
        """One transaction on a pooled connection: sends inside it commit with it.

        Round trips are what a short transaction costs, so it spends few: ``BEGIN`` goes
        out with the first statement, and writes deferred with :meth:`execute_at_commit` are
        sent together with the ``COMMIT`` (their errors surface there, and roll back the rest).
        """
        with self.connection() as conn:
            tx = _Transaction(conn)
            conn.cursor_factory = _BeginFirstCursor
            try:
                with self.bind(conn, tx), conn.cursor() as cur:
                    yield cur
                    tx.commit(cur)
            except BaseException:
                tx.rollback()
                raise
            finally:
                conn.cursor_factory = psycopg2.extensions.cursor

    def execute_at_commit(self, cursor, statement: bytes) -> None:
        """Send ``statement`` together with the commit of the current :meth:`transaction`
        (or now, on ``cursor``, outside one): for writes whose answer nobody waits for.
        Its failure fails the commit, which then rolls everything back."""
        _, tx = self.bound()
        if tx is not None:
            tx.deferred.append(statement)
        else:
            cursor.execute(statement)

    @contextmanager
    def bind(self, conn, _transaction: _Transaction | None = None) -> Iterator[None]:
        """Make sends in this context use the caller's connection (and its transaction)."""
        token = _bound_connection.set((conn, _transaction))
        try:
            yield
        finally:
            _bound_connection.reset(token)

    @staticmethod
    def bound() -> tuple:
        """(connection, transaction) bound in this context, or (None, None)."""
        return _bound_connection.get() or (None, None)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()


class _BeginFirstCursor(psycopg2.extensions.cursor):
    """A cursor of an autocommit connection that opens a transaction with its first
    statement, in the same round trip (psycopg2 would send BEGIN as a round trip of its own)."""

    def execute(self, query, vars=None):
        if self.connection.info.transaction_status == psycopg2.extensions.TRANSACTION_STATUS_IDLE:
            query = b"BEGIN;\n" + self.mogrify(query, vars)
            vars = None
        return super().execute(query, vars)


class _Transaction:
    """A transaction opened by :meth:`Connector.transaction` and its deferred sends."""

    def __init__(self, conn) -> None:
        self.conn = conn
        #: Statements to send with the COMMIT, in order (Connector.execute_at_commit).
        self.deferred: list[bytes] = []

    def commit(self, cur) -> None:
        if self.conn.info.transaction_status == psycopg2.extensions.TRANSACTION_STATUS_INERROR:
            # COMMIT would roll back without a word: an error the block caught aborted it.
            raise psycopg2.errors.InFailedSqlTransaction(
                "the transaction was aborted by an error caught inside it; nothing was committed")
        statements, self.deferred = self.deferred, []
        if statements or self.conn.info.transaction_status != psycopg2.extensions.TRANSACTION_STATUS_IDLE:
            cur.execute(b";\n".join([*statements, b"COMMIT"]))

    def rollback(self) -> None:
        self.deferred = []
        if not self.conn.closed and \
                self.conn.info.transaction_status != psycopg2.extensions.TRANSACTION_STATUS_IDLE:
            with self.conn.cursor() as cur:
                cur.execute("ROLLBACK")
