"""The queue's periodic sweeps: what the fast paths may have dropped, picked up again.

Each sweep is idempotent, handles at most ``sweep_batch`` rows, and is safe with two
schedulers (or two sweeps) at once: every change is a guarded UPDATE, promotions run under
the user's lock, and fanned-out messages carry idempotency keys. The sweeps find the rows;
the queue service (:mod:`analysis.queue.userqueue`) makes the jobs' transitions.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone

from analysis import db, messages
from analysis.pipeline.intake import parsing
from analysis.queue.jobs import WORKER_LOST, JobStatus
from analysis.pipeline.analyze import JUDGE_ACTOR
from broker.ratelimits import PostgresRateLimiterBackend
from analysis.settings import PipelineSettings, QueueSettings
from analysis.pipeline.intake.uploads import PARSE_ACTOR
from analysis.queue import userqueue
from analysis.queue.userqueue import PROMOTE_ACTOR, complete_job

logger = logging.getLogger(__name__)

#: Failure reason of a job one of whose citations could not be judged.
JUDGE_FAILED = "judge_failed"

#: A stalled user's promotion is sent at most once per window of this many seconds: two
#: schedulers in one window send one message, and a promotion whose message was lost or
#: died (dead-lettered keys live on) is sent again in the next window.
PROMOTE_WINDOW_SECONDS = 300


def resume(*, broker=None, settings: QueueSettings | None = None, now: datetime | None = None) -> dict[str, int]:
    """Promote users whose queue stalled; re-send pending jobs whose message is missing."""
    broker = messages.broker_or_global(broker)
    settings = settings or QueueSettings.from_env()
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


def recover_lost_work(*, broker=None, settings: QueueSettings | None = None, now: datetime | None = None,
                      pipeline_settings: PipelineSettings | None = None) -> dict[str, int]:
    """Expired leases back to their queue (or dead after max deliveries); running jobs whose
    message died fail with ``worker_lost`` (refunded), and their user's queue moves on.
    Parse jobs and citations whose message was lost or died get a new one (or, for a
    citation dispatched too often, the job fails with ``judge_failed``)."""
    broker = messages.broker_or_global(broker)
    settings = settings or QueueSettings.from_env()
    pipeline_settings = pipeline_settings or PipelineSettings.from_env()
    reaped = broker.reap(now=now, limit=settings.sweep_batch)
    failed = 0
    for job_id, user_id, reason in db.many_on(broker, "job_running_with_dead_message_many",
                                              limit=settings.sweep_batch):
        failed += complete_job(job_id, JobStatus.FAILED, reason=f"{WORKER_LOST}: {reason}"[:500],
                               user_id=user_id, broker=broker)
    parses = _resend_parse_jobs(broker, settings, pipeline_settings, now)
    citations, judge_failed = _resend_citations(broker, settings, pipeline_settings, now)
    PostgresRateLimiterBackend(broker).prune()
    return {"reaped": len(reaped), "failed": failed + judge_failed, "parse_resent": parses,
            "citations_resent": citations}


def _resend_each(broker, rows, resend_query: str, actor: str) -> int:
    """For each (parse job id, message id it was last sent with): record a new message id — a
    guarded update, so two sweepers never both re-send — and send it in the same
    transaction. Returns how many were re-sent."""
    resent = 0
    for job_id, old_message_id in rows:
        with broker.transaction() as cur:
            message_id = messages.new_message_id()
            if db.one(cur, resend_query, job_id=job_id, message_id=message_id,
                      old_message_id=old_message_id) is not None:
                messages.send(broker, actor, args=(job_id,), message_id=message_id)
                resent += 1
    return resent


def _resend_parse_jobs(broker, settings: QueueSettings, pipeline: PipelineSettings, now) -> int:
    stalled = db.many_on(broker, "parse_jobs_stalled_many", now=now, grace_seconds=pipeline.resend_grace_seconds,
                         limit=settings.sweep_batch)
    resent = _resend_each(broker, stalled, "parse_job_resend_one", PARSE_ACTOR)
    if resent:
        logger.warning("stalled parse jobs re-sent", extra={"action": "parse_resent", "count": resent})
    return resent


def _resend_citations(broker, settings: QueueSettings, pipeline: PipelineSettings, now) -> tuple[int, int]:
    resent = failed = 0
    rows = db.many_on(broker, "citations_stalled_many", now=now, grace_seconds=pipeline.resend_grace_seconds,
                      limit=settings.sweep_batch)
    for job_id, ordinal, old_message_id, dispatches, user_id in rows:
        if dispatches >= pipeline.judge_max_dispatches:
            failed += complete_job(job_id, JobStatus.FAILED, user_id=user_id, broker=broker,
                                   reason=f"{JUDGE_FAILED}: citation {ordinal} could not be judged "
                                          f"after {dispatches} dispatches")
            continue
        message = broker.get_actor(JUDGE_ACTOR).message(job_id, ordinal)
        with broker.transaction() as cur:
            if db.one(cur, "citation_resend_one", job_id=job_id, ordinal=ordinal,
                      message_id=message.message_id, old_message_id=old_message_id) is not None:
                broker.enqueue(message)
                resent += 1
    if resent or failed:
        logger.warning("stalled citations re-sent", extra={"action": "citations_resent", "count": resent,
                                                           "jobs_failed": failed})
    return resent, failed


def expire_blobs(*, broker=None, settings: QueueSettings | None = None, now: datetime | None = None,
                 pipeline_settings: PipelineSettings | None = None) -> dict[str, int]:
    """Blob TTL (hourly): staged bytes older than ``blob_ttl_seconds`` are dropped and their
    items fail; parse jobs left with nothing to parse end. Terminal transitions drop bytes
    first; this is the safety net."""
    broker = messages.broker_or_global(broker)
    settings = settings or QueueSettings.from_env()
    pipeline_settings = pipeline_settings or PipelineSettings.from_env()
    rows = db.many_on(broker, "parse_items_expire_many", now=now, ttl_seconds=pipeline_settings.blob_ttl_seconds,
                      limit=settings.sweep_batch)
    for job_id in {r[0] for r in rows}:
        parsing.finish_job(job_id, broker=broker)
    if rows:
        logger.warning("staged uploads expired", extra={"action": "blobs_expired", "count": len(rows)})
    return {"expired": len(rows)}


def retry_releases(*, broker=None, settings: QueueSettings | None = None,
                   now: datetime | None = None) -> dict[str, int]:
    """Retry held-run releases that are due; after the window, fail with ``release_timeout``."""
    broker = messages.broker_or_global(broker)
    settings = settings or QueueSettings.from_env()
    retried = expired = 0
    for job_id, user_id in db.many_on(broker, "held_run_due_many", now=now, limit=settings.sweep_batch):
        done = userqueue.retry_release(job_id, user_id, now=now, broker=broker, settings=settings)
        retried += done == "retried"
        expired += done == "expired"
    return {"retried": retried, "expired": expired}
