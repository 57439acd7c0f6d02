"""Recovery of lost work, across the lifecycles: the stall sweep (every minute).

Each lifecycle owns its sweep — expired message leases (the broker's store), running jobs
whose message died (analysis/queue/sweepers.py), parse jobs (analysis/pipeline/intake/sweeps.py),
citations (analysis/pipeline/sweeps.py) — and this module runs them in order for the
scheduler; actors/ only wires it to a schedule.
"""

from __future__ import annotations

from datetime import datetime

from broker.ratelimits import PostgresRateLimiterBackend

from analysis import messages
from analysis.pipeline import sweeps as citation_sweeps
from analysis.pipeline.intake import sweeps as intake_sweeps
from analysis.pipeline.intake.sweeps import expire_blobs
from analysis.queue import sweepers
from analysis.settings import PipelineSettings, QueueSettings

__all__ = ["expire_blobs", "recover_lost_work"]


def recover_lost_work(*, settings: QueueSettings, pipeline_settings: PipelineSettings, broker=None,
                      now: datetime | None = None) -> dict[str, int]:
    """Expired leases back to their queue (or dead after max deliveries); running jobs whose
    message died fail with ``worker_lost`` (refunded), and their user's queue moves on.
    Parse jobs and citations whose message was lost or died get a new one (or, for a
    citation dispatched too often, the job fails with ``judge_failed``)."""
    broker = messages.broker_or_global(broker)
    reaped = broker.reap(now=now, limit=settings.sweep_batch)
    failed = sweepers.fail_lost_jobs(broker=broker, settings=settings)
    parses = intake_sweeps.resend_parse_jobs(broker, settings, pipeline_settings, now)
    citations, judge_failed = citation_sweeps.resend_citations(broker, settings, pipeline_settings, now)
    PostgresRateLimiterBackend(broker).prune()
    return {"reaped": len(reaped), "failed": failed + judge_failed, "parse_resent": parses,
            "citations_resent": citations}
