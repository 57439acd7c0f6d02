"""The analysis layer's access to its named queries (``queries.sql`` of each subpackage).

Only modules of this package run these queries; actors and middleware call the
functions of :mod:`analysis.queue.userqueue` and never hold a cursor.
"""

from __future__ import annotations

from pathlib import Path

from broker import sql


def _load_all(*names: str) -> dict[str, str]:
    queries: dict[str, str] = {}
    for name in names:
        loaded = sql.load(Path(__file__).parent / name)
        twice = queries.keys() & loaded.keys()
        if twice:
            raise ValueError(f"queries defined in two files: {sorted(twice)}")
        queries.update(loaded)
    return queries


#: The queue's (queue/queries.sql), the pipeline's (pipeline/queries.sql) and the user/operator
#: surface's read models, tokens and request limits (surface/queries.sql): one namespace.
QUERIES = _load_all("queue/queries.sql", "pipeline/queries.sql", "surface/queries.sql")


def one(cur, name: str, **params) -> tuple | None:
    """Run a named query; return its first row or None."""
    _execute(cur, None, name, params)
    return cur.fetchone() if cur.description else None


def many(cur, name: str, **params) -> list[tuple]:
    """Run a named query; return all its rows."""
    _execute(cur, None, name, params)
    return cur.fetchall() if cur.description else []


def one_after(cur, first: bytes, name: str, **params) -> tuple | None:
    """Send the statement ``first`` and then the named query in one round trip; the named
    query's first row or None (the lock statements of ``broker.locks`` go first this way)."""
    _execute(cur, first, name, params)
    return cur.fetchone() if cur.description else None


def many_after(cur, first: bytes | None, name: str, **params) -> list[tuple]:
    """:func:`one_after` returning all rows (``first`` None: the named query alone)."""
    _execute(cur, first, name, params)
    return cur.fetchall() if cur.description else []


def text(cur, name: str, **params) -> bytes:
    """The named query with its parameters bound, to send with other statements."""
    return sql.statement_text(cur, name, QUERIES[name], params)


def _execute(cur, first: bytes | None, name: str, params: dict) -> None:
    query = sql.statement_text(cur, name, QUERIES[name], params)
    cur.execute(query if first is None else first + b";\n" + query)


def one_on(broker, name: str, **params) -> tuple | None:
    """Run one self-contained named query on a pooled autocommit connection; its first row."""
    with broker.connection() as conn, conn.cursor() as cur:
        return one(cur, name, **params)


def many_on(broker, name: str, **params) -> list[tuple]:
    """Run one self-contained named query on a pooled autocommit connection; all rows."""
    with broker.connection() as conn, conn.cursor() as cur:
        return many(cur, name, **params)
