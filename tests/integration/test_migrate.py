"""Migrations: ordered, applied once, safe when many processes boot at the same instant."""

from __future__ import annotations

import multiprocessing
import re
from pathlib import Path

import psycopg2
import pytest

from broker import migrate as migrations
from broker.sql import parse_queries

ROOT = Path(__file__).resolve().parents[2]


def _migrate_at_once(url: str, barrier) -> list[str]:
    barrier.wait()
    return migrations.migrate(url)


def test_concurrent_boots_apply_each_migration_exactly_once(fresh_db_url):
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Manager().Barrier(6)
    with ctx.Pool(6) as pool:
        results = pool.starmap(_migrate_at_once, [(fresh_db_url, barrier)] * 6)

    everything = [name for r in results for name in r]
    expected = [name for _, name, _ in migrations.discover()]
    assert sorted(everything) == sorted(expected)  # each applied once, by exactly one process
    conn = psycopg2.connect(fresh_db_url)
    with conn.cursor() as cur:
        cur.execute("SELECT name FROM citeq_migrations ORDER BY version")
        assert [r[0] for r in cur.fetchall()] == expected
    conn.close()


def test_migrating_again_applies_nothing(db):
    assert migrations.migrate(db) == []


def test_migration_files_are_numbered_uniquely():
    # Gaps are fine (branches get numbers ahead of time; migrate applies each missing version).
    versions = [v for v, _, _ in migrations.discover()]
    assert versions == sorted(set(versions)) and versions[0] == 1


def test_a_badly_named_migration_is_refused(tmp_path):
    (tmp_path / "1_oops.sql").write_text("SELECT 1;")
    with pytest.raises(ValueError, match="0001_name.sql"):
        migrations.discover(tmp_path)


def test_every_named_query_is_unique_and_parameterised_by_name():
    for path in [ROOT / "broker" / "queries.sql", *ROOT.glob("analysis/*/*.sql")]:
        queries = parse_queries(path.read_text())
        for name, text in queries.items():
            assert not re.search(r"(?<!%)%s", text), f"{path.name}:{name} uses a positional parameter"


def test_a_worker_migrates_its_database_at_boot(fresh_db_url):
    import dramatiq

    from broker import PostgresBroker

    b = PostgresBroker(url=fresh_db_url)
    w = dramatiq.Worker(b, worker_threads=1, worker_timeout=50)
    w.start()
    w.stop()
    b.close()
    conn = psycopg2.connect(fresh_db_url)
    with conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM citeq_migrations")
        assert cur.fetchone()[0] == len(migrations.discover())
    conn.close()
