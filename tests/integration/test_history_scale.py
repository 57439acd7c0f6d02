"""A long history must not slow the queries run per admission, per poll and per scrape.

Finished jobs and acknowledged messages pile up (the jobs are kept for the users' reports,
done messages until they are pruned). These tests load such a history, let the planner
see it (ANALYZE, as autovacuum would), and ask the server how it would run the queries
that admission, job polling, metrics and ``join`` issue: each must reach its rows through
an index condition or a partial index of live rows, never by reading the history.
"""

from __future__ import annotations

import json
import os

import psycopg2
import pytest

from analysis import db as analysis_db
from broker import sql as broker_sql
from citeq.devdb import ensure_database, with_dbname
from tests.conftest import _drop_database, query

HISTORY = 30_000
#: The tables that hold history.
HISTORY_TABLES = {"analysis_jobs", "citeq_messages", "analysis_job_events", "held_runs", "credit_ledger"}
USER = 7


@pytest.fixture(scope="module")
def history(pg_server):
    """A database of its own (the planner statistics it gathers must not leak into other
    tests' tables) with HISTORY finished jobs and done messages, and a few live ones."""
    from broker.migrate import migrate

    admin, _ = pg_server
    name = f"citeq_history_{os.getpid()}"
    ensure_database(admin, name, recreate=True)
    url = with_dbname(admin, name)
    migrate(url)
    conn = psycopg2.connect(url)
    conn.autocommit = True
    query(conn, "INSERT INTO accounts (user_id, credits) SELECT u, 10 FROM generate_series(1, 300) u")
    query(conn, "INSERT INTO documents (user_id, kind, filename, status) "
                "SELECT u, 'thesis', 'thesis.pdf', 'parsed' FROM generate_series(1, 300) u")
    query(conn, """
        INSERT INTO analysis_jobs (user_id, thesis_id, status, cost, message_id, started_at, finished_at)
        SELECT d.user_id, d.id, 'succeeded', 1, 'old-' || g, now(), now()
        FROM generate_series(1, %s) g JOIN documents d ON d.user_id = 1 + g %% 300""", HISTORY)
    query(conn, """
        INSERT INTO citeq_messages (message_id, queue_name, actor_name, state, payload, finished_at)
        SELECT 'old-' || g, 'analysis', 'analyze', 'done', '\\x7b7d', now() FROM generate_series(1, %s) g""",
          HISTORY)
    # The insert above wrote each job's 'admitted' event (the trigger); the rest of its history:
    query(conn, "INSERT INTO analysis_job_events (job_id, user_id, event) "
                "SELECT id, user_id, e::analysis_job_event_kind FROM analysis_jobs, "
                "unnest(ARRAY['started', 'succeeded']) e")
    query(conn, "INSERT INTO credit_ledger (user_id, job_id, kind, amount) "
                "SELECT user_id, id, 'charge', -1 FROM analysis_jobs")
    query(conn, "INSERT INTO credit_ledger (user_id, job_id, kind, amount) "
                "SELECT user_id, id, 'refund', 1 FROM analysis_jobs WHERE id %% 100 = 0")
    # The user's live queue: one running job, two queued; and a few messages waiting.
    query(conn, """
        INSERT INTO analysis_jobs (user_id, thesis_id, status, cost, message_id, started_at)
        SELECT %s, (SELECT id FROM documents WHERE user_id = %s), s::analysis_job_status, 1, 'live-' || n,
               CASE WHEN s = 'running' THEN now() END
        FROM unnest(ARRAY['running', 'queued', 'queued']) WITH ORDINALITY AS t(s, n)""", USER, USER)
    query(conn, "INSERT INTO citeq_messages (message_id, queue_name, actor_name, payload) "
                "SELECT 'new-' || g, 'analysis', 'analyze', '\\x7b7d' FROM generate_series(1, 5) g")
    query(conn, "ANALYZE")
    yield conn
    conn.close()
    _drop_database(admin, name)


def history_reads(conn, statement: bytes) -> list[str]:
    """The plan's scans that read a history table without narrowing it down: sequential
    scans, and scans of a full (not partial) index with no index condition."""
    indexes = {name: (table, "WHERE" in definition)
               for name, table, definition in query(conn, "SELECT indexname, tablename, indexdef FROM pg_indexes")}
    with conn.cursor() as cur:
        cur.execute(b"EXPLAIN (FORMAT JSON) " + statement)
        plan = cur.fetchone()[0]
    plan = plan if isinstance(plan, list) else json.loads(plan)
    found: list[str] = []

    def walk(node: dict) -> None:
        kind, index = node["Node Type"], node.get("Index Name")
        if kind == "Seq Scan" and node["Relation Name"] in HISTORY_TABLES:
            found.append(f"Seq Scan on {node['Relation Name']}")
        elif index is not None:
            table, partial = indexes[index]
            if table in HISTORY_TABLES and not partial and "Index Cond" not in node:
                found.append(f"{kind} of {index} on {table} without an index condition")
        for child in node.get("Plans", []):
            walk(child)

    walk(plan[0]["Plan"])
    return found


def _last_statement(query: str) -> str:
    """The statement a named query runs, without the ``SET LOCAL`` lines sent ahead of it
    (split as broker/sql.py prepares it)."""
    return query.strip().rstrip(";").rpartition(";\n")[2]


def analysis_statement(conn, name: str, **params) -> bytes:
    with conn.cursor() as cur:
        return cur.mogrify(_last_statement(analysis_db.QUERIES[name]), params)


def broker_statement(conn, name: str, **params) -> bytes:
    with conn.cursor() as cur:
        return cur.mogrify(_last_statement(broker_sql.broker_queries()[name]), params)


def test_admission_counts_the_users_active_jobs_from_indexes(history):
    thesis = query(history, "SELECT id FROM documents WHERE user_id = %s", USER)[0][0]
    statement = analysis_statement(
        history, "job_admit_one", user_id=USER, thesis_id=thesis, delta_of_job_id=None, cost=1, message_id="m",
        idempotency_key=None, options="{}", document_ids=[thesis], checked=True, max_active_jobs=20,
        provider="offline", group_queue="analysis", group_key=f"user:{USER}")
    assert history_reads(history, statement) == []


def test_a_users_job_list_reads_that_users_jobs_only(history):
    statement = analysis_statement(history, "job_views_many", user_id=USER, ids=None, limit=100)
    assert history_reads(history, statement) == []


def test_a_grouped_send_reads_live_messages_only(history):
    """A send to a key looks up an earlier send of the same message id (a retry keeps its
    place): through the live rows' index, never the done ones."""
    statement = broker_statement(
        history, "grouped_message_insert_one", message_id="old-17", queue_name="analysis", actor_name="analyze",
        payload=b"{}", delay_ms=0, idempotency_key=None, priority=0, group_key=f"user:{USER}", group_limit=1,
        group_release="manual")
    assert history_reads(history, statement) == []


def test_a_release_of_grouped_messages_reads_live_messages_only(history):
    statement = broker_statement(history, "grouped_messages_release_many", message_ids=["old-17", "new-1"],
                                 queues=["analysis"], keys=[f"user:{USER}"])
    assert history_reads(history, statement) == []


def test_queue_figures_read_live_messages_only(history):
    assert history_reads(history, broker_statement(history, "queue_stats_many")) == []
    assert history_reads(history, broker_statement(history, "messages_count_unfinished_one", queue_name="analysis")) == []


def test_promotion_and_the_resume_sweeper_read_live_jobs_only(history):
    assert history_reads(history, analysis_statement(history, "jobs_promote_by_message_many", queue_name="analysis",
                                                     group_keys=[f"user:{USER}"], user_ids=[USER],
                                                     via="test")) == []
    assert history_reads(history, analysis_statement(history, "jobs_ended_holding_turn_many",
                                                     queue_name="analysis", limit=100)) == []
    assert history_reads(history, analysis_statement(history, "jobs_queued_in_flight_many", limit=100)) == []
    assert history_reads(history, analysis_statement(history, "job_pending_without_message_many", limit=100)) == []


def test_the_check_notices_a_query_that_reads_history(history):
    """The guard itself: a count over every job is what it must catch."""
    assert history_reads(history, b"SELECT count(*) FROM analysis_jobs WHERE cost = 1") == ["Seq Scan on analysis_jobs"]
    assert history_reads(history, b"SELECT * FROM analysis_jobs WHERE cost = 1 ORDER BY id DESC LIMIT 5") != []


def test_metrics_read_live_jobs_and_fold_only_new_events(history):
    assert history_reads(history, analysis_statement(history, "job_live_counts_many")) == []
    assert history_reads(history, analysis_statement(history, "credit_refund_count_one")) == []
    folded_below = query(history, "SELECT max(xact_id) + 1 FROM analysis_job_events")[0][0]
    statement = analysis_statement(history, "metrics_fold_one", lo=folded_below, hi=folded_below + 100,
                                   buckets=[0.1, 1.0, 10.0])
    assert history_reads(history, statement) == []
