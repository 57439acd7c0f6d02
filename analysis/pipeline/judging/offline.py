"""`OfflineJudge`, the default judge: deterministic, no network.

It reads a claim against the sentences of its retrieved passages: the sentence covering most of
the claim's key terms is the *focus* (one stating the claim's figures gets a head start); the facts
of claim and focus are computed once into an evidence record (`analysis.pipeline.judging.evidence`),
and the first rule of the table in `analysis.pipeline.judging.rules` that applies decides, every
`supported` then passing the contradiction guards. A claim of several clauses is judged whole and
clause by clause (`_combine`); one of two parts of which the source states one closely and the
other hardly at all is partial (`extra_part`).

The verdict's confidence is its rule's precision on held-out labelled cases; a rule measured below
the floor answers `uncertain` with its evidence (`analysis.pipeline.judging.calibration`). The
judgement names the rule (and the guards that changed it).
"""

from __future__ import annotations

from analysis.pipeline.judging import lexical
from analysis.pipeline.judging.assessment import Assessment, Sentence
from analysis.pipeline.judging.calibration import Calibration
from analysis.pipeline.judging.directions import part_terms
from analysis.pipeline.judging.evidence import Evidence, Thresholds, gather
from analysis.pipeline.judging.figures import states_figure, states_share
from analysis.pipeline.judging.rules import RULES, decide, guarded
from analysis.pipeline.judging.scoring import Scorer, across_languages, split_sentences
from analysis.pipeline.judging.verdicts import EvidencePart, Judgement, Verdict, no_passages
from analysis.pipeline.judging.wording import CLAUSE_BREAK, PART_BREAK
from analysis.pipeline.providers.client import clip
from analysis.pipeline.retrieval.index import Hit

#: a rule's place in the table: where clauses disagree, the earlier rule (figures before directions
#: before words) speaks for the claim
_PLACE = {name: i for i, name in reversed(list(enumerate(r.name for r in RULES)))}


def _table_order(a: Assessment) -> int:
    return _PLACE.get(a.rule or "", len(_PLACE))


#: the calibration the judge loads when none is given
DEFAULT = object()


class OfflineJudge:
    """A deterministic judge that decides only where its rules are measured to be right.

    `calibration`: the held-out precision per rule (default: `calibration.json`); None answers with
    the rules' own verdicts, uncalibrated (confidence 0.5), for measuring the rules themselves.
    Keyword arguments override the coverage levels of `Thresholds`.
    """

    name = "offline"

    def __init__(self, *, calibration: Calibration | None | object = DEFAULT, **levels: float) -> None:
        self.t = Thresholds(**levels)
        self.calibration = Calibration.load() if calibration is DEFAULT else calibration

    def judge(self, claim: str, passages: list[Hit]) -> Judgement:
        """Judge `claim` against `passages` (best first)."""
        found = self.assessment(claim, passages)
        if found is None:
            return no_passages()
        if self.calibration is not None:
            found = self.calibration.apply(found)
        else:
            found = found.model_copy(update={"confidence": 0.0 if found.verdict is Verdict.uncertain else 0.5})
        if found.verdict is Verdict.uncertain:
            found = found.model_copy(update={"reason": across_languages(claim, passages) + found.reason})
        return self._judgement(found, passages)

    def assessment(self, claim: str, passages: list[Hit]) -> Assessment | None:
        """The rules' verdict before calibration, with its rule and focus sentence (None without
        passages): for measuring the rules (scripts/judge_rules.py), not for callers of a `Judge`."""
        sentences = split_sentences(passages)
        if not sentences:
            return None
        whole = self._assess(claim, sentences)
        lang = lexical.language(claim)
        clauses = [c for c in CLAUSE_BREAK.split(claim) if c and len(set(lexical.content_terms(c, lang))) >= 3]
        if len(clauses) < 2:
            return self._extra_part(claim, lang, sentences, whole)
        judged = [self._assess(c, sentences) for c in clauses]
        # each clause's own best sentence goes with the verdict: a reader checks every part
        found = self._combine(whole, judged).model_copy(
            update={"parts": tuple((c.strip(), a.sentence, a.coverage) for c, a in zip(clauses, judged))})
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
            stated = best[1] is not None and (best[0] >= self.t.extra_stated_at or (
                best[0] >= self.t.anchored_at and states_figure(figures, best[1])))
            covered.append((best[0], part, best[1], stated))
        stated_parts = [c for c in covered if c[3]]
        low, extra, _, _ = min(covered, key=lambda x: x[0])
        if not stated_parts or low >= self.t.extra_unstated_at:
            return found
        high, _, sentence, _ = max(stated_parts, key=lambda x: x[0])
        if sentence is None:
            return found
        return Assessment(verdict=Verdict.partially_supported, confidence=0.0, cue="clauses", coverage=high,
                          sentence=sentence, rule="extra_part",
                          parts=tuple((part.strip(), best, score) for score, part, best, _ in covered),
                          reason=f"the source states part of the claim ({high:.0%} of its key terms in one sentence), "
                                 f"not “{clip(extra.strip(), 80)}” ({low:.0%})")

    def evidence(self, claim: str, passages: list[Hit]) -> Evidence | None:
        """The evidence record of the whole claim against its focus sentence (None without passages
        or content words): what every rule reads, for tests and for inspecting a verdict."""
        sentences = split_sentences(passages)
        return self._evidence(claim, sentences) if sentences else None

    def _assess(self, claim: str, sentences: list[Sentence]) -> Assessment:
        """One claim (or clause) against the sentences: its evidence record, the table, the guards."""
        evidence = self._evidence(claim, sentences)
        if evidence is None:
            return Assessment(verdict=Verdict.uncertain, confidence=0.0, cue="weak", coverage=0.0, sentence=None,
                              reason="the claim has no content words to look for", rule="no_content_words")
        return guarded(claim, evidence.claim_lang, decide(evidence))

    def _evidence(self, claim: str, sentences: list[Sentence]) -> Evidence | None:
        claim_lang = lexical.language(claim)
        scorer = Scorer(claim, claim_lang, sentences)
        scored = [(scorer.coverage(s.text, s.lang), scorer.coverage(s.window, s.lang), -s.rank, s)
                  for s in sentences if scorer.terms(s.lang)]
        if not scored:
            return None
        # A sentence stating the claim's figure (2.1 %, "three times"), or its share in other words
        # ("jeder Sechste" for 17 %), is likelier the one the claim draws on; two or more of its
        # figures in one sentence pin it down whatever words it uses.
        claimed = [q for q in lexical.quantities(claim, claim_lang) if not q.weak]
        claimed_shares = [sh for sh in lexical.shares(claim, claim_lang) if sh.form == "fraction"]
        several = len({q.value for q in claimed}) >= 2
        cov, cov_window, _, focus = max(scored, key=lambda x: (
            x[0] + 0.2 * (states_figure(claimed, x[3]) or states_share(claimed_shares, x[3]))
            + 0.3 * (several and states_figure(claimed, x[3])), x[1], x[2]))
        context = " ".join(s.text for s in sentences)
        # For the direction of a related sentence, its neighbours count: "Ihr Anteil stieg" refers back.
        ranked = [(c, w, s) for c, w, _, s in sorted(scored, key=lambda x: (max(x[0], x[1]), x[0], x[2]),
                                                     reverse=True)]
        return gather(claim, claim_lang, focus, scorer, cov, cov_window, context, ranked, scored, self.t)

    def _combine(self, whole: Assessment, parts: list[Assessment]) -> Assessment:
        everyone = [whole, *parts]
        decisive = [a for a in everyone if a.verdict is Verdict.not_supported and a.cue in ("figure", "direction")]
        if decisive:
            return min(decisive, key=_table_order)
        verdicts = [a.verdict for a in parts]
        reasons = "; ".join(f"clause {i}: {a.verdict.value}, {a.reason}" for i, a in enumerate(parts, 1))
        supported = [a for a in parts if a.verdict is Verdict.supported]
        if Verdict.not_supported in verdicts or Verdict.partially_supported in verdicts:
            # a clause the source plausibly states next to one it does not state at all: it says more
            stated = [a for a in parts if a.verdict is not Verdict.not_supported]
            unstated = [a for a in parts if a.cue == "absent"]
            if supported or Verdict.partially_supported in verdicts or (stated and unstated):
                lead = max(parts, key=lambda a: a.coverage)
                return lead.model_copy(update={"verdict": Verdict.partially_supported, "reason": reasons,
                                               "cue": "clauses", "rule": "clauses_partly_stated", "guards": ()})
            return min(parts, key=_table_order).model_copy(update={"reason": reasons})
        if whole.verdict is Verdict.supported or all(v is Verdict.supported for v in verdicts):
            best = whole if whole.verdict is Verdict.supported else min(parts, key=_table_order)
            return best
        if supported:
            # Next to a supported clause, one whose words the source shares in part is read as the
            # same finding paraphrased; one it hardly shares is a part the source does not state.
            # (one held back by a cue, such as a count the source states otherwise, is not this case)
            if all(a.cue in ("words", "absent") and a.coverage >= self.t.clause_paraphrased_at
                   for a in parts if a.verdict is Verdict.uncertain):
                return supported[0].model_copy(update={"reason": reasons, "rule": "clauses_paraphrased",
                                                        "guards": ()})
            return supported[0].model_copy(update={"verdict": Verdict.partially_supported, "reason": reasons,
                                                   "cue": "clauses", "rule": "clause_unstated", "guards": ()})
        return whole

    def _judgement(self, a: Assessment, passages: list[Hit]) -> Judgement:
        evidence = a.evidence or (a.sentence.text if a.sentence else None)
        page = a.sentence.hit.page if a.sentence else None
        top = passages[0]
        focus = getattr(top, "focus", None)
        if a.verdict is Verdict.uncertain and focus and a.coverage < self.t.weakly_related_at:
            # few of the claim's words in any sentence: the embedder's closest sentence (either
            # language) is the better passage to look at
            evidence, page = focus, getattr(top, "focus_page", None) or top.page
        rule = a.rule if not a.guards else " > ".join((a.rule or "?", *a.guards))
        return Judgement(
            verdict=a.verdict,
            confidence=a.confidence,
            evidence=evidence,
            evidence_page=page,
            rationale=f"Offline (lexical): {a.reason}; key-term coverage {a.coverage:.0%} in the closest sentence.",
            rule=rule,
            parts=[_part(*p) for p in a.parts],
        )


def _part(part: str, sentence: Sentence | None, coverage: float) -> EvidencePart:
    """A part with its closest sentence; a sentence sharing none of its key terms is not evidence."""
    if sentence is None or coverage <= 0.0:
        return EvidencePart(part=part)
    return EvidencePart(part=part, sentence=sentence.text, page=sentence.hit.page, coverage=min(1.0, coverage))
