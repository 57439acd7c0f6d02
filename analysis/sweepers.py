"""The queue's periodic sweeps: what the fast paths may have dropped, picked up again.

Each sweep is idempotent, handles at most ``sweep_batch`` rows, and is safe with two
schedulers (or two sweeps) at once: every change is a guarded UPDATE, promotions run under
the user's lock, and fanned-out messages carry idempotency keys.
"""

from __future__ import annotations

import logging
from datetime import datetime

from . import db
from .jobs import RELEASE_TIMEOUT, WORKER_LOST, JobStatus
from .settings import QueueSettings
from .userqueue import (
    ANALYZE_ACTOR,
    PROMOTE_ACTOR,
    _broker,
    _new_message_id,
    _send,
    complete_job,
    finish_locked,
    user_lock,
)

logger = logging.getLogger(__name__)


def resume(*, broker=None, settings: QueueSettings | None = None) -> dict[str, int]:
    """Promote users whose queue stalled; re-send pending jobs whose message is missing."""
    broker = _broker(broker)
    settings = settings or QueueSettings.from_env()
    stalled = db.many_on(broker, "user_stalled_many", limit=settings.sweep_batch)
    for user_id, oldest in stalled:
        # One promotion per stalled (user, oldest job), however many sweeps notice it.
        _send(broker, PROMOTE_ACTOR, args=(user_id,), idempotency_key=f"promote:{user_id}:{oldest}")
    resent = 0
    for job_id, old_message_id in db.many_on(broker, "job_pending_without_message_many",
                                              limit=settings.sweep_batch):
        with broker.transaction() as cur:
            message_id = _new_message_id()
            if db.one(cur, "job_resend_one", job_id=job_id, message_id=message_id,
                      old_message_id=old_message_id) is not None:
                _send(broker, ANALYZE_ACTOR, args=(job_id,), message_id=message_id)
                resent += 1
    if stalled or resent:
        logger.warning("stalled queues resumed", extra={"action": "queues_resumed", "users": len(stalled),
                                                        "resent": resent})
    return {"stalled_users": len(stalled), "resent": resent}


def stall(*, broker=None, settings: QueueSettings | None = None, now: datetime | None = None) -> dict[str, int]:
    """Expired leases back to their queue (or dead after max deliveries); running jobs whose
    message died fail with ``worker_lost`` (refunded), and their user's queue moves on."""
    broker = _broker(broker)
    settings = settings or QueueSettings.from_env()
    reaped = broker.reap(now=now, limit=settings.sweep_batch)
    failed = 0
    for job_id, user_id, reason in db.many_on(broker, "job_running_with_dead_message_many",
                                              limit=settings.sweep_batch):
        failed += complete_job(job_id, JobStatus.FAILED, reason=f"{WORKER_LOST}: {reason}"[:500],
                               user_id=user_id, broker=broker)
    return {"reaped": len(reaped), "failed": failed}


def retry_releases(*, broker=None, settings: QueueSettings | None = None,
                   now: datetime | None = None) -> dict[str, int]:
    """Retry held-run releases that are due; after the window, fail with ``release_timeout``."""
    broker = _broker(broker)
    settings = settings or QueueSettings.from_env()
    retried = expired = 0
    for job_id, user_id in db.many_on(broker, "held_run_due_many", now=now, limit=settings.sweep_batch):
        with broker.transaction() as cur:
            user_lock(cur, user_id)
            message_id = _new_message_id()
            row = db.one(cur, "held_run_claim_retry_one", job_id=job_id, now=now, message_id=message_id,
                         redispatch_seconds=settings.release_redispatch_seconds)
            if row is None:
                continue  # another sweep took it, or the job moved on
            if row[0]:
                expired += finish_locked(cur, broker, job_id, user_id, JobStatus.FAILED, RELEASE_TIMEOUT)
            else:
                _send(broker, ANALYZE_ACTOR, args=(job_id,), message_id=message_id)
                retried += 1
    return {"retried": retried, "expired": expired}
