"""The database the benchmarks run on: DATABASE_URL's server or the embedded one."""

from __future__ import annotations

import os


def database(name: str) -> str:
    """A fresh, migrated database ``name`` (dropped first if it exists); its URL."""
    from broker.migrate import migrate
    from citeq.devdb import EmbeddedPostgres, ensure_database, with_dbname

    admin = os.environ.get("DATABASE_URL") or EmbeddedPostgres.for_name("main").start()
    ensure_database(admin, name, recreate=True)
    url = with_dbname(admin, name)
    migrate(url)
    return url


def sql(url: str, statement: str, *params):
    """Run one statement on its own autocommit connection; its rows, if any."""
    import psycopg2

    conn = psycopg2.connect(url)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(statement, params)
            return cur.fetchall() if cur.description else None
    finally:
        conn.close()
