"""The offline judge on paraphrase: general rules that let a claim worded otherwise than its
source be decided, each tested on sentences written here for the rule (never taken from a case
file or eval/).

- Number words ("eleven", "forty-six", "zwölf") are figures, not content terms: a claim that
  writes the source's digits in words covers as much of it as one that copies them.
- Degree words and light verbs ("many", "still", "took", "gut", "etwas", "kam") are no content.
- A count the source states otherwise ("nine ports" against "three ports") is never
  `supported`; a part of a count ("thirty of the sixty") is no count of the whole.
- An agreeing share in the evidence outweighs a disagreeing one that names no subject; "half as
  many" is a multiple, not a share.
- One word across word classes meets itself ("deeper"/"deep", "Einführung"/"eingeführt").
- The claim's direction in a clause sharing half of its words, no figure anywhere: `supported`.
"""

from __future__ import annotations

from analysis.pipeline.judging import lexical
from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.verdicts import Verdict
from analysis.pipeline.retrieval.index import Hit

S, P, N, U = Verdict.supported, Verdict.partially_supported, Verdict.not_supported, Verdict.uncertain


def hits(*texts: str) -> list[Hit]:
    return [Hit(passage_id=i, source_id="s", page=i + 1, text=t, score=1.0) for i, t in enumerate(texts)]


def judge(claim: str, *texts: str) -> Verdict:
    return OfflineJudge(calibration=None).judge(claim, hits(*texts)).verdict


# -- number words are figures, not content terms ----------------------------------------------

def test_number_words_are_no_content_terms() -> None:
    assert lexical.content_terms("eleven hospitals and forty-six clinics", "en") == ["hospit", "clinic"]
    assert lexical.content_terms("an zwölf Standorten mit achtzehn Teams", "de") == ["standort", "team"]
    assert "fourteen" in lexical.NUMBER_WORDS and "vierzig" in lexical.NUMBER_WORDS


def test_teens_and_german_tens_are_figures() -> None:
    assert [q.value for q in lexical.quantities("from fourteen to nineteen days", "en")] == [14, 19]
    assert [q.value for q in lexical.quantities("rund vierzig Minuten", "de")] == [40]


def test_a_share_in_words_with_number_words_is_decided() -> None:
    source = ("Over eight years, 21 % of the ferry crossings in the survey were cancelled because of storms.",
              "Cancellations were most frequent in January.")
    assert judge("About one in five ferry crossings in the survey were cancelled because of storms over eight "
                 "years.", *source) is S


# -- degree words and light verbs ------------------------------------------------------------

def test_degree_words_and_light_verbs_are_no_content() -> None:
    assert lexical.content_terms("many farmers still took loans", "en") == ["farmer", "loan"]
    assert lexical.content_terms("gut ein Drittel der Betriebe kam etwas später", "de") == ["betrieb", "spat"]


# -- counts ----------------------------------------------------------------------------------

PORTS = ("The survey covered 3 ports along the Baltic coast and recorded every container movement in 2021.",
         "Dwell times were longest in winter.")


def test_a_count_the_source_states_otherwise_is_never_supported() -> None:
    assert judge("The survey covered nine ports along the Baltic coast and recorded every container movement.",
                 *PORTS) is not S
    assert judge("Die Erhebung umfasste neun Häfen an der Ostseeküste.",
                 "Die Erhebung umfasste drei Häfen an der Ostseeküste und erfasste jede Containerbewegung.") is not S


def test_the_claims_count_is_supported() -> None:
    assert judge("The survey covered three ports along the Baltic coast and recorded every container movement.",
                 *PORTS) is S


def test_a_part_of_a_count_is_no_count_of_the_whole() -> None:
    source = ("In a trial across 40 rural schools, half of the schools received tablets for two years while "
              "the others continued as before.",)
    assert judge("Twenty of the rural schools received tablets for two years.", *source) is not N


# -- shares ----------------------------------------------------------------------------------

def test_an_agreeing_share_outweighs_one_without_a_subject() -> None:
    source = ("Two years after the reform, 48 % of the tenants had renewed their lease, against 30 % before.",)
    assert judge("Just under half of the tenants had renewed their lease two years after the reform.",
                 *source) is not N


def test_half_as_many_is_a_multiple_not_a_share() -> None:
    found = lexical.shares("the pumps needed half as many repairs", "en")
    assert [s.kind for s in found] == ["multiple"]
    assert [s.kind for s in lexical.shares("half of the pumps needed repairs", "en")] == ["share"]


# -- one word across word classes -------------------------------------------------------------

def test_a_word_meets_itself_across_word_classes() -> None:
    for a, b, lang in (("deeper", "deep", "en"), ("heavily", "heavy", "en"), ("recovery", "recovered", "en"),
                       ("Einführung", "eingeführt", "de"), ("Förderung", "gefördert", "de"),
                       ("profitierten", "profitieren", "de"), ("Sanierung", "saniert", "de")):
        sa, sb = lexical.stem(a.lower(), lang), lexical.stem(b.lower(), lang)
        assert lexical.similarity(sa, sb, lang) >= 0.75, (a, b)
    assert lexical.similarity(lexical.stem("water", "en"), lexical.stem("waiter", "en"), "en") < 0.75


# -- directions ------------------------------------------------------------------------------

def test_the_claims_direction_in_other_words_is_supported() -> None:
    source = ("Employees on night shifts reported more frequent sleep problems than day-shift staff.",
              "The survey was run in three hospitals.")
    assert judge("Night-shift nurses reported sleep problems more often than colleagues on day shifts.",
                 *source) is S


def test_a_direction_with_a_figure_still_needs_the_figure() -> None:
    source = ("Employees on night shifts reported more frequent sleep problems than day-shift staff "
              "(41 % against 23 %).",)
    assert judge("Night-shift nurses reported sleep problems three times as often as colleagues on day shifts.",
                 *source) is not S


# -- a cause, a scope or a permanence the source does not state --------------------------------

COMPOST = ("We followed 48 allotment plots in Leeds over two growing seasons, half of them mulched with "
           "garden compost each spring.",
           "Mulched plots held more soil moisture in July and their bean yields were higher than on the "
           "other plots in the second season.",
           "Weed cover did not differ between the plot types.")


def test_a_cause_the_source_does_not_state_is_a_partial_support() -> None:
    assert judge("Compost mulch on allotment plots causes higher bean yields through better soil moisture.",
                 *COMPOST) is P


def test_a_scope_beyond_the_sample_is_a_partial_support() -> None:
    assert judge("Mulched allotment plots held more soil moisture and bore higher bean yields nationwide.",
                 *COMPOST) is P
    # "across all plots" is backed by a source that says "all"
    assert lexical.absolutes("all plots were mulched")[1]


def test_a_permanence_the_source_does_not_state_is_a_partial_support() -> None:
    assert judge("Mulching allotment plots with compost permanently raises their bean yields and soil "
                 "moisture.", *COMPOST) is P


def test_a_denying_source_is_no_ground_for_a_partial() -> None:
    # the closest sentence finds no difference: the cause is not "added" to a finding
    assert judge("Compost mulch on allotment plots causes lower weed cover on the plot types.", *COMPOST) is not P


def test_a_claim_the_source_states_with_the_same_cue_stays_supported() -> None:
    source = ("In the trial, the new valve design prevented leaks at every one of the 30 test pumps.",)
    assert judge("The new valve design prevented leaks at the test pumps.", *source) is not P


# -- near-synonyms and antonyms -----------------------------------------------------------------

def test_general_academic_near_synonyms_meet() -> None:
    for a, b, lang in (("remained", "stayed", "en"), ("acceptance", "uptake", "en"), ("gap", "difference", "en"),
                       ("recommend", "advocated", "en"), ("reminders", "erinnerungen", "de"),
                       ("Rückmeldung", "Feedback", "de"), ("Abschaffung", "Wegfall", "de"),
                       ("Belastung", "Stress", "de"), ("prevalence", "incidence", "en")):
        assert lexical.similarity(lexical.stem(a.lower(), lang), lexical.stem(b.lower(), lang), lang) >= 0.75, (a, b)


def test_an_antonym_of_the_sources_word_is_not_supported() -> None:
    source = ("Nurses in urban hospitals reported the highest workload of all staff groups in the 2021 survey.",
              "Response rates were similar across regions.")
    assert judge("Nurses in rural hospitals reported the highest workload of all staff groups.", *source) is N
    assert judge("Pflegekräfte in ländlichen Kliniken berichteten die höchste Arbeitsbelastung.",
                 "Pflegekräfte in städtischen Kliniken berichteten die höchste Arbeitsbelastung aller Gruppen.") is N


def test_a_source_naming_both_sides_is_no_antonym_swap() -> None:
    assert lexical.antonym_swap("Rural pupils read more.", "en", "Rural and urban pupils read more.", "en") is None
    assert lexical.antonym_swap("Rural pupils read more.", "en", "Urban pupils read more.", "en") == ("rural", "urban")


def test_figures_matched_in_a_paraphrase_are_supported() -> None:
    source = ("Each additional month of the statutory threshold postponed the actual exit from work by 0.6 "
              "months on average.",)
    assert judge("On average, every extra month of the statutory threshold postponed the actual exit from "
                 "work by 0.6 months.", *source) is S


# -- figures in other words and other units ----------------------------------------------------

def test_a_figure_in_another_unit_of_its_dimension_is_the_figure() -> None:
    source = ("Night-shift paramedics slept on average 4.5 hours between two shifts, according to their "
              "wrist monitors.",)
    assert judge("Between two shifts, night-shift paramedics slept roughly 270 minutes on average.", *source) is S
    assert judge("Between two shifts, night-shift paramedics slept roughly 400 minutes on average.",
                 *source) is not S


def test_a_fraction_in_words_is_also_a_decimal() -> None:
    source = ("Adding a second coat raised the insulation score of the panels by 0.5 points on average.",)
    assert judge("A second coat raised the insulation score of the panels by about one half of a point on average.",
                 *source) is not N


def test_a_multiple_with_a_bound_is_met_by_the_ratio_of_two_figures() -> None:
    source = ("Repeat visits were recorded for 18.4 % of the patients in the clinic group, against 4.1 % in the "
              "home-care group.",)
    assert judge("Repeat visits were more than four times as common in the clinic group as in the home-care group.",
                 *source) is S
    # the groups the other way round: never supported
    assert judge("Repeat visits were more than four times as common in the home-care group as in the clinic group.",
                 *source) is not S


def test_each_distributes_and_claims_no_universality() -> None:
    assert lexical.absolutes("on each shift the nurses slept") == ([], [])
    assert lexical.absolutes("every nurse slept") == ([], ["every"])


def test_a_cause_a_claim_says_was_not_tested_is_no_certainty() -> None:
    assert lexical.certainties("they did not test whether the drought caused this") == []
    assert lexical.certainties("the drought caused this") == ["caused"]


# -- a comparison read against the figures of the compared groups -------------------------------

ALLOTMENTS = ("In the first season, 62 % of the tenants of council allotments harvested vegetables every week; "
              "among the tenants of private allotments the share was 35 %.",
              "The survey was run in 2022.")


def test_a_comparison_the_figures_reverse_is_not_supported() -> None:
    assert judge("The share harvesting vegetables every week was higher among tenants of private allotments "
                 "than among tenants of council allotments.", *ALLOTMENTS) is N


def test_a_comparison_the_figures_confirm_is_supported() -> None:
    assert judge("The share harvesting vegetables every week was higher among tenants of council allotments "
                 "than among tenants of private allotments.", *ALLOTMENTS) is S
    assert judge("Der Anteil mit wöchentlicher Ernte lag bei Pächtern privater Gärten niedriger als bei "
                 "Pächtern kommunaler Gärten.",
                 "Bei Pächtern kommunaler Gärten ernteten 62 % wöchentlich; bei Pächtern privater Gärten lag "
                 "der Anteil bei 35 %.") is S


# -- a negation of a subordinate clause is not the claim's ----------------------------------------

def test_a_negated_reason_does_not_deny_the_claim() -> None:
    source = ("The school-based screening cost about a third less per child than screening in clinics, since "
              "the checks were done by trained teachers.",)
    assert judge("Screening at school cost about a third less per child, because no clinic staff were needed.",
                 *source) is not N
    assert judge("Screening at school did not cost less per child than screening in clinics.", *source) is N


def test_a_reason_the_source_does_not_give_makes_a_well_covered_claim_partial() -> None:
    source = ("Most complaints came from three large branches, where waiting times regularly exceeded 20 "
              "minutes at lunchtime.",)
    assert judge("Most complaints came from three large branches, where waiting times regularly exceeded 20 "
                 "minutes at lunchtime because too few counters were open.", *source) is P
    # "due to" attributes a share, it names no cause the source lacks
    assert judge("Less than a fifth of the complaints were due to waiting times.",
                 "Waiting times accounted for less than one fifth of the complaints.") is not P


def test_all_year_is_a_span_of_time_not_an_absolute() -> None:
    assert lexical.absolutes("cows kept indoors all year") == ([], [])
    assert lexical.absolutes("Kühe, die jeden Tag im Stall standen") == ([], [])
    assert lexical.absolutes("all cows were kept indoors") == ([], ["all"])
