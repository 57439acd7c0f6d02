"""Named SQL queries, loaded once from ``.sql`` files (the procrastinate layout), and the
one runner of them: :class:`Queries`, which the broker's connector and message store and
the analysis layer (``analysis/db.py``) each hold one of.

A file holds blocks that start with ``-- name --``; the block's text up to the next
header is the query. Parameters are psycopg2's ``%(named)s``. A block whose description
has the line ``-- @prepared`` runs as a server-side prepared statement (the hot paths).

Every ``queries.sql`` names its queries one way: subject first, then the verb, then how
many rows come back: ``_one`` (at most one row), ``_many`` (any number), no suffix when the
statement returns none (``message_insert_one``, ``messages_exchange_many``, ``leases_extend``).
A read may name only what it returns (``queue_stats_many``).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_HEADER = re.compile(r"^-- ([a-z_]+) --$", re.MULTILINE)
_PARAM = re.compile(r"%\((\w+)\)s(::\w+(?:\[\])?)?")


def parse_queries(text: str) -> dict[str, str]:
    """Split a queries file into ``{name: sql}``."""
    parts = _HEADER.split(text)
    queries = {}
    for name, body in zip(parts[1::2], parts[2::2]):
        if name in queries:
            raise ValueError(f"query {name!r} is defined twice")
        queries[name] = body.strip()
    return queries


@cache
def _read(path: Path) -> dict[str, str]:
    return parse_queries(Path(path).read_text(encoding="utf-8"))


class Queries(Mapping[str, str]):
    """Named queries, ``{name: sql}``, and how to run them on a psycopg2 cursor.

    Each run binds the parameters and sends the query as a prepared statement when its
    text asks for one (:func:`statement_text`). Names and the cursor are positional, so a
    query may have parameters called ``name`` or ``cur``."""

    def __init__(self, queries: Mapping[str, str]) -> None:
        self._queries = dict(queries)

    @classmethod
    def load(cls, *paths: Path) -> Queries:
        """The queries of these files as one namespace; a name defined twice is refused."""
        queries: dict[str, str] = {}
        for path in paths:
            loaded = _read(Path(path))
            twice = queries.keys() & loaded.keys()
            if twice:
                raise ValueError(f"queries defined in two files: {sorted(twice)}")
            queries.update(loaded)
        return cls(queries)

    def __getitem__(self, name: str) -> str:
        return self._queries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._queries)

    def __len__(self) -> int:
        return len(self._queries)

    def execute(self, cur, name: str, /, **params) -> None:
        """Run a named query; its rows (and ``cur.rowcount``) stay on the cursor."""
        cur.execute(self.text(cur, name, **params))

    def one(self, cur, name: str, /, **params) -> tuple | None:
        """Run a named query; return its first row or None."""
        return self.one_after(cur, None, name, **params)

    def many(self, cur, name: str, /, **params) -> list[tuple]:
        """Run a named query; return all its rows."""
        return self.many_after(cur, None, name, **params)

    def one_after(self, cur, first: bytes | None, name: str, /, **params) -> tuple | None:
        """Send the statement ``first`` and then the named query in one round trip; the named
        query's first row or None (the lock statements of ``broker.locks`` go first this way)."""
        self._execute_after(cur, first, name, params)
        return cur.fetchone() if cur.description else None

    def many_after(self, cur, first: bytes | None, name: str, /, **params) -> list[tuple]:
        """:meth:`one_after` returning all rows (``first`` None: the named query alone)."""
        self._execute_after(cur, first, name, params)
        return cur.fetchall() if cur.description else []

    def text(self, cur, name: str, /, *, prepare: bool | None = None, **params) -> bytes:
        """The named query with its parameters bound, to send with other statements
        (``prepare``: as for :func:`statement_text`)."""
        return statement_text(cur, name, self._queries[name], params, prepare=prepare)

    def _execute_after(self, cur, first: bytes | None, name: str, params: dict) -> None:
        query = self.text(cur, name, **params)
        cur.execute(query if first is None else first + b";\n" + query)


@cache
def broker_queries() -> Queries:
    """The broker's queries (broker/queries.sql)."""
    return Queries.load(Path(__file__).with_name("queries.sql"))


# -- server-side prepared statements ------------------------------------------------------
#
# psycopg2 sends every statement as text, so the server parses and plans it on every call.
# For the statements a worker runs per job (claims, starts, completions) planning costs as
# much as running them; a prepared statement is planned once per connection (PostgreSQL
# switches to a generic plan after five custom ones when it is as cheap).


@dataclass(frozen=True)
class PreparedQuery:
    """A named query split for PREPARE/EXECUTE: the last statement is prepared, statements
    before it (``SET LOCAL ...``) are sent as they are, in the same round trip."""

    statement: str
    prepare: str
    execute: str


@cache
def prepared_query(name: str, query: str) -> PreparedQuery:
    body = query.strip().rstrip(";")
    head, _, last = body.rpartition(";\n")
    params: list[str] = []
    casts: dict[str, str] = {}

    def positional(match: re.Match) -> str:
        name, cast = match.group(1), match.group(2) or ""
        if name not in params:
            params.append(name)
        # EXECUTE's arguments are typed expressions: ARRAY['…'] is text[], and text[] has no
        # assignment cast to uuid[]. The argument gets the cast the query spells.
        casts.setdefault(name, cast)
        return f"${params.index(name) + 1}{cast}"

    statement = f"citeq_{name}"
    prepare = f"PREPARE {statement} AS\n" + _PARAM.sub(positional, last).replace("%%", "%")
    arguments = ", ".join(f"%({p})s{casts[p]}" for p in params)
    execute = (f"{head};\n" if head else "") + f"EXECUTE {statement}" + (f"({arguments})" if params else "")
    return PreparedQuery(statement, prepare, execute)


#: The statements prepared on each live connection (gone with the connection).
_prepared_on: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: Connections that never prepare (behind a transaction pooler: see :func:`never_prepare`).
_unprepared: weakref.WeakSet = weakref.WeakSet()


def never_prepare(conn) -> None:
    """Send every named query on ``conn`` as plain text, never ``PREPARE``/``EXECUTE``.

    For connections through a transaction pooler (``CITEQ_TRANSACTION_POOLING``): there a
    statement prepared in one transaction is on a server connection the next transaction
    may not get ("prepared statement does not exist"), or that another client gets, whose
    own ``PREPARE`` of the name then fails ("already exists")."""
    _unprepared.add(conn)


#: Connections whose named queries keep every commit synchronous (see :func:`always_synchronous`).
_synchronous: weakref.WeakSet = weakref.WeakSet()
#: The line by which a worker-side query skips the synchronous commit (acks, claims, transitions).
ASYNC_COMMIT = "SET LOCAL synchronous_commit = off;\n"


def always_synchronous(conn) -> None:
    """Send the named queries on ``conn`` without their :data:`ASYNC_COMMIT` line, so that
    their commits wait like every other (``CITEQ_SYNCHRONOUS_ACKS``): with synchronous
    replication, a failover then loses no ack, claim or job transition."""
    _synchronous.add(conn)


_SET_LOCAL = re.compile(r"^SET LOCAL (\w+) = \w+;$", re.MULTILINE)


def settings_kept(query: str) -> tuple[bytes, bytes]:
    """For a named query sent on the caller's cursor, in the caller's transaction: the
    statements to send before and after it so that the ``SET LOCAL`` lines it runs with
    hold for it alone (a ``SET LOCAL`` lasts until the transaction ends, and the caller's
    own statements after it would plan with sequential scans off or a forced generic plan).
    The first saves the settings' values in force (the session's, or the caller's own
    ``SET LOCAL``) in a transaction-local setting, the second puts them back."""
    names = _SET_LOCAL.findall(query)
    if not names:
        raise ValueError("the query sets nothing with SET LOCAL: there are no settings to keep")
    saved = "current_setting('citeq.saved_settings')"
    save = ("SELECT set_config('citeq.saved_settings', concat_ws(' ', "
            + ", ".join(f"current_setting('{n}')" for n in names) + "), true)")
    restore = "SELECT " + ", ".join(f"set_config('{n}', split_part({saved}, ' ', {i}), true)"
                                    for i, n in enumerate(names, start=1))
    return save.encode(), restore.encode()


#: A line of a query's description that asks for a prepared statement.
PREPARE_DIRECTIVE = "-- @prepared"


def statement_text(cursor, name: str, query: str, params: dict, *, prepare: bool | None = None) -> bytes:
    """The named query with its parameters bound, as text to send with other statements in
    one round trip. When ``prepare`` or its text asks for it (and the connection may prepare:
    :func:`never_prepare`), that text is an ``EXECUTE``
    of the statement, prepared on the connection's first use in a round trip of its own
    (so that a failure cannot leave it half made)."""
    if cursor.connection in _synchronous:
        query = query.replace(ASYNC_COMMIT, "")
    if not (prepare or (prepare is None and PREPARE_DIRECTIVE in query)) or cursor.connection in _unprepared:
        return cursor.mogrify(query, params)
    prepared = prepared_query(name, query)
    done = _prepared_on.setdefault(cursor.connection, set())
    if prepared.statement not in done:
        cursor.execute(prepared.prepare)
        done.add(prepared.statement)
    return cursor.mogrify(prepared.execute, params)
