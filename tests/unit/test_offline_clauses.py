"""Two readings of the offline judge found on the blind thesis sets and tested here on sentences
written for each rule:

- a sentence stating two or more of the claim's figures pins down what the claim draws on, even
  when the claim words everything else its own way, provided the passages read state the claim's
  remaining figures too (a contradicted figure still decides);
- a claim of two clauses, one supported and the other judged `uncertain` while sharing a fair part
  of its words with the source, is one finding paraphrased (`supported`, low); a second clause the
  source hardly mentions stays a part it does not state (`partially_supported`).
"""

from __future__ import annotations

from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.verdicts import Verdict
from analysis.pipeline.retrieval.index import Hit

S, P, N, U = Verdict.supported, Verdict.partially_supported, Verdict.not_supported, Verdict.uncertain

FILLER = ("The fieldwork ran from March to June.", "Households were contacted by letter and by phone.",
          "Two interviewers coded every answer independently.", "The response rate was acceptable.",
          "Some districts could not be reached in time.", "Further work should cover the rural east.")

METHODS = ("Each of the 40 depots was visited on five weekdays, and on every visit the crews "
           "weighed one 48-hour sample of returned packaging.")
RESULT = ("Returns of reusable crates averaged 91 % at depots with a deposit and 64 % at depots "
          "without one.")


def hits(*texts: str) -> list[Hit]:
    return [Hit(passage_id=i, source_id="s", page=i + 1, text=t, score=1.0) for i, t in enumerate(texts)]


def judge(claim: str, *texts: str) -> Verdict:
    return OfflineJudge(calibration=None).judge(claim, hits(*texts, *FILLER)).verdict


def test_two_figures_of_the_claim_in_one_sentence_pin_a_paraphrase() -> None:
    claim = "Where a deposit was charged, far more of the boxes came back to the yard: 91 % against 64 %."
    assert judge(claim, METHODS, RESULT) is S


def test_the_claims_other_figures_must_be_stated_in_the_passages_read() -> None:
    claim = ("Judged by 48-hour samples, where a deposit was charged far more of the boxes came back to "
             "the yard: 91 % against 64 %.")
    assert judge(claim, METHODS, RESULT) is S
    # the same claim with a sample length no passage states is not pinned down
    assert judge(claim.replace("48-hour", "72-hour"), METHODS, RESULT) is not S


def test_a_pinned_sentence_with_another_figure_still_contradicts() -> None:
    claim = "Where a deposit was charged, far more of the boxes came back to the yard: 91 % against 46 %."
    assert judge(claim, METHODS, RESULT) is not S


TRAINING = ("Volunteer drivers in the scheme reported that the winter training strengthened their confidence "
            "on icy roads. Many of them also said that the evening sessions were hard to fit around their work.")


def test_a_second_clause_sharing_part_of_its_words_is_the_same_finding_paraphrased() -> None:
    claim = ("Volunteer drivers reported that the winter training strengthened their confidence on icy roads, "
             "whereas quite a few found the evening courses difficult to combine with their jobs.")
    assert judge(claim, TRAINING) is S


def test_a_second_clause_the_source_hardly_mentions_is_a_part_it_does_not_state() -> None:
    claim = ("Volunteer drivers reported that the winter training strengthened their confidence on icy roads, "
             "whereas most of them had already been driving in snow for decades.")
    assert judge(claim, TRAINING) is P
