"""The offline judge on paraphrases: near-synonyms, inflection and compounds, a shared denial,
evidence spread over neighbouring sentences, an unrelated claim against a whole source, and
the confidence bands. Claims and passages written for these tests (English and German)."""

from __future__ import annotations

import pytest

from analysis.pipeline.judging import lexical
from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.verdicts import Verdict, confidence_band
from analysis.pipeline.retrieval.index import Hit

S, P, N, U = Verdict.supported, Verdict.partially_supported, Verdict.not_supported, Verdict.uncertain


def hits(*texts: str) -> list[Hit]:
    return [Hit(passage_id=i, source_id="s", page=10 + i, text=t, score=1.0) for i, t in enumerate(texts)]


HARBOUR = hits(
    "The port authority surveyed 85 shipping firms in 2021. Dredging the outer channel did not measurably "
    "alter the waiting times of container vessels.",
    "Crane operators reported fewer night shifts after the new roster. Fuel prices were beyond the scope of "
    "the survey.",
    "Harbour fees remained unchanged throughout the observation period.",
    "Most firms planned to invest in shore power. Investment decisions were postponed by the smaller firms.",
)
MUSIK = hits(
    "An der Erhebung beteiligten sich 31 Grundschulen aus drei Bundesländern. Der Einsatz von "
    "Lern-Apps im Musikunterricht wirkte sich nicht messbar auf die Rhythmuskompetenz der Lernenden aus.",
    "Lehrkräfte schilderten eine lebhaftere Beteiligung im Unterricht. Die Anschaffung der Geräte "
    "finanzierten die Fördervereine.",
    "Die Gebühren der Musikschulen blieben im Beobachtungszeitraum unverändert.",
    "Viele Schulen planten weitere Anschaffungen. Kleinere Schulen verschoben ihre Entscheidung.",
)


@pytest.mark.parametrize(("a", "b", "lang", "close"), [
    ("impact", "effect", "en", True),
    ("influence", "consequences", "en", True),
    ("Auswirkung", "Einfluss", "de", True),
    ("Probanden", "Teilnehmende", "de", True),
    ("vessels", "vessel", "en", True),
    ("Rhythmusleistung", "Rhythmuskompetenz", "de", True),  # a shared leading part of a compound
    ("harbour", "chemistry", "en", False),
    ("Gebühren", "Grundschulen", "de", False),
])
def test_near_matches_of_stems(a, b, lang, close):
    sa, sb = lexical.stem(a.lower(), lang), lexical.stem(b.lower(), lang)
    assert (lexical.similarity(sa, sb, lang) > 0) is close


def test_a_near_match_gives_partial_credit_and_an_exact_one_full():
    assert lexical.term_match("effect", frozenset({"effect"}), False, "en") == 1.0
    assert 0 < lexical.term_match(lexical.stem("impact", "en"), frozenset({"effect"}), False, "en") < 1.0
    assert lexical.term_match("harbour", frozenset({"chemistri"}), False, "en") == 0.0


def test_unchanged_is_a_denial_of_change():
    assert lexical.negated("Fees remained unchanged over the year.")
    assert lexical.negated("Die Gebühren blieben unverändert.")


@pytest.mark.parametrize(("claim", "passages", "expected"), [
    # a shared denial in other words
    ("Deepening the channel had no impact on how long container ships waited.", HARBOUR, S),
    ("Lern-Apps hatten im Musikunterricht keinen Einfluss auf die Rhythmusleistung der Schüler.", MUSIK, S),
    # one side denies what the other asserts
    ("Deepening the channel shortened the waiting times of container vessels.", HARBOUR, N),
    ("Harbour fees rose during the observation period.", HARBOUR, N),
    ("Die Gebühren der Musikschulen stiegen im Beobachtungszeitraum.", MUSIK, N),
    # a claim that no sentence of a source of several passages states: few shared words is
    # what a paraphrase looks like too, so the judge says it cannot tell, never `supported`
    ("Autonomous tugboats halved insurance premiums for coastal ferries.", HARBOUR, U),
    ("Chorproben am Wochenende verbesserten die Stimmbildung der Erwachsenen deutlich.", MUSIK, U),
])
def test_paraphrases_and_absent_claims(claim, passages, expected):
    judgement = OfflineJudge(calibration=None).judge(claim, passages)
    assert judgement.verdict is expected, judgement.rationale
    assert judgement.evidence and any(judgement.evidence in p.text for p in passages)


def test_a_contradiction_is_never_supported_however_much_the_words_overlap():
    judge = OfflineJudge(calibration=None)
    for claim, passages in [
        ("Harbour fees increased throughout the observation period.", HARBOUR),
        ("The port authority surveyed 58 shipping firms in 2021.", HARBOUR),
        ("An der Erhebung beteiligten sich 13 Grundschulen aus drei Bundesländern.", MUSIK),
    ]:
        assert judge.judge(claim, passages).verdict is N


def test_an_unrelated_claim_against_a_short_source_stays_uncertain():
    few = HARBOUR[:1]
    assert OfflineJudge(calibration=None).judge("Autonomous tugboats halved insurance premiums for coastal ferries.",
                                few).verdict is U


def test_a_weak_overlap_is_a_weak_rule_and_a_figure_the_figure_rule():
    # (the confidence of each is its rule's held-out precision: tests/unit/test_judge_rules.py)
    judge = OfflineJudge(calibration=None)
    weak = judge.judge("Crane operators worked fewer shifts at night under the new roster.", HARBOUR)
    figure = judge.judge("The port authority surveyed 85 shipping firms in 2021.", HARBOUR)
    assert figure.verdict is S and figure.rule.startswith("figures_stated")
    assert weak.verdict is not N
    assert not weak.rule.startswith("figures_stated")


def test_a_source_contrasting_two_sides_gives_no_weak_support():
    passages = hits("Irrigated plots kept their yield, whereas unirrigated plots lost most of it.",
                    "The trial ran for two seasons.", "Soil samples were taken monthly.",
                    "Rainfall was below the long-term mean.", "Weeds were removed by hand.",
                    "Harvest dates did not differ.")
    verdict = OfflineJudge(calibration=None).judge("Irrigated and unirrigated plots kept their yield equally.", passages).verdict
    assert verdict is not S


def test_a_claim_drawing_on_two_adjacent_sentences_quotes_both():
    passages = hits(
        "The archive holds letters from the Hanseatic period. Most of them were written by merchants' widows.",
        "Ledgers from the same families were catalogued in 1998.",
        "Ink analysis dated the ledgers to the fifteenth century.",
        "Several shelves remain uncatalogued.",
        "Visitors need a reader's card.",
    )
    claim = "The Hanseatic letters in the archive were mostly written by merchants' widows."
    judgement = OfflineJudge(calibration=None).judge(claim, passages)
    assert judgement.verdict is S, judgement.rationale
    assert judgement.evidence in passages[0].text and "widows" in judgement.evidence


def test_zwei_benachbarte_saetze_tragen_eine_behauptung():
    passages = hits(
        "Im Landkreis wurden 2019 alle Hausarztpraxen befragt. Sie meldeten lange Wartezeiten auf Facharzttermine.",
        "Die Zahl der Praxen ist seit Jahren konstant.", "Der Fragebogen umfasste zwölf Seiten.",
        "Die Rücklaufquote war hoch.", "Die Auswertung erfolgte anonym.",
    )
    claim = "Hausarztpraxen im Landkreis meldeten lange Wartezeiten auf Facharzttermine."
    judgement = OfflineJudge(calibration=None).judge(claim, passages)
    assert judgement.verdict is S, judgement.rationale
    assert judgement.evidence in passages[0].text


def test_word_overlap_never_supports_a_share_in_words_against_a_source_that_counts():
    passages = hits(
        "Of the 412 households surveyed, 9 % heated with wood.", "The survey ran in the winter of 2020.",
        "Interviews were held in person.", "Households were chosen at random.", "The response rate was high.",
        "Die Hälfte der Betriebe beteiligte sich an der Umfrage.",
    )
    judge = OfflineJudge(calibration=None)
    for claim in ("A third of the surveyed households heated with wood.",
                  "One in three surveyed households heated with wood.",
                  "Ein Viertel der Betriebe beteiligte sich an der Umfrage."):
        assert judge.judge(claim, passages).verdict is not S, claim


def test_the_same_verb_denied_is_the_opposite_statement_wherever_the_sentence_sits():
    passages = hits(
        "Critics expected the reform to burden small farms. We tracked farm incomes for three years.",
        "Contrary to this expectation, the reform did not lower the incomes of small farms; incomes under "
        "both regimes were about the same.",
        "The reform was introduced in 2016.", "Large farms were not part of the study.",
        "Data came from tax records.",
    )
    judge = OfflineJudge(calibration=None)
    for claim in ("The reform lowered the incomes of small farms over the three years.",
                  "The reform lowered the incomes of small farms."):
        for order in (passages, passages[::-1]):
            assert judge.judge(claim, order).verdict is N
