"""The queue's periodic sweeps: what the fast paths may have dropped, picked up again.

Each sweep is idempotent, handles at most ``sweep_batch`` rows, and is safe with two
schedulers (or two sweeps) at once: every change is a guarded UPDATE, promotions run under
the user's lock, and fanned-out messages carry idempotency keys. The sweeps find the rows;
the queue service (:mod:`analysis.queue.userqueue`) makes the jobs' transitions. The pipeline's
own sweeps live with its lifecycles (analysis/pipeline/intake/sweeps.py, analysis/pipeline/sweeps.py);
analysis/maintenance.py runs the stall sweep across them.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone

from analysis import db, messages
from analysis.queue.jobs import WORKER_LOST, JobStatus
from analysis.settings import QueueSettings
from analysis.queue import userqueue
from analysis.queue.userqueue import PROMOTE_ACTOR, complete_job

logger = logging.getLogger(__name__)

#: A stalled user's promotion is sent at most once per window of this many seconds: two
#: schedulers in one window send one message, and a promotion whose message was lost or
#: died (dead-lettered keys live on) is sent again in the next window.
PROMOTE_WINDOW_SECONDS = 300


def resume(*, settings: QueueSettings, broker=None, now: datetime | None = None) -> dict[str, int]:
    """Promote users whose queue stalled; re-send pending jobs whose message is missing."""
    broker = messages.broker_or_global(broker)
    window = int((now or datetime.now(timezone.utc)).timestamp() // PROMOTE_WINDOW_SECONDS)
    stalled = db.many_on(broker, "user_stalled_many", limit=settings.sweep_batch)
    for user_id, oldest in stalled:
        # One promotion per stalled (user, oldest job) and window, however many sweeps notice
        # it; promoting is idempotent under the user's lock, so a second one is harmless.
        messages.send(broker, PROMOTE_ACTOR, args=(user_id,),
                      idempotency_key=f"promote:{user_id}:{oldest}:{window}")
    lost = db.many_on(broker, "job_pending_without_message_many", limit=settings.sweep_batch)
    resent = sum(userqueue.resend(job_id, old_message_id, broker=broker) for job_id, old_message_id in lost)
    if stalled or resent:
        logger.warning("stalled queues resumed", extra={"action": "queues_resumed", "users": len(stalled),
                                                        "resent": resent})
    return {"stalled_users": len(stalled), "resent": resent}


def fail_lost_jobs(*, settings: QueueSettings, broker=None) -> int:
    """Running jobs whose message died fail with ``worker_lost`` (refunded), and their user's
    queue moves on; how many."""
    broker = messages.broker_or_global(broker)
    failed = 0
    for job_id, user_id, reason in db.many_on(broker, "job_running_with_dead_message_many",
                                              limit=settings.sweep_batch):
        failed += complete_job(job_id, JobStatus.FAILED, reason=f"{WORKER_LOST}: {reason}"[:500],
                               user_id=user_id, broker=broker)
    return failed


def retry_releases(*, settings: QueueSettings, broker=None, now: datetime | None = None) -> dict[str, int]:
    """Retry held-run releases that are due; after the window, fail with ``release_timeout``."""
    broker = messages.broker_or_global(broker)
    retried = expired = 0
    for job_id, user_id in db.many_on(broker, "held_run_due_many", now=now, limit=settings.sweep_batch):
        done = userqueue.retry_release(job_id, user_id, now=now, broker=broker, settings=settings)
        retried += done == "retried"
        expired += done == "expired"
    return {"retried": retried, "expired": expired}
