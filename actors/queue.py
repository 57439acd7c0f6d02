"""The queue's actors: ``analyze`` (serialized), ``promote``, and the periodic sweepers.

Cadence: periodiq ticks once a minute at most; the resume and release-retry sweepers
must run at least every 30 s. Each cron tick therefore also sends a "half tick" of the
same actor 30 s later, keyed by (actor, minute) so a second scheduler, a manual run or a
re-delivery cannot add more. Two schedulers send each cron tick twice; the broker's
periodic dedupe keeps one.
"""

from __future__ import annotations

from datetime import datetime, timezone

import dramatiq
from periodiq import cron

from analysis.pipeline import analyze as pipeline
from analysis import maintenance
from analysis.queue import sweepers, userqueue

from . import config
from .serialized import current_job, hand_back



def _pipeline_work(job, settings):
    return pipeline.run_analysis(job, settings, pipeline_settings=config.current().pipeline)


# The one wiring of the pipeline into the queue: the analyze actor's work, by name
# (CITEQ_ANALYZE_WORK, default "pipeline"), with the worker's pipeline settings.
userqueue.register_work("pipeline", _pipeline_work)

#: A real analysis may take long; the stall sweeper and leases cover dead workers.
ANALYZE_TIME_LIMIT_MS = 6 * 3600 * 1000
HALF_TICK_DELAY_MS = 30_000


@dramatiq.actor(actor_name=userqueue.ANALYZE_ACTOR, queue_name="analysis", serialized=True,
                max_retries=0, time_limit=ANALYZE_TIME_LIMIT_MS)
def analyze(job_id: int) -> None:
    """Run one analysis job (release its held run, then the registered work) and hand its
    outcome to the serialized-jobs middleware, which gives it to the queue service."""
    job, held_status, settings = current_job()
    hand_back(userqueue.run_job(job, held_status, settings=settings))


@dramatiq.actor(actor_name=userqueue.PROMOTE_ACTOR, queue_name="maintenance", max_retries=5)
def promote(user_id: int) -> None:
    """Promote the user's next queued job if their queue is free (sent by the resume sweeper)."""
    userqueue.promote(user_id, via="resume")


def _half_tick(actor, half: bool) -> None:
    if not half:
        minute = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M")
        actor.send_with_options(args=(True,), delay=HALF_TICK_DELAY_MS,
                                idempotency_key=f"half-tick:{actor.actor_name}:{minute}")


@dramatiq.actor(queue_name="maintenance", periodic=cron("* * * * *"), max_retries=0)
def resume_sweep(half: bool = False) -> None:
    """Promote stalled users; re-send pending jobs whose message is missing (every 30 s)."""
    _half_tick(resume_sweep, half)
    sweepers.resume(settings=config.current().queue)


@dramatiq.actor(queue_name="maintenance", periodic=cron("* * * * *"), max_retries=0)
def stall_sweep() -> None:
    """Return expired leases; fail running jobs whose message died (every minute)."""
    settings = config.current()
    maintenance.recover_lost_work(settings=settings.queue, pipeline_settings=settings.pipeline)


@dramatiq.actor(queue_name="maintenance", periodic=cron("* * * * *"), max_retries=0)
def release_retry_sweep(half: bool = False) -> None:
    """Retry due held-run releases; expire them after the window (every 30 s)."""
    _half_tick(release_retry_sweep, half)
    sweepers.retry_releases(settings=config.current().queue)
