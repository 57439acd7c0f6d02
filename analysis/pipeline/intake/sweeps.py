"""The parse lifecycle's sweeps: parse jobs whose message was lost get a new one, and staged
bytes past their TTL are dropped (terminal transitions drop them first; this is the safety net).

Idempotent, batched, safe with two schedulers: every change is a guarded UPDATE and a re-send
records its new message id in the same transaction.
"""

from __future__ import annotations

import logging
from datetime import datetime

from analysis import db, messages
from analysis.pipeline.intake import parsing
from analysis.pipeline.intake.uploads import PARSE_ACTOR
from analysis.settings import PipelineSettings, QueueSettings

logger = logging.getLogger(__name__)


def resend_each(broker, rows, resend_query: str, actor: str) -> int:
    """For each (job id, message id it was last sent with): record a new message id — a
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


def resend_parse_jobs(broker, settings: QueueSettings, pipeline: PipelineSettings, now: datetime | None) -> int:
    """Parse jobs still busy past the grace whose message is gone: sent again."""
    stalled = db.many_on(broker, "parse_jobs_stalled_many", now=now, grace_seconds=pipeline.resend_grace_seconds,
                         limit=settings.sweep_batch)
    resent = resend_each(broker, stalled, "parse_job_resend_one", PARSE_ACTOR)
    if resent:
        logger.warning("stalled parse jobs re-sent", extra={"action": "parse_resent", "count": resent})
    return resent


def expire_blobs(*, settings: QueueSettings, pipeline_settings: PipelineSettings, broker=None,
                 now: datetime | None = None) -> dict[str, int]:
    """Blob TTL (hourly): staged bytes older than ``blob_ttl_seconds`` are dropped and their
    items fail; parse jobs left with nothing to parse end. Terminal transitions drop bytes
    first; this is the safety net."""
    broker = messages.broker_or_global(broker)
    rows = db.many_on(broker, "parse_items_expire_many", now=now, ttl_seconds=pipeline_settings.blob_ttl_seconds,
                      limit=settings.sweep_batch)
    for job_id in {r[0] for r in rows}:
        parsing.finish_job(job_id, broker=broker)
    if rows:
        logger.warning("staged uploads expired", extra={"action": "blobs_expired", "count": len(rows)})
    return {"expired": len(rows)}
