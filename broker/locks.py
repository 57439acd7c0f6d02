"""Postgres advisory locks: the one place that turns a (scope, identity) into a lock key.

Keys are ``<scope>:<identity>`` hashed with ``hashtextextended`` into the 64-bit key
space. Every caller goes through these helpers, so two spellings of one lock cannot
exist (a second spelling would silently split the lock).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def lock_name(scope: str, identity: object) -> str:
    """The text that is hashed into the advisory-lock key."""
    if ":" in scope:
        raise ValueError(f"lock scope must not contain ':' (got {scope!r})")
    return f"{scope}:{identity}"


def xact_lock(cursor, scope: str, identity: object) -> None:
    """Take a transaction-level advisory lock; it is released at commit or rollback."""
    cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (lock_name(scope, identity),))


def run_locked(connection, scope: str, identity: object, fn: Callable[..., T]) -> T:
    """Run ``fn(cursor)`` in one transaction holding the (scope, identity) lock; commit."""
    with connection:
        with connection.cursor() as cursor:
            xact_lock(cursor, scope, identity)
            return fn(cursor)


def session_lock(cursor, scope: str, identity: object) -> None:
    """Take a session-level advisory lock (needs a real session: not behind PgBouncer)."""
    cursor.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (lock_name(scope, identity),))


def session_unlock(cursor, scope: str, identity: object) -> None:
    cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (lock_name(scope, identity),))
