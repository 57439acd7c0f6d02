"""Apply ``schema/NNNN_*.sql`` in order, each once, under a transaction-level advisory lock.

Every process that needs the schema calls :func:`migrate` at boot; the lock makes
concurrent boots wait for each other instead of colliding (``IF NOT EXISTS`` alone
races). Each migration runs in its own transaction together with its bookkeeping row.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import psycopg2

from . import locks, sql

logger = logging.getLogger(__name__)

_FILENAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
LOCK_SCOPE = "citeq_migrate"


def schema_dir() -> Path:
    return Path(os.environ.get("CITEQ_SCHEMA_DIR") or Path(__file__).resolve().parent.parent / "schema")


def discover(directory: Path | None = None) -> list[tuple[int, str, Path]]:
    """Migrations as (version, name, path), ordered; a bad name or a duplicate version fails."""
    found: dict[int, tuple[int, str, Path]] = {}
    for path in sorted((directory or schema_dir()).glob("*.sql")):
        m = _FILENAME.match(path.name)
        if not m:
            raise ValueError(f"migration file name must look like 0001_name.sql: {path.name}")
        version = int(m.group(1))
        if version in found:
            raise ValueError(f"two migrations with version {version}: {found[version][2].name}, {path.name}")
        found[version] = (version, path.stem, path)
    return [found[v] for v in sorted(found)]


def migrate(url: str, directory: Path | None = None) -> list[str]:
    """Bring the database at ``url`` up to date; return the names applied by this call.

    Each migration runs in a transaction of its own together with its bookkeeping row,
    under a transaction-level advisory lock taken first in that transaction, and the list
    of applied versions is read after the lock is granted: two processes migrating at once
    take turns per migration, and neither applies one the other did. Nothing here needs a
    session, so ``url`` may be a transaction-pooling endpoint (PgBouncer); a session lock
    held across the run would be released (or kept) with a server connection the pooler
    hands to somebody else."""
    migrations = discover(directory)
    conn = psycopg2.connect(url)
    sql.never_prepare(conn)  # run once per boot: nothing to gain, and a pooler may sit between
    applied: list[str] = []
    try:
        while (name := _apply_next(conn, migrations)) is not None:
            applied.append(name)
    finally:
        conn.close()
    return applied


def _apply_next(conn, migrations: list[tuple[int, str, Path]]) -> str | None:
    """Apply the first migration not yet applied, in one transaction under the lock; its name,
    or None when every one is applied."""
    with conn, conn.cursor() as cur:
        locks.xact_lock(cur, LOCK_SCOPE, "schema")
        cur.execute(
            "CREATE TABLE IF NOT EXISTS citeq_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cur.execute("SELECT version FROM citeq_migrations")
        done = {row[0] for row in cur.fetchall()}
        pending = [m for m in migrations if m[0] not in done]
        if not pending:
            return None
        version, name, path = pending[0]
        cur.execute(path.read_text(encoding="utf-8"))
        cur.execute("INSERT INTO citeq_migrations (version, name) VALUES (%s, %s)", (version, name))
    logger.info("migration applied", extra={"action": "migration_applied", "migration": name})
    return name
