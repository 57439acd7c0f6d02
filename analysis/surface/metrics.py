"""The queue's job metrics: live counts, event counters and latency histograms.

Counters and histograms cover the whole history, yet a scrape must not read it: the job
events are folded into running totals (``metrics_totals``) by whoever scrapes, each event
once (``schema/0007`` says how), and a scrape reads the totals plus what is new since the
last fold. Every number lives in Postgres, so any process answers the same and a redeploy
resets nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker import locks

from analysis import db
from analysis.queue.jobs import TERMINAL, JobStatus

#: Histogram bounds (seconds) of both job latencies. Other bounds make the next fold
#: start the totals over from the first event (once).
BUCKETS = (0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600)
#: The advisory-lock scope of a fold (two scrapes at once fold once).
LOCK_SCOPE = "metrics_fold"


@dataclass(frozen=True)
class Histogram:
    """Cumulative counts per bound (Prometheus' ``le``), then the count and sum of all."""

    buckets: list[tuple[float, int]]
    count: int
    sum: float


@dataclass(frozen=True)
class JobMetrics:
    #: Every status, finished or not (0 when there are none).
    jobs_by_status: dict[str, int]
    events: dict[str, int]
    refunds: int
    wait: Histogram
    run: Histogram


def fold(broker) -> int:
    """Fold the job events of every transaction that ended since the last fold into the
    totals, in a transaction of its own; how many events that took."""
    with broker.transaction() as cur:
        return fold_in(cur)


def fold_in(cur) -> int:
    """:func:`fold` inside the caller's transaction, which holds the metrics lock until it
    ends. A fold that finds the lock taken folds nothing and returns 0 at once: the running
    one's totals come with its commit, and scrapes do not pile up behind a long fold (the
    first after an upgrade takes the whole history)."""
    bounds = [float(b) for b in BUCKETS]
    if not locks.try_xact_lock(cur, LOCK_SCOPE, 0):
        return 0
    horizon = db.one(cur, "metrics_horizon_one")
    if horizon is None or list(horizon[1]) != bounds:
        db.one(cur, "metrics_restart_one", buckets=bounds)
        horizon = db.one(cur, "metrics_horizon_one")
    lo, _, hi = horizon
    if hi <= lo:
        return 0
    return db.one(cur, "metrics_fold_one", lo=lo, hi=hi, buckets=bounds)[0]


def job_metrics(broker) -> JobMetrics:
    """Fold what is new, then read: the numbers of ``/metrics``."""
    fold(broker)
    with broker.connection() as conn, conn.cursor() as cur:
        live = dict(db.many(cur, "job_live_counts_many"))
        totals = dict(db.many(cur, "metrics_totals_many"))
        refunds = db.one(cur, "credit_refund_count_one")[0]
    events = {name.removeprefix("event:"): int(v) for name, v in totals.items() if name.startswith("event:")}
    # Finished jobs are counted by their outcome events: each job has at most one.
    finished = {status.value: events.get(status.value, 0) for status in TERMINAL}
    return JobMetrics(
        jobs_by_status={**{status.value: 0 for status in JobStatus if status not in TERMINAL}, **live, **finished},
        events=events,
        refunds=refunds,
        wait=_histogram(totals, "wait"),
        run=_histogram(totals, "run"),
    )


def _histogram(totals: dict[str, float], kind: str) -> Histogram:
    cumulative, buckets = 0, []
    for i, bound in enumerate(BUCKETS):
        cumulative += int(totals.get(f"{kind}:{i}", 0))
        buckets.append((float(bound), cumulative))
    return Histogram(buckets=buckets, count=int(totals.get(f"{kind}_count", 0)),
                     sum=float(totals.get(f"{kind}_sum", 0.0)))
