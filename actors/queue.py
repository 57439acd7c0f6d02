"""The queue's actors: ``analyze`` (serialized, grouped by user), and the periodic sweepers.

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
from analysis.queue import sweepers, userqueue, work

from . import config
from .serialized import current_job, hand_back



def _pipeline_work(job, settings):
    return pipeline.run_analysis(job, settings, pipeline_settings=config.current().pipeline)


# The one wiring of the pipeline into the queue: the analyze actor's work, by name
# (CITEQ_ANALYZE_WORK, default "pipeline"), with the worker's pipeline settings.
work.register_work("pipeline", _pipeline_work)

#: A real analysis may take long; the stall sweeper and leases cover dead workers.
ANALYZE_TIME_LIMIT_MS = 6 * 3600 * 1000
HALF_TICK_DELAY_MS = 30_000


# A first-pass job's message is sent with its user's group key (userqueue.turn_key): one
# user's analyses run one at a time, in admission order. Its release is manual: the message
# holds the user's turn after analyze returns (the judges go on) until the job ends, and the
# job's end releases it (broker/groups.py, analysis/queue/userqueue.py).
@dramatiq.actor(actor_name=userqueue.ANALYZE_ACTOR, queue_name="analysis", serialized=True,
                max_retries=0, time_limit=ANALYZE_TIME_LIMIT_MS, group_release="manual")
def analyze(job_id: int) -> None:
    """Run one analysis job (release its held run, then the registered work) and hand its
    outcome to the serialized-jobs middleware, which gives it to the queue service."""
    job, held_status, settings = current_job()
    hand_back(userqueue.run_job(job, held_status, settings=settings))


def _half_tick(actor, half: bool) -> None:
    if not half:
        minute = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M")
        actor.send_with_options(args=(True,), delay=HALF_TICK_DELAY_MS,
                                idempotency_key=f"half-tick:{actor.actor_name}:{minute}")


@dramatiq.actor(queue_name="maintenance", periodic=cron("* * * * *"), max_retries=0)
def resume_sweep(half: bool = False) -> None:
    """Release turns that ended jobs still hold; re-send pending jobs' missing messages (every 30 s)."""
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
