"""The queue's state machines, mirrored from the SQL enums ``analysis_job_status`` and
``held_run_status`` (schema/0002); tests/integration/test_userqueue_admission.py keeps
the members in step with the database.

Transitions are guarded in SQL (``UPDATE … WHERE status = …``), never decided in Python.
Admission decides, in its INSERT, whether a job is born ``queued`` (the user has an
unfinished first-pass job) or ``pending`` (its message is sent in the same transaction):

    admit ─┬─▶ queued ──promote──▶ pending ──start──▶ running ──finish──▶ succeeded | failed
           └──────────────────────▶ pending
           queued | pending ──cancel──▶ canceled

A delta re-check is born ``pending`` and is never ``queued`` (a CHECK keeps it out).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class JobStatus(str, enum.Enum):
    #: Admitted and charged; waits for the user's earlier first-pass job.
    QUEUED = "queued"
    #: Its message is on the broker; a worker will start it.
    PENDING = "pending"
    #: A worker started it; blocks the user's queue until terminal.
    RUNNING = "running"
    #: Finished with a report.
    SUCCEEDED = "succeeded"
    #: Finished without a report; failure_reason says why; credit refunded.
    FAILED = "failed"
    #: Withdrawn before a worker started it (queued or pending); credit refunded.
    CANCELED = "canceled"


#: Statuses a job never leaves.
TERMINAL = frozenset({JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELED})
#: Statuses in which a first-pass job blocks the user's next one (promotion waits for
#: none of the user's first-pass jobs to be in them). Admission's ``max_active_jobs``
#: counts these and ``queued``: every job not yet terminal.
ACTIVE = frozenset({JobStatus.PENDING, JobStatus.RUNNING})


class HeldRunStatus(str, enum.Enum):
    """A held run: what admission validated and charged, waiting for its job to start.

        held ──release──▶ released      held ──window ran out──▶ expired
        held ──its job canceled──▶ canceled
    """

    #: Validated and paid for; waits for its job to start (or for a release retry).
    HELD = "held"
    #: Sources attached, judging may start.
    RELEASED = "released"
    #: The release window ran out: the job failed with ``release_timeout``.
    EXPIRED = "expired"
    #: Its job was canceled before it started.
    CANCELED = "canceled"

#: Failure reasons written by the queue itself (the pipeline adds its own).
RELEASE_TIMEOUT = "release_timeout"
WORKER_LOST = "worker_lost"


@dataclass(frozen=True)
class Job:
    """What a worker knows about the job it runs (handed to the pluggable work callable)."""

    id: int
    user_id: int
    thesis_id: int
    delta_of_job_id: int | None
    options: dict = field(default_factory=dict)

    @property
    def is_delta(self) -> bool:
        return self.delta_of_job_id is not None


@dataclass(frozen=True)
class Admission:
    """The answer of :func:`analysis.queue.userqueue.admit`."""

    job_id: int
    status: JobStatus
    #: False when an idempotency key returned an earlier admission.
    created: bool
