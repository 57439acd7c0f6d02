"""The queue's state machines, mirrored from SQL (schema/0002, schema/0016): the enums
``analysis_job_status``, ``held_run_status`` and ``analysis_job_event_kind``, and the
transition tables ``analysis_job_transitions`` and ``held_run_transitions``;
tests/integration/test_userqueue_admission.py keeps each in step with the database.

The database decides: a status change its transition table does not list fails, and a
trigger writes the audit event of each change it does. Admission decides, in its INSERT,
whether a first-pass job is born ``queued`` or ``pending``, as the broker decides the
birth of its ``analyze`` message, sent in the same transaction grouped by the user: held
behind the user's turn (queued) or runnable (pending); a job's end releases the turn and
the broker's promotion of the next message is that job's promotion. A delta re-check is
born ``pending`` with an ungrouped message and is never ``queued`` (a CHECK keeps it out):

    admit ─┬─▶ queued ──promote──▶ pending ──start──▶ running ──finish──▶ succeeded | failed
           └──────────────────────▶ pending
           queued | pending ──cancel──▶ canceled
           pending ──resend──▶ pending          running ──restart (re-delivery)──▶ running

The queue service (:mod:`analysis.queue.userqueue`) makes every one of these changes.
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
#: Statuses of a job not yet ended: what admission's ``max_active_jobs`` counts.
ACTIVE = frozenset(JobStatus) - TERMINAL
#: Statuses in which a first-pass job makes its user busy: the user's queued jobs wait
#: until none of their first-pass jobs is in them (the SQL view ``analysis_jobs_blocking``).
BLOCKING = frozenset({JobStatus.PENDING, JobStatus.RUNNING})


class JobEvent(str, enum.Enum):
    """A row of the audit trail ``analysis_job_events``, written by the database's triggers."""

    #: A job was inserted (detail: the status it was born with).
    ADMITTED = "admitted"
    #: queued → pending (detail: what promoted it: completion, cancel, resume).
    PROMOTED = "promoted"
    #: A worker started it (pending → running), or a re-delivery restarted it.
    STARTED = "started"
    #: Its held run was released: judging may start.
    RELEASED = "released"
    #: A release failed transiently and is retried later (detail: the error).
    RELEASE_DEFERRED = "release_deferred"
    #: A pending job's lost message was replaced.
    RESENT = "resent"
    SUCCEEDED = "succeeded"
    #: detail: the failure reason.
    FAILED = "failed"
    CANCELED = "canceled"


#: Every allowed status change of a job and the event it writes (``analysis_job_transitions``).
#: A change that keeps the status is a transition only where listed (and then only when the
#: message or start time changes); other updates of a job write nothing.
TRANSITIONS: dict[tuple[JobStatus, JobStatus], JobEvent] = {
    (JobStatus.QUEUED, JobStatus.PENDING): JobEvent.PROMOTED,
    (JobStatus.QUEUED, JobStatus.CANCELED): JobEvent.CANCELED,
    (JobStatus.PENDING, JobStatus.PENDING): JobEvent.RESENT,
    (JobStatus.PENDING, JobStatus.RUNNING): JobEvent.STARTED,
    (JobStatus.PENDING, JobStatus.CANCELED): JobEvent.CANCELED,
    (JobStatus.RUNNING, JobStatus.RUNNING): JobEvent.STARTED,
    (JobStatus.RUNNING, JobStatus.SUCCEEDED): JobEvent.SUCCEEDED,
    (JobStatus.RUNNING, JobStatus.FAILED): JobEvent.FAILED,
}


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


#: Every allowed status change of a held run (``held_run_transitions``).
HELD_RUN_TRANSITIONS = frozenset({
    (HeldRunStatus.HELD, HeldRunStatus.RELEASED),
    (HeldRunStatus.HELD, HeldRunStatus.EXPIRED),
    (HeldRunStatus.HELD, HeldRunStatus.CANCELED),
})

#: Failure reasons written by the queue itself (the pipeline adds its own).
RELEASE_TIMEOUT = "release_timeout"
WORKER_LOST = "worker_lost"


@dataclass(frozen=True)
class Job:
    """What a worker knows about the job it runs (handed to the registered work)."""

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


@dataclass(frozen=True)
class Outcome:
    """What a job's work came to, returned to the queue service, which applies it: a job
    that ``succeeded`` or ``failed`` (with a reason; its credit is refunded) ends and frees
    its user's queue; a ``deferred`` job stays running until a later step settles it (the
    judge of its last citation, or a sweep)."""

    status: JobStatus | None
    reason: str | None = None

    @classmethod
    def succeeded(cls) -> Outcome:
        return cls(JobStatus.SUCCEEDED)

    @classmethod
    def failed(cls, reason: str) -> Outcome:
        return cls(JobStatus.FAILED, reason[:500])

    @classmethod
    def deferred(cls) -> Outcome:
        return cls(None)

    @property
    def ends_job(self) -> bool:
        return self.status is not None
