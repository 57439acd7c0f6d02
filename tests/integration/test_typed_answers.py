"""Odd inputs end in typed answers (issue 29): a thesis without citations succeeds with an
empty report that says so; real Postgres, the real parse and analyze steps."""

from __future__ import annotations

import json

from analysis.surface import report
from analysis.pipeline.intake.uploads import UploadFile
from tests.conftest import query
from tests.integration.conftest import SAMPLES, job_status
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
