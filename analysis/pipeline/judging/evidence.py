"""The offline judge's evidence record: what a claim and its focus sentence say, computed once.

`gather` reads a claim (or one clause of it) against the focus sentence of the retrieved passages
and the sentences ranked around it, and returns an `Evidence`: figures and units, directions,
negation, hedges and absolutes, coverage, shares, comparisons, the language pair and, when
retrieval ran an embedder, the focus sentence's similarity. Every rule of
`analysis.pipeline.judging.rules` reads this record and nothing else, so each fact is computed in
one place and a rule is one line of conditions.
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.pipeline.judging import lexical
from analysis.pipeline.judging.assessment import Sentence
from analysis.pipeline.judging.comparisons import (AS_AS, comparative, comparison_swapped, generalisation,
    overstatement)
from analysis.pipeline.judging.directions import compare_directions
from analysis.pipeline.judging.figures import (bound_count_unmet, compare_figures, comparison_by_figures,
    figure_of_another_subject, main_clause_negated, mixed_directions, pins_figures, states_decline,
    states_figure)
from analysis.pipeline.judging.scoring import Scorer, stems_of
from analysis.pipeline.judging.shares import share_of_the_group, shares_agreeing, shares_contradicted
from analysis.pipeline.judging.wording import (COMPARISON, CONTRAST, DIGITS, EQUAL, FRACTION, NULL_FINDING,
    NUMERAL, SIGNIFICANT, INTENSIFIED, SUPERLATIVE, only_insignificant, rates_differ, superlative_pole,
    superlative_side, two_figures)

Ranked = list[tuple[float, float, Sentence]]


@dataclass(frozen=True)
class Thresholds:
    """The coverage levels the rules read (shares of the claim's key terms found in a sentence)."""

    #: coverage from which a claimed change is contradicted by a clause reporting none, and the
    #: share of that clause's own terms the claim must state (the two speak of one subject)
    null_related_at: float = 0.28
    null_subject_at: float = 0.4
    #: coverage from which a clause judged `uncertain` beside a supported one is read as a paraphrase
    clause_paraphrased_at: float = 0.25
    #: coverage at which a focus stating two or more of the claim's figures is read at all
    pinned_at: float = 0.05
    #: coverage from which a claim stating a cause, scope or permanence no sentence states is partial
    generalised_at: float = 0.45
    supported_at: float = 0.75
    related_at: float = 0.5
    #: coverage at which the cues are read at all (near matches earn part credit: a paraphrase
    #: covers less than a copy)
    weakly_related_at: float = 0.45
    negation_related_at: float = 0.4
    #: below this coverage in every sentence (and window) of at least `unrelated_sentences`
    #: sentences read, the source does not state the claim
    unrelated_at: float = 0.4
    unrelated_sentences: int = 6
    #: coverage at which a focus stating the claim's figures is read at all
    anchored_at: float = 0.35
    #: a claim part covered this well next to one covered less than `extra_unstated_at`: partial
    extra_stated_at: float = 0.7
    extra_unstated_at: float = 0.35


@dataclass(frozen=True)
class Other:
    """A sentence other than the focus that a rule rests on, with its coverage."""

    sentence: Sentence
    coverage: float
    reason: str = ""


@dataclass(frozen=True)
class Evidence:
    """The facts of one claim (or clause) against its focus sentence; see the module docstring."""

    claim: str
    claim_lang: str
    focus: Sentence
    #: the judge's thresholds (coverage levels), read by the rules that compare coverage
    t: Thresholds
    #: key-term coverage of the focus sentence, of it with its neighbours, and the larger
    cov: float
    cov_window: float
    related: float
    #: how far coverage lies above `related_at` (0–1), for reasons only
    strength: float
    #: which band of coverage the claim falls in: "unrelated", "weak" or "read"
    zone: str
    sentences_read: int
    #: the focus states the claim's figures (two or more of them: `pinned`)
    anchored: bool
    #: figures: a contradiction, a figure no passage states, or the claim's figures matched
    figure_contradiction: str | None
    figure_unmatched: str | None
    figures_matched: bool
    #: another sentence, related a little, states another figure of the claim's unit
    figure_elsewhere: Other | None
    #: the groups' figures order them as the claim does ("agree"), the other way ("conflict")
    ordered: str | None
    ranked_side: str | None
    rate: str | None
    share_contradicted: str | None
    group_share: str | None
    shares_agree: bool
    #: the clause of the focus closest to the claim, its coverage, and whether it is on subject
    clause: str
    clause_cov: float
    on_subject: bool
    #: the focus clause's direction against the claim's: "agree", "conflict" or None
    direction: str | None
    swapped: bool
    swapped_conflict: bool
    mixed: bool
    claim_equal: bool
    #: the focus clause states no difference, and is on subject (`clause_equal`) or not (`clause_states_equal`)
    clause_equal: bool
    clause_states_equal: bool
    #: the focus sentence (`mixed`) or its closest clause (`clause_mixed`) states both directions of the claim's axis
    clause_mixed: bool
    claim_axes: frozenset[str]
    #: the claim states a direction the focus clause does not confirm
    unconfirmed: bool
    counted_claim: bool
    counted: bool
    quantified: bool
    window_quantified: bool
    #: the next related sentence on the claim's axis: ("denied" | "conflict" | "agree", sentence)
    related_direction: tuple[str, Other] | None
    overstated: str | None
    weak_overstated: str | None
    open_question: bool
    claim_negated: bool
    clause_negated: bool
    focus_negated: bool
    source_denies: bool
    antonym: tuple[str, str] | None
    #: claim and source deny the same thing over most of the claim's terms
    shared_denial: bool
    figure_other_subject: str | None
    bound_unmet: str | None
    superlative_pole: bool
    superlative_claim: bool
    superlative_focus: bool
    two_figures: bool
    comparison_claim: bool
    contrast_claim: bool
    contrast_focus: bool
    fraction_claim: bool
    claim_hedged: bool
    significant_claim: bool
    intensified_claim: bool
    only_insignificant: bool
    clause_directions: bool
    #: two adjacent sentences together cover the claim
    pair: Other | None
    pair_cov: float
    denied_nearby: bool
    absent_terms: bool
    states_decline: bool
    #: the claim adds a cause, scope or permanence no sentence read states, on a finding it could build on
    generalised: tuple[str, str] | None
    #: one of the most related sentences reports no effect where the claim states one
    null_finding: Other | None
    #: the language pair, claim then source ("de-en"), and the embedder's cosine of the focus when known
    languages: str
    similarity: float | None


def _related_direction(claim: str, scorer: Scorer, focus: Sentence, context: str, ranked: Ranked, t: Thresholds,
                       claim_axes: set[str], clause: str, counted_claim: bool,
                       claim_lang: str) -> tuple[str, Other] | None:
    """The focus states no direction the claim states: the next related sentence that does decides."""
    if claim_axes & set(lexical.directions(clause)):
        return None
    for other_cov, other_window, other in ranked:
        if max(other_cov, other_window) < 0.4:
            break
        other_clause = scorer.closest_clause(other)
        if other is focus or other_cov < 0.2 or not claim_axes & set(lexical.directions(other_clause)):
            continue
        found = compare_directions(claim, other_clause)
        close = max(other_cov, scorer.coverage(other_clause, other.lang))
        if close < t.weakly_related_at and other_window < 0.6 and found != "agree":
            continue  # a sentence sharing a word or two, in no related context, does not contradict
        if found == "agree" and lexical.negated(claim) != lexical.negated(other_clause):
            return "denied", Other(other, other_cov)
        if found == "conflict":
            return "conflict", Other(other, other_cov)
        if found == "agree" and counted_claim and not compare_figures(claim, claim_lang, other, context).matched:
            return None  # "a 16 % increase" against an increase of 18 %: the figure may not be the source's
        if found == "agree" and (close >= 0.6 or (other_cov >= 0.3 and other_window >= 0.8)):
            return "agree", Other(other, other_cov)
        return None
    return None


def _null_finding(claim: str, scorer: Scorer, ranked: Ranked, t: Thresholds) -> Other | None:
    """A claimed change or difference against one of the most related sentences whose closest clause
    reports none on the claim's subject ("did not change", "keinen messbaren Einfluss")."""
    if (lexical.negated(claim) or lexical.hedged(claim) or EQUAL.search(claim)
            or not (lexical.directions(claim) or COMPARISON.search(claim) or INTENSIFIED.search(claim))):
        return None
    best = max((c for c, _, _ in ranked), default=0.0)
    claim_lang = lexical.language(claim)
    for sentence_cov, _, sentence in ranked[:4]:
        clause = scorer.closest_clause(sentence)
        clause_cov = max(sentence_cov, scorer.coverage(clause, sentence.lang))
        if clause_cov < t.null_related_at or clause_cov < best - 0.15:
            continue
        if not (NULL_FINDING.search(clause) or only_insignificant(clause)):
            clause = sentence.text  # "… lag bei 38 km und unterschied sich nicht wesentlich von …"
            if not (NULL_FINDING.search(clause) or only_insignificant(clause)):
                continue
        if lexical.directions(clause):
            continue
        # about the claim's subject: most of the clause's own terms are the claim's
        if Scorer(clause, sentence.lang, [sentence]).coverage(claim, claim_lang) < t.null_subject_at:
            continue
        return Other(sentence, clause_cov)
    return None


def _shared_denial(claim: str, clause: str, clause_cov: float, cov_window: float, t: Thresholds) -> bool:
    """Claim and source deny the same thing in other words ("had no influence on" / "did not
    measurably affect"), over most of the claim's terms; a figure or direction needs its own cue."""
    if max(clause_cov, cov_window) < t.negation_related_at:
        return False
    if not (lexical.negated(claim) and lexical.negated(clause)) or lexical.negated_only_by_never(claim):
        return False
    return not (lexical.quantities(claim, lexical.language(claim)) or lexical.directions(claim))


def gather(claim: str, claim_lang: str, focus: Sentence, scorer: Scorer, cov: float, cov_window: float,
           context: str, ranked: Ranked, scored: list, t: Thresholds) -> Evidence:
    """The evidence record of `claim` against `focus` (the sentence covering most of its terms)."""
    related = max(cov, cov_window)
    figures_claimed = [q for q in lexical.quantities(claim, claim_lang) if not q.weak]
    anchored = states_figure(figures_claimed, focus) or pins_figures(figures_claimed, focus, context, claim_lang)
    pinned = anchored and len({q.value for q in figures_claimed}) >= 2
    anchored_at = t.pinned_at if pinned else t.anchored_at
    if related < t.unrelated_at and len(ranked) >= t.unrelated_sentences and not anchored:
        zone = "unrelated"
    elif related < (anchored_at if anchored else t.weakly_related_at):
        zone = "weak"
    else:
        zone = "read"
    strength = max(0.0, min(1.0, (related - t.related_at) / (1 - t.related_at)))
    figures = compare_figures(claim, claim_lang, focus, context)
    figure_elsewhere = _figure_elsewhere(claim, claim_lang, scored, context) if related < t.related_at else None
    ordered = comparison_by_figures(claim, claim_lang, focus) if related >= t.related_at else None

    def terms(text: str, lang: str) -> set[str]:
        return set(stems_of(text, lang)) | set(DIGITS.findall(text))

    ranked_side = superlative_side(claim, terms(lexical.claim_core(claim), claim_lang), focus.text,
                                   lambda text: terms(text, focus.lang))
    shares = (shares_contradicted(claim, claim_lang, focus.text, focus.window, focus.lang)
              if related >= t.related_at else None)
    clause = scorer.closest_clause(focus)
    clause_cov = max(cov, scorer.coverage(clause, focus.lang))
    on_subject = clause_cov >= t.related_at
    claim_negated, clause_negated = lexical.negated(claim), lexical.negated(clause)
    direction = compare_directions(claim, clause) if on_subject else None
    if direction == "agree" and claim_negated != clause_negated:
        direction = None  # "did not reduce" against "reduced": the negation decides
    swapped = on_subject and comparison_swapped(claim, claim_lang, focus.text, focus.lang)
    as_claim, as_focus = AS_AS.search(claim), AS_AS.search(focus.text)
    swapped_conflict = swapped and (
        compare_directions(claim, focus.text) == "agree"
        or (comparative(claim) is not None and comparative(claim) == comparative(focus.text))
        or bool(as_claim and as_focus and as_claim.group(0).lower() == as_focus.group(0).lower()))
    if swapped:
        direction = None  # "A weaker than B" for "B stronger than A": agreement a word list cannot confirm
    claim_axes = set(lexical.directions(claim))
    counted_claim = bool(figures_claimed or lexical.quantities(claim, claim_lang) or NUMERAL.search(claim)
                         or lexical.shares(claim, claim_lang))
    unconfirmed = bool(claim_axes) and direction is None
    related_direction = (_related_direction(claim, scorer, focus, context, ranked, t, claim_axes, clause,
                                            counted_claim, claim_lang) if unconfirmed else None)

    def overstatement_of(read: str) -> str | None:
        over = overstatement(claim, focus.window, read)
        added = None if over else generalisation(claim, ranked, kinds=("a cause", "a scope", "a permanence"))
        return over or (f"{added[0]} “{added[1]}” no sentence read states" if added else None)

    overstated = overstatement_of(clause) if on_subject else overstatement(claim, focus.window)
    source_denies = clause_negated or (claim_negated and lexical.negated(focus.text))
    if claim_negated and not source_denies and not main_clause_negated(claim):
        source_denies = True  # "…, weil dafür kein Zahnarzt nötig war": the negation is the reason's
    generalised = generalisation(claim, ranked) if related >= t.generalised_at else None
    if generalised and (lexical.negated(focus.window) or EQUAL.search(focus.window)
                        or only_insignificant(focus.window)
                        or compare_directions(claim, focus.window) == "conflict"
                        or lexical.open_question(focus.window)):
        generalised = None  # the closest sentence argues against the claim instead of building it
    pair_cov, pair_text = max(((scorer.coverage(p, focus.lang), p) for p in focus.pairs if p), default=(0.0, None))
    # retrieval sets the embedder's focus sentence and its cosine on the first hit (when an embedder ran)
    top = next((s.hit for _, _, _, s in scored if s.rank == 0), focus.hit)
    similarity = getattr(top, "focus_similarity", None)
    return Evidence(
        claim=claim, claim_lang=claim_lang, focus=focus, t=t, cov=cov, cov_window=cov_window, related=related,
        strength=strength, zone=zone, sentences_read=len(ranked), anchored=anchored,
        figure_contradiction=figures.contradiction, figure_unmatched=figures.unmatched,
        figures_matched=figures.matched, figure_elsewhere=figure_elsewhere, ordered=ordered,
        ranked_side=ranked_side, rate=rates_differ(claim, focus.text),
        share_contradicted=shares[0] if shares is not None and not shares[1] else None,
        group_share=share_of_the_group(claim, claim_lang, focus.text, focus.lang),
        shares_agree=shares_agreeing(claim, claim_lang, focus.text, focus.lang),
        clause=clause, clause_cov=clause_cov, on_subject=on_subject, direction=direction, swapped=swapped,
        swapped_conflict=swapped_conflict, mixed=mixed_directions(claim, focus.text),
        claim_equal=bool(EQUAL.search(claim)), clause_equal=bool(EQUAL.search(clause)) and on_subject,
        clause_states_equal=bool(EQUAL.search(clause)), clause_mixed=mixed_directions(claim, clause),
        claim_axes=frozenset(claim_axes), unconfirmed=unconfirmed, counted_claim=counted_claim,
        counted=bool(lexical.quantities(claim, claim_lang) or NUMERAL.search(claim)),
        quantified=any(not q.weak for q in lexical.quantities(focus.text, focus.lang)),
        window_quantified=any(not q.weak for q in lexical.quantities(focus.window, focus.lang)),
        related_direction=related_direction, overstated=overstated,
        weak_overstated=overstated or overstatement_of(clause),
        open_question=lexical.open_question(focus.text) and not lexical.open_question(claim),
        claim_negated=claim_negated, clause_negated=clause_negated, focus_negated=lexical.negated(focus.text),
        source_denies=source_denies,
        antonym=lexical.antonym_swap(claim, claim_lang, clause, focus.lang) if on_subject else None,
        shared_denial=_shared_denial(claim, clause, clause_cov, cov_window, t),
        figure_other_subject=figure_of_another_subject(claim, claim_lang, focus, scorer)
        if (figures.matched or shares_agreeing(claim, claim_lang, focus.text, focus.lang)) and on_subject else None,
        bound_unmet=bound_count_unmet(claim, claim_lang, focus),
        superlative_pole=bool(superlative_pole(claim)), superlative_claim=bool(SUPERLATIVE.search(claim)),
        superlative_focus=bool(SUPERLATIVE.search(focus.text)), two_figures=bool(two_figures(focus.text)),
        comparison_claim=bool(COMPARISON.search(claim)), contrast_claim=bool(CONTRAST.search(claim)),
        contrast_focus=bool(CONTRAST.search(focus.text)), fraction_claim=bool(FRACTION.search(claim)),
        claim_hedged=lexical.hedged(claim), significant_claim=bool(SIGNIFICANT.search(claim)),
        intensified_claim=bool(INTENSIFIED.search(claim)), only_insignificant=only_insignificant(focus.text),
        clause_directions=bool(lexical.directions(clause)),
        pair=Other(focus, cov, pair_text) if pair_text is not None else None, pair_cov=pair_cov,
        denied_nearby=not claim_negated and any(
            other is not focus and other_cov >= cov - 0.15 and lexical.negated(other.text)
            for other_cov, _, other in ranked[:6]),
        absent_terms=bool(scorer.absent_terms(focus.lang)), states_decline=states_decline(clause),
        generalised=generalised, null_finding=_null_finding(claim, scorer, ranked, t),
        languages=f"{claim_lang}-{focus.lang}", similarity=similarity)


def _figure_elsewhere(claim: str, claim_lang: str, scored: list, context: str) -> Other | None:
    """When no sentence is clearly about the claim: a sentence sharing some of its terms that states
    another figure of the unit the claim measures ("six weeks" for "12 weeks")."""
    if not any(q.unit and not q.weak for q in lexical.quantities(claim, claim_lang)):
        return None
    for cov, cov_window, _, sentence in sorted(scored, key=lambda x: x[:3], reverse=True):
        if max(cov, cov_window) < 0.25:
            break
        figures = compare_figures(claim, claim_lang, sentence, context, units_only=True)
        if figures.contradiction:
            return Other(sentence, cov, figures.contradiction)
    return None
