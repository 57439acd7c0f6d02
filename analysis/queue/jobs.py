"""The analysis job state machine, mirrored from ``analysis_job_status`` in schema/0002.

Transitions are guarded in SQL (``UPDATE … WHERE status = …``), never decided in Python:

    queued ──promote──▶ pending ──start──▶ running ──finish──▶ succeeded | failed
      │                    │
      └──────cancel────────┴──▶ canceled

A delta re-check is born ``pending`` and is never ``queued``.
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
    #: Withdrawn while queued; credit refunded.
    CANCELED = "canceled"


TERMINAL = frozenset({JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELED})
#: Statuses in which a first-pass job blocks the user's next one.
ACTIVE = frozenset({JobStatus.PENDING, JobStatus.RUNNING})

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
