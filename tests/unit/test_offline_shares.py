"""Shares in words against the source's shares: the one guard every `supported` passes.

A claim whose figure in words ("roughly half", "the whole", "zwei Drittel") the evidence or
its neighbouring sentences contradict ("not even a sixth"… "under a fifth", "the remainder")
is never `supported`, whichever path found the support; consistent shares ("about half" and
49 %) stay supported. Written for these tests, in English and German.
"""

from __future__ import annotations

import pytest

from analysis.pipeline.judging import lexical
from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.verdicts import Verdict
from analysis.pipeline.retrieval.index import Hit

S, P, N, U = Verdict.supported, Verdict.partially_supported, Verdict.not_supported, Verdict.uncertain


def hits(*texts: str) -> list[Hit]:
    return [Hit(passage_id=i, source_id="s", page=3 + i, text=t, score=1.0) for i, t in enumerate(texts)]


WAGES = hits(
    "Inflation accelerated sharply in the second half of 1922. By the close of 1923 real wages of dock workers "
    "had dropped to under a fifth of their 1913 level. Strikes followed in several ports."
)
LOEHNE = hits(
    "Die Inflation beschleunigte sich im Jahr 1922 deutlich. Bis Ende 1923 sanken die Reallöhne der "
    "Hafenarbeiter auf weniger als ein Fünftel ihres Standes von 1913. In mehreren Häfen folgten Streiks."
)
LEVY = hits(
    "The city introduced a levy on vacant flats in 1926. Slightly less than half of the levy's yield was "
    "spent on building social housing. The remainder flowed into the general municipal budget."
)
ABGABE = hits(
    "Die Stadt führte 1926 eine Abgabe auf leerstehende Wohnungen ein. Etwas weniger als die Hälfte des "
    "Aufkommens der Abgabe wurde für den Bau von Sozialwohnungen verwendet. Der Rest floss in den "
    "allgemeinen Haushalt der Stadt."
)


@pytest.mark.parametrize("claim, passages", [
    # class 1: a share in words against another share, the direction agreeing
    ("By the close of 1923 real wages of dock workers had dropped to roughly half of their 1913 level.", WAGES),
    ("Bis Ende 1923 sanken die Reallöhne der Hafenarbeiter auf rund die Hälfte ihres Standes von 1913.", LOEHNE),
    ("By the close of 1923 real wages of dock workers had dropped to two thirds of their 1913 level.", WAGES),
    ("Bis Ende 1923 sanken die Reallöhne der Hafenarbeiter auf drei Viertel ihres Standes von 1913.", LOEHNE),
    # class 2: an absolute word against a share below the whole and a remainder
    ("The whole yield of the levy was spent on building social housing.", LEVY),
    ("Das gesamte Aufkommen der Abgabe wurde für den Bau von Sozialwohnungen verwendet.", ABGABE),
    ("Sämtliche Einnahmen der Abgabe wurden für den Bau von Sozialwohnungen verwendet.", ABGABE),
])
def test_a_contradicted_share_is_never_supported(claim: str, passages: list[Hit]) -> None:
    j = OfflineJudge(calibration=None).judge(claim, passages)
    assert j.verdict is not S, j.rationale
    assert j.verdict in (N, P), j.rationale


@pytest.mark.parametrize("claim, passages", [
    ("By the close of 1923 real wages of dock workers had dropped to roughly half of their 1913 level.",
     hits("By the close of 1923 real wages of dock workers had dropped to 49 % of their 1913 level.")),
    ("A third of the surveyed farms had switched to organic feed by 2021.",
     hits("By 2021, 33 % of the surveyed farms had switched to organic feed.")),
    ("Die Hälfte der befragten Betriebe hatte bis 2021 auf Biofutter umgestellt.",
     hits("Bis 2021 hatten 50 Prozent der befragten Betriebe auf Biofutter umgestellt.")),
    ("Knapp zwei Drittel der befragten Betriebe hatten bis 2021 auf Biofutter umgestellt.",
     hits("Bis 2021 hatten 64 Prozent der befragten Betriebe auf Biofutter umgestellt.")),
])
def test_consistent_shares_stay_supported(claim: str, passages: list[Hit]) -> None:
    j = OfflineJudge(calibration=None).judge(claim, passages)
    assert j.verdict is S, j.rationale


@pytest.mark.parametrize("claim, source", [
    ("The majority of the surveyed farms had switched to organic feed by 2021.",
     "By 2021, 71 % of the surveyed farms had switched to organic feed."),
    ("Fast alle befragten Betriebe hatten bis 2021 auf Biofutter umgestellt.",
     "Bis 2021 hatten 93 Prozent der befragten Betriebe auf Biofutter umgestellt."),
    ("Twice as many farms had switched to organic feed by 2021 as in 2015.",
     "By 2021 the number of farms that had switched to organic feed had doubled since 2015."),
])
def test_agreeing_shares_are_no_contradiction(claim: str, source: str) -> None:
    j = OfflineJudge(calibration=None).judge(claim, hits(source))
    assert j.verdict is not N, j.rationale


@pytest.mark.parametrize("claim, source", [
    ("The majority of the surveyed farms had switched to organic feed by 2021.",
     "By 2021, 38 % of the surveyed farms had switched to organic feed."),
    ("Die Mehrheit der befragten Betriebe hatte bis 2021 auf Biofutter umgestellt.",
     "Bis 2021 hatte eine Minderheit der befragten Betriebe auf Biofutter umgestellt."),
    ("A quarter of the surveyed farms had switched to organic feed by 2021.",
     "By 2021, more than half of the surveyed farms had switched to organic feed."),
    ("Ein Zehntel der befragten Betriebe hatte bis 2021 auf Biofutter umgestellt.",
     "Bis 2021 hatten mindestens 30 Prozent der befragten Betriebe auf Biofutter umgestellt."),
])
def test_bounds_and_majorities_contradict(claim: str, source: str) -> None:
    j = OfflineJudge(calibration=None).judge(claim, hits(source))
    assert j.verdict is not S, j.rationale


def test_the_guard_reads_the_neighbouring_sentences() -> None:
    # Coverage of the first sentence alone would support; its neighbour states the share.
    passages = hits("The levy's yield was spent on building social housing in the first years. "
                    "Later only a tenth of the levy's yield went there; the rest covered deficits.")
    j = OfflineJudge(calibration=None).judge("The entire yield of the levy was spent on building social housing.", passages)
    assert j.verdict is not S, j.rationale


@pytest.mark.parametrize("text, lang, low, high", [
    ("about half of the tenants", "en", 0.4, 0.6),
    ("less than a fifth of the level", "en", 0.0, 0.2),
    ("nearly all households", "en", 0.8, 1.0),
    ("etwa ein Drittel der Mieter", "de", 0.28, 0.39),
    ("knapp die Hälfte der Mieter", "de", 0.4, 0.51),
    ("mehr als drei Viertel der Mieter", "de", 0.75, 1.0),
    ("48 % of tenants", "en", 0.47, 0.49),
])
def test_shares_in_words_are_intervals(text: str, lang: str, low: float, high: float) -> None:
    found = lexical.shares(text, lang)
    assert len(found) == 1, found
    assert low <= found[0].low <= found[0].high <= high, found[0]


@pytest.mark.parametrize("text, lang", [
    ("in the third quarter of the year", "en"),
    ("sales rose by 20 % and by a third", "en"),
    ("the most important reason", "en"),
    ("eine halbe Stunde später", "de"),
])
def test_what_is_no_share(text: str, lang: str) -> None:
    assert lexical.shares(text, lang) == []


# -- how figures are read before they are compared (found on the blind thesis sets) ------------

def _shares(text: str, lang: str) -> list[tuple[str, float, float]]:
    return [(s.text, round(s.low, 3), round(s.high, 3)) for s in lexical.shares(text, lang)]


def test_a_year_before_to_dates_the_share_it_is_no_range() -> None:
    text = "By 1880 the share had fallen to 52 per cent, and by 1905 to 17 per cent."
    assert [(q.value, q.role) for q in lexical.quantities(text, "en") if not q.weak] == [(52, "to"), (17, "to")]
    assert [s[0] for s in _shares(text, "en")] == ["52 per cent", "17 per cent"]


def test_german_von_before_a_figure_is_of_unless_a_change_follows() -> None:
    text = "Die Impfung erreichte eine Schutzwirkung von 88 %, bei Älteren von 64 %."
    assert [q.role for q in lexical.quantities(text, "de")] == [None, None]
    assert [s[0] for s in _shares(text, "de")] == ["88 %", "64 %"]
    change = lexical.quantities("Der Anteil stieg von 12 % im Jahr 2019 auf 21 %.", "de")
    assert [(q.value, q.role) for q in change if not q.weak] == [(12, "from"), (21, "to")]


def test_a_range_of_per_cent_is_one_share_spanning_it() -> None:
    ((text, low, high),) = _shares("Die Keimrate lag je nach Sorte bei 72–91 %.", "de")
    assert text == "72–91 %" and low <= 0.72 and high >= 0.91
    # the end of a change stays the share the text arrives at
    assert [s[0] for s in _shares("Approval fell from 84 to 46 per cent.", "en")] == ["84 to 46 per cent"]
    assert _shares("Approval fell from 84 to 46 per cent.", "en")[0][1] > 0.45


def test_a_figure_inside_the_sources_range_is_no_other_share() -> None:
    source = hits("Im Freiland erreichte das Saatgut eine mittlere Keimrate von 83 % (Spannweite 72–91 %), unter Folie von 95 %.",
                  "Die Versuche liefen über drei Jahre.")
    assert OfflineJudge(calibration=None).judge("Im Freiland keimten im Mittel 83 Prozent des Saatguts.", source).verdict is S


def test_bare_counts_of_the_compared_groups_do_not_order_them() -> None:
    source = hits("Verglichen wurden die Baukosten von 34 Sanierungen alter Schulgebäude und von 29 "
                  "vergleichbaren Schulneubauten.", "Die Daten stammen aus drei Ländern.")
    claim = "Im Mittel war die Sanierung eines alten Schulgebäudes teurer als ein vergleichbarer Schulneubau."
    assert OfflineJudge(calibration=None).judge(claim, source).verdict is not S


def test_a_figure_above_or_below_a_level_is_a_change_not_a_share() -> None:
    assert [s[0] for s in _shares("Ridership stayed between 9 % and 11 % above its old level; 35 % of riders "
                                  "were new.", "en")] == ["35 %"]
    assert [s[0] for s in _shares("Die Buchungen lagen 8 % unter dem Vorjahr; 30 % der Gäste kamen "
                                  "aus dem Ausland.", "de")] == ["30 %"]
    source = hits("Ridership rose by 17 % in the first year of the free fares and stayed between 13 % and 15 % "
                  "above its old level in the following years.", "Surveys were run each autumn.")
    claim = "Ridership grew by about 17 % in the first year of free fares, and most of that gain lasted in later years."
    assert OfflineJudge(calibration=None).judge(claim, source).verdict is not N


def test_a_bound_on_a_count_is_not_met_by_a_year_or_a_sum_of_money() -> None:
    assert not any(q.weak for q in lexical.quantities("The panel covered more than 3,000 households.", "en"))
    source = hits("Household energy panel 2021: methods and first results. Data were collected in 2021.",
                  "The panel recorded 1,870 households in 14 towns; the median annual energy bill was £2,450.")
    assert OfflineJudge(calibration=None).judge("The panel covered more than 2,000 households in 14 towns.", source).verdict is not S


def test_an_adverb_of_degree_beside_a_share_of_the_group_is_no_share() -> None:
    claim = "Weniger als die Hälfte der Höfe deckte ihren Strombedarf vollständig aus eigenen Anlagen."
    assert [sh.form for sh in lexical.shares(claim, "de")] == ["fraction"]
    assert [sh.form for sh in lexical.shares("The roof covered the demand completely.", "en")] == ["all"]
    source = hits("Von den 30 untersuchten Höfen deckten 12 ihren Strombedarf vollständig aus eigenen Anlagen, "
                  "die übrigen kauften Strom zu.")
    assert OfflineJudge(calibration=None).judge(claim, source).verdict is not N


def test_a_bound_on_a_fraction_below_one_is_not_met_by_a_count() -> None:
    source = hits("Across all 12 models the uncorrected sensors read 35 % high. After linear correction, the "
                  "two best models reached R values above 0.81 and an error below 4 µg/m. Data from 9 sites "
                  "were pooled.")
    claim = "After a linear correction, the two best models reached R values above 0.93."
    assert OfflineJudge(calibration=None).judge(claim, source).verdict is not S
    assert OfflineJudge(calibration=None).judge("After a linear correction, the two best models reached R values above 0.8.",
                                source).verdict is S




def test_a_share_of_one_word_in_two_forms_is_a_share_of_the_same_subject() -> None:
    # "Befragung"/"Befragten" stem to "befrag"/"befragt": one subject for the shares guard, so the
    # matching "zehn Stunden" does not carry a share the source contradicts
    source = hits("Ergebnisse Etwa 30 Prozent der Befragten hatten in der Woche vor dem Stichtag mehr als zehn "
                  "Stunden Bereitschaftsdienst geleistet.")
    claim = ("Fast die Hälfte der Pflegekräfte einer Befragung an hessischen Kliniken hatte in der Woche vor dem "
             "Stichtag mehr als zehn Stunden Bereitschaftsdienst geleistet.")
    assert OfflineJudge(calibration=None).judge(claim, source).verdict is not S


def test_a_bounded_count_in_words_is_checked_against_the_sources_figures() -> None:
    source = hits("In the 1900s, 12 dialects were spoken in the valley; by the 1990s their number had fallen to 7, "
                  "mostly among older residents.")
    judge = OfflineJudge(calibration=None)
    claim = "Between the 1900s and the 1990s, the number of dialects spoken in the valley fell from twelve to fewer than {}."
    assert judge.judge(claim.format("five"), source).verdict is not S
    assert judge.judge(claim.format("ten"), source).verdict is S
