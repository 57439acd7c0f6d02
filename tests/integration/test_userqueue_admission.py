"""Admission: every check at the click, all or nothing, serialized per user."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import psycopg2
import pytest

from analysis import errors
from analysis.pipeline.providers import budget
from analysis.pipeline.intake.uploads import ParseItemStatus, ParseJobStatus
from analysis.queue import userqueue
from analysis.queue.jobs import HELD_RUN_TRANSITIONS, TRANSITIONS, HeldRunStatus, JobEvent, JobStatus
from analysis.settings import QueueSettings
from tests.conftest import query
from tests.integration.conftest import add_documents, balance, given_user, open_account, statuses

ROOT = Path(__file__).resolve().parents[2]

TABLES = ["analysis_jobs", "held_runs", "credit_ledger", "analysis_job_documents", "analysis_job_events",
          "citeq_messages"]


def row_counts(conn) -> dict[str, int]:
    return {t: query(conn, f"SELECT count(*) FROM {t}")[0][0] for t in TABLES}


def test_first_admission_is_pending_charged_held_and_sent(queue_broker, conn):
    thesis, sources = given_user(conn, 1, credits=3)

    admission = userqueue.admit(1, thesis, sources, settings=QueueSettings())

    assert admission.status is JobStatus.PENDING and admission.created
    assert balance(conn, 1) == 2
    assert query(conn, "SELECT kind::text, amount FROM credit_ledger WHERE job_id = %s", admission.job_id) == [
        ("charge", -1)]
    assert query(conn, "SELECT status::text FROM held_runs WHERE job_id = %s", admission.job_id) == [("held",)]
    assert query(conn, "SELECT m.actor_name, m.state::text FROM citeq_messages m "
                       "JOIN analysis_jobs j ON j.message_id = m.message_id") == [("analyze", "queued")]
    linked = query(conn, "SELECT document_id FROM analysis_job_documents WHERE job_id = %s ORDER BY 1",
                   admission.job_id)
    assert [r[0] for r in linked] == sorted([thesis, *sources])


def test_second_admission_is_queued_and_its_message_is_held_by_the_broker(queue_broker, conn):
    thesis, sources = given_user(conn, 1)
    first = userqueue.admit(1, thesis, sources, settings=QueueSettings())

    second = userqueue.admit(1, thesis, sources, settings=QueueSettings())

    assert second.status is JobStatus.QUEUED
    assert statuses(conn, 1) == [(first.job_id, "pending"), (second.job_id, "queued")]
    # The job's status is its message's: pending <-> runnable, queued <-> held, in the user's group.
    assert query(conn, "SELECT j.id, j.status::text, m.state::text, m.group_key, m.group_release "
                       "FROM analysis_jobs j JOIN citeq_messages m ON m.message_id = j.message_id ORDER BY j.id") == [
        (first.job_id, "pending", "queued", "user:1", "manual"),
        (second.job_id, "queued", "held", "user:1", "manual")]


def test_sixteen_concurrent_admissions_of_one_user(queue_broker, conn):
    thesis, sources = given_user(conn, 1, credits=16)
    barrier = threading.Barrier(16)
    results, failures = [], []

    def click():
        barrier.wait()
        try:
            results.append(userqueue.admit(1, thesis, sources, settings=QueueSettings()))
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            failures.append(exc)

    threads = [threading.Thread(target=click) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert failures == [] and len(results) == 16
    rows = query(conn, "SELECT id, status::text FROM analysis_jobs ORDER BY created_at")
    assert [r[1] for r in rows] == ["pending"] + ["queued"] * 15
    assert [r[0] for r in rows] == sorted(r[0] for r in rows), "queued in admission order"
    assert balance(conn, 1) == 0


def test_idempotency_key_returns_the_first_admission(queue_broker, conn):
    thesis, sources = given_user(conn, 1)
    first = userqueue.admit(1, thesis, sources, idempotency_key="click-1", settings=QueueSettings())

    again = userqueue.admit(1, thesis, sources, idempotency_key="click-1", settings=QueueSettings())

    assert again.job_id == first.job_id and not again.created
    assert balance(conn, 1) == 9
    assert query(conn, "SELECT count(*) FROM analysis_jobs")[0][0] == 1


def test_admission_inside_the_callers_transaction_vanishes_on_rollback(queue_broker, conn, db):
    thesis, sources = given_user(conn, 1)
    before = row_counts(conn)
    own = psycopg2.connect(db)

    userqueue.admit(1, thesis, sources, connection=own, settings=QueueSettings())
    own.rollback()
    own.close()

    assert row_counts(conn) == before and balance(conn, 1) == 10


def _refused(conn, code, call):
    before, credits = row_counts(conn), query(conn, "SELECT coalesce(sum(credits), 0) FROM accounts")[0][0]
    with pytest.raises(errors.AdmissionError) as info:
        call()
    assert info.value.code == code
    assert row_counts(conn) == before, "nothing written"
    assert query(conn, "SELECT coalesce(sum(credits), 0) FROM accounts")[0][0] == credits, "balance unchanged"


def test_unknown_user_is_refused(queue_broker, conn):
    _refused(conn, "unknown_user", lambda: userqueue.admit(99, 1, [2], settings=QueueSettings()))


def test_insufficient_credits_is_refused(queue_broker, conn):
    thesis, sources = given_user(conn, 1, credits=0)
    _refused(conn, "insufficient_credits", lambda: userqueue.admit(1, thesis, sources, settings=QueueSettings()))


def test_insufficient_credits_at_the_charge_rolls_the_job_back(queue_broker, conn):
    thesis, sources = given_user(conn, 1, credits=1)
    settings = QueueSettings(job_cost=1)
    # The balance passes the early check but the charge itself finds it spent (a second
    # spender without the user lock): the conditional debit is the guard, the INSERT rolls back.
    query(conn, "CREATE OR REPLACE FUNCTION test_drain() RETURNS trigger LANGUAGE plpgsql AS $$ "
                "BEGIN UPDATE accounts SET credits = 0 WHERE user_id = NEW.user_id; RETURN NEW; END $$")
    query(conn, "CREATE TRIGGER test_drain AFTER INSERT ON analysis_jobs FOR EACH ROW EXECUTE FUNCTION test_drain()")
    try:
        with pytest.raises(errors.InsufficientCredits):
            userqueue.admit(1, thesis, sources, settings=settings)
        assert query(conn, "SELECT count(*) FROM analysis_jobs")[0][0] == 0
        assert balance(conn, 1) == 1
    finally:
        query(conn, "DROP TRIGGER test_drain ON analysis_jobs")


def test_no_sources_is_refused(queue_broker, conn):
    thesis, _ = given_user(conn, 1)
    _refused(conn, "no_sources", lambda: userqueue.admit(1, thesis, [], settings=QueueSettings()))


def test_bad_doi_is_refused(queue_broker, conn):
    open_account(conn, 1, 5)
    thesis, sources = add_documents(conn, 1, sources=2, dois=["10.1000/fine", "doi:not-a-doi"])
    _refused(conn, "invalid_doi", lambda: userqueue.admit(1, thesis, sources, settings=QueueSettings()))


def test_unparsed_document_is_refused(queue_broker, conn):
    open_account(conn, 1, 5)
    thesis, sources = add_documents(conn, 1, status="parsing")
    _refused(conn, "document_not_ready", lambda: userqueue.admit(1, thesis, sources, settings=QueueSettings()))


def test_someone_elses_document_is_refused(queue_broker, conn):
    given_user(conn, 1)
    _, theirs = given_user(conn, 2)
    thesis, _ = add_documents(conn, 1, sources=0)
    _refused(conn, "unknown_document", lambda: userqueue.admit(1, thesis, theirs, settings=QueueSettings()))


def test_exhausted_provider_budget_is_refused(queue_broker, conn):
    thesis, sources = given_user(conn, 1)
    with conn.cursor() as cur:
        budget.set_limit(cur, "offline", 100, calls_used=100)
    _refused(conn, "budget_exhausted", lambda: userqueue.admit(1, thesis, sources, settings=QueueSettings()))


def test_full_queue_and_large_payload_are_refused(queue_broker, conn):
    thesis, sources = given_user(conn, 1)
    settings = QueueSettings(max_active_jobs=2, max_options_bytes=64)
    userqueue.admit(1, thesis, sources, settings=settings)
    userqueue.admit(1, thesis, sources, settings=settings)
    _refused(conn, "queue_full", lambda: userqueue.admit(1, thesis, sources, settings=settings))
    _refused(conn, "payload_too_large",
             lambda: userqueue.admit(1, thesis, sources, options={"x": "y" * 100}, settings=settings))


def test_delta_recheck_is_born_pending_behind_a_busy_queue(queue_broker, conn):
    thesis, sources = given_user(conn, 1)
    first = userqueue.admit(1, thesis, sources, settings=QueueSettings())
    userqueue.admit(1, thesis, sources, settings=QueueSettings())

    delta = userqueue.admit(1, thesis, sources, delta_of_job_id=first.job_id, settings=QueueSettings())

    assert delta.status is JobStatus.PENDING
    # Its message bypasses the user's group: ungrouped and runnable beside the held one.
    assert query(conn, "SELECT m.state::text, m.group_key FROM citeq_messages m "
                       "JOIN analysis_jobs j ON j.message_id = m.message_id WHERE j.id = %s", delta.job_id) == [
        ("queued", None)]
    assert query(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'queued'")[0][0] == 2


def test_cancel_a_queued_job_refunds_it_and_the_queue_moves_on(queue_broker, conn):
    thesis, sources = given_user(conn, 1)
    first, second, third = (userqueue.admit(1, thesis, sources, settings=QueueSettings()) for _ in range(3))

    userqueue.cancel(second.job_id, user_id=1)
    userqueue.cancel(first.job_id, user_id=1)

    assert statuses(conn, 1) == [(first.job_id, "canceled"), (second.job_id, "canceled"),
                                 (third.job_id, "pending")]
    assert balance(conn, 1) == 10 - 3 + 2
    with pytest.raises(errors.NotCancelable):
        userqueue.cancel(first.job_id)


def test_database_forbids_two_active_first_pass_jobs(queue_broker, conn):
    thesis, sources = given_user(conn, 1)
    userqueue.admit(1, thesis, sources, settings=QueueSettings())
    with pytest.raises(psycopg2.errors.UniqueViolation):
        query(conn, "INSERT INTO analysis_jobs (user_id, thesis_id, status, cost, message_id) "
                    "VALUES (1, %s, 'running', 1, 'x')", thesis)


def test_refund_happens_once(queue_broker, conn):
    thesis, sources = given_user(conn, 1)
    job = userqueue.admit(1, thesis, sources, settings=QueueSettings())
    with conn.cursor() as cur:
        from analysis.queue import credits

        assert credits.refund(cur, job.job_id) == 1
        assert credits.refund(cur, job.job_id) == 0
    assert balance(conn, 1) == 10


def test_job_status_enum_matches_the_database(conn):
    labels = query(conn, "SELECT unnest(enum_range(NULL::analysis_job_status))::text")
    assert [r[0] for r in labels] == [s.value for s in JobStatus]


def test_the_user_lock_key_is_spelled_in_one_place():
    scope = "analysis" + "_queue"
    pattern = re.compile(re.escape(scope) + r"\b|" + re.escape(scope + ":"))
    hits = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in {".venv", ".git", ".citeq", "citeq.egg-info"} or path.suffix not in {".py", ".sql"}:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{rel}:{number}")
    assert hits == ["analysis/queue/userqueue.py:" + str(_lock_scope_line())], hits


def _lock_scope_line() -> int:
    source = (ROOT / "analysis" / "queue" / "userqueue.py").read_text().splitlines()
    return next(i for i, line in enumerate(source, 1) if line.startswith("LOCK_SCOPE = "))


@pytest.mark.parametrize("enum_type, members", [
    ("analysis_job_status", JobStatus),
    ("analysis_job_event_kind", JobEvent),
    ("held_run_status", HeldRunStatus),
    ("parse_job_status", ParseJobStatus),
    ("parse_item_status", ParseItemStatus),
])
def test_each_state_enum_in_python_is_the_one_in_sql(conn, enum_type, members):
    """The Python enums mirror the SQL enums, member for member and in the same order."""
    (labels,), = query(conn, "SELECT array_agg(enumlabel::text ORDER BY enumsortorder) FROM pg_enum "
                             "WHERE enumtypid = %s::regtype", enum_type)
    assert [m.value for m in members] == labels


def test_the_transitions_in_python_are_the_ones_in_sql(conn):
    """jobs.TRANSITIONS and HELD_RUN_TRANSITIONS mirror the SQL transition tables."""
    rows = query(conn, "SELECT from_status::text, to_status::text, event::text FROM analysis_job_transitions")
    assert {(JobStatus(f), JobStatus(t)): JobEvent(e) for f, t, e in rows} == TRANSITIONS
    rows = query(conn, "SELECT from_status::text, to_status::text FROM held_run_transitions")
    assert {(HeldRunStatus(f), HeldRunStatus(t)) for f, t in rows} == HELD_RUN_TRANSITIONS


@pytest.mark.parametrize("change", ["queued -> succeeded", "pending -> succeeded", "running -> queued",
                                    "succeeded -> running", "canceled -> pending"])
def test_the_database_refuses_a_status_change_it_does_not_list(queue_broker, conn, change):
    thesis, sources = given_user(conn, 1, credits=5)
    first = userqueue.admit(1, thesis, sources, settings=QueueSettings())
    second = userqueue.admit(1, thesis, sources, settings=QueueSettings())
    old, new = change.split(" -> ")
    job = second.job_id if old == "queued" else first.job_id
    if old != "queued" and old != "pending":  # bring the first job there through allowed changes
        path = {"running": ["running"], "succeeded": ["running", "succeeded"], "canceled": ["canceled"]}[old]
        for status in path:
            query(conn, "UPDATE analysis_jobs SET status = %s, started_at = now(), finished_at = "
                        "CASE WHEN %s IN ('succeeded', 'failed', 'canceled') THEN now() END WHERE id = %s",
                  status, status, job)
    with pytest.raises(psycopg2.errors.CheckViolation, match=f"may not go from {old} to {new}"):
        query(conn, "UPDATE analysis_jobs SET status = %s, finished_at = CASE WHEN %s IN "
                    "('succeeded', 'failed', 'canceled') THEN now() END WHERE id = %s", new, new, job)


def test_the_database_refuses_a_held_run_change_it_does_not_list(queue_broker, conn):
    thesis, sources = given_user(conn, 1)
    job = userqueue.admit(1, thesis, sources, settings=QueueSettings())
    query(conn, "UPDATE held_runs SET status = 'expired' WHERE job_id = %s", job.job_id)  # listed
    with pytest.raises(psycopg2.errors.CheckViolation, match="may not go from expired to released"):
        query(conn, "UPDATE held_runs SET status = 'released' WHERE job_id = %s", job.job_id)


def test_the_busy_predicate_is_one_view_that_every_queue_query_uses():
    """"The user is busy" is written once (analysis_jobs_blocking); no queue query repeats it."""
    text = (ROOT / "analysis" / "queue" / "queries.sql").read_text()
    assert "delta_of_job_id IS NULL AND status IN ('pending', 'running')" not in text
    # The users' turns are the broker's message groups now; the view remains where job rows
    # decide (admission's active count, the promotions' guard).
    assert text.count("analysis_jobs_blocking") >= 2
    assert "INSERT INTO analysis_job_events" not in text
