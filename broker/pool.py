"""A small, bounded, blocking connection pool for psycopg2.

psycopg2's own pools raise at once when they run dry; under a burst of sends that turns
into lost messages (dramatiq-pg lost 720 of 1,600 sends from 32 threads that way).
This pool makes callers wait for a free connection instead, up to ``timeout``.
Broken connections are discarded, never handed out again, and an idle one the server ended
(a restart) is noticed before it is handed out. Connections unused for
``idle_seconds`` are closed, so a burst's connections do not stay open: the most recently
returned connection is handed out first, and the ones at the bottom of the stack age out.
"""

from __future__ import annotations

import logging
import os
import select
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg2
import psycopg2.extensions

from . import sql
from .errors import DatabaseUnavailable, PoolExhausted

logger = logging.getLogger(__name__)

#: Errors after which a connection must not be reused.
BROKEN = (psycopg2.OperationalError, psycopg2.InterfaceError)


def ended_by_server(conn: psycopg2.extensions.connection) -> bool:
    """Whether the server has ended this idle connection's session, told without a round trip.

    A server that ends a session (a restart, a failover, pg_terminate_backend, an idle
    timeout) sends its FATAL message or closes the socket, so the socket of an idle
    connection, which expects nothing, turns readable; psycopg2 reads it in ``poll()`` and
    raises. Handing out such a connection cost its caller one DatabaseUnavailable after every
    restart (a 503 at the click), though the server was back."""
    if conn.closed:
        return True
    try:
        # The first poll() reads the server's FATAL as a notice; the socket then reads as
        # closed, and the next poll() raises. A notice or a notification is read and kept.
        for _ in range(4):
            readable, _, _ = select.select([conn], [], [], 0)
            if not readable:
                break
            conn.poll()
    except (psycopg2.Error, OSError, ValueError):
        return True
    return bool(conn.closed)


def connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` says the connection is gone: a :data:`BROKEN` error, or the bare
    ``DatabaseError`` without a SQLSTATE that psycopg2 raises when the server goes away in
    the middle of a multi-statement query (seen when a primary stopped at once; issue 26)."""
    return isinstance(exc, BROKEN) or (type(exc) is psycopg2.DatabaseError and exc.pgcode is None)


class Pool:
    """At most ``size`` connections to ``dsn``, shared by the threads of one process."""

    def __init__(self, dsn: str, *, size: int, timeout: float, idle_seconds: float = 30.0,
                 application_name: str = "citeq", prepared_statements: bool = True,
                 synchronous_acks: bool = False, idle_transaction_timeout_ms: int | None = None) -> None:
        self.dsn = dsn
        #: False behind a transaction pooler: its connections never PREPARE (broker/sql.py).
        self.prepared_statements = prepared_statements
        #: True: the named queries' asynchronous commits are synchronous (broker/sql.py).
        self.synchronous_acks = synchronous_acks
        #: The sessions' idle_in_transaction_session_timeout (None: the server's).
        self.idle_transaction_timeout_ms = idle_transaction_timeout_ms
        self.size = size
        self.timeout = timeout
        self.idle_seconds = idle_seconds
        self.application_name = application_name
        #: (connection, when it was returned) in return order: the newest at the end.
        self._idle: list[tuple[psycopg2.extensions.connection, float]] = []
        self._in_use = 0
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._orphans: list[object] = []

    def _check_fork(self) -> None:
        # A forked child must not touch its parent's sockets; closing them would end the
        # parent's sessions, so the inherited objects are kept alive and never used.
        if os.getpid() != self._pid:
            with self._lock:
                self._orphans.extend(self._idle)
                self._idle = []
                self._in_use = 0
                self._slots = threading.BoundedSemaphore(self.size)
                self._pid = os.getpid()

    def _connect(self) -> psycopg2.extensions.connection:
        conn = None
        try:
            conn = psycopg2.connect(self.dsn, application_name=self.application_name)
            if self.idle_transaction_timeout_ms is not None:
                conn.autocommit = True
                with conn.cursor() as cur:
                    cur.execute("SET idle_in_transaction_session_timeout = %s", (self.idle_transaction_timeout_ms,))
                conn.autocommit = False
        except psycopg2.OperationalError as exc:
            if conn is not None:
                conn.close()
            raise DatabaseUnavailable(f"cannot connect to the database: {exc}".strip()) from exc
        if not self.prepared_statements:
            sql.never_prepare(conn)
        if self.synchronous_acks:
            sql.always_synchronous(conn)
        return conn

    def getconn(self) -> psycopg2.extensions.connection:
        self._check_fork()
        if not self._slots.acquire(timeout=self.timeout):
            raise PoolExhausted(f"no free connection within {self.timeout}s (pool size {self.size})")
        try:
            with self._lock:
                conn = self._idle.pop()[0] if self._idle else None
                self._in_use += 1
            if conn is not None and ended_by_server(conn):
                # The server ended it, and most likely every idle one with it (a restart).
                conn.close()
                self._discard_idle()
                conn = None
            try:
                return conn if conn is not None else self._connect()
            except BaseException:
                with self._lock:
                    self._in_use -= 1
                raise
        except BaseException:
            self._slots.release()
            raise

    def putconn(self, conn: psycopg2.extensions.connection, *, broken: bool = False) -> None:
        try:
            if not broken and not conn.closed:
                if conn.get_transaction_status() != psycopg2.extensions.TRANSACTION_STATUS_IDLE:
                    # conn.rollback() does nothing on an autocommit connection, and the broker
                    # opens transactions there with a BEGIN of its own.
                    with conn.cursor() as cur:
                        cur.execute("ROLLBACK")
                with self._lock:
                    self._idle.append((conn, time.monotonic()))
                return
            conn.close()
            if broken:
                self._discard_idle()
        except BROKEN:
            pass
        finally:
            with self._lock:
                self._in_use -= 1
            self._slots.release()
            self.close_idle()

    @property
    def open(self) -> int:
        """Connections open now: in use and idle."""
        with self._lock:
            return self._in_use + len(self._idle)

    def close_idle(self) -> int:
        """Close the connections unused for ``idle_seconds``; how many."""
        cutoff = time.monotonic() - self.idle_seconds
        with self._lock:
            if os.getpid() != self._pid or not self._idle or self._idle[0][1] > cutoff:
                return 0
            keep = [(c, t) for c, t in self._idle if t > cutoff]
            stale = [c for c, t in self._idle if t <= cutoff]
            self._idle = keep
        for conn in stale:
            try:
                conn.close()
            except BROKEN:
                pass
        return len(stale)

    def _discard_idle(self) -> None:
        """Close every idle connection. Called when one breaks in use: a broken connection
        most often means the server (or the PgBouncer between) restarted or failed over,
        and then the idle ones are dead as well — a caller's one retry must not get another
        of them. Through a session-mode PgBouncer it is the rule: PgBouncer closes a client
        whose server connection died."""
        with self._lock:
            idle, self._idle = [c for c, _ in self._idle], []
        for conn in idle:
            try:
                conn.close()
            except BROKEN:
                pass

    @contextmanager
    def connection(self) -> Iterator[psycopg2.extensions.connection]:
        """A connection for one unit of work; commit is the caller's (``with conn:``)."""
        conn = self.getconn()
        broken = False
        try:
            yield conn
        except psycopg2.Error as exc:
            broken = connection_lost(exc)
            raise
        finally:
            self.putconn(conn, broken=broken or bool(conn.closed))

    def close(self) -> None:
        self._discard_idle()
