"""Postgres advisory locks: the one place that turns a (scope, identity) into a lock key.

Keys are ``<scope>:<identity>`` hashed with ``hashtextextended`` into the 64-bit key
space. Every caller goes through these helpers, so two spellings of one lock cannot
exist (a second spelling would silently split the lock).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import sql


def lock_name(scope: str, identity: object) -> str:
    """The text that is hashed into the advisory-lock key."""
    if ":" in scope:
        raise ValueError(f"lock scope must not contain ':' (got {scope!r})")
    return f"{scope}:{identity}"


_XACT_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%(name)s, 0))"
_TRY_XACT_LOCK = "SELECT pg_try_advisory_xact_lock(hashtextextended(%(name)s, 0))"
_XACT_LOCK_MANY = "SELECT count(pg_advisory_xact_lock(hashtextextended(name, 0))) FROM unnest(%(names)s::text[]) AS name"


def xact_lock(cursor, scope: str, identity: object) -> None:
    """Take a transaction-level advisory lock; it is released at commit or rollback."""
    cursor.execute(xact_lock_text(cursor, scope, identity))


def try_xact_lock(cursor, scope: str, identity: object) -> bool:
    """:func:`xact_lock` if no other transaction holds it, without waiting; whether taken."""
    cursor.execute(_TRY_XACT_LOCK, {"name": lock_name(scope, identity)})
    return cursor.fetchone()[0]


def xact_lock_text(cursor, scope: str, identity: object) -> bytes:
    """The statement :func:`xact_lock` runs, to send ahead of another in one round trip
    (each statement of a multi-statement string gets its own snapshot, so the one after
    the lock sees everything committed before the lock was granted)."""
    return sql.statement_text(cursor, "xact_lock", _XACT_LOCK, {"name": lock_name(scope, identity)}, prepare=True)


def xact_lock_many_text(cursor, scope: str, identities: Sequence[object]) -> bytes:
    """Transaction-level locks on several identities of one scope, as one statement to send
    ahead of another (see :func:`xact_lock_text`).

    The locks are taken one after another in the order of their names (the array's order:
    a function scan yields it), the same order for every caller, so two transactions that
    lock overlapping sets this way cannot deadlock each other.
    """
    names = sorted({lock_name(scope, i) for i in identities})
    return sql.statement_text(cursor, "xact_lock_many", _XACT_LOCK_MANY, {"names": names}, prepare=True)


#: The scope of a message group's lock (issue 25): ``message_group:<queue>:<key>``. Every
#: send of a grouped message and every promotion of a key's next message takes it, through
#: the two helpers below and nowhere else.
GROUP_SCOPE = "message_group"


def group_identity(queue_name: str, group_key: str) -> str:
    """The identity of one group's lock: its queue and its key (a queue name has no ':')."""
    return f"{queue_name}:{group_key}"


def group_lock_text(cursor, queue_name: str, group_key: str) -> bytes:
    """The statement that takes one group's transaction-level lock, to send ahead of the
    statement that needs it (see :func:`xact_lock_text`)."""
    return xact_lock_text(cursor, GROUP_SCOPE, group_identity(queue_name, group_key))


def group_locks_text(cursor, groups: Sequence[tuple[str, str]]) -> bytes:
    """The locks of several groups (queue, key), in the one order every caller uses."""
    return xact_lock_many_text(cursor, GROUP_SCOPE, [group_identity(q, k) for q, k in groups])
