"""/metrics in the Prometheus text format, computed from Postgres at scrape time.

Every number comes from the database, never from process memory, so any web process
answers the same and a redeploy resets nothing: queue figures are counts of live rows,
counters and histograms are totals folded from the job-event audit
(:mod:`analysis.surface.metrics`), so a scrape costs the same however long the history.

prometheus_client writes the exposition format; :class:`PostgresCollector` is a custom
collector that reads Postgres when scraped, registered in a registry of its own per app
(never the library's global one, which would also carry this process's own metrics).
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from broker import admin

from analysis import db
from analysis.queue.jobs import JobStatus
from analysis.surface import metrics

#: The media type of the text format written (the classic 0.0.4 text, as before).
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
STATUSES = [status.value for status in JobStatus]
#: Counters taken from the job event audit: (metric, event, help).
EVENT_COUNTERS = [
    ("citeq_job_promotions_total", "promoted", "Queued jobs promoted to pending."),
    ("citeq_release_retries_total", "release_deferred", "Held-run releases that failed and were deferred."),
    ("citeq_jobs_admitted_total", "admitted", "Analyses admitted."),
]


class PostgresCollector(Collector):
    """Every citeq metric, read from the broker's database at each scrape."""

    def __init__(self, broker) -> None:
        self.broker = broker

    def describe(self) -> list[Metric]:
        # No description at registration: collect() would otherwise run (and query) then.
        return []

    def collect(self) -> Iterator[Metric]:
        broker = self.broker
        stats = admin.queue_stats(broker)
        queue = GaugeMetricFamily("citeq_queue_messages", "Broker messages per queue and state.",
                                  labels=["queue", "state"])
        for s in stats:
            for state in ("ready", "delayed", "running", "dead"):
                queue.add_metric([s.queue_name, state], getattr(s, state))
        yield queue
        oldest = GaugeMetricFamily("citeq_queue_oldest_age_seconds", "Age of the oldest due message per queue.",
                                   labels=["queue"])
        for s in stats:
            oldest.add_metric([s.queue_name], float(s.oldest_age_seconds))
        yield oldest
        groups = admin.group_stats(broker)
        for name, field, help in [
            ("citeq_group_waiting_keys", "waiting_keys", "Message-group keys with held messages, per queue."),
            ("citeq_group_held_messages", "held", "Messages held behind their key's in-flight ones, per queue."),
            ("citeq_group_in_flight_messages", "in_flight", "Grouped messages holding a slot of their key (queued, running, parked), per queue."),
            ("citeq_group_oldest_held_age_seconds", "oldest_held_age_seconds",
             "Age of the oldest held message per queue."),
        ]:
            family = GaugeMetricFamily(name, help, labels=["queue"])
            for g in groups:
                family.add_metric([g.queue_name], float(getattr(g, field)))
            yield family
        yield GaugeMetricFamily("citeq_dead_letters", "Dead-lettered messages (all queues).",
                                value=sum(s.dead for s in stats))
        yield GaugeMetricFamily("citeq_workers", "Live worker processes.", value=len(admin.workers(broker)))

        jobs = metrics.job_metrics(broker)
        by_state = GaugeMetricFamily("citeq_analysis_jobs", "Analysis jobs by state.", labels=["state"])
        for status in STATUSES:
            by_state.add_metric([status], jobs.jobs_by_status[status])
        yield by_state
        for name, event, help in EVENT_COUNTERS:
            yield CounterMetricFamily(name, help, value=jobs.events.get(event, 0))
        yield CounterMetricFamily("citeq_refunds_total", "Credits refunds written (failed or canceled jobs).",
                                  value=jobs.refunds)
        for name, histogram, help in [
            ("citeq_job_wait_seconds", jobs.wait, "Seconds from admission to a job's first start."),
            ("citeq_job_run_seconds", jobs.run, "Seconds from a job's start to its finish."),
        ]:
            buckets = [(str(float(bound)), count) for bound, count in histogram.buckets]
            yield HistogramMetricFamily(name, help, buckets=[*buckets, ("+Inf", histogram.count)],
                                        sum_value=histogram.sum)

        with broker.connection() as conn, conn.cursor() as cur:
            budgets = db.many(cur, "provider_calls_many")
        calls = GaugeMetricFamily("citeq_provider_calls", "Judge provider calls used today (UTC).",
                                  labels=["provider"])
        limits = GaugeMetricFamily("citeq_provider_call_limit", "Judge provider calls allowed today (UTC).",
                                   labels=["provider"])
        for provider, used, call_limit in budgets:
            calls.add_metric([provider], used)
            limits.add_metric([provider], call_limit)
        yield calls
        yield limits


def private_registry(broker) -> CollectorRegistry:
    """A registry of its own holding the Postgres collector of ``broker``."""
    found = CollectorRegistry(auto_describe=False)
    found.register(PostgresCollector(broker))
    return found


def render(broker, registry: CollectorRegistry | None = None) -> str:
    """The exposition text of ``registry`` (default: a private one for ``broker``)."""
    return generate_latest(registry or private_registry(broker)).decode("utf-8")
