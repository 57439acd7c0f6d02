"""The parse lifecycle is declared once in SQL (schema/0018_parse_lifecycle.sql) and mirrored in
Python (analysis/pipeline/intake/lifecycle.py): the database refuses any other change and
writes the audit events itself."""

from __future__ import annotations

import psycopg2.errors
import pytest

from analysis.settings import PipelineSettings
from analysis.pipeline.intake import parsing, uploads
from analysis.pipeline.intake.lifecycle import (ITEM_TRANSITIONS, JOB_TRANSITIONS, ParseEvent, ParseItemStatus,
                                                ParseJobStatus)
from tests.conftest import query
from tests.integration.conftest import open_account, sample_files


def test_the_parse_transitions_in_python_are_the_ones_in_sql(conn):
    rows = query(conn, "SELECT from_status::text, to_status::text, event::text FROM parse_job_transitions")
    assert {(ParseJobStatus(f), ParseJobStatus(t)): ParseEvent(e) for f, t, e in rows} == JOB_TRANSITIONS
    rows = query(conn, "SELECT from_status::text, to_status::text, event::text FROM parse_item_transitions")
    assert {(ParseItemStatus(f), ParseItemStatus(t)): ParseEvent(e) for f, t, e in rows} == ITEM_TRANSITIONS
    (labels,), = query(conn, "SELECT array_agg(enumlabel::text ORDER BY enumsortorder) FROM pg_enum "
                             "WHERE enumtypid = 'parse_event_kind'::regtype")
    assert [m.value for m in ParseEvent] == labels


def test_a_parsed_upload_leaves_its_events_in_order(conn, queue_broker):
    open_account(conn, 1)
    staged = uploads.stage_upload(1, sample_files("nakamura_heat_notes.txt"), settings=PipelineSettings())

    assert parsing.parse_job(staged.parse_job_id, settings=PipelineSettings()) == "succeeded"

    events = [e for (e,) in query(conn, "SELECT event::text FROM parse_events WHERE parse_job_id = %s ORDER BY id",
                                  staged.parse_job_id)]
    assert events == ["staged", "started", "item_started", "item_parsed", "succeeded"]


@pytest.mark.parametrize("change", ["succeeded -> running", "succeeded -> queued"])
def test_the_database_refuses_a_parse_job_change_it_does_not_list(conn, queue_broker, change):
    open_account(conn, 1)
    staged = uploads.stage_upload(1, sample_files("nakamura_heat_notes.txt"), settings=PipelineSettings())
    assert parsing.parse_job(staged.parse_job_id, settings=PipelineSettings()) == "succeeded"
    old, new = change.split(" -> ")
    with pytest.raises(psycopg2.errors.CheckViolation, match=f"may not go from {old} to {new}"):
        query(conn, "UPDATE parse_jobs SET status = %s, finished_at = NULL WHERE id = %s", new, staged.parse_job_id)


@pytest.mark.parametrize("new", ["running", "queued"])
def test_the_database_refuses_a_failed_item_going_back(conn, queue_broker, new):
    open_account(conn, 1)
    staged = uploads.stage_upload(1, sample_files("nakamura_heat_notes.txt"), settings=PipelineSettings())
    query(conn, "UPDATE parse_items SET status = 'failed', error_reason = 'x', file_bytes = NULL WHERE job_id = %s",
          staged.parse_job_id)  # queued -> failed is allowed (the blob TTL)
    with pytest.raises(psycopg2.errors.CheckViolation, match=f"may not go from failed to {new}"):
        query(conn, "UPDATE parse_items SET status = %s WHERE job_id = %s", new, staged.parse_job_id)
