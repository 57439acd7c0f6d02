"""The pipeline with real `dramatiq actors` worker processes: upload → parse → analyze →
verdicts, and a worker killed mid-analysis with every cache gone."""

from __future__ import annotations

import json
import os
import signal

import pytest

from analysis.settings import PipelineSettings, QueueSettings
from analysis.pipeline.retrieval import sources
from analysis.pipeline.intake import uploads
from analysis.queue import userqueue
from tests.conftest import query
from tests.e2e import hooks
from tests.integration.conftest import (
    SAMPLES, corpus_upload, documents_by_name, job_status, open_account, parse_done, sample_files, verdicts,
    wait_for,
)

pytestmark = pytest.mark.e2e

EXPECTED = {k: v for k, v in json.loads((SAMPLES / "expected.json").read_text()).items() if not k.startswith("_")}


@pytest.fixture
def pipeline_processes(processes):
    """Worker processes running the real pipeline, with the offline judge behind a test hold."""
    processes.env.pop("CITEQ_ANALYZE_WORK")
    processes.env["CITEQ_JUDGE_FACTORY"] = hooks.HELD_JUDGE
    return processes


def upload_and_parse(conn, user_id, files) -> tuple[int, dict[str, int]]:
    staged = uploads.stage_upload(user_id, files, settings=PipelineSettings())
    assert wait_for(lambda: parse_done(conn, staged.parse_job_id), timeout=60, message="parsed") == "succeeded"
    return staged.session_id, documents_by_name(conn, staged.session_id)


def comparable(rows) -> list[tuple]:
    """Verdict rows without anything that differs between two runs of one analysis."""
    return [(ordinal, marker, source, verdict, page) for ordinal, marker, _, source, verdict, page in rows]


def test_upload_parse_analyze_gives_the_planted_verdicts_and_keeps_no_bytes(pipeline_processes, conn):
    pipeline_processes.worker()
    open_account(conn, 1, credits=5)

    _, docs = upload_and_parse(conn, 1, corpus_upload())
    source_ids = [docs[n] for n in docs if not n.startswith("thesis")]
    jobs = {t: userqueue.admit(1, docs[t], source_ids, settings=QueueSettings()).job_id for t in EXPECTED}

    for thesis, job_id in jobs.items():
        wait_for(lambda: job_status(conn, job_id) == "succeeded", timeout=60, message=f"{thesis} analysed")
    for thesis, job_id in jobs.items():
        rows = verdicts(conn, job_id)
        assert len(rows) == len(EXPECTED[thesis])
        for case in EXPECTED[thesis]:
            (row,) = [r for r in rows if r[1] == case["marker"] and case["claim"] in r[2]]
            assert row[3] == case["source"]
            if case["clear"]:
                assert row[4] == case["expected"], case
    assert query(conn, "SELECT count(*) FROM parse_items WHERE file_bytes IS NOT NULL")[0][0] == 0
    assert query(conn, "SELECT count(*) FROM job_citations WHERE verdict IS NULL")[0][0] == 0


def test_a_worker_killed_mid_analysis_with_its_caches_gone_changes_no_verdict(pipeline_processes, conn):
    first = pipeline_processes.worker()
    open_account(conn, 1, credits=5)
    _, docs = upload_and_parse(conn, 1, [*sample_files("thesis_urban_heat.pdf", kind="thesis"),
                                         *sample_files("castillo_2018_green_roofs.pdf", "nakamura_heat_notes.txt")])
    thesis, source_ids = docs["thesis_urban_heat.pdf"], [docs["castillo_2018_green_roofs.pdf"],
                                                         docs["nakamura_heat_notes.txt"]]
    undisturbed = userqueue.admit(1, thesis, source_ids, settings=QueueSettings()).job_id
    wait_for(lambda: job_status(conn, undisturbed) == "succeeded", timeout=60, message="undisturbed run")

    # Given a second run whose judges hold after the first two verdicts
    query(conn, "DELETE FROM test_judged")
    hooks.set_flag(conn, "hold_judges")
    disturbed = userqueue.admit(1, thesis, source_ids, settings=QueueSettings()).job_id
    wait_for(lambda: query(conn, "SELECT count(*) FROM job_citations WHERE job_id = %s AND verdict IS NOT NULL "
                                 "AND verdict <> 'source_missing'", disturbed)[0][0] >= 2, timeout=60,
             message="two citations judged")
    assert job_status(conn, disturbed) == "running"

    # When the worker is killed outright and every cache is gone (a new process, a cleared store)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    sources.clear_all()
    hooks.set_flag(conn, "hold_judges", on=False)
    pipeline_processes.worker()

    # Then the analysis completes on the new worker, with the undisturbed run's verdicts
    wait_for(lambda: job_status(conn, disturbed) == "succeeded", timeout=60, message="disturbed run finished")
    assert comparable(verdicts(conn, disturbed)) == comparable(verdicts(conn, undisturbed))
    assert query(conn, "SELECT count(*) FROM analysis_job_events WHERE job_id = %s AND event = 'succeeded'",
                 disturbed)[0][0] == 1
    judged_by = {pid for (pid,) in query(conn, "SELECT DISTINCT pid FROM test_judged")}
    assert len(judged_by) == 2, "both workers judged citations of the disturbed run"
