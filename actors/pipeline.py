"""The pipeline's actors: ``parse`` and ``judge_citation``, and the blob-TTL sweeper.

Thin: decode, call :mod:`analysis`, done. The ``analyze`` actor (actors/queue.py) runs
the pipeline's extraction as its work (registered there as ``pipeline``); the judge hands
the queue service's ``settle`` to the pipeline, which ends the job through it.
"""

from __future__ import annotations

import os

import dramatiq
from periodiq import cron

from analysis.pipeline.intake import parsing, uploads
from analysis.pipeline import analyze as pipeline
from analysis import maintenance
from analysis.queue import userqueue
from analysis.pipeline.analyze import ProviderBusy
from analysis.pipeline.providers.errors import ProviderBadResponse, ProviderUnavailable

from . import config

#: Provider trouble is retried with backoff; anything else is a bug and dead-letters
#: after the retries too (the stall sweeper re-sends or fails the job). Eight retries back
#: off at least 121 s in all (1, 2, 4, 8, 16, then 30-60 s each), longer than the default
#: CITEQ_JUDGE_OUTAGE_SECONDS: a provider outage ends the job through
#: ``pipeline.provider_failing`` before its messages dead-letter.
JUDGE_RETRIES = 8
#: Judge messages of one analysis in flight at once (issue 29): its judge messages form a
#: message group keyed by the job, so a 20,000-citation analysis has at most this many
#: claimable or running, and another analysis's judge messages queue behind those few, not
#: behind its thousands (broker/groups.py). CITEQ_JUDGE_PER_ANALYSIS, read at import.
JUDGE_PER_ANALYSIS = int(os.environ.get("CITEQ_JUDGE_PER_ANALYSIS", "8"))


def _analysis_group(job_id: int, ordinal: int) -> str | None:
    """The judge message's group: its analysis (none with CITEQ_JUDGE_PER_ANALYSIS=0, which
    scripts/bench_fairness.py uses to measure without)."""
    return f"analysis:{job_id}" if JUDGE_PER_ANALYSIS > 0 else None


@dramatiq.actor(actor_name=uploads.PARSE_ACTOR, queue_name=uploads.PARSE_QUEUE, max_retries=3,
                time_limit=30 * 60 * 1000)
def parse(parse_job_id: int) -> None:
    """Parse the staged items of one upload into documents, pages and chunks."""
    parsing.parse_job(parse_job_id, settings=config.current().pipeline)


def _retry_provider_trouble(retries: int, exception: Exception) -> bool:
    return retries < JUDGE_RETRIES and isinstance(
        exception, (ProviderBusy, ProviderUnavailable, ProviderBadResponse, dramatiq.errors.BrokerConnectionError))


@dramatiq.actor(actor_name=pipeline.JUDGE_ACTOR, queue_name=pipeline.JUDGE_QUEUE, retry_when=_retry_provider_trouble,
                min_backoff=500, max_backoff=60_000, time_limit=5 * 60 * 1000,
                group_by=_analysis_group, group_concurrency=max(JUDGE_PER_ANALYSIS, 1))
def judge_citation(job_id: int, ordinal: int) -> None:
    """Judge one citation of a running analysis; the last one completes the job."""
    pipeline.judge_citation(job_id, ordinal, settle=userqueue.settle, settings=config.current().pipeline)


@dramatiq.actor(queue_name="maintenance", periodic=cron("17 * * * *"), max_retries=0)
def blob_ttl_sweep() -> None:
    """Drop staged upload bytes older than the TTL (hourly; the safety net)."""
    settings = config.current()
    maintenance.expire_blobs(settings=settings.queue, pipeline_settings=settings.pipeline)
