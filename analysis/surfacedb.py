"""Named queries of the user and operator surface (``analysis/surface.sql``).

Kept apart from ``queries.sql`` (the queue's own) so the two files stay readable; the
helpers mirror :mod:`analysis.db`.
"""

from __future__ import annotations

from pathlib import Path

from broker import sql

QUERIES = sql.load(Path(__file__).with_name("surface.sql"))


def one(cur, name: str, **params) -> tuple | None:
    """Run a named query; return its first row or None."""
    cur.execute(QUERIES[name], params)
    return cur.fetchone() if cur.description else None


def many(cur, name: str, **params) -> list[tuple]:
    """Run a named query; return all its rows."""
    cur.execute(QUERIES[name], params)
    return cur.fetchall() if cur.description else []


def one_on(broker, name: str, **params) -> tuple | None:
    """One self-contained named query on a pooled autocommit connection; its first row."""
    with broker.connection() as conn, conn.cursor() as cur:
        return one(cur, name, **params)


def many_on(broker, name: str, **params) -> list[tuple]:
    """One self-contained named query on a pooled autocommit connection; all rows."""
    with broker.connection() as conn, conn.cursor() as cur:
        return many(cur, name, **params)
