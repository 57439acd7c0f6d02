"""The rows of the per-user queue's named queries (analysis/queue/queries.sql), as
:mod:`analysis.queue.userqueue` reads them: one named tuple per query shape."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple


class AdmitRow(NamedTuple):
    """``job_admit_one``: an earlier admission with the key, the facts checked, the new job."""

    existing_id: int | None
    existing_status: str | None
    balance: int | None
    active_jobs: int
    budget_exhausted: bool
    job_id: int | None
    status: str | None


class DocumentRow(NamedTuple):
    """``admission_documents_many``: one of the user's documents (id None: none of them)."""

    id: int | None
    kind: str | None
    status: str | None
    doi: str | None
    delta_base_found: bool


class JobRow(NamedTuple):
    """``job_get_one``."""

    id: int
    user_id: int
    status: str
    delta_of_job_id: int | None


class StartedRow(NamedTuple):
    """``job_start_many``: a job now running, and its held run's status."""

    id: int
    user_id: int
    thesis_id: int
    delta_of_job_id: int | None
    options: dict | None
    held_status: str
    message_id: str


class FinishedRow(NamedTuple):
    """``job_finish_many``: a job that ended, and the message that holds its user's turn
    (None for a delta re-check)."""

    job_id: int
    user_id: int
    slot_message_id: str | None


class DeferredRelease(NamedTuple):
    """``held_run_defer_one``: the held run's failed attempts so far, and its next one."""

    attempts: int
    next_attempt_at: datetime
