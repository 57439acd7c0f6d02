"""`scripts/eval_verdicts.py` end to end: a real subprocess with its own worker, on one
small labelled thesis. The figures' shape is checked, never their values: the readers and
judges they measure keep changing, the harness must keep measuring them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, query

pytestmark = pytest.mark.e2e

THESIS = ROOT / "eval" / "e05_meadows_txt"


def harness():
    from citeq.evaluation import harness as module

    return module


def is_ratio(value) -> bool:
    return value is None or (isinstance(value, float | int) and 0 <= value <= 1)


def test_the_harness_runs_a_thesis_through_the_pipeline_and_reports_every_stage(db, conn, tmp_path):
    env = dict(os.environ, DATABASE_URL=db, CITEQ_HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    env.pop("CITEQ_JUDGE_FACTORY", None)
    done = subprocess.run([sys.executable, "scripts/eval_verdicts.py", str(THESIS), "--json", "--judge", "offline",
                           "--timeout", "150", "--threads", "4"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=200)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    planted = len(json.loads((THESIS / "labels.json").read_text())["citations"])

    # The thesis went through the real pipeline: a user of its own, a finished analysis.
    (thesis,) = report["theses"]
    assert thesis["status"] == "succeeded", thesis
    assert query(conn, "SELECT count(*) FROM job_citations WHERE job_id = %s", thesis["job_id"])[0][0] == \
        thesis["reported"]
    assert report["judge"] == "offline"

    overall = report["overall"]
    assert overall["planted"] == planted == len(report["cases"])
    extraction, resolution, verdicts = overall["extraction"], overall["resolution"], overall["verdicts"]
    assert 0 <= extraction["found"] <= planted and 0 <= extraction["false_positives"] <= overall["reported"]
    assert 0 <= resolution["right"] <= extraction["found"]
    for figure in (extraction["recall"], extraction["precision"], extraction["claim_f1"], resolution["accuracy"],
                   verdicts["accuracy"], verdicts["accuracy_decided"], verdicts["uncertain_share"],
                   verdicts["accuracy_end_to_end"]):
        assert is_ratio(figure)
    assert sum(sum(row.values()) for row in verdicts["confusion"].values()) == extraction["found"]
    assert {b["band"] for b in verdicts["confidence_bands"]} and all(
        b["n"] >= 0 and is_ratio(b["accuracy"]) for b in verdicts["confidence_bands"])
    assert sum(b["n"] for b in verdicts["confidence_bands"]) <= extraction["found"]
    assert isinstance(verdicts["supported_on_contradicted_number_or_direction"], int)
    for group in ("by_language", "by_style", "by_format"):
        assert set(report[group]) and all(f["planted"] <= planted for f in report[group].values())
    assert report["by_language"]["en"]["planted"] == planted
    assert all(is_ratio(f["recall"]) for f in report["by_form"].values())

    # The text form renders the same report.
    text = harness().render(report)
    assert "stage figures" in text and "confusion" in text and "e05_meadows_txt" in text

    # The harness stopped the worker it started.
    assert query(conn, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND application_name LIKE 'citeq:%%' AND application_name NOT LIKE %s",
                 f"citeq:{os.getpid()}:%")[0][0] == 0
