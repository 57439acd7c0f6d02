"""/metrics keeps its families: every metric's name, type, HELP text and label names, as
the hand-written exposition had them before prometheus_client rendered it (a dashboard or
alert rule that worked keeps working). Sample values are compared as numbers."""

from __future__ import annotations

from web import metrics as exposition

from tests.integration.conftest import query
from tests.integration.test_metrics import some_work

#: (name, type, HELP, label names of its samples) of every family, in order.
FAMILIES = [
    ("citeq_queue_messages", "gauge", "Broker messages per queue and state.", {("queue", "state")}),
    ("citeq_queue_oldest_age_seconds", "gauge", "Age of the oldest due message per queue.", {("queue",)}),
    # The analysis queue's users are message groups (issue 25): the analysis queue has samples.
    ("citeq_group_waiting_keys", "gauge", "Message-group keys with held messages, per queue.", {("queue",)}),
    ("citeq_group_held_messages", "gauge", "Messages held behind their key's in-flight ones, per queue.",
     {("queue",)}),
    ("citeq_group_in_flight_messages", "gauge",
     "Grouped messages holding a slot of their key (queued, running, parked), per queue.", {("queue",)}),
    ("citeq_group_oldest_held_age_seconds", "gauge", "Age of the oldest held message per queue.", {("queue",)}),
    ("citeq_dead_letters", "gauge", "Dead-lettered messages (all queues).", {()}),
    ("citeq_workers", "gauge", "Live worker processes.", {()}),
    ("citeq_analysis_jobs", "gauge", "Analysis jobs by state.", {("state",)}),
    ("citeq_job_promotions_total", "counter", "Queued jobs promoted to pending.", {()}),
    ("citeq_release_retries_total", "counter", "Held-run releases that failed and were deferred.", {()}),
    ("citeq_jobs_admitted_total", "counter", "Analyses admitted.", {()}),
    ("citeq_refunds_total", "counter", "Credits refunds written (failed or canceled jobs).", {()}),
    ("citeq_job_wait_seconds", "histogram", "Seconds from admission to a job's first start.", {("le",), ()}),
    ("citeq_job_run_seconds", "histogram", "Seconds from a job's start to its finish.", {("le",), ()}),
    ("citeq_provider_calls", "gauge", "Judge provider calls used today (UTC).", {("provider",)}),
    ("citeq_provider_call_limit", "gauge", "Judge provider calls allowed today (UTC).", {("provider",)}),
]


def parse(text: str) -> tuple[list, dict]:
    """(families as (name, type, help, label-name sets), {(sample, labels): value})."""
    helps, types, labels, samples, order = {}, {}, {}, {}, []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, help = line[7:].split(" ", 1)
            helps[name] = help
            order.append(name)
        elif line.startswith("# TYPE "):
            name, kind = line[7:].split(" ", 1)
            types[name] = kind
        elif line:
            head, value = line.rsplit(" ", 1)
            name, _, rest = head.partition("{")
            pairs = tuple(tuple(p.split("=", 1)) for p in rest.rstrip("}").split(",") if p) if rest else ()
            family = next(f for f in reversed(order) if name == f or name.startswith(f + "_"))
            labels.setdefault(family, set()).add(tuple(k for k, _ in pairs))
            samples[(name, tuple((k, v.strip('"')) for k, v in pairs))] = float(value)
    return [(n, types[n], helps[n], labels.get(n, set())) for n in order], samples


def test_metrics_families_names_types_help_and_labels(queue_broker, conn):
    some_work(queue_broker, conn, range(1, 3))
    query(conn, "INSERT INTO provider_daily_budget (provider, day, calls_used, call_limit) "
                "VALUES ('offline', (now() AT TIME ZONE 'utc')::date, 3, 100)")
    families, samples = parse(exposition.render(queue_broker))
    assert families == FAMILIES
    jobs = {labels[0][1]: v for (name, labels), v in samples.items() if name == "citeq_analysis_jobs"}
    assert jobs == {"queued": 1, "pending": 2, "running": 0, "succeeded": 1, "failed": 1, "canceled": 1}
    assert samples[("citeq_jobs_admitted_total", ())] == 6
    assert samples[("citeq_job_promotions_total", ())] == 2
    assert samples[("citeq_refunds_total", ())] == 2
    assert samples[("citeq_job_run_seconds_count", ())] == 2
    waits = [(labels[0][1], v) for (name, labels), v in samples.items() if name == "citeq_job_wait_seconds_bucket"]
    assert [le for le, _ in waits] == ["0.1", "0.5", "1.0", "2.0", "5.0", "10.0", "30.0", "60.0", "120.0",
                                       "300.0", "600.0", "1800.0", "3600.0", "14400.0", "+Inf"]
    assert waits[-1][1] == samples[("citeq_job_wait_seconds_count", ())] == 2
    assert samples[("citeq_provider_calls", (("provider", "offline"),))] == 3
    assert samples[("citeq_provider_call_limit", (("provider", "offline"),))] == 100
    # The pending jobs' messages (the first jobs', started here without a worker, were
    # released with their jobs' ends: the users' second jobs' messages run now).
    assert samples[("citeq_queue_messages", (("queue", "analysis"), ("state", "ready")))] == 2
    assert samples[("citeq_group_held_messages", (("queue", "analysis"),))] == 1
    assert samples[("citeq_dead_letters", ())] == 0

