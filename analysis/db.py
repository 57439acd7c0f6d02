"""The analysis layer's access to its named queries (``queries.sql`` of each subpackage).

Only modules of this package run these queries; actors and middleware call the
functions of :mod:`analysis.queue.userqueue` and never hold a cursor. Running them is
:class:`broker.sql.Queries`' (the broker runs its own queries the same way); this module
only loads the analysis namespace and names its runner's methods for the call sites
(``db.one(cur, "job_get_one", ...)``).
"""

from __future__ import annotations

from pathlib import Path

from broker import sql

#: The queue's (queue/queries.sql), the pipeline's (pipeline/queries.sql) and the user/operator
#: surface's read models, tokens and request limits (surface/queries.sql): one namespace.
QUERIES = sql.Queries.load(*(Path(__file__).parent / name
                             for name in ("queue/queries.sql", "pipeline/queries.sql", "surface/queries.sql")))

execute = QUERIES.execute
one = QUERIES.one
many = QUERIES.many
one_after = QUERIES.one_after
many_after = QUERIES.many_after
text = QUERIES.text


def one_on(broker, name: str, /, **params) -> tuple | None:
    """Run one self-contained named query on a pooled autocommit connection; its first row."""
    with broker.connection() as conn, conn.cursor() as cur:
        return QUERIES.one(cur, name, **params)


def many_on(broker, name: str, /, **params) -> list[tuple]:
    """Run one self-contained named query on a pooled autocommit connection; all rows."""
    with broker.connection() as conn, conn.cursor() as cur:
        return QUERIES.many(cur, name, **params)
