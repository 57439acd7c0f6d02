"""`OfflineJudge`, the default judge: deterministic, no network.

It decides only what lexical evidence decides (figures and units, direction, negation, absolute
words against hedges; cues in `analysis.pipeline.judging.lexical`) and says `uncertain` otherwise,
with the best sentence as evidence.
"""

from __future__ import annotations


from analysis.pipeline.judging import lexical
from analysis.pipeline.retrieval.index import Hit

from analysis.pipeline.judging.assessment import Assessment, Sentence
from analysis.pipeline.judging.comparisons import (AS_AS, comparative, comparison_swapped, generalisation,
    overstatement)
from analysis.pipeline.judging.directions import (compare_directions, guard_condition, guard_directions,
    part_terms)
from analysis.pipeline.judging.figures import (bound_count_unmet, compare_figures, comparison_by_figures,
    figure_of_another_subject, main_clause_negated, mixed_directions, pins_figures, states_decline,
    states_figure, states_share)
from analysis.pipeline.judging.scoring import Scorer, across_languages, split_sentences, stems_of
from analysis.pipeline.judging.shares import (guard_counts, guard_shares, share_of_the_group,
    shares_agreeing, shares_contradicted)
from analysis.pipeline.judging.verdicts import Judgement, Verdict, no_passages
from analysis.pipeline.judging.wording import (CLAUSE_BREAK, COMPARISON, CONTRAST, DIGITS, EQUAL, FRACTION,
    INTENSIFIED, NULL_FINDING, NUMERAL, PART_BREAK, SIGNIFICANT, SUPERLATIVE, only_insignificant,
    rates_differ, superlative_pole, superlative_side, two_figures)
from analysis.pipeline.providers.client import clip

class OfflineJudge:
    """A deterministic judge that decides only what lexical evidence can decide.

    The claim's content terms (Snowball stems in the claim's language, English or German,
    without stop words, cue words, unit words or light verbs; German compounds meet their
    parts) are looked up in every sentence of the retrieved passages; a term not found earns
    part credit for a near match (`lexical.similarity`: a near-synonym of a short bilingual
    list, compounds of near-synonyms, character 3–5-gram overlap, a German compound sharing a
    leading part). The sentence covering most of them is the *focus* (a sentence that states
    the claim's figures gets a head start); its text is the evidence, verbatim, with its
    passage's page. Then, for the focus (the clause of it closest to the claim, for direction
    and negation):

    - coverage below `unrelated_at` in every sentence and window of a source of at least
      `unrelated_sentences` sentences, and no figure of the claim in the focus →
      `not_supported` (low: the source does not state it);
    - coverage below `weakly_related_at`, even with the neighbouring sentences → `uncertain`,
      unless claim and source deny the same thing (→ `supported`, medium);
    - a figure of the claim that no passage states, while the focus states another figure
      of the same unit (12 % for 21 %, 3.5 h for 35 h), or the same figure in another
      unit → `not_supported` (high confidence);
    - a direction opposite to the focus's on the same axis (increase/decrease,
      improve/worsen, more/less often; steigen/sinken, häufiger/seltener …), or a comparison
      the other way round ("A stronger than B" for "B stronger than A") → `not_supported`
      (medium); a focus stating both directions → `uncertain`;
    - the claim asserts what the focus denies ("unchanged" included), or the reverse →
      `not_supported` (medium); both deny it → `supported` (medium); a claimed change or
      difference that one of the most related sentences reports as none on the same subject
      ("did not change", "keinen messbaren Einfluss"), even at low coverage → `not_supported`
      (`_null_finding`);
    - an overstatement → `partially_supported` (medium): an absolute claim ("all", "always",
      "eliminates", "vollständig") against hedged or plain source language, "all" against a
      majority, a word of certainty or cause the source lacks ("reliably", "caused",
      "nachweislich"), or a plain claim of what the source states as possible ("may reduce",
      "könnte verringern");
    - a figure of the claim that no passage states at all (and no figure of its unit near
      the focus) → `not_supported` (low: the source does not state it);
    - matching figures or a matching direction with coverage ≥ `related_at` →
      `supported` (high); matching figures in the focus with coverage ≥ `weakly_related_at`
      → `supported` (medium); coverage ≥ `supported_at` in the focus or in it and an adjacent
      sentence (the two quoted) without a cue → `supported` (medium); coverage ≥
      `weakly_related_at` with no figure, numeral, direction, comparison or contrast, or
      with every key term of the claim somewhere in the source and nothing against it →
      `supported` (low);
    - anything else (a share in words, a comparison of what the source contrasts, a figure
      that may belong to another subject, middling coverage) → `uncertain` (low).

    A contradicted figure or direction is never `supported`: shares in words count as figures
    (`lexical.shares`: "about half", "weniger als ein Fünftel", "the entire", "the rest", 48 %),
    and every `supported`, whichever rule found it, passes one guard (`_guard_shares`) that the
    evidence and its neighbouring sentences state no share of the claim's subject that
    disagrees with the claim's. A claim of several clauses
    ("…, whereas …", "; ", ", and …") is judged as a whole and clause by clause: a
    contradiction in any clause decides; a clause supported, or plausibly stated, next to one
    the source does not state makes a partial (low); so does a claim part ("…, and Y",
    "…, which Z") covered less than `extra_unstated_at` next to one covered at least
    `extra_stated_at` (`_extra_part`).
    Confidences fall in `CONFIDENCE_BANDS`.
    """

    name = "offline"

    def __init__(self, *, supported_at: float = 0.75, related_at: float = 0.5, negation_related_at: float = 0.4,
                 unrelated_at: float = 0.4, unrelated_sentences: int = 6, weakly_related_at: float = 0.45,
                 anchored_at: float = 0.35, extra_stated_at: float = 0.7, extra_unstated_at: float = 0.35,
                 generalised_at: float = 0.45, clause_paraphrased_at: float = 0.25,
                 pinned_at: float = 0.05, null_related_at: float = 0.28,
                 null_subject_at: float = 0.4) -> None:
        #: coverage from which a clause reporting no effect contradicts a claim of one, and the share of
        #: that clause's own terms the claim must state (the two speak of one subject)
        self.null_related_at, self.null_subject_at = null_related_at, null_subject_at
        #: coverage from which a clause judged `uncertain` beside a supported one is read as a paraphrase
        self.clause_paraphrased_at = clause_paraphrased_at
        #: coverage at which a focus stating two or more of the claim's figures is read for support
        self.pinned_at = pinned_at
        #: coverage from which a claim stating a cause, scope or permanence no sentence states is partial
        self.generalised_at = generalised_at
        self.supported_at = supported_at
        self.related_at = related_at
        #: coverage at which the cues are read at all, and most terms without a cue against them
        #: are a weak support (near matches earn part credit, so a paraphrase covers less than a copy)
        self.weakly_related_at = weakly_related_at
        #: coverage at which a shared denial supports the claim
        self.negation_related_at = negation_related_at
        #: below this coverage in every sentence (and window) of at least `unrelated_sentences`
        #: sentences read, the source does not state the claim: `not_supported`
        self.unrelated_at = unrelated_at
        self.unrelated_sentences = unrelated_sentences
        #: a claim part covered this well next to one covered less than `extra_unstated_at`: partial
        #: coverage at which a focus stating the claim's figures is read for support at all
        self.anchored_at = anchored_at
        self.extra_stated_at = extra_stated_at
        self.extra_unstated_at = extra_unstated_at

    def judge(self, claim: str, passages: list[Hit]) -> Judgement:
        """Judge `claim` against `passages` (best first)."""
        found = self.assessment(claim, passages)
        if found is None:
            return no_passages()
        if found.verdict is Verdict.uncertain:
            found = found.model_copy(update={"reason": across_languages(claim, passages) + found.reason})
            if getattr(passages[0], "focus", None):  # the embedder's evidence sentence of the whole source
                return self._judgement(found).model_copy(update={"evidence": passages[0].focus,
                                                                 "evidence_page": passages[0].focus_page})
        return self._judgement(found)

    def assessment(self, claim: str, passages: list[Hit]) -> Assessment | None:
        """What `judge` decides, with the rule's cue and the focus sentence (None without passages):
        for measuring the judge (scripts/uncertain_pool.py), not for callers of a `Judge`."""
        sentences = split_sentences(passages)
        if not sentences:
            return None
        whole = self._assess(claim, sentences)
        lang = lexical.language(claim)
        clauses = [c for c in CLAUSE_BREAK.split(claim) if c and len(set(lexical.content_terms(c, lang))) >= 3]
        found = whole if len(clauses) < 2 else self._combine(whole, [self._assess(c, sentences) for c in clauses])
        return self._extra_part(claim, lang, sentences, found)

    def _extra_part(self, claim: str, lang: str, sentences: list[Sentence], found: Assessment) -> Assessment:
        """A claim of two parts ("X rose, and Y fell"; "…, which widened Z") of which the source
        states one closely and the other hardly at all is `partially_supported`: it says more than
        the source. Contradictions (a figure, a direction, a denial) decide before this."""
        if found.verdict is Verdict.partially_supported or (
                found.verdict is Verdict.not_supported and found.cue != "absent"):
            return found
        parts = [p for p in PART_BREAK.split(claim) if p and part_terms(p, lang)]
        if len(parts) < 2:
            return found
        covered = []
        for part in parts:
            scorer = Scorer(part, lang, sentences)
            figures = [q for q in lexical.quantities(part, lang) if not q.weak]
            best = max(((max(scorer.coverage(s.text, s.lang), scorer.coverage(s.window, s.lang)), s)
                        for s in sentences if scorer.terms(s.lang)), key=lambda x: x[0], default=(0.0, None))
            # a part whose figures its closest sentence states counts as stated with fewer of its words
            stated = best[1] is not None and (best[0] >= self.extra_stated_at or (
                best[0] >= self.anchored_at and states_figure(figures, best[1])))
            covered.append((best[0], part, best[1], stated))
        stated_parts = [c for c in covered if c[3]]
        low, extra, _, _ = min(covered, key=lambda x: x[0])
        if not stated_parts or low >= self.extra_unstated_at:
            return found
        high, _, sentence, _ = max(stated_parts, key=lambda x: x[0])
        if sentence is None:
            return found
        return Assessment(verdict=Verdict.partially_supported, confidence=0.5, cue="clauses", coverage=high,
                           sentence=sentence, reason=f"the source states part of the claim ({high:.0%} of its key "
                                                     f"terms in one sentence), not “{clip(extra.strip(), 80)}” "
                                                     f"({low:.0%})")

    # -- one claim (or clause) against the sentences --

    def _assess(self, claim: str, sentences: list[Sentence]) -> Assessment:
        claim_lang = lexical.language(claim)
        scorer = Scorer(claim, claim_lang, sentences)
        scored = [(scorer.coverage(s.text, s.lang), scorer.coverage(s.window, s.lang), -s.rank, s)
                  for s in sentences if scorer.terms(s.lang)]
        if not scored:
            return Assessment(verdict=Verdict.uncertain, confidence=0.1, cue="weak", coverage=0.0, sentence=None,
                               reason="the claim has no content words to look for")
        # A sentence stating the claim's figure (2.1 %, "three times") is likelier the one the claim draws on.
        # So is one stating its share in other words ("jeder Sechste" for 17 %).
        claimed = [q for q in lexical.quantities(claim, claim_lang) if not q.weak]
        claimed_shares = [sh for sh in lexical.shares(claim, claim_lang) if sh.form == "fraction"]
        # Two or more figures of the claim in one sentence pin it down whatever words it uses.
        several = len({q.value for q in claimed}) >= 2
        cov, cov_window, _, focus = max(scored, key=lambda x: (
            x[0] + 0.2 * (states_figure(claimed, x[3]) or states_share(claimed_shares, x[3]))
            + 0.3 * (several and states_figure(claimed, x[3])), x[1], x[2]))
        context = " ".join(s.text for s in sentences)
        if max(cov, cov_window) < self.related_at:
            figure = self._figure_elsewhere(claim, claim_lang, scored, context)
            if figure is not None:
                return figure
        # For the direction of a related sentence, its neighbours count: "Ihr Anteil stieg" refers back.
        ranked = [(c, w, s) for c, w, _, s in sorted(scored, key=lambda x: (max(x[0], x[1]), x[0], x[2]),
                                                     reverse=True)]
        decided = self._decide(claim, claim_lang, focus, scorer, cov, cov_window, context, ranked)
        if decided.verdict is Verdict.uncertain and decided.cue in ("words", "absent"):
            decided = self._null_finding(claim, claim_lang, scorer, ranked) or decided
        return guard_condition(claim, claim_lang, guard_counts(claim, claim_lang, guard_directions(claim, guard_shares(
            claim, claim_lang, decided))))

    def _null_finding(self, claim: str, claim_lang: str, scorer: Scorer,
                      ranked: list[tuple[float, float, Sentence]]) -> Assessment | None:
        """A claim that something changed or differed ("substantially increased serum potassium",
        "markedly more often", "deutlich geringere Absterberate") against one of the source's most
        related sentences whose closest clause reports no effect, change or difference on the
        claim's subject ("Serum potassium did not change", "keinen messbaren Einfluss auf die
        Absterberate") is `not_supported`, even where the two share few words: the source's
        finding is the null one. A hedged, negated or equating claim is no such claim."""
        if (lexical.negated(claim) or lexical.hedged(claim) or EQUAL.search(claim)
                or not (lexical.directions(claim) or COMPARISON.search(claim) or INTENSIFIED.search(claim))):
            return None
        best = max((c for c, _, _ in ranked), default=0.0)
        for sentence_cov, _, sentence in ranked[:4]:
            clause = scorer.closest_clause(sentence)
            clause_cov = max(sentence_cov, scorer.coverage(clause, sentence.lang))
            if clause_cov < self.null_related_at or clause_cov < best - 0.15:
                continue
            if not (NULL_FINDING.search(clause) or only_insignificant(clause)):
                clause = sentence.text  # "… lag bei 38 km und unterschied sich nicht wesentlich von …"
                if not (NULL_FINDING.search(clause) or only_insignificant(clause)):
                    continue
            if lexical.directions(clause):
                continue
            # ... about the claim's subject: most of the clause's own terms are the claim's ("no effect on
            # pupils' enjoyment of mathematics" is about another outcome than "raised attainment")
            if Scorer(clause, sentence.lang, [sentence]).coverage(claim, claim_lang) < self.null_subject_at:
                continue
            return Assessment(verdict=Verdict.not_supported, confidence=0.5, cue="negation", coverage=clause_cov,
                               sentence=sentence, reason="the source reports no effect or difference where the "
                                                         "claim states one")
        return None

    def _figure_elsewhere(self, claim: str, claim_lang: str, scored: list, context: str) -> Assessment | None:
        """When no sentence is clearly about the claim: a sentence that shares some of its terms
        and states another figure of the unit the claim measures ("six weeks" for "12 weeks")
        still contradicts it (medium confidence: the subject match is loose)."""
        if not any(q.unit and not q.weak for q in lexical.quantities(claim, claim_lang)):
            return None
        for cov, cov_window, _, sentence in sorted(scored, key=lambda x: x[:3], reverse=True):
            if max(cov, cov_window) < 0.25:
                break
            figures = compare_figures(claim, claim_lang, sentence, context, units_only=True)
            if figures.contradiction:
                return Assessment(verdict=Verdict.not_supported, confidence=0.62, cue="figure", coverage=cov,
                                   sentence=sentence, reason=figures.contradiction)
        return None

    def _decide(self, claim: str, claim_lang: str, focus: Sentence, scorer: Scorer, cov: float,
                cov_window: float, context: str, ranked: list[tuple[float, float, Sentence]]) -> Assessment:
        def result(verdict: Verdict, confidence: float, cue: str, reason: str) -> Assessment:
            return Assessment(verdict=verdict, confidence=round(confidence, 3), cue=cue, coverage=cov,
                               sentence=focus, reason=reason)

        related = max(cov, cov_window)
        figures_claimed = [q for q in lexical.quantities(claim, claim_lang) if not q.weak]
        anchored = states_figure(figures_claimed, focus) or pins_figures(figures_claimed, focus, context,
                                                                            claim_lang)
        # a sentence stating two or more of the claim's figures pins it down: read on with few of its words
        pinned = anchored and len({q.value for q in figures_claimed}) >= 2
        anchored_at = self.pinned_at if pinned else self.anchored_at

        def generalised() -> Assessment | None:
            # A claim on the source's topic that states a cause, a scope or a permanence the source
            # nowhere states ("prevents", "across England", "dauerhaft") says more than it.
            found = generalisation(claim, ranked) if related >= self.generalised_at else None
            if found is None:
                return None
            # ... but only where its closest sentence states a finding the claim could build on: one
            # that denies, reverses or finds no difference argues against the claim instead.
            if (lexical.negated(focus.window) or EQUAL.search(focus.window) or only_insignificant(focus.window)
                    or compare_directions(claim, focus.window) == "conflict" or lexical.open_question(focus.window)):
                return None
            kind, word = found
            return result(Verdict.partially_supported, 0.45, "absolute",
                          f"the claim adds {kind} no sentence read states (“{word}”)")

        if related < self.unrelated_at and len(ranked) >= self.unrelated_sentences and not anchored:
            # Few shared words is what a paraphrase looks like too: no proof that the source is silent.
            return generalised() or result(Verdict.uncertain, 0.1 + 0.35 * related,
                                           "absent", f"no sentence of the {len(ranked)} read states the claim's key terms")
        # A sentence stating the claim's figures is read on with fewer of its words ("6,4 km/h langsamer").
        if related < (anchored_at if anchored else self.weakly_related_at):
            agreed = self._negations_agree(claim, focus, scorer, cov, cov_window)
            if agreed is not None:
                return agreed
            return generalised() or result(Verdict.uncertain, 0.1 + 0.35 * related, "words",
                                           "the retrieved passages share few of the claim's key terms")
        strength = min(1.0, (related - self.related_at) / (1 - self.related_at))
        figures = compare_figures(claim, claim_lang, focus, context)
        if figures.contradiction:
            return result(Verdict.not_supported, 0.78 + 0.17 * strength, "figure", figures.contradiction)
        ordered = comparison_by_figures(claim, claim_lang, focus) if related >= self.related_at else None
        if ordered == "conflict":
            return result(Verdict.not_supported, 0.65 + 0.1 * strength, "direction",
                          "the source's figures order the compared groups the other way round")
        def terms(text: str, lang: str) -> set[str]:
            return set(stems_of(text, lang)) | set(DIGITS.findall(text))

        ranked_side = superlative_side(claim, terms(lexical.claim_core(claim), claim_lang), focus.text,
                                        lambda text: terms(text, focus.lang))
        if ranked_side == "conflict":
            return result(Verdict.not_supported, 0.6 + 0.1 * strength, "direction",
                          "the source ranks the claim's subject at the other end")
        rate = rates_differ(claim, focus.text)
        if rate and (related >= self.related_at or anchored):
            return result(Verdict.not_supported, 0.7 + 0.1 * strength, "figure", rate)
        if related >= self.related_at:
            shares = shares_contradicted(claim, claim_lang, focus.text, focus.window, focus.lang)
            if shares is not None and not shares[1]:
                return result(Verdict.not_supported, 0.7 + 0.1 * strength, "figure",
                              f"the source states another share ({shares[0]})")
        group_share = share_of_the_group(claim, claim_lang, focus.text, focus.lang)
        if group_share:
            return result(Verdict.not_supported, 0.7 + 0.1 * strength, "figure", group_share)
        shares_agree = shares_agreeing(claim, claim_lang, focus.text, focus.lang)
        clause = scorer.closest_clause(focus)
        clause_cov = max(cov, scorer.coverage(clause, focus.lang))
        on_subject = clause_cov >= self.related_at
        direction = compare_directions(claim, clause) if on_subject else None
        if direction == "agree" and lexical.negated(claim) != lexical.negated(clause):
            direction = None  # "did not reduce" against "reduced": the negation below decides
        swapped = on_subject and comparison_swapped(claim, claim_lang, focus.text, focus.lang)
        if swapped and (compare_directions(claim, focus.text) == "agree"
                        or (comparative(claim) is not None and comparative(claim) == comparative(focus.text))
                        or (AS_AS.search(claim) and AS_AS.search(focus.text)
                            and AS_AS.search(claim).group(0).lower() == AS_AS.search(focus.text).group(0).lower())):
            # "A stronger than B" against "B stronger than A": the sides are exchanged
            return result(Verdict.not_supported, 0.6 + 0.1 * strength, "direction",
                          "the source compares the other way round")
        if swapped:
            direction = None  # "A weaker than B" for "B stronger than A": agreement a word list cannot confirm
        if direction == "agree" and mixed_directions(claim, focus.text) and ranked_side != "agree":
            # "strongest in the afternoon and weakened after sunset": which half the claim means is a reading
            return result(Verdict.uncertain, 0.4, "weak", "the source's sentence states both directions; "
                          "check which one the claim's subject takes")
        if direction == "conflict":
            return result(Verdict.not_supported, 0.68 + 0.06 * strength, "direction",
                          "the source states the opposite direction")
        claim_equal, clause_equal = bool(EQUAL.search(claim)), bool(EQUAL.search(clause)) and on_subject
        if (clause_equal and not claim_equal and not lexical.negated(claim) and not lexical.directions(clause)
                and ({"quantity", "frequency"} & set(lexical.directions(claim)) or COMPARISON.search(claim))):
            # "promoted less often" against "promotion rates were the same"
            return result(Verdict.not_supported, 0.6 + 0.1 * strength, "direction",
                          "the source states no difference where the claim states one")
        if (on_subject and not claim_equal and not lexical.negated(claim) and SIGNIFICANT.search(claim)
                and only_insignificant(focus.text)):
            # "the difference was still significant" against "no longer statistically significant"
            return result(Verdict.not_supported, 0.6 + 0.1 * strength, "negation",
                          "the source finds not significant what the claim calls significant")
        if (on_subject and not claim_equal and not lexical.negated(claim) and not lexical.hedged(claim)
                and only_insignificant(focus.text)
                and ({"quantity", "frequency", "quality"} & set(lexical.directions(claim)) or COMPARISON.search(claim))):
            # "deutlich weniger … als" against "11 % und 10 %; der Unterschied war nicht signifikant":
            # a clear difference is contradicted; a plain one ("reduces") overstates a trend the
            # source reports without significance
            if INTENSIFIED.search(claim):
                return result(Verdict.not_supported, 0.6 + 0.1 * strength, "direction",
                              "the source finds no significant difference where the claim states a clear one")
            return result(Verdict.partially_supported, 0.55, "absolute",
                          "the claim states as a finding a difference the source found not significant")
        claim_axes = set(lexical.directions(claim))
        unconfirmed = bool(claim_axes) and direction is None
        # a claim with a figure of any kind (digits, words, shares, multiples) is met by its figures
        counted_claim = bool(lexical.quantities(claim, claim_lang) or NUMERAL.search(claim)
                             or lexical.shares(claim, claim_lang))
        if unconfirmed and not claim_axes & set(lexical.directions(clause)):
            # The focus states no direction the claim states: the next related sentence that does decides.
            for other_cov, other_window, other in ranked:
                if max(other_cov, other_window) < 0.4:
                    break
                other_clause = scorer.closest_clause(other)
                if other is focus or other_cov < 0.2 or not claim_axes & set(lexical.directions(other_clause)):
                    continue
                found = compare_directions(claim, other_clause)
                if (max(other_cov, scorer.coverage(other_clause, other.lang)) < self.weakly_related_at
                        and other_window < 0.6 and found != "agree"):
                    continue  # a sentence sharing a word or two, in no related context, does not contradict
                if found == "agree" and lexical.negated(claim) != lexical.negated(other_clause):
                    # "did not reduce" against "reduced": the same verb, the opposite statement
                    return Assessment(verdict=Verdict.not_supported, confidence=round(0.6 + 0.1 * strength, 3),
                                       cue="negation", coverage=other_cov, sentence=other,
                                       reason="a related sentence of the source denies the claim's direction")
                if found == "conflict":
                    # Not the sentence closest to the claim: it may speak of something else (a contradicted
                    # direction is never supported, but this is no proof of one either).
                    return Assessment(verdict=Verdict.uncertain, confidence=0.4, cue="weak", coverage=other_cov,
                                       sentence=other, reason="a related sentence of the source states the "
                                                              "opposite direction; check the source")
                if found == "agree" and counted_claim and not compare_figures(claim, claim_lang, other, context).matched:
                    # "a 16 % increase" against a sentence stating an increase of 18 %: the direction is
                    # the source's, the figure may not be
                    break
                if found == "agree" and (max(other_cov, scorer.coverage(other_clause, other.lang)) >= 0.6
                                         or (other_cov >= 0.3 and other_window >= 0.8)):
                    return Assessment(verdict=Verdict.supported, confidence=round(0.7 + 0.1 * strength, 3),
                                       cue="direction", coverage=other_cov, sentence=other,
                                       reason="the source states the claim's direction and key terms")
                break
        def overstatement_of(read: str) -> str | None:
            # the claim's absolutes against `read`, then a cause, a scope or a permanence no sentence
            # read states ("nationwide", "dauerhaft")
            over = overstatement(claim, focus.window, read)
            added = None if over else generalisation(claim, ranked, kinds=("a cause", "a scope", "a permanence"))
            return over or (f"{added[0]} “{added[1]}” no sentence read states" if added else None)

        overstated = overstatement_of(clause) if on_subject else overstatement(claim, focus.window)
        if overstated and on_subject and lexical.negated_only_by_never(claim) and not lexical.negated(clause):
            # "never" against "rarely": an overstatement, not a denial
            return result(Verdict.partially_supported, 0.6 + 0.1 * strength, "absolute",
                          f"the claim overstates the source ({overstated})")
        if on_subject and lexical.open_question(focus.text) and not lexical.open_question(claim):
            return result(Verdict.not_supported, 0.55, "negation",
                          "the source leaves open what the claim states")
        source_denies = lexical.negated(clause) or (lexical.negated(claim) and lexical.negated(focus.text))
        if lexical.negated(claim) and not source_denies and not main_clause_negated(claim):
            # "…, weil dafür kein Zahnarzt nötig war": the negation is the reason's, not the claim's
            source_denies = True
        swap = lexical.antonym_swap(claim, claim_lang, clause, focus.lang) if on_subject else None
        if swap and lexical.negated(claim) == source_denies:
            # "rural schools" where the source's clause says "urban schools": another subject or
            # the opposite quality, not what the source states
            return result(Verdict.not_supported, 0.6 + 0.1 * strength, "direction",
                          f"the source states the opposite (“{swap[1]}” where the claim says “{swap[0]}”)")
        if on_subject and lexical.negated(claim) != source_denies:
            which = "denies what the claim asserts" if lexical.negated(clause) else "asserts what the claim denies"
            return result(Verdict.not_supported, 0.6 + 0.14 * strength, "negation", f"the source {which}")
        if overstated and on_subject:
            return result(Verdict.partially_supported, 0.6 + 0.1 * strength, "absolute",
                          f"the claim overstates the source ({overstated})")
        if ordered == "agree" and not figures.unmatched and direction != "conflict" and not swapped:
            return result(Verdict.supported, 0.65, "figure",
                          "the source's figures order the compared groups as the claim does")
        if (claim_equal and EQUAL.search(clause) and clause_cov >= self.weakly_related_at and not claim_axes
                and not lexical.directions(clause) and not figures.unmatched and not lexical.negated(claim)):
            # "promoted just as often" for "promotion rates were the same"
            return result(Verdict.supported, 0.55, "overlap", "the source states the same absence of a difference")
        if not figures.unmatched and not overstated and direction is None and not unconfirmed:
            agreed = self._negations_agree(claim, focus, scorer, cov, cov_window)
            if agreed is not None:
                return agreed
        if figures.unmatched:
            return result(Verdict.not_supported, 0.45, "unstated",
                          f"no passage states the claim's figure {figures.unmatched}")
        if (figures.matched or shares_agree) and on_subject:
            elsewhere = figure_of_another_subject(claim, claim_lang, focus, scorer)
            if elsewhere:  # which figure belongs to which subject is a reading, not a cue: a reader decides
                return result(Verdict.uncertain, 0.4, "weak", f"{elsewhere}; check the source")
            if unconfirmed and direction is None:
                unmet = bound_count_unmet(claim, claim_lang, focus)
                if unmet:  # "fell from thirty-one to fewer than ten" against "from 31 to 14"
                    return result(Verdict.uncertain, 0.4, "weak", f"the source's figures do not meet the claim's "
                                  f"“{unmet}”; check the source")
                return result(Verdict.supported, 0.7, "figure",
                              "the source states the claim's figures and key terms (its direction in other words)")
            return result(Verdict.supported, 0.78 + 0.17 * strength, "figure",
                          "the source states the claim's figures and key terms")
        if anchored and figures.matched and not overstated and lexical.negated(claim) == lexical.negated(clause):
            # Fewer of the claim's words, but its figures in the sentence that shares most of them.
            return result(Verdict.supported, 0.48, "figure", "the source's sentence states the claim's figures and "
                          "some of its key terms")
        if (direction == "agree" and ranked_side is None and superlative_pole(claim)
                and not SUPERLATIVE.search(focus.text) and two_figures(focus.text)):
            # "lowest in the wet months" against "9 % in the wet months, compared with 3 %": the
            # ranking is the figures', and a direction word elsewhere in the sentence is not it
            return result(Verdict.uncertain, 0.4, "weak", "the claim ranks what the source gives in figures; "
                          "check the source")
        if direction == "agree" and clause_cov >= 0.6:
            return result(Verdict.supported, 0.75 + 0.15 * strength, "direction",
                          "the source states the claim's direction and key terms")
        if (direction == "agree" and clause_cov >= self.related_at and not counted_claim
                and not any(not q.weak for q in lexical.quantities(focus.window, focus.lang))
                and not mixed_directions(claim, clause)):
            # The claim's direction, in the clause that shares half its words or more: a paraphrase
            # of the finding ("more often interrupted" for "more frequent interruptions").
            return result(Verdict.supported, 0.6, "direction",
                          "the source states the claim's direction and most of its key terms")
        if COMPARISON.search(claim) and CONTRAST.search(focus.text) and not CONTRAST.search(claim):
            # "X and Y equally" against "X kept it, whereas Y lost it": the words are the source's,
            # the comparison is not.
            return result(Verdict.uncertain, 0.4, "weak",
                          "the claim compares what the source contrasts; check the source")
        counted = bool(lexical.quantities(claim, claim_lang) or NUMERAL.search(claim))  # counts, shares, years too
        # A source sentence with figures the claim words differently ("most", "a small share"): a
        # clear overlap may support it, a weak one may not.
        quantified = any(not q.weak for q in lexical.quantities(focus.text, focus.lang))
        if (FRACTION.search(claim) and not figures.matched and not shares_agree
                and max(cov, cov_window) >= self.supported_at):
            return result(Verdict.uncertain, 0.4, "weak", "the source's sentence states the claim's key terms, "
                          "but a figure in words cannot be checked against its figures; check the source")
        if unconfirmed and direction is None and cov >= self.supported_at:
            # The claim's direction is in no word of the sentence we know: it may be stated in other
            # words, or reversed in words we do not know ("schwächte sich ab"). A reader decides.
            return result(Verdict.uncertain, 0.45, "weak", "the source's sentence states the claim's key terms, "
                          "but not its direction in words the judge knows; check the source")
        if cov >= self.supported_at and lexical.negated(focus.text) and not lexical.negated(claim):
            # "…, so the sealant gave no real protection there" for "the sealant shielded the panels":
            # the closest clause shares the words, another clause of the sentence denies
            return result(Verdict.uncertain, 0.45, "weak", "the source's sentence states the claim's key terms "
                          "and denies something; check what")
        if cov >= self.supported_at:
            return result(Verdict.supported, 0.55 + 0.19 * min(1.0, (cov - self.supported_at) / (1 - self.supported_at)),
                          "overlap", "the source's sentence states the claim's key terms")
        pair_cov, pair = max(((scorer.coverage(p, focus.lang), p) for p in focus.pairs if p), default=(0.0, None))
        if (pair is not None and pair_cov >= self.supported_at and not COMPARISON.search(claim)
                and (figures.matched or not counted)):
            # The claim draws on two adjacent sentences ("The trial enrolled … . Its members …").
            return Assessment(verdict=Verdict.supported, confidence=0.55, cue="overlap", coverage=cov,
                               sentence=focus, evidence=pair,
                               reason=f"two adjacent sentences of the source state the claim's key terms "
                                      f"({pair_cov:.0%} together)")
        if cov >= 0.6 and cov_window >= 0.9:
            return result(Verdict.supported, 0.52, "overlap",
                          "the source's sentence and its neighbours state the claim's key terms")
        if cov >= self.weakly_related_at and lexical.negated(clause) and not lexical.negated(claim):
            # Half the claim's terms, in a clause that denies them ("In keinem der Fälle zahlten die
            # Vereine eine Miete" for "zahlten eine Miete"): never a support
            return result(Verdict.not_supported, 0.5, "negation", "the source's closest clause denies what the "
                          "claim asserts (few of its key terms shared: check the source)")
        if cov >= self.weakly_related_at and SUPERLATIVE.search(claim) and two_figures(focus.text):
            # "lowest in winter" against "8 % in winter, compared with 2 %": which is lowest is the
            # figures' reading, and a weak overlap is no ground for it
            return result(Verdict.uncertain, 0.4, "weak", "the claim ranks what the source gives in figures; "
                          "check the source")
        # A weak support needs no rival: a sentence sharing about as much of the claim that denies
        # it ("the coating did not offer meaningful protection" beside the source's title) is one.
        denied_nearby = not lexical.negated(claim) and any(
            other is not focus and other_cov >= cov - 0.15 and lexical.negated(other.text)
            for other_cov, _, other in ranked[:6])

        def weak_support(confidence: float, reason: str) -> Assessment:
            # A weak overlap is read for overstatement too ("überall" against "in den meisten
            # Gemeinden", "always" against a plain finding): the cue-reading above ran on-subject only.
            over = overstated or overstatement_of(clause)
            if over:
                return result(Verdict.partially_supported, 0.45, "absolute",
                              f"the claim overstates the source ({over}); few of its key terms shared, check it")
            return result(Verdict.supported, confidence, "overlap", reason)

        if (cov >= self.weakly_related_at and not claim_axes and not counted and not quantified
                and not COMPARISON.search(claim) and not states_decline(clause) and not denied_nearby
                and lexical.negated(claim) == lexical.negated(focus.text)
                and not (CONTRAST.search(focus.text) and not CONTRAST.search(claim))):
            # Most of the claim's terms in one sentence and nothing against it (a denial anywhere in
            # it is something against it): a weak support.
            weight = (cov - self.weakly_related_at) / (self.supported_at - self.weakly_related_at)
            return weak_support(0.4 + 0.09 * weight,
                                "the source's sentence states most of the claim's key terms; no cue against it")
        if (cov >= self.weakly_related_at and not scorer.absent_terms(focus.lang) and not figures.unmatched
                and lexical.negated(claim) == lexical.negated(focus.text) and not denied_nearby
                and (not claim_axes or direction == "agree") and not FRACTION.search(claim)
                and not COMPARISON.search(claim) and not mixed_directions(claim, focus.text)
                and not (CONTRAST.search(focus.text) and not CONTRAST.search(claim))):
            # Every word of the claim occurs in the source, half of them in this sentence, nothing against it.
            return weak_support(0.45, "every key term of the claim occurs in the source, most of them in this "
                                "sentence; no cue against it")
        return generalised() or result(Verdict.uncertain, 0.3 + 0.15 * related, "words",
                                       "the source shares some of the claim's key terms, but no cue decides")

    def _negations_agree(self, claim: str, focus: Sentence, scorer: Scorer, cov: float,
                         cov_window: float) -> Assessment | None:
        """Supported when claim and source deny the same thing in other words ("had no influence
        on" / "did not measurably affect"): a shared denial over most of the claim's terms is
        an agreement cue a mere overlap is not. None when they do not both deny."""
        clause = scorer.closest_clause(focus)
        clause_cov = max(cov, scorer.coverage(clause, focus.lang))
        if max(clause_cov, cov_window) < self.negation_related_at:
            return None
        if not (lexical.negated(claim) and lexical.negated(clause)) or lexical.negated_only_by_never(claim):
            return None
        if lexical.quantities(claim, lexical.language(claim)) or lexical.directions(claim):
            return None  # a figure or a direction must be met by its own cue
        return Assessment(verdict=Verdict.supported, confidence=round(0.62 + 0.2 * clause_cov, 3), cue="negation",
                           coverage=cov, sentence=focus,
                           reason="the source denies what the claim denies, over most of its key terms")

    def _combine(self, whole: Assessment, parts: list[Assessment]) -> Assessment:
        everyone = [whole, *parts]
        decisive = [a for a in everyone if a.verdict is Verdict.not_supported and a.cue in ("figure", "direction")]
        if decisive:
            return max(decisive, key=lambda a: a.confidence)
        verdicts = [a.verdict for a in parts]
        reasons = "; ".join(f"clause {i}: {a.verdict.value}, {a.reason}" for i, a in enumerate(parts, 1))
        supported = [a for a in parts if a.verdict is Verdict.supported]
        if Verdict.not_supported in verdicts or Verdict.partially_supported in verdicts:
            # a clause the source plausibly states next to one it does not state at all: it says more
            stated = [a for a in parts if a.verdict is not Verdict.not_supported]
            unstated = [a for a in parts if a.cue == "absent"]
            if supported or Verdict.partially_supported in verdicts or (stated and unstated):
                lead = max(parts, key=lambda a: a.coverage)
                return lead.model_copy(update={"verdict": Verdict.partially_supported, "confidence": 0.45,
                                               "reason": reasons, "cue": "clauses"})
            return max(parts, key=lambda a: a.confidence).model_copy(update={"reason": reasons})
        if whole.verdict is Verdict.supported or all(v is Verdict.supported for v in verdicts):
            best = whole if whole.verdict is Verdict.supported else max(parts, key=lambda a: a.confidence)
            return best
        if supported:
            # Next to a supported clause, one whose words the source shares in part is read as the
            # same finding paraphrased; one it hardly shares is a part the source does not state.
            # (one held back by a cue, such as a count the source states otherwise, is not this case)
            if all(a.cue in ("words", "absent") and a.coverage >= self.clause_paraphrased_at
                   for a in parts if a.verdict is Verdict.uncertain):
                return supported[0].model_copy(update={"confidence": 0.4, "reason": reasons})
            return supported[0].model_copy(update={"verdict": Verdict.partially_supported, "confidence": 0.45,
                                                   "reason": reasons, "cue": "clauses"})
        return whole

    def _judgement(self, a: Assessment) -> Judgement:
        return Judgement(
            verdict=a.verdict,
            confidence=a.confidence,
            evidence=a.evidence or (a.sentence.text if a.sentence else None),
            evidence_page=a.sentence.hit.page if a.sentence else None,
            rationale=f"Offline (lexical): {a.reason}; key-term coverage {a.coverage:.0%} in the closest sentence.",
        )
