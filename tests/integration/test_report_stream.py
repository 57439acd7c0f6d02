"""A streamed report (read from Postgres a batch at a time, issue 29) is the same text as the
report rendered whole, in every format, on the real pipeline's sample jobs."""

from __future__ import annotations

import pytest

from analysis.surface import report
from tests.integration.test_report import sample_jobs  # noqa: F401 - the fixture

RENDER = {"html": report.render_html, "csv": report.render_csv, "json": report.render_json}


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_a_streamed_report_is_the_whole_report_in_every_format(sample_jobs, queue_broker, size):  # noqa: F811
    for job_id in sample_jobs.values():
        whole = report.build(queue_broker, job_id, user_id=1)
        assert whole.total >= 5
        for fmt, render in RENDER.items():
            head, pieces = report.stream(queue_broker, job_id, fmt, user_id=1, size=size)
            text = "".join(pieces)
            assert text == render(whole.model_copy(update={"generated_at": head.generated_at}))
            assert head.citations == [] and head.total == whole.total and head.counts == whole.counts


def test_another_users_job_streams_nothing(sample_jobs, queue_broker):  # noqa: F811
    job_id = next(iter(sample_jobs.values()))
    assert report.stream(queue_broker, job_id, "json", user_id=2) is None
