"""The citation lifecycle's sweep: a running analysis whose judge messages were lost gets
them again, and one whose citation cannot be judged ends failed.
"""

from __future__ import annotations

import logging
from datetime import datetime

from analysis import db
from analysis.pipeline.analyze import JUDGE_ACTOR
from analysis.queue.jobs import JobStatus
from analysis.queue.userqueue import complete_job
from analysis.settings import PipelineSettings, QueueSettings

logger = logging.getLogger(__name__)

#: Failure reason of a job one of whose citations could not be judged.
JUDGE_FAILED = "judge_failed"


def resend_citations(broker, settings: QueueSettings, pipeline: PipelineSettings, now: datetime | None) -> tuple[int, int]:
    """Citations of running jobs whose judge message was lost get a new one; a citation
    dispatched too often fails its job with ``judge_failed`` (refunded). (re-sent, jobs failed)"""
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
