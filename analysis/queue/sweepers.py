"""The queue's periodic sweeps: what the fast paths may have dropped, picked up again.

Each sweep is idempotent, handles at most ``sweep_batch`` rows, and is safe with two
schedulers (or two sweeps) at once: every change is a guarded UPDATE, releases of users'
turns run under the user's lock (and the broker's group lock), and fanned-out messages carry
idempotency keys. The sweeps find the rows;
the queue service (:mod:`analysis.queue.userqueue`) makes the jobs' transitions. The pipeline's
own sweeps live with its lifecycles (analysis/pipeline/intake/sweeps.py, analysis/pipeline/sweeps.py);
analysis/maintenance.py runs the stall sweep across them.
"""

from __future__ import annotations

import logging
from datetime import datetime

from analysis import db, messages
from analysis.queue.jobs import WORKER_LOST, JobStatus
from analysis.settings import QueueSettings
from analysis.queue import userqueue
from analysis.queue.userqueue import complete_job

logger = logging.getLogger(__name__)


def resume(*, settings: QueueSettings, broker=None, now: datetime | None = None) -> dict[str, int]:
    """The backstop of the users' turns (message groups, issue 25): release the turns that
    ended jobs still hold (their end committed without the release), make pending the
    queued jobs whose messages the broker promoted by itself, and send again the missing
    messages of pending jobs, then of queued ones. ``now`` is accepted for the sweeps' common signature."""
    broker = messages.broker_or_global(broker)
    batch = settings.sweep_batch
    queue = broker.get_actor(userqueue.ANALYZE_ACTOR).queue_name
    ended = db.many_on(broker, "jobs_ended_holding_turn_many", queue_name=queue, limit=batch)
    userqueue.release_ended_turns(ended, broker=broker)
    adopted = userqueue.adopt_promoted(db.many_on(broker, "jobs_queued_in_flight_many", limit=batch), broker=broker)
    lost = db.many_on(broker, "job_pending_without_message_many", limit=batch)
    resent = sum(userqueue.resend(job_id, old_message_id, broker=broker) for job_id, old_message_id in lost)
    # After the pending ones: a queued job's new message lines up behind its user's turn.
    lost = db.many_on(broker, "jobs_queued_without_message_many", limit=batch)
    resent += sum(userqueue.resend(job_id, old_message_id, broker=broker) for job_id, old_message_id in lost)
    stalled = len({user_id for _, user_id, _ in ended})
    if stalled or adopted or resent:
        logger.warning("stalled queues resumed", extra={"action": "queues_resumed", "users": stalled,
                                                        "adopted": len(adopted), "resent": resent})
    return {"stalled_users": stalled, "resent": resent}


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
