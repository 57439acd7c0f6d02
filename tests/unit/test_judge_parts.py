"""A claim the offline judge splits into parts carries each part's closest sentence with its
verdict (issue 28: "a claim with two parts shows the sentence for each part"); the verdict is
the one the rules give, unchanged."""

from __future__ import annotations

from pathlib import Path

from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.retrieval.index import Hit
from tests.judge_cases import load_cases

DATA = Path(__file__).resolve().parents[1] / "data"
JUDGE = OfflineJudge()


def _case(file: str, case_id: str):
    return next(c for c in load_cases(DATA / file) if c.id == case_id)


def test_a_part_the_source_does_not_state_comes_with_its_closest_sentence_beside_the_stated_one():
    case = _case("judge_cases.jsonl", "en_remote_09")  # "…more often than men, which widened the gender pay gap."
    judgement = JUDGE.judge(case.claim, case.passages)
    assert judgement.rule == "extra_part"  # partially supported by the rules (its verdict is calibration's)
    stated, extra = judgement.parts
    assert stated.part.startswith("Women used the saved commuting time") and "widened the gender pay gap" in extra.part
    assert stated.sentence == judgement.evidence and stated.page == judgement.evidence_page
    assert stated.coverage > extra.coverage
    texts = " ".join(p.text for p in case.passages)
    assert extra.sentence is None or extra.sentence in texts
    assert extra.sentence is None or extra.coverage > 0  # no sentence sharing none of its words


def test_clauses_judged_apart_each_name_their_sentence():
    case = _case("judge_cases_heldout.jsonl", "h_en_hybrid_06")
    judgement = JUDGE.judge(case.claim, case.passages)
    assert len(judgement.parts) >= 2
    assert all(p.part in case.claim for p in judgement.parts)
    assert any(p.sentence == judgement.evidence for p in judgement.parts)


def test_a_claim_judged_whole_has_no_parts():
    source = [Hit(passage_id=0, source_id="s", page=3, text="Green roofs lowered roof temperatures by 20 K in summer.",
                  score=1.0)]
    assert JUDGE.judge("Green roofs lowered roof temperatures in summer.", source).parts == []
