"""Odd inputs end in typed answers (issue 29): a thesis without citations succeeds with an
empty report that says so; a judge provider that keeps failing ends the job
``provider_unavailable`` with one refund. Real Postgres, the real parse, analyze and judge
steps, the loopback fake provider."""

from __future__ import annotations

import json

import pytest

from analysis.pipeline import analyze as pipeline
from analysis.pipeline.providers.errors import ProviderUnavailable
from analysis.queue import userqueue
from analysis.settings import PipelineSettings
from analysis.surface import report
from analysis.pipeline.intake.uploads import UploadFile
from tests.conftest import query
from tests.integration.conftest import SAMPLES, configure_worker, job_status, running_worker, wait_for
from tests.integration.test_judge_provider import KEY, analysis_of_heat_thesis, provider  # noqa: F401
from tests.integration.test_pipeline import parsed_session, start_analysis

PROSE = b"""# Homework and memory

## Findings

Spaced homework is popular with teachers. Nobody in this chapter cites anything.

It ends here.
"""


def test_a_thesis_without_citations_succeeds_with_an_empty_report_that_says_so(queue_broker, conn):
    source = SAMPLES / "mueller_2021_spaced_homework.txt"
    session, docs = parsed_session(queue_broker, conn, 1, files=[
        UploadFile(filename="thesis.md", data=PROSE, kind="thesis"),
        UploadFile(filename=source.name, data=source.read_bytes(), kind="source")])

    job_id = start_analysis(conn, queue_broker, 1, docs["thesis.md"], [docs[source.name]])

    assert job_status(conn, job_id) == "succeeded"
    assert query(conn, "SELECT citations_total, pending_citations, failure_reason FROM analysis_jobs "
                       "WHERE id = %s", job_id) == [(0, 0, None)]
    built = report.build(queue_broker, job_id, user_id=1)
    assert json.loads(report.render_json(built))["total"] == 0
    assert report.NO_CITATIONS in report.render_html(built)
    assert report.verdict_table(built) == report.NO_CITATIONS
    head, pieces = report.stream(queue_broker, job_id, "json", user_id=1)
    assert json.loads("".join(pieces)) == json.loads(report.render_json(built.model_copy(
        update={"generated_at": head.generated_at})))
    assert report.NO_CITATIONS in "".join(report.stream(queue_broker, job_id, "html", user_id=1)[1])
    # the credit was spent on a finished analysis, not refunded as for a failure
    assert query(conn, "SELECT count(*) FROM credit_ledger WHERE user_id = 1 AND kind = 'refund'")[0][0] == 0


def test_a_provider_that_keeps_failing_ends_the_job_provider_unavailable_with_one_refund(
        queue_broker, conn, provider, monkeypatch):
    configure_worker(pipeline={"judge_outage_seconds": 1})
    job_id = analysis_of_heat_thesis(queue_broker, conn)
    balance = query(conn, "SELECT credits FROM accounts WHERE user_id = 1")[0][0]
    provider.mode = "server_error"  # every call answers 500

    with running_worker(queue_broker, threads=2):
        wait_for(lambda: job_status(conn, job_id) == "failed", timeout=60, message="job failed")

    (failure,) = query(conn, "SELECT failure_reason FROM analysis_jobs WHERE id = %s", job_id)[0]
    assert failure.startswith("provider_unavailable: the judge provider failed every call for") and KEY not in failure
    assert query(conn, "SELECT count(*) FROM credit_ledger WHERE job_id = %s AND kind = 'refund'", job_id) == [(1,)]
    assert query(conn, "SELECT credits FROM accounts WHERE user_id = 1")[0][0] == balance + 1
    assert query(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'dead'") == [(0,)]


def test_a_provider_verdict_ends_the_outage_count(queue_broker, conn, provider, monkeypatch):
    job_id = analysis_of_heat_thesis(queue_broker, conn)
    ordinals = [r[0] for r in query(conn, "SELECT ordinal FROM job_citations WHERE job_id = %s AND verdict IS NULL "
                                          "AND source_document_id IS NOT NULL ORDER BY ordinal", job_id)]
    settings = PipelineSettings.from_env(judge_outage_seconds=60)
    provider.mode = "server_error"
    with pytest.raises(ProviderUnavailable):
        pipeline.judge_citation(job_id, ordinals[0], settle=userqueue.settle, broker=queue_broker, settings=settings)
    assert query(conn, "SELECT provider_failing_since IS NOT NULL FROM analysis_jobs WHERE id = %s",
                 job_id) == [(True,)]

    provider.mode = "answer"
    assert pipeline.judge_citation(job_id, ordinals[1], settle=userqueue.settle, broker=queue_broker,
                                   settings=settings) in ("judged", "completed")
    assert query(conn, "SELECT provider_failing_since FROM analysis_jobs WHERE id = %s", job_id) == [(None,)]

    # a failure 61 s into an outage (the clock moved, not waited for) fails the job
    provider.mode = "server_error"
    with pytest.raises(ProviderUnavailable):
        pipeline.judge_citation(job_id, ordinals[2], settle=userqueue.settle, broker=queue_broker, settings=settings)
    query(conn, "UPDATE analysis_jobs SET provider_failing_since = provider_failing_since - interval '61 s' "
                "WHERE id = %s", job_id)
    assert pipeline.judge_citation(job_id, ordinals[2], settle=userqueue.settle, broker=queue_broker,
                                   settings=settings) == "failed"
    assert job_status(conn, job_id) == "failed"
