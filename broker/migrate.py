"""Apply ``schema/NNNN_*.sql`` in order, each once, under an advisory lock.

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

from . import locks

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
    """Bring the database at ``url`` up to date; return the names applied by this call."""
    conn = psycopg2.connect(url)
    applied: list[str] = []
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            locks.session_lock(cur, LOCK_SCOPE, "schema")
            try:
                cur.execute(
                    "CREATE TABLE IF NOT EXISTS citeq_migrations ("
                    " version integer PRIMARY KEY, name text NOT NULL,"
                    " applied_at timestamptz NOT NULL DEFAULT now())"
                )
                cur.execute("SELECT version FROM citeq_migrations")
                done = {row[0] for row in cur.fetchall()}
                for version, name, path in discover(directory):
                    if version in done:
                        continue
                    _apply(conn, version, name, path)
                    applied.append(name)
            finally:
                locks.session_unlock(cur, LOCK_SCOPE, "schema")
    finally:
        conn.close()
    return applied


def _apply(conn, version: int, name: str, path: Path) -> None:
    conn.autocommit = False
    try:
        with conn, conn.cursor() as cur:
            cur.execute(path.read_text(encoding="utf-8"))
            cur.execute("INSERT INTO citeq_migrations (version, name) VALUES (%s, %s)", (version, name))
        logger.info("migration applied", extra={"action": "migration_applied", "migration": name})
    finally:
        conn.autocommit = True
