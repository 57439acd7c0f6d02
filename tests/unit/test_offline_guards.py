"""Guards of the offline judge that keep a contradicted claim from `supported`, found on case
batches and theses written blind (batch 6, the second held-out thesis set) and tested here on
sentences written for each rule:

- a weak overlap with a clause that denies the claim is `not_supported`, and a denial anywhere
  in the sentence is a cue against a weak support;
- a claim that ranks its subject at one end ("most affected") against a sentence that puts that
  subject at the other ("weakest among …") is `not_supported`;
- a superlative against two figures is the figures' reading: never a weak support;
- a related sentence agreeing in direction does not support a claim whose figure it lacks;
- occurrence antonyms: sessions held against sessions cancelled ("stattfanden"/"ausfielen");
- a difference the source calls "no longer significant" (nicht mehr signifikant) is not "still significant";
- a change or difference the claim states, against one of the most related sentences reporting no
  effect, no change or no difference on the same subject, is `not_supported` even at low overlap,
  and not where the null finding is about another outcome.
"""

from __future__ import annotations

from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.verdicts import Verdict
from analysis.pipeline.retrieval.index import Hit

S, P, N, U = Verdict.supported, Verdict.partially_supported, Verdict.not_supported, Verdict.uncertain

FILLER = ("The survey was run in spring.", "Participants were recruited through local newspapers.",
          "Interviews lasted about forty minutes.", "Data were coded by two researchers.",
          "The response rate was acceptable.", "Further work should include more regions.")


def hits(*texts: str) -> list[Hit]:
    return [Hit(passage_id=i, source_id="s", page=i + 1, text=t, score=1.0) for i, t in enumerate(texts)]


def judge(claim: str, *texts: str) -> Verdict:
    return OfflineJudge(calibration=None).judge(claim, hits(*texts, *FILLER)).verdict


def test_a_weakly_shared_clause_that_denies_the_claim_is_no_support() -> None:
    source = ("In keinem der neun Dörfer erhielten die Genossenschaften einen Zuschuss; sie finanzierten "
              "die Leitungen aus Beiträgen ihrer Mitglieder.")
    assert judge("Die Genossenschaften erhielten vom Land in der Regel einen großzügigen Zuschuss.", source) is N


def test_a_denial_elsewhere_in_the_sentence_is_a_cue_against_a_weak_support() -> None:
    source = ("Where the walls were damp, the readings were 31 % for treated and 33 % for untreated panels, "
              "so the sealant gave no real protection there.")
    assert judge("On damp walls, the sealant mostly shielded the panels.", source) is not S


def test_a_subject_ranked_at_the_other_end_is_not_supported() -> None:
    source = ("The link was strongest among pupils aged 11 to 14 (odds ratio 1.9) and weakest among "
              "students over 18 (1.1).")
    assert judge("The link was strongest among students over 18.", source) is N
    assert judge("The link was strongest among pupils aged 11 to 14.", source) is S


def test_a_superlative_against_two_figures_is_no_weak_support() -> None:
    source = ("Sensor dropouts reached 9 % in the wet months, when the roofs were covered with leaves, "
              "compared with 3 % in the dry months.")
    assert judge("Sensor dropouts were lowest in the wet months, when leaves covered the roofs.", source) is not S


def test_a_related_sentence_agreeing_in_direction_does_not_stand_for_a_missing_figure() -> None:
    source = ("Each 5 dB increase in night-time noise was associated with a 4 % increase in sleep complaints. "
              "On festival nights, complaints were 22 % higher than on ordinary nights.")
    assert judge("Each 5 dB increase in night-time noise was linked to a 14 % rise in sleep complaints.",
                 source) is not S


def test_sessions_held_and_sessions_cancelled_are_opposites() -> None:
    source = ("Der Effekt war in Vereinen größer, in denen mindestens drei Viertel der geplanten Trainings "
              "stattfanden.")
    assert judge("In Vereinen, in denen viele Trainings ausfielen, war der Effekt größer.", source) is N


def test_a_weak_support_gives_way_to_a_sentence_as_close_that_denies_the_claim() -> None:
    title = "Long-Term Performance of Galvanised Anchors in Coastal Piers: Galvanised anchors were introduced to slow rust in piers."
    finding = ("Near the splash zone, rust was found on 40 % of galvanised and 44 % of plain anchors, so the "
               "zinc layer did not give useful protection there.")
    assert judge("Near the splash zone, the zinc layer largely protected the galvanised anchors from rust.",
                 title, finding) is not S


def test_the_same_ranking_words_for_another_group_are_not_supported() -> None:
    source = ("Am zufriedensten äußerten sich Mitglieder zwischen 18 und 25 Jahren, vor allem wegen der "
              "flexiblen Trainingszeiten.")
    assert judge("Am zufriedensten waren die über 60-jährigen Mitglieder.", source) is N
    assert judge("Am zufriedensten waren Mitglieder zwischen 18 und 25 Jahren.", source) is not N


def test_a_difference_the_source_calls_no_longer_significant_is_not_supported() -> None:
    source = ("A year after the course, the gap between the trained and untrained drivers had shrunk to "
              "0.4 incidents and was no longer statistically significant.")
    assert judge("A year after the course, the gap between trained and untrained drivers was still "
                 "statistically significant.", source) is N
    assert judge("Ein Jahr nach dem Kurs war der Unterschied zwischen den Gruppen weiterhin signifikant.",
                 "Ein Jahr nach dem Kurs war der Unterschied zwischen den Gruppen auf 0,4 Punkte geschrumpft "
                 "und nicht mehr signifikant.") is N
    # the source's own "still significant" supports it
    assert judge("A year after the course, the gap between trained and untrained drivers was still "
                 "statistically significant.", source.replace("no longer", "still")) is not N


def test_a_null_finding_on_the_claims_subject_contradicts_a_claimed_change() -> None:
    source = "Resting heart rate did not change over the eight weeks of the programme."
    assert judge("The breathing exercises markedly lowered resting heart rate.", source) is N


def test_a_null_finding_in_german_contradicts_a_claimed_difference() -> None:
    source = "Auf die Keimrate des Saatguts hatte die Lagertemperatur keinen messbaren Einfluss."
    assert judge("Bei kühler Lagerung war die Keimrate des Saatguts deutlich höher.", source) is N
    source = "Die Keimrate blieb bei beiden Lagerarten unverändert."
    assert judge("Bei kühler Lagerung stieg die Keimrate deutlich.", source) is N


def test_a_null_finding_joined_to_a_figure_in_one_sentence_contradicts() -> None:
    source = ("Die mittlere Wartezeit der Kassenpatienten lag bei 24 Tagen und unterschied sich nicht "
              "wesentlich von der der Privatpatienten.")
    assert judge("Kassenpatienten warteten deutlich länger auf einen Termin als Privatpatienten.", source) is not S


def test_a_null_finding_on_another_outcome_is_no_contradiction() -> None:
    source = ("Coaching raised the sales figures of the participating branches by 12 %. We found no effect "
              "of coaching on staff members' self-reported job satisfaction or their sick days.")
    assert judge("Coaching raised the branches' sales figures.", source) is not N


def test_a_hedged_or_equating_claim_is_not_read_against_a_null_finding() -> None:
    source = "Resting heart rate did not change over the eight weeks of the programme."
    assert judge("Resting heart rate stayed the same over the programme.", source) is not N
    assert judge("The programme may have lowered resting heart rate somewhat.", source) is not S




def test_a_weak_overlap_is_read_for_a_scope_the_source_does_not_state() -> None:
    # related_at above the overlap keeps the on-subject reading off: the weak-support branch decides
    weak_only = OfflineJudge(calibration=None, related_at=0.95, supported_at=0.97)
    source = "According to the club secretaries, volunteers in most clubs stayed on for longer after the reform."
    texts = hits(source, *FILLER)
    assert weak_only.judge("After the reform, volunteers everywhere stayed with their clubs for longer.", texts
                           ).verdict is P
    assert weak_only.judge("After the reform, volunteers stayed with their clubs for longer.", texts).verdict is S


def test_what_others_are_said_to_find_does_not_back_a_plain_finding() -> None:
    source = ("Street trees are often said to lower summer air temperatures in dense districts, but direct "
              "measurements are scarce.")
    assert judge("Street trees lower summer air temperatures in dense districts.", source) is P
    source = "Nachtbusse gelten als wirksames Mittel gegen Trunkenheitsfahrten junger Erwachsener."
    assert judge("Nachtbusse verringern Trunkenheitsfahrten junger Erwachsener wirksam.", source) is not S


def test_two_directions_in_another_word_order_are_read_by_what_each_is_said_of() -> None:
    from analysis.pipeline.judging.directions import compare_directions as _compare_directions

    claim = "Hiring more night nurses shortened the response times on the wards."
    source = "The hospital shortened response times on its wards by hiring more night nurses."
    assert _compare_directions(claim, source) == "agree"
    assert judge(claim, source) is not N
    # the same two directions said of the other subjects are still a conflict
    assert _compare_directions("Sales rose while costs fell.", "Sales fell while costs rose.") == "conflict"


def test_an_uncertain_claim_in_another_language_than_its_source_says_so() -> None:
    source = ("In the ten days before diagnosis, the daily lying time of cows that became lame rose by 48 minutes "
              "on average relative to their own baseline.")
    judged = OfflineJudge(calibration=None).judge("Lahme Kühe verbrachten vor der Diagnose täglich mehr Zeit im Liegen.",
                                  hits(source, *FILLER))
    assert judged.verdict is U
    assert "the claim is German, the source English" in judged.rationale
    same = OfflineJudge(calibration=None).judge("Cows that became lame were tracked with collars.", hits(source, *FILLER))
    assert "the claim is" not in same.rationale
