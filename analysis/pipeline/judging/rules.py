"""The offline judge's decision, as a table: `RULES`, an ordered tuple of named rules over the
evidence record (`analysis.pipeline.judging.evidence.Evidence`), the first that applies deciding;
and `GUARDS`, the contradiction checks every `supported` passes, applied in a loop.

A rule's name is recorded on the judgement; its confidence is not here: it is the rule's precision
on held-out labelled cases (`calibration.json`, written by scripts/judge_rules.py), and a rule
measured below the floor there answers `uncertain` instead (see `analysis.pipeline.judging.calibration`).
A name may stand at more than one place in the table where one rule is read in several coverage
zones (a shared denial, a generalisation, a null finding): it is one rule, measured once.

The table reads top to bottom: figures first (the evidence a reader checks fastest), then
comparisons and directions, negation, overstatement, then support by figures, by direction and by
shared words, then what is left `uncertain`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from analysis.pipeline.judging.assessment import Assessment, Sentence
from analysis.pipeline.judging.directions import guard_condition, guard_directions
from analysis.pipeline.judging.evidence import Evidence
from analysis.pipeline.judging.shares import guard_counts, guard_shares
from analysis.pipeline.judging.verdicts import Verdict

S, P, N, U = Verdict.supported, Verdict.partially_supported, Verdict.not_supported, Verdict.uncertain


@dataclass(frozen=True)
class Rule:
    """One row of the table: when `applies`, the verdict, with `reason` (and the sentence it rests on)."""

    name: str
    verdict: Verdict
    applies: Callable[[Evidence], object]
    reason: Callable[[Evidence], str] | str
    #: the sentence the verdict rests on when it is not the focus (another related sentence)
    where: Callable[[Evidence], Sentence] | None = None
    #: the evidence text when it is more than one sentence (two adjacent ones)
    quote: Callable[[Evidence], str | None] | None = None
    #: "figure", "direction", "negation", "absolute", "overlap", "weak", "words", "absent", "unstated"
    cue: str = "weak"

    def decide(self, e: Evidence) -> Assessment:
        sentence = self.where(e) if self.where else e.focus
        reason = self.reason(e) if callable(self.reason) else self.reason
        coverage = next((o.coverage for o in (e.figure_elsewhere, e.null_finding) if o and o.sentence is sentence),
                        e.cov)
        return Assessment(verdict=self.verdict, confidence=0.0, cue=self.cue, coverage=coverage,
                          sentence=sentence, evidence=self.quote(e) if self.quote else None, reason=reason,
                          rule=self.name)


def _other(kind: str) -> Callable[[Evidence], object]:
    return lambda e: e.related_direction is not None and e.related_direction[0] == kind


def _other_sentence(e: Evidence) -> Sentence:
    return e.related_direction[1].sentence  # type: ignore[index]


def _weak_overlap(e: Evidence) -> bool:
    # most of the claim's terms in one sentence and nothing against it (a denial in it is something)
    return (e.cov >= e.t.weakly_related_at and not e.claim_axes and not e.counted and not e.quantified
            and not e.comparison_claim and not e.states_decline and not e.denied_nearby
            and e.claim_negated == e.focus_negated and not (e.contrast_focus and not e.contrast_claim))


def _all_terms(e: Evidence) -> bool:
    # every word of the claim occurs in the source, half of them in this sentence, nothing against it
    return (e.cov >= e.t.weakly_related_at and not e.absent_terms and not e.figure_unmatched
            and e.claim_negated == e.focus_negated and not e.denied_nearby
            and (not e.claim_axes or e.direction == "agree") and not e.fraction_claim
            and not e.comparison_claim and not e.mixed and not (e.contrast_focus and not e.contrast_claim))


def _insignificant_difference(e: Evidence) -> bool:
    return (e.on_subject and not e.claim_equal and not e.claim_negated and not e.claim_hedged
            and e.only_insignificant and ({"quantity", "frequency", "quality"} & e.claim_axes or e.comparison_claim))


#: The rules, in order; the first that applies decides.
RULES: tuple[Rule, ...] = (
    # -- the claim's figure stated otherwise by a loosely related sentence ("six weeks" for "12 weeks")
    Rule("figure_elsewhere", N, lambda e: e.figure_elsewhere, lambda e: e.figure_elsewhere.reason,
         where=lambda e: e.figure_elsewhere.sentence, cue="figure"),
    # -- few shared terms: a shared denial, an added cause or scope, a null finding, or nothing
    Rule("shared_denial", S, lambda e: e.zone == "weak" and e.shared_denial,
         "the source denies what the claim denies, over most of its key terms", cue="negation"),
    Rule("generalisation", P, lambda e: e.zone != "read" and e.generalised,
         lambda e: f"the claim adds {e.generalised[0]} no sentence read states (“{e.generalised[1]}”)", cue="absolute"),
    Rule("null_finding", N, lambda e: e.zone != "read" and e.null_finding,
         "the source reports no effect or difference where the claim states one",
         where=lambda e: e.null_finding.sentence, cue="negation"),
    Rule("unrelated", U, lambda e: e.zone == "unrelated",
         lambda e: f"no sentence of the {e.sentences_read} read states the claim's key terms", cue="absent"),
    Rule("few_terms", U, lambda e: e.zone == "weak", "the retrieved passages share few of the claim's key terms",
         cue="words"),
    # -- figures and comparisons contradicted
    Rule("figure_contradicted", N, lambda e: e.figure_contradiction, lambda e: e.figure_contradiction, cue="figure"),
    Rule("figures_order_reversed", N, lambda e: e.ordered == "conflict",
         "the source's figures order the compared groups the other way round", cue="direction"),
    Rule("ranked_other_end", N, lambda e: e.ranked_side == "conflict",
         "the source ranks the claim's subject at the other end", cue="direction"),
    Rule("rate_differs", N, lambda e: e.rate and (e.related >= e.t.related_at or e.anchored), lambda e: e.rate,
         cue="figure"),
    Rule("share_contradicted", N, lambda e: e.share_contradicted,
         lambda e: f"the source states another share ({e.share_contradicted})", cue="figure"),
    Rule("group_share_differs", N, lambda e: e.group_share, lambda e: e.group_share, cue="figure"),
    Rule("comparison_swapped", N, lambda e: e.swapped_conflict, "the source compares the other way round",
         cue="direction"),
    # -- directions
    Rule("mixed_directions", U, lambda e: e.direction == "agree" and e.mixed and e.ranked_side != "agree",
         "the source's sentence states both directions; check which one the claim's subject takes"),
    Rule("direction_opposite", N, lambda e: e.direction == "conflict", "the source states the opposite direction",
         cue="direction"),
    Rule("difference_denied", N, lambda e: (e.clause_equal and not e.claim_equal and not e.claim_negated
                                            and not e.clause_directions
                                            and ({"quantity", "frequency"} & e.claim_axes or e.comparison_claim)),
         "the source states no difference where the claim states one", cue="direction"),
    Rule("significance_denied", N, lambda e: (e.on_subject and not e.claim_equal and not e.claim_negated
                                              and e.significant_claim and e.only_insignificant),
         "the source finds not significant what the claim calls significant", cue="negation"),
    Rule("clear_difference_insignificant", N, lambda e: _insignificant_difference(e) and e.intensified_claim,
         "the source finds no significant difference where the claim states a clear one", cue="direction"),
    Rule("difference_insignificant", P, _insignificant_difference,
         "the claim states as a finding a difference the source found not significant", cue="absolute"),
    Rule("related_direction_denied", N, _other("denied"), "a related sentence of the source denies the claim's "
         "direction", where=_other_sentence, cue="negation"),
    Rule("related_direction_opposite", U, _other("conflict"), "a related sentence of the source states the opposite "
         "direction; check the source", where=_other_sentence),
    Rule("related_direction_agrees", S, _other("agree"), "the source states the claim's direction and key terms",
         where=_other_sentence, cue="direction"),
    # -- negation and overstatement
    Rule("open_question", N, lambda e: e.on_subject and e.open_question, "the source leaves open what the claim "
         "states", cue="negation"),
    Rule("antonym", N, lambda e: e.antonym and e.claim_negated == e.source_denies,
         lambda e: f"the source states the opposite (“{e.antonym[1]}” where the claim says “{e.antonym[0]}”)",
         cue="direction"),
    Rule("negation_mismatch", N, lambda e: e.on_subject and e.claim_negated != e.source_denies,
         lambda e: f"the source {'denies what the claim asserts' if e.clause_negated else 'asserts what the claim denies'}",
         cue="negation"),
    Rule("overstated", P, lambda e: e.overstated and e.on_subject,
         lambda e: f"the claim overstates the source ({e.overstated})", cue="absolute"),
    # -- support by figures
    Rule("figures_order_agree", S, lambda e: (e.ordered == "agree" and not e.figure_unmatched
                                              and e.direction != "conflict" and not e.swapped),
         "the source's figures order the compared groups as the claim does", cue="figure"),
    Rule("no_difference_agrees", S, lambda e: (e.claim_equal and e.clause_states_equal and e.clause_cov >= e.t.weakly_related_at
                                               and not e.claim_axes and not e.clause_directions
                                               and not e.figure_unmatched and not e.claim_negated),
         "the source states the same absence of a difference", cue="overlap"),
    Rule("shared_denial", S, lambda e: (not e.figure_unmatched and not e.overstated and e.direction is None
                                        and not e.unconfirmed and e.shared_denial),
         "the source denies what the claim denies, over most of its key terms", cue="negation"),
    Rule("figure_unstated", N, lambda e: e.figure_unmatched,
         lambda e: f"no passage states the claim's figure {e.figure_unmatched}", cue="unstated"),
    Rule("figure_of_another_subject", U, lambda e: e.figure_other_subject,
         lambda e: f"{e.figure_other_subject}; check the source"),
    Rule("bound_unmet", U, lambda e: ((e.figures_matched or e.shares_agree) and e.on_subject and e.unconfirmed
                                      and e.bound_unmet),
         lambda e: f"the source's figures do not meet the claim's “{e.bound_unmet}”; check the source"),
    # the claim's figures in a clause that also states three quarters of its words and, if the claim
    # states a direction, that direction: the strong part of `figures_stated`, split off before it
    # was measured on held-out cases (the earlier judge gave it its highest confidence)
    Rule("figures_stated_closely", S, lambda e: ((e.figures_matched or e.shares_agree) and e.on_subject
                                                 and not e.unconfirmed and e.clause_cov >= e.t.supported_at),
         "the source's sentence states the claim's figures and most of its key terms", cue="figure"),
    Rule("figures_stated", S, lambda e: (e.figures_matched or e.shares_agree) and e.on_subject,
         "the source states the claim's figures and key terms", cue="figure"),
    Rule("figures_anchored", S, lambda e: e.anchored and e.figures_matched and not e.overstated
         and e.claim_negated == e.clause_negated,
         "the source's sentence states the claim's figures and some of its key terms", cue="figure"),
    # -- support by direction
    Rule("ranking_by_figures", U, lambda e: (e.direction == "agree" and e.ranked_side is None and e.superlative_pole
                                             and not e.superlative_focus and e.two_figures),
         "the claim ranks what the source gives in figures; check the source"),
    Rule("direction_agrees", S, lambda e: e.direction == "agree" and e.clause_cov >= 0.6,
         "the source states the claim's direction and key terms", cue="direction"),
    Rule("direction_paraphrased", S, lambda e: (e.direction == "agree" and e.clause_cov >= e.t.related_at
                                                and not e.counted_claim and not e.window_quantified
                                                and not e.clause_mixed),
         "the source states the claim's direction and most of its key terms", cue="direction"),
    Rule("comparison_of_contrast", U, lambda e: e.comparison_claim and e.contrast_focus and not e.contrast_claim,
         "the claim compares what the source contrasts; check the source"),
    # -- support by shared words
    Rule("figure_in_words", U, lambda e: (e.fraction_claim and not e.figures_matched and not e.shares_agree
                                          and e.related >= e.t.supported_at),
         "the source's sentence states the claim's key terms, but a figure in words cannot be checked against "
         "its figures; check the source"),
    Rule("direction_unread", U, lambda e: e.unconfirmed and e.cov >= e.t.supported_at,
         "the source's sentence states the claim's key terms, but not its direction in words the judge knows; "
         "check the source"),
    Rule("denial_in_sentence", U, lambda e: e.cov >= e.t.supported_at and e.focus_negated and not e.claim_negated,
         "the source's sentence states the claim's key terms and denies something; check what"),
    Rule("overlap_sentence", S, lambda e: e.cov >= e.t.supported_at,
         "the source's sentence states the claim's key terms", cue="overlap"),
    Rule("overlap_pair", S, lambda e: (e.pair is not None and e.pair_cov >= e.t.supported_at and not e.comparison_claim
                                       and (e.figures_matched or not e.counted)),
         lambda e: f"two adjacent sentences of the source state the claim's key terms ({e.pair_cov:.0%} together)",
         quote=lambda e: e.pair.reason, cue="overlap"),
    Rule("weak_overlap_denied", N, lambda e: e.cov >= e.t.weakly_related_at and e.clause_negated and not e.claim_negated,
         "the source's closest clause denies what the claim asserts (few of its key terms shared: check the source)",
         cue="negation"),
    Rule("ranking_by_figures", U, lambda e: e.cov >= e.t.weakly_related_at and e.superlative_claim and e.two_figures,
         "the claim ranks what the source gives in figures; check the source"),
    Rule("weak_overstated", P, lambda e: (_weak_overlap(e) or _all_terms(e)) and e.weak_overstated,
         lambda e: f"the claim overstates the source ({e.weak_overstated}); few of its key terms shared, check it",
         cue="absolute"),
    Rule("weak_overlap", S, _weak_overlap,
         "the source's sentence states most of the claim's key terms; no cue against it", cue="overlap"),
    Rule("all_terms", S, _all_terms, "every key term of the claim occurs in the source, most of them in this "
         "sentence; no cue against it", cue="overlap"),
    # -- nothing decides
    Rule("generalisation", P, lambda e: e.generalised,
         lambda e: f"the claim adds {e.generalised[0]} no sentence read states (“{e.generalised[1]}”)", cue="absolute"),
    Rule("null_finding", N, lambda e: e.null_finding,
         "the source reports no effect or difference where the claim states one",
         where=lambda e: e.null_finding.sentence, cue="negation"),
    Rule("no_cue", U, lambda e: True, "the source shares some of the claim's key terms, but no cue decides",
         cue="words"),
)


def decide(e: Evidence) -> Assessment:
    """The first rule of `RULES` that applies to `e` (the last always does)."""
    return next(rule for rule in RULES if rule.applies(e)).decide(e)


@dataclass(frozen=True)
class Guard:
    """A check every `supported` passes: it returns the assessment unchanged, or what it becomes."""

    name: str
    check: Callable[[str, str, Assessment], Assessment]


#: The contradiction guards, applied in this order to every `supported` whichever rule found it.
GUARDS: tuple[Guard, ...] = (
    # a share or figure of the claim's subject, in digits or words, that the evidence states otherwise
    Guard("guard_shares", guard_shares),
    # a direction opposite to the claim's in the evidence, or both directions
    Guard("guard_directions", lambda claim, lang, a: guard_directions(claim, a)),
    # a count of what the claim counts, with another number
    Guard("guard_counts", guard_counts),
    # a condition the evidence holds under that the claim leaves out
    Guard("guard_condition", guard_condition),
)


def guarded(claim: str, claim_lang: str, a: Assessment) -> Assessment:
    """`a` after every guard of `GUARDS`; a guard that changes it is named on it (`guards`)."""
    for guard in GUARDS:
        if a.verdict is not Verdict.supported:
            break
        checked = guard.check(claim, claim_lang, a)
        if checked.verdict is not a.verdict:
            checked = checked.model_copy(update={"guards": (*a.guards, guard.name)})
        a = checked
    return a


#: The names the judge gives outside the table: a claim without content words, and the ways a
#: claim of several clauses or parts is combined (`OfflineJudge._combine`, `_extra_part`): a
#: clause stated beside one not stated or contradicted (`clauses_partly_stated`), a supported
#: clause beside an unstated one (`clause_unstated`) or a paraphrased one (`clauses_paraphrased`),
#: a part the source hardly states (`extra_part`).
COMBINED = ("no_content_words", "clauses_partly_stated", "clause_unstated", "clauses_paraphrased", "extra_part")


def rule_names() -> list[str]:
    """Every rule, combination and guard name, in table order, once each."""
    return list(dict.fromkeys([r.name for r in RULES] + list(COMBINED) + [g.name for g in GUARDS]))
