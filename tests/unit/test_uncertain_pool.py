"""scripts/uncertain_pool.py: the measure of how far lexical evidence separates the claims the
offline judge leaves `uncertain`, and OfflineJudge.assessment, which it reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.verdicts import Verdict
from tests.judge_cases import CASES, load_cases

ROOT = Path(__file__).resolve().parents[2]


def _script():
    from citeq.evaluation import uncertain_pool

    return uncertain_pool


def test_auc_is_one_for_a_perfect_ranking_zero_for_the_reverse_and_half_for_ties() -> None:
    auc = _script().auc
    labels = np.array([1, 1, 0, 0])
    assert auc(np.array([0.9, 0.8, 0.2, 0.1]), labels) == 1.0
    assert auc(np.array([0.1, 0.2, 0.8, 0.9]), labels) == 0.0
    assert auc(np.array([0.5, 0.5, 0.5, 0.5]), labels) == 0.5
    assert auc(np.array([0.5, 0.5]), np.array([1, 1])) is None


def test_the_assessment_is_the_judgement_with_its_cue() -> None:
    judge = OfflineJudge(calibration=None)
    for case in load_cases(CASES)[:40]:
        found = judge.assessment(case.claim, case.passages)
        judged = judge.judge(case.claim, case.passages)
        assert (found.verdict, found.rule) == (judged.verdict, judged.rule)
        assert found.cue
    assert judge.assessment("Any claim.", []) is None
    assert judge.judge("Any claim.", []).verdict is Verdict.uncertain


def test_the_pool_holds_only_uncertain_cases_with_one_row_of_features_each() -> None:
    script = _script()
    x, y = script.pool(CASES, OfflineJudge(calibration=None))
    uncertain = sum(OfflineJudge(calibration=None).judge(c.claim, c.passages).verdict is Verdict.uncertain for c in load_cases(CASES))
    assert x.shape == (uncertain, len(script.FEATURES)) and len(y) == uncertain
    assert set(y.tolist()) <= {0, 1} and 0 < y.sum() < len(y)


def test_the_script_prints_the_figures_of_the_pool(capsys) -> None:
    assert _script().main(["--cases", str(CASES), str(CASES.with_name("judge_cases_heldout.jsonl"))]) == 0
    out = capsys.readouterr().out
    assert "uncertain pool:" in out and "leave-one-file-out: AUC" in out and "% right" in out

