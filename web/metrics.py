"""/metrics in the Prometheus text format, computed from Postgres at scrape time.

Every number comes from the database, never from process memory, so any web process
answers the same and a redeploy resets nothing: queue figures are counts of live rows,
counters and histograms are totals folded from the job-event audit
(:mod:`analysis.surface.metrics`), so a scrape costs the same however long the history.
"""

from __future__ import annotations

from broker import admin

from analysis import db
from analysis.queue.jobs import JobStatus
from analysis.surface import metrics

STATUSES = [status.value for status in JobStatus]
#: Counters taken from the job event audit: (metric, event, help).
EVENT_COUNTERS = [
    ("citeq_job_promotions_total", "promoted", "Queued jobs promoted to pending."),
    ("citeq_release_retries_total", "release_deferred", "Held-run releases that failed and were deferred."),
    ("citeq_jobs_admitted_total", "admitted", "Analyses admitted."),
]


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(v: float) -> str:
    return repr(float(v)) if isinstance(v, float) else str(v)


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, kind: str, help: str) -> None:
        self.lines += [f"# HELP {name} {help}", f"# TYPE {name} {kind}"]

    def sample(self, name: str, value: float, **labels: str) -> None:
        rendered = ",".join(f'{k}="{_label(str(v))}"' for k, v in labels.items())
        self.lines.append(f"{name}{{{rendered}}} {_number(value)}" if rendered else f"{name} {_number(value)}")


def render(broker) -> str:
    w = _Writer()
    stats = admin.queue_stats(broker)
    w.family("citeq_queue_messages", "gauge", "Broker messages per queue and state.")
    for s in stats:
        for state in ("ready", "delayed", "running", "dead"):
            w.sample("citeq_queue_messages", getattr(s, state), queue=s.queue_name, state=state)
    w.family("citeq_queue_oldest_age_seconds", "gauge", "Age of the oldest due message per queue.")
    for s in stats:
        w.sample("citeq_queue_oldest_age_seconds", float(s.oldest_age_seconds), queue=s.queue_name)
    w.family("citeq_dead_letters", "gauge", "Dead-lettered messages (all queues).")
    w.sample("citeq_dead_letters", sum(s.dead for s in stats))
    w.family("citeq_workers", "gauge", "Live worker processes.")
    w.sample("citeq_workers", len(admin.workers(broker)))

    jobs = metrics.job_metrics(broker)
    w.family("citeq_analysis_jobs", "gauge", "Analysis jobs by state.")
    for status in STATUSES:
        w.sample("citeq_analysis_jobs", jobs.jobs_by_status[status], state=status)
    for name, event, help in EVENT_COUNTERS:
        w.family(name, "counter", help)
        w.sample(name, jobs.events.get(event, 0))
    w.family("citeq_refunds_total", "counter", "Credits refunds written (failed or canceled jobs).")
    w.sample("citeq_refunds_total", jobs.refunds)
    for name, histogram, help in [
        ("citeq_job_wait_seconds", jobs.wait, "Seconds from admission to a job's first start."),
        ("citeq_job_run_seconds", jobs.run, "Seconds from a job's start to its finish."),
    ]:
        w.family(name, "histogram", help)
        for bound, count in histogram.buckets:
            w.sample(f"{name}_bucket", count, le=_number(bound))
        w.sample(f"{name}_bucket", histogram.count, le="+Inf")
        w.sample(f"{name}_sum", histogram.sum)
        w.sample(f"{name}_count", histogram.count)

    with broker.connection() as conn, conn.cursor() as cur:
        w.family("citeq_provider_calls", "gauge", "Judge provider calls used today (UTC).")
        budgets = db.many(cur, "provider_calls_many")
        for provider, used, _ in budgets:
            w.sample("citeq_provider_calls", used, provider=provider)
        w.family("citeq_provider_call_limit", "gauge", "Judge provider calls allowed today (UTC).")
        for provider, _, call_limit in budgets:
            w.sample("citeq_provider_call_limit", call_limit, provider=provider)
    return "\n".join(w.lines) + "\n"
