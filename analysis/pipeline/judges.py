"""Judges: decide whether retrieved passages support a claim.

Two implementations of the `Judge` protocol:

- `OfflineJudge`, the default: deterministic, no network. It decides only what
  lexical evidence decides (figures and units, direction, negation, absolute words
  against hedges; cues in analysis/pipeline/lexical.py) and says `uncertain` otherwise, with
  the best sentence as evidence. It is a smoke detector, not a reader.
- `OpenAIJudge`: any server speaking OpenAI's chat-completions wire format
  (OpenAI, vLLM, Ollama, LiteLLM, ...), called with `httpx`, with a strict JSON
  schema; its quotes are checked against the passages.

Provider errors are typed (`ProviderError` and subclasses); their text is clipped and
redacted (`redact`) where it is raised, so no log line, failure reason or dead letter
shows a key. Confidence bands (`CONFIDENCE_BANDS`) are shared by both judges.

"Source missing" is decided before judging (no uploaded source matches the
citation); `source_missing_judgement` builds that answer so every verdict has
one shape. Settings come from the environment only in `judge_from_env`.
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import logging
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from functools import lru_cache
from typing import Literal, Protocol

import httpx
from pydantic import BaseModel, Field, ValidationError, field_validator

from broker.settings import env_field

from analysis.pipeline import lexical
from analysis.pipeline.chunking import sentence_spans
from analysis.pipeline.retrieval import Hit
from analysis.settings import JudgeChoice

logger = logging.getLogger(__name__)


class Verdict(str, Enum):
    """How well the cited source backs the claim."""

    #: the source states the claim
    supported = "supported"
    #: the source states part of the claim, or states it with less certainty
    partially_supported = "partially_supported"
    #: the source does not state the claim, or contradicts it
    not_supported = "not_supported"
    #: the evidence does not decide it: a reader should look at the best passage
    uncertain = "uncertain"
    #: no uploaded source matches the citation
    source_missing = "source_missing"


class Judgement(BaseModel):
    """A verdict with its evidence: the passage (and page) it rests on."""

    verdict: Verdict
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: str | None = None
    evidence_page: int | None = None
    rationale: str
    #: provider tokens this judgement cost (usage.total_tokens over its attempts); 0 offline
    tokens: int = Field(default=0, ge=0)


class Judge(Protocol):
    """Anything that turns a claim and its candidate passages into a judgement."""

    def judge(self, claim: str, passages: list[Hit]) -> Judgement:
        """Judge `claim` against `passages` (best first)."""
        ...


def source_missing_judgement(marker: str) -> Judgement:
    """The judgement for a citation whose source was not uploaded."""
    return Judgement(
        verdict=Verdict.source_missing,
        confidence=1.0,
        rationale=f"No uploaded source matches the citation {marker}.",
    )


def _no_passages() -> Judgement:
    return Judgement(
        verdict=Verdict.uncertain,
        confidence=0.1,
        rationale="The cited source has no passage to compare the claim with.",
    )


#: Confidence bands, (name, lower bound inclusive, upper bound exclusive; the last includes 1).
#: Offline verdicts are calibrated to them: `uncertain` is always "low"; a verdict resting on
#: a figure, or a matching direction, is "high"; an opposite direction, a negation, an
#: overstatement or a clear word overlap "medium"; a weak overlap, a claim the source does not
#: state, or clauses judged apart "low". The evaluation reports accuracy per band.
CONFIDENCE_BANDS: tuple[tuple[str, float, float], ...] = (("low", 0.0, 0.5), ("medium", 0.5, 0.75),
                                                          ("high", 0.75, 1.0))


def confidence_band(confidence: float) -> str:
    """The name of the band a confidence falls in (see `CONFIDENCE_BANDS`)."""
    for name, low, high in CONFIDENCE_BANDS:
        if low <= confidence < high:
            return name
    return CONFIDENCE_BANDS[-1][0]


# --- offline judge ---------------------------------------------------------


class _Sentence(BaseModel):
    """A verbatim sentence of a retrieved passage, with its neighbours' text for context."""

    text: str
    window: str
    hit: Hit
    rank: int
    lang: str
    #: the sentence with the one before it, and with the one after it, verbatim (None at an edge)
    pairs: tuple[str | None, str | None] = (None, None)


class _Assessment(BaseModel):
    verdict: Verdict
    confidence: float
    reason: str
    #: how decisive the cue was: "figure", "direction", "negation", "absolute", "overlap", "weak";
    #: an `uncertain` for shared words alone, with no cue either way, is "words" (or "absent")
    cue: str
    coverage: float
    sentence: _Sentence | None
    #: the evidence when it is more than the sentence (two adjacent sentences), verbatim
    evidence: str | None = None


# "however", "jedoch", "doch" mostly sit inside a clause ("was, however, unchanged"; "war jedoch
# unverändert"): no break there.
_CLAUSE_BREAK = re.compile(
    r"\s*;\s+|,?\s+(?=(?:but|whereas|while|although|though|yet|aber|sondern|"
    r"während|wohingegen|obwohl|wobei)\b)|,?\s+(?=(?:and|und)\s)",
    re.I,
)


#: Where a claim adds a part to another ("…, and Y", "…, which Z", "sowie", "und zudem"): finer than
#: `_CLAUSE_BREAK`, for finding a part the source does not state.
_PART_BREAK = re.compile(
    r"\s*;\s+|,?\s+(?=(?:but|whereas|while|although|though|yet|aber|sondern|während|wohingegen|obwohl|wobei)\b)"
    r"|,?\s+(?=(?:and|und|as\s+well\s+as|sowie)\s)|,\s+(?=(?:which|wodurch|womit|was|thereby|dadurch)\b)"
    # a conclusion drawn from the finding: "…, so older homes can switch without renovation"
    r"|,\s+(?=(?:so|therefore|thus|hence|meaning|sodass|daher|deshalb|folglich|weshalb)\b)",
    re.I,
)


#: Sameness stated of the subject, not a word describing it ("of similar size"): "were the same",
#: "did not differ", "just as often as", "gleich häufig", "unterschied sich nicht".
_EQUAL = re.compile(
    r"\b(?:was|were|is|are|remained|stayed)\s+(?:\w+\s+)?(?:the\s+same|similar|equal|identical|comparable)\b"
    r"|\bdid\s+not\s+differ\b|\bno\s+(?:significant\s+|meaningful\s+)?difference\b|\bequally\b"
    r"|\bas\s+(?:often|much|many|high|likely|frequently|well)\s+as\b"
    r"|\b(?:war|waren|ist|sind|blieb|blieben|lag|lagen)\s+(?:\w+\s+){0,3}?(?:gleich|ähnlich|vergleichbar|identisch)\b"
    r"|\b(?:gleich|ebenso|genauso)\s+(?:oft|häufig|hoch|groß|viel|stark|gut)\b|\bgleichermaßen\b"
    r"|\bunterschied\w*\s+sich\s+nicht\b|\bkein\w*\s+(?:signifikanten?\s+|bedeutsamen?\s+|nennenswerten?\s+)?unterschied\w*",
    re.I,
)


_SIGNIFICANT = re.compile(r"\bsignifi\w+", re.I)
_INSIGNIFICANT = re.compile(
    r"\b(?:not|no|nicht|kein\w*|non)[\s-]+(?:longer\s+|more\s+|mehr\s+|länger\s+)?"
    r"(?:statistically\s+|statistisch\s+)?signifi\w+|\binsignifi\w+", re.I)


#: A clause that reports no effect, no change or no difference ("serum potassium did not change",
#: "no difference in re-consultation", "hatte keinen messbaren Einfluss", "kein signifikanter
#: Unterschied"): a null finding, which contradicts a claim that the same thing changed or differed.
_NULL_FINDING = re.compile(
    r"\b(?:did|does|do|was|were)\s+not\s+(?:\w+ly\s+)?(?:change|differ|affect|alter|improve|reduce|lower|"
    r"raise|increase|decrease|influence|predict|shorten|lengthen)\b"
    r"|\b(?:no|without\s+(?:any\s+)?)\s*(?:(?:statistically\s+)?(?:significant|measurable|meaningful|detectable|"
    r"discernible|appreciable|relevant|clear)\s+)?(?:effect|change|difference|impact|influence|association|"
    r"improvement|reduction|increase|decrease|benefit)s?\b"
    r"|\b(?:remained|stayed|was|were)\s+(?:\w+\s+)?(?:unchanged|unaffected|stable|constant)\b"
    r"|\bkein\w*\s+(?:(?:statistisch\s+)?(?:signifikant|messbar|nennenswert|erkennbar|bedeutsam|relevant|"
    r"deutlich)\w*\s+)?(?:einfluss|effekt|unterschied|veränderung|wirkung|zusammenhang|verbesserung|"
    r"rückgang|anstieg|nutzen)\w*"
    r"|\b(?:veränderte|veränderten|unterschied|unterschieden|änderte|änderten)\s+sich\s+(?:\w+\s+){0,3}?nicht\b"
    r"|\b(?:blieb|blieben)\s+(?:\w+\s+){0,2}?(?:unverändert|konstant|stabil)\b|\bunverändert\b",
    re.I,
)


#: Words that make a difference large or certain: "significantly", "deutlich", "markedly".
_INTENSIFIED = re.compile(
    r"\b(?:significant(?:ly)?|signifikant\w*|markedly|marked|substantial(?:ly)?|considerabl[ey]|clearly|clear|"
    r"sharply|dramatic(?:ally)?|strongly|far|much|deutlich\w*|erheblich\w*|wesentlich\w*|stark\w*|klar\w*|"
    r"beträchtlich\w*|drastisch\w*|weit)\b", re.I)


#: How often something is done, each as a period: "every week", "weekly", "monatlich".
_RATES = {
    "day": r"daily|every\s+day|each\s+day|täglich\w*|jeden\s+tag",
    "week": r"weekly|every\s+week|each\s+week|wöchentlich\w*|jede\s+woche",
    "month": r"monthly|every\s+month|each\s+month|monatlich\w*|jeden\s+monat",
    "year": r"annually|yearly|every\s+year|each\s+year|jährlich\w*|jedes\s+jahr",
}
_RATE_PATTERNS = {name: re.compile(rf"\b(?:{spec})\b", re.I) for name, spec in _RATES.items()}


def _rates_differ(claim: str, sentence: str) -> str | None:
    """The reason when the claim says how often at another rate than the sentence ("every
    week" against "monthly") and the sentence never states the claim's rate."""
    mine = {name for name, p in _RATE_PATTERNS.items() if p.search(claim)}
    theirs = {name for name, p in _RATE_PATTERNS.items() if p.search(sentence)}
    if len(mine) == 1 and theirs and not mine & theirs:
        return f"the claim says {mine.pop()}ly, the source {'/'.join(sorted(theirs))}ly".replace("dayly", "daily")
    return None


def _only_insignificant(text: str) -> bool:
    """Whether every "significant" of the text is denied ("the difference was not statistically
    significant", "kein signifikanter Unterschied"): the text reports no difference, whatever its figures."""
    denied = len(_INSIGNIFICANT.findall(text))
    return denied > 0 and denied == len(_SIGNIFICANT.findall(text))


#: A sentence that contrasts two things ("X lost it, while Y kept it"): overlap with it alone
#: cannot tell which side a claim took.
_CONTRAST = re.compile(r"\b(?:while|whereas|but|unlike|in\s+contrast|however|aber|während|wohingegen|jedoch|"
                       r"im\s+gegensatz|anders\s+als|sondern)\b", re.I)


#: A comparison or a bound in words ("lasted more than a year"): a cue overlap cannot check.
_COMPARISON = re.compile(r"\b(?:more|less|fewer|longer|shorter|mehr|weniger|länger|kürzer)\s+(?:than|als)\b"
                         r"|\b(?:equally|as\s+\w+\s+as|ebenso|genauso|gleich\s+\w+\s+wie)\b", re.I)


#: Superlatives of degree, by pole: the claim's "most strongly affected" against the source's
#: "weakest among" the same group ranks that group at the other end.
_SUPERLATIVE_HIGH = (r"highest|largest|greatest|biggest|strongest|most|maximum|höchste\w*|größte\w*|stärkste\w*|"
                     r"meiste\w*|am\s+(?:höchsten|größten|stärksten|meisten|häufigsten)")
_SUPERLATIVE_LOW = (r"lowest|smallest|weakest|least|fewest|minimum|niedrigste\w*|geringste\w*|kleinste\w*|"
                    r"schwächste\w*|wenigste\w*|am\s+(?:niedrigsten|geringsten|kleinsten|schwächsten|wenigsten|seltensten)")
_SUPERLATIVE = re.compile(rf"\b(?:{_SUPERLATIVE_HIGH}|{_SUPERLATIVE_LOW})\b", re.I)
_SUPERLATIVE_POLE = {"high": re.compile(rf"\b(?:{_SUPERLATIVE_HIGH})\b", re.I),
                     "low": re.compile(rf"\b(?:{_SUPERLATIVE_LOW})\b", re.I)}
#: "most" of a majority ("most participants", "die meisten Kinder") ranks nothing.
_MAJORITY = re.compile(r"\b(?:most\s+(?!(?:\w+ly|affected|likely|common|frequent|important)\b)\w+|(?:die|der|den)\s+meisten)\b",
                       re.I)


def _superlative_pole(text: str) -> str | None:
    text = _MAJORITY.sub(" ", text)
    poles = [pole for pole, pattern in _SUPERLATIVE_POLE.items() if pattern.search(text)]
    return poles[0] if len(poles) == 1 else None


def _superlative_side(claim: str, claim_terms: set[str], sentence: str, stems) -> str | None:
    """"conflict" when the claim ranks its subject at one end ("adults over 65 were most
    affected") and the sentence puts the claim's subject words after its superlative of the
    other end ("strongest among children …, weakest among adults over 65"); "agree" when it
    puts them after the claim's end; None when it ranks nothing or cannot tell."""
    if _ranks_another_group(claim, sentence):
        return "conflict"
    pole = _superlative_pole(claim)
    if pole is None:
        return None
    cuts = [(m.start(), p) for p, pattern in _SUPERLATIVE_POLE.items() for m in pattern.finditer(_MAJORITY.sub(
        lambda m: " " * len(m.group(0)), sentence))]
    if not cuts:
        return None
    cuts.sort()
    near = {"high": 0, "low": 0}
    for (start, p), (end, _) in zip(cuts, cuts[1:] + [(len(sentence), None)]):
        near[p] += len(claim_terms & stems(sentence[start:end]))
    other = "low" if pole == "high" else "high"
    if near[other] > near[pole]:
        return "conflict"
    return "agree" if near[pole] > near[other] and len({p for _, p in cuts}) == 2 else None


#: A ranking phrase: "the most satisfied", "the highest", "am unzufriedensten", "die größte".
_RANKING = re.compile(r"\bthe\s+(?:most|least)\s+\w+|\bthe\s+\w{3,}est\b|\bam\s+\w{3,}sten\b"
                      r"|\b(?:der|die|das|den|dem)\s+\w{3,}(?:st|ßt)e[nmrs]?\b", re.I)
_DIGITS = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?")


def _ranks_another_group(claim: str, sentence: str) -> bool:
    """The claim and the sentence rank with the same words ("am unzufriedensten"), and the
    group the sentence ranks there has figures, none of them the claim's ("zwischen 30 und 49
    Jahren" for "die über 70-Jährigen")."""
    for phrase in {m.group(0).lower() for m in _RANKING.finditer(claim)}:
        at = sentence.lower().find(phrase)
        if at < 0:
            continue
        rest = sentence[at + len(phrase):]
        nxt = _RANKING.search(rest)
        segment = rest[: nxt.start()] if nxt else rest
        segment = re.split(r"[,;]\s+(?:vor\s+allem|especially|mainly|because|weil|da)\b", segment)[0]
        mine, theirs = set(_DIGITS.findall(claim)), set(_DIGITS.findall(segment))
        if mine and theirs and not mine & theirs:
            return True
    return False


def _two_figures(text: str) -> bool:
    return len(_DIGITS.findall(text)) >= 2


#: Any figure or count, in digits or words ("two groups", "a third", "die Hälfte"): a claim with
#: one gets no weak (low-band) support from word overlap.
_NUMERAL = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|"
    r"half|halves|halved|third|thirds|quarter|quarters|fifth|fifths|tenth|dozen|hundred|hundreds|thousand|"
    r"thousands|million|millions|billion|twice|double|doubled|triple|tripled|"
    r"eins|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|elf|zwölf|zwanzig|dreißig|vierzig|fünfzig|"
    r"hälfte|halb|halbiert|drittel|viertel|fünftel|zehntel|dutzend|hundert|tausend|million\w*|milliard\w*|"
    r"doppelt|verdoppelt|dreifach|jede[rs]?\s+(?:zweite|dritte|vierte|fünfte))\b",
    re.I,
)


#: A share in words ("a third", "one in five", "die Hälfte", "jeder vierte"), which
#: `lexical.quantities` does not read: no word overlap supports it.
_FRACTION = re.compile(
    r"\b(?:half|halves|third|thirds|quarter|quarters|fifth|fifths|tenth|tenths|one\s+in\s+\w+|"
    r"hälfte|drittel|viertel|fünftel|zehntel|jede[rs]?\s+(?:zweite|dritte|vierte|fünfte|zehnte)\w*)\b",
    re.I,
)


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
            return _no_passages()
        if found.verdict is Verdict.uncertain:
            found = found.model_copy(update={"reason": _across_languages(claim, passages) + found.reason})
        return self._judgement(found)

    def assessment(self, claim: str, passages: list[Hit]) -> _Assessment | None:
        """What `judge` decides, with the rule's cue and the focus sentence (None without passages):
        for measuring the judge (scripts/uncertain_pool.py), not for callers of a `Judge`."""
        sentences = _sentences(passages)
        if not sentences:
            return None
        whole = self._assess(claim, sentences)
        lang = lexical.language(claim)
        clauses = [c for c in _CLAUSE_BREAK.split(claim) if c and len(set(lexical.content_terms(c, lang))) >= 3]
        found = whole if len(clauses) < 2 else self._combine(whole, [self._assess(c, sentences) for c in clauses])
        return self._extra_part(claim, lang, sentences, found)

    def _extra_part(self, claim: str, lang: str, sentences: list[_Sentence], found: _Assessment) -> _Assessment:
        """A claim of two parts ("X rose, and Y fell"; "…, which widened Z") of which the source
        states one closely and the other hardly at all is `partially_supported`: it says more than
        the source. Contradictions (a figure, a direction, a denial) decide before this."""
        if found.verdict is Verdict.partially_supported or (
                found.verdict is Verdict.not_supported and found.cue != "absent"):
            return found
        parts = [p for p in _PART_BREAK.split(claim) if p and _part_terms(p, lang)]
        if len(parts) < 2:
            return found
        covered = []
        for part in parts:
            scorer = _Scorer(part, lang, sentences)
            figures = [q for q in lexical.quantities(part, lang) if not q.weak]
            best = max(((max(scorer.coverage(s.text, s.lang), scorer.coverage(s.window, s.lang)), s)
                        for s in sentences if scorer.terms(s.lang)), key=lambda x: x[0], default=(0.0, None))
            # a part whose figures its closest sentence states counts as stated with fewer of its words
            stated = best[1] is not None and (best[0] >= self.extra_stated_at or (
                best[0] >= self.anchored_at and _states_figure(figures, best[1])))
            covered.append((best[0], part, best[1], stated))
        stated_parts = [c for c in covered if c[3]]
        low, extra, _, _ = min(covered, key=lambda x: x[0])
        if not stated_parts or low >= self.extra_unstated_at:
            return found
        high, _, sentence, _ = max(stated_parts, key=lambda x: x[0])
        if sentence is None:
            return found
        return _Assessment(verdict=Verdict.partially_supported, confidence=0.5, cue="clauses", coverage=high,
                           sentence=sentence, reason=f"the source states part of the claim ({high:.0%} of its key "
                                                     f"terms in one sentence), not “{_clip(extra.strip(), 80)}” "
                                                     f"({low:.0%})")

    # -- one claim (or clause) against the sentences --

    def _assess(self, claim: str, sentences: list[_Sentence]) -> _Assessment:
        claim_lang = lexical.language(claim)
        scorer = _Scorer(claim, claim_lang, sentences)
        scored = [(scorer.coverage(s.text, s.lang), scorer.coverage(s.window, s.lang), -s.rank, s)
                  for s in sentences if scorer.terms(s.lang)]
        if not scored:
            return _Assessment(verdict=Verdict.uncertain, confidence=0.1, cue="weak", coverage=0.0, sentence=None,
                               reason="the claim has no content words to look for")
        # A sentence stating the claim's figure (2.1 %, "three times") is likelier the one the claim draws on.
        # So is one stating its share in other words ("jeder Sechste" for 17 %).
        claimed = [q for q in lexical.quantities(claim, claim_lang) if not q.weak]
        claimed_shares = [sh for sh in lexical.shares(claim, claim_lang) if sh.form == "fraction"]
        # Two or more figures of the claim in one sentence pin it down whatever words it uses.
        several = len({q.value for q in claimed}) >= 2
        cov, cov_window, _, focus = max(scored, key=lambda x: (
            x[0] + 0.2 * (_states_figure(claimed, x[3]) or _states_share(claimed_shares, x[3]))
            + 0.3 * (several and _states_figure(claimed, x[3])), x[1], x[2]))
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
        return _guard_condition(claim, claim_lang, _guard_counts(claim, claim_lang, _guard_directions(claim, _guard_shares(
            claim, claim_lang, decided))))

    def _null_finding(self, claim: str, claim_lang: str, scorer: _Scorer,
                      ranked: list[tuple[float, float, _Sentence]]) -> _Assessment | None:
        """A claim that something changed or differed ("substantially increased serum potassium",
        "markedly more often", "deutlich geringere Absterberate") against one of the source's most
        related sentences whose closest clause reports no effect, change or difference on the
        claim's subject ("Serum potassium did not change", "keinen messbaren Einfluss auf die
        Absterberate") is `not_supported`, even where the two share few words: the source's
        finding is the null one. A hedged, negated or equating claim is no such claim."""
        if (lexical.negated(claim) or lexical.hedged(claim) or _EQUAL.search(claim)
                or not (lexical.directions(claim) or _COMPARISON.search(claim) or _INTENSIFIED.search(claim))):
            return None
        best = max((c for c, _, _ in ranked), default=0.0)
        for sentence_cov, _, sentence in ranked[:4]:
            clause = scorer.closest_clause(sentence)
            clause_cov = max(sentence_cov, scorer.coverage(clause, sentence.lang))
            if clause_cov < self.null_related_at or clause_cov < best - 0.15:
                continue
            if not (_NULL_FINDING.search(clause) or _only_insignificant(clause)):
                clause = sentence.text  # "… lag bei 38 km und unterschied sich nicht wesentlich von …"
                if not (_NULL_FINDING.search(clause) or _only_insignificant(clause)):
                    continue
            if lexical.directions(clause):
                continue
            # ... about the claim's subject: most of the clause's own terms are the claim's ("no effect on
            # pupils' enjoyment of mathematics" is about another outcome than "raised attainment")
            if _Scorer(clause, sentence.lang, [sentence]).coverage(claim, claim_lang) < self.null_subject_at:
                continue
            return _Assessment(verdict=Verdict.not_supported, confidence=0.5, cue="negation", coverage=clause_cov,
                               sentence=sentence, reason="the source reports no effect or difference where the "
                                                         "claim states one")
        return None

    def _figure_elsewhere(self, claim: str, claim_lang: str, scored: list, context: str) -> _Assessment | None:
        """When no sentence is clearly about the claim: a sentence that shares some of its terms
        and states another figure of the unit the claim measures ("six weeks" for "12 weeks")
        still contradicts it (medium confidence: the subject match is loose)."""
        if not any(q.unit and not q.weak for q in lexical.quantities(claim, claim_lang)):
            return None
        for cov, cov_window, _, sentence in sorted(scored, key=lambda x: x[:3], reverse=True):
            if max(cov, cov_window) < 0.25:
                break
            figures = _compare_figures(claim, claim_lang, sentence, context, units_only=True)
            if figures.contradiction:
                return _Assessment(verdict=Verdict.not_supported, confidence=0.62, cue="figure", coverage=cov,
                                   sentence=sentence, reason=figures.contradiction)
        return None

    def _decide(self, claim: str, claim_lang: str, focus: _Sentence, scorer: _Scorer, cov: float,
                cov_window: float, context: str, ranked: list[tuple[float, float, _Sentence]]) -> _Assessment:
        def result(verdict: Verdict, confidence: float, cue: str, reason: str) -> _Assessment:
            return _Assessment(verdict=verdict, confidence=round(confidence, 3), cue=cue, coverage=cov,
                               sentence=focus, reason=reason)

        related = max(cov, cov_window)
        figures_claimed = [q for q in lexical.quantities(claim, claim_lang) if not q.weak]
        anchored = _states_figure(figures_claimed, focus) or _pins_figures(figures_claimed, focus, context,
                                                                            claim_lang)
        # a sentence stating two or more of the claim's figures pins it down: read on with few of its words
        pinned = anchored and len({q.value for q in figures_claimed}) >= 2
        anchored_at = self.pinned_at if pinned else self.anchored_at

        def generalised() -> _Assessment | None:
            # A claim on the source's topic that states a cause, a scope or a permanence the source
            # nowhere states ("prevents", "across England", "dauerhaft") says more than it.
            found = _generalisation(claim, ranked) if related >= self.generalised_at else None
            if found is None:
                return None
            # ... but only where its closest sentence states a finding the claim could build on: one
            # that denies, reverses or finds no difference argues against the claim instead.
            if (lexical.negated(focus.window) or _EQUAL.search(focus.window) or _only_insignificant(focus.window)
                    or _compare_directions(claim, focus.window) == "conflict" or lexical.open_question(focus.window)):
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
        figures = _compare_figures(claim, claim_lang, focus, context)
        if figures.contradiction:
            return result(Verdict.not_supported, 0.78 + 0.17 * strength, "figure", figures.contradiction)
        ordered = _comparison_by_figures(claim, claim_lang, focus) if related >= self.related_at else None
        if ordered == "conflict":
            return result(Verdict.not_supported, 0.65 + 0.1 * strength, "direction",
                          "the source's figures order the compared groups the other way round")
        def terms(text: str, lang: str) -> set[str]:
            return set(_stems(text, lang)) | set(_DIGITS.findall(text))

        ranked_side = _superlative_side(claim, terms(lexical.claim_core(claim), claim_lang), focus.text,
                                        lambda text: terms(text, focus.lang))
        if ranked_side == "conflict":
            return result(Verdict.not_supported, 0.6 + 0.1 * strength, "direction",
                          "the source ranks the claim's subject at the other end")
        rate = _rates_differ(claim, focus.text)
        if rate and (related >= self.related_at or anchored):
            return result(Verdict.not_supported, 0.7 + 0.1 * strength, "figure", rate)
        if related >= self.related_at:
            shares = _shares_contradicted(claim, claim_lang, focus.text, focus.window, focus.lang)
            if shares is not None and not shares[1]:
                return result(Verdict.not_supported, 0.7 + 0.1 * strength, "figure",
                              f"the source states another share ({shares[0]})")
        group_share = _share_of_the_group(claim, claim_lang, focus.text, focus.lang)
        if group_share:
            return result(Verdict.not_supported, 0.7 + 0.1 * strength, "figure", group_share)
        shares_agree = _shares_agree(claim, claim_lang, focus.text, focus.lang)
        clause = scorer.closest_clause(focus)
        clause_cov = max(cov, scorer.coverage(clause, focus.lang))
        on_subject = clause_cov >= self.related_at
        direction = _compare_directions(claim, clause) if on_subject else None
        if direction == "agree" and lexical.negated(claim) != lexical.negated(clause):
            direction = None  # "did not reduce" against "reduced": the negation below decides
        swapped = on_subject and _comparison_swapped(claim, claim_lang, focus.text, focus.lang)
        if swapped and (_compare_directions(claim, focus.text) == "agree"
                        or (_comparative(claim) is not None and _comparative(claim) == _comparative(focus.text))
                        or (_AS_AS.search(claim) and _AS_AS.search(focus.text)
                            and _AS_AS.search(claim).group(0).lower() == _AS_AS.search(focus.text).group(0).lower())):
            # "A stronger than B" against "B stronger than A": the sides are exchanged
            return result(Verdict.not_supported, 0.6 + 0.1 * strength, "direction",
                          "the source compares the other way round")
        if swapped:
            direction = None  # "A weaker than B" for "B stronger than A": agreement a word list cannot confirm
        if direction == "agree" and _mixed_directions(claim, focus.text) and ranked_side != "agree":
            # "strongest in the afternoon and weakened after sunset": which half the claim means is a reading
            return result(Verdict.uncertain, 0.4, "weak", "the source's sentence states both directions; "
                          "check which one the claim's subject takes")
        if direction == "conflict":
            return result(Verdict.not_supported, 0.68 + 0.06 * strength, "direction",
                          "the source states the opposite direction")
        claim_equal, clause_equal = bool(_EQUAL.search(claim)), bool(_EQUAL.search(clause)) and on_subject
        if (clause_equal and not claim_equal and not lexical.negated(claim) and not lexical.directions(clause)
                and ({"quantity", "frequency"} & set(lexical.directions(claim)) or _COMPARISON.search(claim))):
            # "promoted less often" against "promotion rates were the same"
            return result(Verdict.not_supported, 0.6 + 0.1 * strength, "direction",
                          "the source states no difference where the claim states one")
        if (on_subject and not claim_equal and not lexical.negated(claim) and _SIGNIFICANT.search(claim)
                and _only_insignificant(focus.text)):
            # "the difference was still significant" against "no longer statistically significant"
            return result(Verdict.not_supported, 0.6 + 0.1 * strength, "negation",
                          "the source finds not significant what the claim calls significant")
        if (on_subject and not claim_equal and not lexical.negated(claim) and not lexical.hedged(claim)
                and _only_insignificant(focus.text)
                and ({"quantity", "frequency", "quality"} & set(lexical.directions(claim)) or _COMPARISON.search(claim))):
            # "deutlich weniger … als" against "11 % und 10 %; der Unterschied war nicht signifikant":
            # a clear difference is contradicted; a plain one ("reduces") overstates a trend the
            # source reports without significance
            if _INTENSIFIED.search(claim):
                return result(Verdict.not_supported, 0.6 + 0.1 * strength, "direction",
                              "the source finds no significant difference where the claim states a clear one")
            return result(Verdict.partially_supported, 0.55, "absolute",
                          "the claim states as a finding a difference the source found not significant")
        claim_axes = set(lexical.directions(claim))
        unconfirmed = bool(claim_axes) and direction is None
        # a claim with a figure of any kind (digits, words, shares, multiples) is met by its figures
        counted_claim = bool(lexical.quantities(claim, claim_lang) or _NUMERAL.search(claim)
                             or lexical.shares(claim, claim_lang))
        if unconfirmed and not claim_axes & set(lexical.directions(clause)):
            # The focus states no direction the claim states: the next related sentence that does decides.
            for other_cov, other_window, other in ranked:
                if max(other_cov, other_window) < 0.4:
                    break
                other_clause = scorer.closest_clause(other)
                if other is focus or other_cov < 0.2 or not claim_axes & set(lexical.directions(other_clause)):
                    continue
                found = _compare_directions(claim, other_clause)
                if (max(other_cov, scorer.coverage(other_clause, other.lang)) < self.weakly_related_at
                        and other_window < 0.6 and found != "agree"):
                    continue  # a sentence sharing a word or two, in no related context, does not contradict
                if found == "agree" and lexical.negated(claim) != lexical.negated(other_clause):
                    # "did not reduce" against "reduced": the same verb, the opposite statement
                    return _Assessment(verdict=Verdict.not_supported, confidence=round(0.6 + 0.1 * strength, 3),
                                       cue="negation", coverage=other_cov, sentence=other,
                                       reason="a related sentence of the source denies the claim's direction")
                if found == "conflict":
                    # Not the sentence closest to the claim: it may speak of something else (a contradicted
                    # direction is never supported, but this is no proof of one either).
                    return _Assessment(verdict=Verdict.uncertain, confidence=0.4, cue="weak", coverage=other_cov,
                                       sentence=other, reason="a related sentence of the source states the "
                                                              "opposite direction; check the source")
                if found == "agree" and counted_claim and not _compare_figures(claim, claim_lang, other, context).matched:
                    # "a 16 % increase" against a sentence stating an increase of 18 %: the direction is
                    # the source's, the figure may not be
                    break
                if found == "agree" and (max(other_cov, scorer.coverage(other_clause, other.lang)) >= 0.6
                                         or (other_cov >= 0.3 and other_window >= 0.8)):
                    return _Assessment(verdict=Verdict.supported, confidence=round(0.7 + 0.1 * strength, 3),
                                       cue="direction", coverage=other_cov, sentence=other,
                                       reason="the source states the claim's direction and key terms")
                break
        def overstatement_of(read: str) -> str | None:
            # the claim's absolutes against `read`, then a cause, a scope or a permanence no sentence
            # read states ("nationwide", "dauerhaft")
            over = _overstatement(claim, focus.window, read)
            added = None if over else _generalisation(claim, ranked, kinds=("a cause", "a scope", "a permanence"))
            return over or (f"{added[0]} “{added[1]}” no sentence read states" if added else None)

        overstated = overstatement_of(clause) if on_subject else _overstatement(claim, focus.window)
        if overstated and on_subject and lexical.negated_only_by_never(claim) and not lexical.negated(clause):
            # "never" against "rarely": an overstatement, not a denial
            return result(Verdict.partially_supported, 0.6 + 0.1 * strength, "absolute",
                          f"the claim overstates the source ({overstated})")
        if on_subject and lexical.open_question(focus.text) and not lexical.open_question(claim):
            return result(Verdict.not_supported, 0.55, "negation",
                          "the source leaves open what the claim states")
        source_denies = lexical.negated(clause) or (lexical.negated(claim) and lexical.negated(focus.text))
        if lexical.negated(claim) and not source_denies and not _main_clause_negated(claim):
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
        if (claim_equal and _EQUAL.search(clause) and clause_cov >= self.weakly_related_at and not claim_axes
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
            elsewhere = _figure_of_another_subject(claim, claim_lang, focus, scorer)
            if elsewhere:  # which figure belongs to which subject is a reading, not a cue: a reader decides
                return result(Verdict.uncertain, 0.4, "weak", f"{elsewhere}; check the source")
            if unconfirmed and direction is None:
                unmet = _bound_count_unmet(claim, claim_lang, focus)
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
        if (direction == "agree" and ranked_side is None and _superlative_pole(claim)
                and not _SUPERLATIVE.search(focus.text) and _two_figures(focus.text)):
            # "lowest in the wet months" against "9 % in the wet months, compared with 3 %": the
            # ranking is the figures', and a direction word elsewhere in the sentence is not it
            return result(Verdict.uncertain, 0.4, "weak", "the claim ranks what the source gives in figures; "
                          "check the source")
        if direction == "agree" and clause_cov >= 0.6:
            return result(Verdict.supported, 0.75 + 0.15 * strength, "direction",
                          "the source states the claim's direction and key terms")
        if (direction == "agree" and clause_cov >= self.related_at and not counted_claim
                and not any(not q.weak for q in lexical.quantities(focus.window, focus.lang))
                and not _mixed_directions(claim, clause)):
            # The claim's direction, in the clause that shares half its words or more: a paraphrase
            # of the finding ("more often interrupted" for "more frequent interruptions").
            return result(Verdict.supported, 0.6, "direction",
                          "the source states the claim's direction and most of its key terms")
        if _COMPARISON.search(claim) and _CONTRAST.search(focus.text) and not _CONTRAST.search(claim):
            # "X and Y equally" against "X kept it, whereas Y lost it": the words are the source's,
            # the comparison is not.
            return result(Verdict.uncertain, 0.4, "weak",
                          "the claim compares what the source contrasts; check the source")
        counted = bool(lexical.quantities(claim, claim_lang) or _NUMERAL.search(claim))  # counts, shares, years too
        # A source sentence with figures the claim words differently ("most", "a small share"): a
        # clear overlap may support it, a weak one may not.
        quantified = any(not q.weak for q in lexical.quantities(focus.text, focus.lang))
        if (_FRACTION.search(claim) and not figures.matched and not shares_agree
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
        if (pair is not None and pair_cov >= self.supported_at and not _COMPARISON.search(claim)
                and (figures.matched or not counted)):
            # The claim draws on two adjacent sentences ("The trial enrolled … . Its members …").
            return _Assessment(verdict=Verdict.supported, confidence=0.55, cue="overlap", coverage=cov,
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
        if cov >= self.weakly_related_at and _SUPERLATIVE.search(claim) and _two_figures(focus.text):
            # "lowest in winter" against "8 % in winter, compared with 2 %": which is lowest is the
            # figures' reading, and a weak overlap is no ground for it
            return result(Verdict.uncertain, 0.4, "weak", "the claim ranks what the source gives in figures; "
                          "check the source")
        # A weak support needs no rival: a sentence sharing about as much of the claim that denies
        # it ("the coating did not offer meaningful protection" beside the source's title) is one.
        denied_nearby = not lexical.negated(claim) and any(
            other is not focus and other_cov >= cov - 0.15 and lexical.negated(other.text)
            for other_cov, _, other in ranked[:6])

        def weak_support(confidence: float, reason: str) -> _Assessment:
            # A weak overlap is read for overstatement too ("überall" against "in den meisten
            # Gemeinden", "always" against a plain finding): the cue-reading above ran on-subject only.
            over = overstated or overstatement_of(clause)
            if over:
                return result(Verdict.partially_supported, 0.45, "absolute",
                              f"the claim overstates the source ({over}); few of its key terms shared, check it")
            return result(Verdict.supported, confidence, "overlap", reason)

        if (cov >= self.weakly_related_at and not claim_axes and not counted and not quantified
                and not _COMPARISON.search(claim) and not _states_decline(clause) and not denied_nearby
                and lexical.negated(claim) == lexical.negated(focus.text)
                and not (_CONTRAST.search(focus.text) and not _CONTRAST.search(claim))):
            # Most of the claim's terms in one sentence and nothing against it (a denial anywhere in
            # it is something against it): a weak support.
            weight = (cov - self.weakly_related_at) / (self.supported_at - self.weakly_related_at)
            return weak_support(0.4 + 0.09 * weight,
                                "the source's sentence states most of the claim's key terms; no cue against it")
        if (cov >= self.weakly_related_at and not scorer.absent_terms(focus.lang) and not figures.unmatched
                and lexical.negated(claim) == lexical.negated(focus.text) and not denied_nearby
                and (not claim_axes or direction == "agree") and not _FRACTION.search(claim)
                and not _COMPARISON.search(claim) and not _mixed_directions(claim, focus.text)
                and not (_CONTRAST.search(focus.text) and not _CONTRAST.search(claim))):
            # Every word of the claim occurs in the source, half of them in this sentence, nothing against it.
            return weak_support(0.45, "every key term of the claim occurs in the source, most of them in this "
                                "sentence; no cue against it")
        return generalised() or result(Verdict.uncertain, 0.3 + 0.15 * related, "words",
                                       "the source shares some of the claim's key terms, but no cue decides")

    def _negations_agree(self, claim: str, focus: _Sentence, scorer: _Scorer, cov: float,
                         cov_window: float) -> _Assessment | None:
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
        return _Assessment(verdict=Verdict.supported, confidence=round(0.62 + 0.2 * clause_cov, 3), cue="negation",
                           coverage=cov, sentence=focus,
                           reason="the source denies what the claim denies, over most of its key terms")

    def _combine(self, whole: _Assessment, parts: list[_Assessment]) -> _Assessment:
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

    def _judgement(self, a: _Assessment) -> Judgement:
        return Judgement(
            verdict=a.verdict,
            confidence=a.confidence,
            evidence=a.evidence or (a.sentence.text if a.sentence else None),
            evidence_page=a.sentence.hit.page if a.sentence else None,
            rationale=f"Offline (lexical): {a.reason}; key-term coverage {a.coverage:.0%} in the closest sentence.",
        )


_LANGUAGE_NAMES = {"en": "English", "de": "German"}


def _across_languages(claim: str, passages: Sequence[Hit]) -> str:
    """A note for an `uncertain` claim written in another language than most of its passages (a
    German thesis citing English work): words are matched across languages only through the
    short bilingual list, so a reader or a model judge must decide. Empty when the languages agree."""
    claim_lang = lexical.language(claim)
    langs = [lexical.language(hit.text) for hit in passages]
    source_lang = max(set(langs), key=langs.count) if langs else claim_lang
    if source_lang == claim_lang:
        return ""
    return (f"the claim is {_LANGUAGE_NAMES[claim_lang]}, the source {_LANGUAGE_NAMES[source_lang]}: words are "
            f"matched across languages only through a short bilingual list (a model judge reads both); ")


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _sentences(passages: Sequence[Hit]) -> list[_Sentence]:
    """Every sentence of every passage, verbatim (offsets into the passage text)."""
    out = []
    for rank, hit in enumerate(passages):
        lang = lexical.language(hit.text)
        spans = sentence_spans(hit.text) or [(0, len(hit.text))]
        texts = [hit.text[a:b].strip() for a, b in spans]
        for i, text in enumerate(texts):
            if not text:
                continue
            window = " ".join(texts[max(0, i - 1):i + 2])
            before = hit.text[spans[i - 1][0]:spans[i][1]].strip() if i > 0 and texts[i - 1] else None
            after = hit.text[spans[i][0]:spans[i + 1][1]].strip() if i + 1 < len(spans) and texts[i + 1] else None
            out.append(_Sentence(text=text, window=window, hit=hit, rank=rank, lang=lang, pairs=(before, after)))
    return out


_DEFINED = re.compile(r"((?:[^\W\d_][\w-]*\s+){1,6}?)\((?P<abbr>[A-ZÄÖÜ][A-Za-zÄÖÜäöü]{1,7})\)")


@lru_cache(maxsize=1024)
def _abbreviations(texts: tuple[str, ...]) -> dict[str, str]:
    """Abbreviations the source defines, lower case, to the words they stand for: "recycled
    concrete aggregate (RCA)" → {"rca": "recycled concrete aggregate"} (the initials of the last
    words before the bracket must spell it)."""
    out: dict[str, str] = {}
    for text in texts:
        for m in _DEFINED.finditer(text):
            abbr = m.group("abbr")
            capitals = [c for c in abbr if c.isupper()]
            if len(capitals) < 2:
                continue
            words = re.split(r"[\s-]+", m.group(1).strip())
            initials = [w[0].lower() for w in words if w]
            n = len(capitals)
            if len(initials) >= n and initials[-n:] == [c.lower() for c in capitals]:
                out[abbr.lower()] = " ".join(words[-n:])
    return out


@lru_cache(maxsize=4096)
def _stems(text: str, lang: str) -> frozenset[str]:
    return frozenset(lexical.content_terms(text, lang))


class _Scorer:
    """Weighted coverage of a claim's content terms in a text. A term found in few of the
    retrieved sentences weighs more than one found in most ("medication" against "pain"
    when every sentence is about pain); a term found nowhere weighs as a rare one."""

    def __init__(self, claim: str, claim_lang: str, sentences: list[_Sentence]) -> None:
        self.claim, self.claim_lang, self.sentences = claim, claim_lang, sentences
        self._by_lang: dict[str, tuple[list[str], list[float]]] = {}
        self._abbreviations = _abbreviations(tuple(s.text for s in sentences))

    def stems(self, text: str, lang: str) -> frozenset[str]:
        """The text's content stems, an abbreviation the source defines ("RCA") read as its words."""
        found = _stems(text, lang)
        if self._abbreviations:
            for word in lexical.words(text):
                if word in self._abbreviations:
                    found = found | _stems(self._abbreviations[word], lang)
        return found

    def terms(self, lang: str) -> list[str]:
        return self._weighted(lang)[0]

    def _weighted(self, lang: str) -> tuple[list[str], list[float]]:
        if lang not in self._by_lang:
            terms = _unique(lexical.content_terms(lexical.claim_core(self.claim), lang, exclude=lexical.SHARE_WORDS))
            stems = [self.stems(s.text, s.lang) for s in self.sentences]
            n = len(stems)
            compounds = self._compounds(lang)
            weights = []
            for t in terms:
                df = sum(lexical.term_match(t, found, compounds, lang) > 0 for found in stems)
                weights.append(1.0 + math.log((n + 1) / (max(df, 1) + 1)))
            self._by_lang[lang] = (terms, weights)
        return self._by_lang[lang]

    def _compounds(self, lang: str) -> bool:
        return "de" in (lang, self.claim_lang)

    def coverage(self, text: str, lang: str) -> float:
        terms, weights = self._weighted(lang)
        if not terms:
            return 0.0
        found = self.stems(text, lang)
        compounds = self._compounds(lang)
        return sum(w * lexical.term_match(t, found, compounds, lang) for t, w in zip(terms, weights)) / sum(weights)

    def absent_terms(self, lang: str) -> list[str]:
        """The claim's terms that no retrieved sentence states, not even in near words."""
        terms, _ = self._weighted(lang)
        stems = [self.stems(s.text, s.lang) for s in self.sentences]
        compounds = self._compounds(lang)
        return [t for t in terms if max((lexical.term_match(t, found, compounds, lang) for found in stems),
                                        default=0.0) < 0.5]

    def closest_clause(self, sentence: _Sentence) -> str:
        """The clause of the sentence closest to the claim (the whole sentence when one)."""
        clauses = [c for c in _CLAUSE_BREAK.split(sentence.text) if c and c.strip()]
        if len(clauses) < 2:
            return sentence.text
        return max(clauses, key=lambda c: self.coverage(c, sentence.lang))


class _Figures(BaseModel):
    contradiction: str | None = None
    unmatched: str | None = None
    matched: bool = False


#: Units of one dimension, in a common base (seconds, grams, metres): "200 minutes" is met by "3.3 hours".
_SCALES = {"s": ("time", 1), "min": ("time", 60), "h": ("time", 3600), "d": ("time", 86400),
           "wk": ("time", 604800), "mo": ("time", 2629800), "yr": ("time", 31557600),
           "mg": ("mass", 1e-3), "g": ("mass", 1), "kg": ("mass", 1e3), "t": ("mass", 1e6),
           "mm": ("length", 1e-3), "cm": ("length", 1e-2), "m": ("length", 1), "km": ("length", 1e3)}


def _converted(stated: lexical.Quantity, unit: str | None) -> lexical.Quantity | None:
    """The stated figure in the claim's unit of the same dimension (3.3 h → 198 min); None when
    the units are equal, bare, or of different dimensions."""
    if unit is None or stated.unit is None or unit == stated.unit or unit not in _SCALES or stated.unit not in _SCALES:
        return None
    (dim_a, scale_a), (dim_b, scale_b) = _SCALES[unit], _SCALES[stated.unit]
    if dim_a != dim_b:
        return None
    return lexical.Quantity(stated.value * scale_b / scale_a, unit, 3, stated.text, weak=stated.weak,
                            role=stated.role, bound=stated.bound)


def _same_converted(claimed: lexical.Quantity, stated: lexical.Quantity) -> bool:
    """Whether a figure in another unit of the claim's dimension states the claim's value: within
    the claim's bound, or within 5 % ("200 minutes" for 3.3 hours; "a year" for 12 months)."""
    other = _converted(stated, claimed.unit)
    if other is None:
        return False
    if claimed.bound in ("min", "max", "approx"):
        return lexical.same_value(claimed, dataclasses.replace(other, bound=None))
    return abs(other.value - claimed.value) <= 0.05 * abs(claimed.value)


def _family(unit: str | None) -> str | None:
    return "%" if unit in ("%", "pp") else unit


def _compare_figures(claim: str, claim_lang: str, focus: _Sentence, context: str, *,
                     units_only: bool = False) -> _Figures:
    """The claim's figures against the passages: contradicted (another figure of the same unit
    next to the claim's subject, or the same figure in another unit), unmatched, or matched."""
    claimed = [q for q in lexical.quantities(claim, claim_lang) if not q.weak and (q.unit or not units_only)]
    if not claimed:
        return _Figures()
    stated = lexical.quantities(context, focus.lang)
    nearby = [q for q in lexical.quantities(focus.window, focus.lang) if not q.weak]
    unmatched = []
    in_words = lexical.shares(focus.text, focus.lang)
    for q in claimed:
        same_unit = [s for s in nearby if _family(s.unit) == _family(q.unit)]
        matches = [s for s in stated if (lexical.same_value(q, s) and _units_agree(q, s)
                                         and not _bound_met_by_another_kind(q, s)) or _same_converted(q, s)]
        if q.unit and same_unit and all(s.unit is None for s in matches):
            matches = []  # "um 16 km/h" is not met by "16 streets" where the sentence says "6,1 km/h"
        if matches or _derived(q, nearby, _ratio_sides(claim, claim_lang, focus.text, focus.lang)
                                         if q.unit == "x" else None):
            continue
        if q.unit == "%" and any(sh.kind == "share" and sh.form == "fraction" and sh.low <= q.value / 100 <= sh.high
                                 for sh in in_words):
            continue  # "around 50 %" for "about half"
        if q.unit == "%" and not re.search(r"\d", q.text) and any(
                s.unit != "%" and s.decimals and abs(s.value - q.value / 100) <= 0.12 * q.value / 100 for s in nearby):
            continue  # "by three tenths" for "by 0.3", "ein Fünftel einer Standardabweichung" for 0.21
        if same_unit:
            return _Figures(contradiction=f"the claim says {q.text}, the source says "
                                          f"{', '.join(dict.fromkeys(s.text for s in same_unit))}")
        other_unit = [s for s in nearby if s.unit and q.unit and (s.value == q.value or (
            q.bound == "approx" and lexical.same_value(q, s)))]
        if other_unit:
            return _Figures(contradiction=f"the claim says {q.text}, the source says {other_unit[0].text} "
                                          "(another unit)")
        unmatched.append(q.text)
    return _Figures(unmatched=", ".join(unmatched) or None, matched=not unmatched)


_FIGURE_SEGMENT = re.compile(
    r",\s+|;\s*|\s+(?=(?:compared\s+(?:with|to)|versus|vs\.?|while|whereas|than|but|im\s+vergleich\s+zu|"
    r"gegenüber|während|wohingegen|als|aber|jedoch)\b)",
    re.I,
)


_AND = re.compile(r"\s+(?=(?:and|und|sowie)\b)", re.I)


def _figure_segments(text: str) -> list[str]:
    """The parts of a sentence that each give a figure for one subject: split at commas,
    comparisons and contrasts, and at "and" where both sides hold a figure ("9 % on pasture
    farms and 21 % on farms with housing")."""
    out = []
    for seg in _FIGURE_SEGMENT.split(text):
        if not seg or not seg.strip():
            continue
        parts = _AND.split(seg)
        if len(parts) > 1 and all(re.search(r"\d", p) for p in parts):
            out.extend(parts)
        else:
            out.append(seg)
    return out


def _subjects_meet(a: frozenset[str], b: frozenset[str], lang: str) -> bool:
    """Whether two shares' subjects share a word: the same stem, a near-synonym, or a German
    compound ending in it ("Ladenflächen" / "Flächen")."""
    # (one stem the start of the other, "befrag"/"befragt": one word in two forms the stemmer splits)
    return any(x == y or lexical.synonymous(x, y, lang) or (min(len(x), len(y)) >= 5 and (
        x.startswith(y) or y.startswith(x))) for x in a for y in b) or (
        lang == "de" and any(lexical.term_match(x, b, True) >= 0.75 for x in a))


def _comparable(claimed: lexical.Share, stated: lexical.Share, lang: str, *, in_evidence: bool) -> bool:
    """Whether a share of the source may quantify what a share of the claim quantifies: the same
    kind, and the same subject ("half of the revenue" for "the entire revenue") where either is
    an absolute word or the source's share stands in a neighbouring sentence; a remainder ("the
    rest") meets any absolute claim near it."""
    if claimed.kind != stated.kind:
        return False
    if claimed.form == "all":
        if stated.form == "rest":
            return True
        return bool(claimed.subject) and _subjects_meet(claimed.subject, stated.subject, lang)
    if stated.form == "rest":
        return False
    if stated.form == "all" or not in_evidence:
        return _subjects_meet(claimed.subject, stated.subject, lang)
    return not claimed.subject or not stated.subject or _subjects_meet(claimed.subject, stated.subject, lang)


def _shares_contradicted(claim: str, claim_lang: str, evidence: str, window: str, lang: str) -> tuple[str, bool] | None:
    """The claim's share (a figure in words, a percentage, an absolute word, a multiple) that
    the evidence and its neighbouring sentences contradict: they state a share of its subject,
    and none of theirs agrees with it ("about half" against "less than a fifth", "the entire
    revenue" against "just under half … the rest"). Returns the reason and whether the gap is
    only an overstatement ("all" against "nearly all"); None when nothing contradicts."""
    claimed = lexical.shares(claim, claim_lang)
    if not claimed:
        return None
    in_evidence = lexical.shares(evidence, lang)
    seen = {(s.text, s.subject) for s in in_evidence}
    nearby = [s for s in lexical.shares(window, lang) if (s.text, s.subject) not in seen]
    for share in claimed:
        stated = ([s for s in in_evidence if _comparable(share, s, lang, in_evidence=True)]
                  + [s for s in nearby if _comparable(share, s, lang, in_evidence=False)])
        # A share of the evidence naming the claim's subject decides; failing one, a figure of the
        # evidence that agrees ("49 Prozent der Befragten" for "knapp die Hälfte der Geflüchteten")
        # outweighs one that names no subject at all.
        named = [s for s in in_evidence if s in stated and share.subject and s.subject
                 and _subjects_meet(share.subject, s.subject, lang)]
        if share.form == "fraction" and not any(not share.agrees(s) for s in named) and any(
                s.kind == share.kind and s.form == "fraction" and share.agrees(s) for s in in_evidence):
            continue
        if share.form == "fraction" and any(s.form == "fraction" and s.text.lower() == share.text.lower()
                                            for s in in_evidence):
            continue  # the evidence uses the claim's own share word ("etwa die Hälfte")
        if stated and not any(share.agrees(s) for s in stated):
            others = ", ".join(dict.fromkeys(f"“{s.text}”" for s in stated))
            # "all" against "nearly all" or a majority (58 %) overstates; against a minority it contradicts
            slight = share.form == "all" and all(s.form != "rest" and s.low >= 0.5 for s in stated)
            return f"the claim's “{share.text}” against the source's {others}", slight
    return None


def _share_of_the_group(claim: str, claim_lang: str, evidence: str, lang: str) -> str | None:
    """The reason when the evidence gives a share for the group the claim names ("14 Prozent
    von Grafen und Hochadel") that disagrees with the claim's share for it ("mehr als ein
    Drittel … von Grafen und Hochadel"), and no share it gives that group agrees."""
    stated = [(s, _group_after(evidence, s, lang)) for s in lexical.shares(evidence, lang) if s.form == "fraction"]
    if len(stated) < 2:
        return None
    for share in lexical.shares(claim, claim_lang):
        if share.form != "fraction":
            continue
        group = _group_after(claim, share, claim_lang)
        common = frozenset.intersection(*(g for _, g in stated)) if all(g for _, g in stated) else frozenset()
        distinct = group - common
        theirs = [s for s, g in stated if s.kind == share.kind and distinct & g]
        if distinct and theirs and not any(share.agrees(s) for s in theirs):
            return (f"the source gives the claim's group “{theirs[0].text}”, not “{share.text}”")
    return None


def _shares_agree(claim: str, claim_lang: str, evidence: str, lang: str) -> bool:
    """Whether each share of the claim meets an agreeing share of the evidence ("a third" and 33 %)."""
    claimed = lexical.shares(claim, claim_lang)
    stated = lexical.shares(evidence, lang)
    return bool(claimed) and all(any(_comparable(c, s, lang, in_evidence=True) and c.agrees(s) for s in stated)
                                 for c in claimed)


def _guard_shares(claim: str, claim_lang: str, a: _Assessment) -> _Assessment:
    """The one check every `supported` passes: the claim's figures and shares, in digits or in
    words, are not contradicted by the evidence or its neighbouring sentences. Whatever path
    found the support (a direction, a shared denial, one sentence's or two sentences' coverage),
    a contradicted share makes it `not_supported` (an "all" against "nearly all": `partially_supported`)."""
    if a.verdict is not Verdict.supported or a.sentence is None:
        return a
    found = _shares_contradicted(claim, claim_lang, a.evidence or a.sentence.text, a.sentence.window,
                                 a.sentence.lang)
    if found is None:
        return a
    reason, slight = found
    if slight:
        return a.model_copy(update={"verdict": Verdict.partially_supported, "confidence": 0.6, "cue": "absolute",
                                    "reason": f"the claim overstates the source ({reason})"})
    return a.model_copy(update={"verdict": Verdict.not_supported, "confidence": 0.7, "cue": "figure",
                                "reason": f"the source states another share ({reason})"})


_YEARLIKE = re.compile(r"^(?:1[89]|20)\d\d$")


def _counted(text: str, lang: str) -> list[tuple[lexical.Quantity, frozenset[str]]]:
    """The counts of a text with what they count: a bare figure, in digits or in words, and the
    first content terms of the three words after it ("zwölf Landgerichten" → 12, {landgericht})."""
    out = []
    for q in lexical.quantities(text, lang):
        if q.unit is not None or q.role is not None or _YEARLIKE.match(q.text.strip()):
            continue
        start = text.find(q.text)
        if start < 0:
            continue
        after = " ".join(text[start + len(q.text):start + len(q.text) + 60].split()[:3])
        after = re.split(r"[.;:!?,()]", after, maxsplit=1)[0]
        if re.match(r"\s*(?:of|out\s+of|in|von|aus|der|des|unter)\b", after, re.I):
            continue  # "thirty of the hot spots", "vier von zehn": a part, not the whole counted
        heads = frozenset(lexical.content_terms(after, lang)[:1])
        if heads:
            out.append((q, heads))
    return out


def _counts_differ(claim: str, claim_lang: str, evidence: str, lang: str) -> str | None:
    """The reason when the claim counts something ("an zwölf Landgerichten") that the evidence
    counts otherwise ("an vier Landgerichten") and never as the claim does: a count is a figure."""
    stated = _counted(evidence, lang)
    if not stated:
        return None
    compounds = "de" in (lang, claim_lang)
    values = lexical.quantities(evidence, lang)
    for q, heads in _counted(claim, claim_lang):
        same = [s for s, theirs in stated if heads == theirs]
        if any(lexical.same_value(q, s) or lexical.same_value(s, q) for s in values):
            continue  # the evidence states the claim's count somewhere: which noun it counts is a reading
        if same:
            return f"the claim counts {q.text}, the source {', '.join(dict.fromkeys(s.text for s in same))}"
    return None


def _guard_counts(claim: str, claim_lang: str, a: _Assessment) -> _Assessment:
    """The check every `supported` passes for counts: the evidence counts nothing the claim counts
    with another number (if it does, `uncertain`: a claim's number words no longer lower its
    coverage, so the count itself must be read)."""
    if a.verdict is not Verdict.supported or a.sentence is None:
        return a
    found = _counts_differ(claim, claim_lang, a.evidence or a.sentence.text, a.sentence.lang)
    if found is None:
        return a
    # which count belongs to what is a reading ("four courts" of which twelve hearings …): a reader decides
    return a.model_copy(update={"verdict": Verdict.uncertain, "confidence": 0.4, "cue": "weak",
                                "reason": f"{found}; check the source"})


def _part_terms(part: str, lang: str) -> bool:
    """Whether a claim part says enough to be looked for: two content terms, or one long one in
    a part of three words or more ("und auch die Luftqualität verbesserte sich")."""
    terms = set(lexical.content_terms(part, lang))
    return len(terms) >= 2 or (len(part.split()) >= 3 and any(len(t) >= 7 for t in terms))


def _guard_directions(claim: str, a: _Assessment) -> _Assessment:
    """The check every `supported` passes for directions, as `_guard_shares` for shares: the
    evidence (the sentence, or the two adjacent sentences quoted) states no direction opposite
    to the claim's on the same axis, and not both directions where the claim states one."""
    if a.verdict is not Verdict.supported or a.sentence is None:
        return a
    evidence = a.evidence or a.sentence.text
    # Clause by clause: "X rose, while Y fell" backs "X rose"; one clause stating both does not decide.
    clauses = [c for c in _CLAUSE_BREAK.split(evidence) if c and c.strip()]
    found = [_compare_directions(claim, c) for c in clauses]
    mine = lexical.directions(claim)
    if any(any(lexical.directions(c).get(axis) == signs for axis, signs in mine.items()) for c in clauses):
        found.append("agree")  # a clause states one of the claim's directions as the claim does
    if "conflict" in found and "agree" not in found:
        return a.model_copy(update={"verdict": Verdict.not_supported, "confidence": 0.6, "cue": "direction",
                                    "reason": "the source states the opposite direction"})
    if "agree" not in found and _mixed_directions(claim, evidence):
        return a.model_copy(update={"verdict": Verdict.uncertain, "confidence": 0.4, "cue": "weak",
                                    "reason": "the source's sentence states both directions; check which one the "
                                              "claim's subject takes"})
    return a


def _figure_of_another_subject(claim: str, claim_lang: str, focus: _Sentence, scorer: _Scorer) -> str | None:
    """When the focus sentence gives the claim's figure and another of the same unit for two
    subjects ("4.4 kg in the diet group, compared with 2.9 kg in the control group"), the
    claim's figure must sit with the claim's subject: the reason, if it sits with the other."""
    claimed = [q for q in lexical.quantities(claim, claim_lang) if not q.weak]
    if not claimed:
        return None
    for c in claimed:
        mine, rivals = _figure_owners(c, [s for s in _FIGURE_SEGMENT.split(focus.text) if s and s.strip()], focus.lang)
        if mine and rivals:
            here = max(scorer.coverage(seg, focus.lang) for seg, _ in mine)
            seg, rival = max(rivals, key=lambda r: scorer.coverage(r[0], focus.lang))
            if scorer.coverage(seg, focus.lang) > here + 0.15:
                return f"the source gives {c.text} for another subject; for the claim's it says {rival.text}"
        # "41 % in the older recordings but 12 % by the adolescents", "9 % on pasture farms and
        # 21 % on farms with housing": the groups named after the figures decide
        mine, rivals = _figure_owners(c, _figure_segments(focus.text), focus.lang)
        if not mine or not rivals:
            continue
        mine_groups = [_group_after(seg, q, focus.lang) for seg, q in mine]
        same = frozenset().union(*mine_groups)
        # the group the claim gives its figure for ("21 % on pasture farms")
        claim_group = frozenset().union(*(_group_after(seg, q, claim_lang) for seg in _figure_segments(claim)
                                          for q in lexical.quantities(seg, claim_lang) if lexical.same_value(c, q)))
        claim_terms = scorer.stems(claim, claim_lang)
        for seg, q in rivals:
            theirs = _group_after(seg, q, focus.lang)
            if not theirs or not same:
                continue
            if claim_group:
                # less what both of the source's groups share ("farms")
                distinct = claim_group - (same & theirs)
                moved = bool(distinct & theirs) and not distinct & same
            else:
                moved = bool(claim_terms & theirs) and all(g and not claim_terms & g for g in mine_groups)
            if moved:
                return f"the source gives {c.text} for another group; for the claim's it says {q.text}"
    return None


def _figure_owners(c: lexical.Quantity, segments: list[str], lang: str) -> tuple[list, list]:
    """The (segment, figure) pairs of `segments` giving the claimed figure `c`, and those giving
    another figure of its unit family in another segment."""
    if len(segments) < 2:
        return [], []
    located = [(seg, q) for seg in segments for q in lexical.quantities(seg, lang) if not q.weak]
    mine = [(seg, q) for seg, q in located if lexical.same_value(c, q) and _units_agree(c, q)]
    taken = {seg for seg, _ in mine}
    rivals = [(seg, q) for seg, q in located
              if _family(q.unit) == _family(c.unit) and not lexical.same_value(c, q) and seg not in taken]
    return mine, rivals


#: The group a figure is given for: "in the older recordings", "by the adolescents", "bei den Frauen".
_GROUP = re.compile(r"\b(?:in|on|at|by|among|for|from|bei|unter|von|für|auf|an)\s+(?:the|den|der|die|dem|des)?\s*"
                    r"((?:[^\W\d_][\w-]*\s*){1,3})", re.I)


def _group_after(segment: str, q: lexical.Quantity, lang: str) -> frozenset[str]:
    """The content stems of the phrases naming whom a figure of `segment` is about, when they
    follow it within a few words ("12 % by the adolescents" → adolescents); empty when none does."""
    at = segment.find(q.text)
    if at < 0:
        return frozenset()
    tail = " ".join(segment[at + len(q.text):].split()[:8])
    found: frozenset[str] = frozenset()
    for m in _GROUP.finditer(tail):
        found |= _stems(m.group(1), lang)
    return found


def _bound_met_by_another_kind(claimed: lexical.Quantity, stated: lexical.Quantity) -> bool:
    """Whether a bare bound of the claim ("more than 2,000 adults", "R² above 0.95") would be met
    only by a figure of another kind: one that measures something else ("£4,800"), a year
    ("2022"), or, for a bound on a fraction below 1, a count or any figure from 1 up (any "9" of
    the source is above 0.95). A bound is read against figures of its kind."""
    return (claimed.bound in ("min", "max") and claimed.unit is None and stated.value != claimed.value
            and (stated.unit is not None or stated.weak or claimed.value < 1 <= stated.value))


def _bound_count_unmet(claim: str, claim_lang: str, focus: _Sentence) -> str | None:
    """A bounded count in words of the claim ("fewer than ten", "mehr als zwanzig"), which the
    figure check passes over as a count of things, that none of the focus's bare figures meets
    while the focus states some: the words of the count, else None."""
    stated = [q for q in lexical.quantities(focus.text, focus.lang) if not q.weak and q.unit is None]
    for q in lexical.quantities(claim, claim_lang):
        if q.weak and q.unit is None and q.bound in ("min", "max") and stated and not any(
                lexical.same_value(q, s) for s in stated):
            return q.text
    return None


def _units_agree(claimed: lexical.Quantity, stated: lexical.Quantity) -> bool:
    if claimed.unit == "x" and stated.unit != "x" and not (stated.unit is None and stated.decimals):
        # "five times as high" is a ratio, not the "five box designs" of a method section (a bare
        # measured value, "a performance factor of 3.1", may be one)
        return False
    return claimed.unit is None or stated.unit is None or _family(claimed.unit) == _family(stated.unit)


_SUBORDINATE = re.compile(
    r"^\s*(?:because|since|as|although|though|which|who|whose|where|when|while|whereas|if|unless|"
    r"weil|da|obwohl|obgleich|wobei|wenn|falls|sofern|während|wohingegen|der|die|das|deren|dessen|denen|"
    r"welche\w*|wo|in\s+(?:der|dem|denen|deren|dessen)|bei\s+(?:der|dem|denen|deren|dessen))\b", re.I)


def _main_clause_negated(claim: str) -> bool:
    """Whether the claim's own statement is negated, not only a subordinate clause of it
    ("…, weil dafür kein Zahnarzt nötig war", "Kinder, in deren Familien nicht Deutsch gesprochen
    wird, …"): its parts between commas, without those a conjunction or relative pronoun opens."""
    parts = [p for p in re.split(r"[,;]", claim) if p.strip()]
    main = [p for i, p in enumerate(parts) if i == 0 or not _SUBORDINATE.match(p)]
    # a relative clause right after the subject ("Kinder, in deren …, erweiterten"): the first part
    # keeps its subject, the clause is dropped
    return lexical.negated(" , ".join(main))


def _comparison_by_figures(claim: str, claim_lang: str, focus: _Sentence) -> str | None:
    """A comparison of the claim ("A higher than B", "Frauen stärker als Männer") read against
    two figures of one unit in the focus, each in a segment naming one of the claim's sides
    ("46 % … bei den Careleavern; in der Gesamtbevölkerung 71 %"): "agree" or "conflict" when
    the figures order the sides as the claim does or the other way round; None when the claim
    compares nothing, or the figures cannot be placed with its sides."""
    sides = _comparison_sides(claim, claim_lang)
    pivot = _comparison_pivot(claim)
    if sides is None or pivot is None:
        return None
    axes = lexical.directions(claim[:pivot.end()])
    signs = {sign for axis in ("quantity", "frequency") for sign in axes.get(axis, [])}
    if len(signs) != 1 or lexical.negated(claim):
        return None
    sign = signs.pop()
    left, right = sides
    # the claim's first group is the phrase before the comparison ("among tenants of private
    # allotments higher than …"), not the predicate both groups share
    head = claim[:pivot.start()]
    groups = list(re.finditer(r"\b(?:in|on|at|by|among|for|from|with|bei|unter|von|für|auf|an|mit|im|beim)\b",
                              head, re.I))
    if groups:
        narrow = set(lexical.content_terms(head[groups[-1].end():], claim_lang)) - right
        left = narrow or left
    if not left or not right:
        return None
    compounds = "de" in (claim_lang, focus.lang)
    # what the comparison measures ("mehr Sendungen als"): a figure counting it is no sample size
    more = _MORE_OF.search(claim[:pivot.start()])
    measured = set(lexical.content_terms(" ".join(claim[more.end():].split()[:2]), claim_lang)) if more else set()
    by_unit: dict[str | None, list[tuple[float, int]]] = {}
    for segment in _figure_segments(focus.text):
        figures = [q for q in lexical.quantities(segment, focus.lang) if not q.weak and q.role is None
                   and not _counts_a_side(q, segment, focus.lang, (left | right) - measured, compounds)]
        found = frozenset(lexical.content_terms(segment, focus.lang))
        on_left = sum(lexical.term_match(t, found, compounds, focus.lang) >= 0.75 for t in left)
        on_right = sum(lexical.term_match(t, found, compounds, focus.lang) >= 0.75 for t in right)
        for q in figures:
            by_unit.setdefault(_family(q.unit), []).append((q.value, on_right - on_left))
    verdicts = set()
    for unit, found in by_unit.items():
        # two figures of one unit: the one whose segment leans to the second group is its figure
        if len(found) != 2 or found[0][1] == found[1][1] or found[0][0] == found[1][0]:
            continue
        (a, _), (b, _) = sorted(found, key=lambda x: x[1])  # a: the first group's, b: the second's
        verdicts.add("agree" if (a > b) == (sign > 0) else "conflict")
    return verdicts.pop() if len(verdicts) == 1 else None


_MORE_OF = re.compile(r"\b(?:more|fewer|less|mehr|weniger)\b", re.I)


def _counts_a_side(q: lexical.Quantity, segment: str, lang: str, sides: set[str], compounds: bool) -> bool:
    """Whether a bare figure counts one of the compared groups itself ("31 Umnutzungsprojekte
    sowie 27 Neubauten", "34 schools"): the size of a sample, which measures nothing."""
    if q.unit:
        return False
    at = segment.find(q.text)
    # the very next word: "145 je Transporter" is a rate per group, "27 Neubauten" counts one
    after = segment[at + len(q.text):].split()[:1] if at >= 0 else []
    following = frozenset(lexical.content_terms(after[0], lang)) if after else frozenset()
    return bool(following) and any(lexical.term_match(t, following, compounds, lang) >= 0.75 for t in sides)


def _ratio_sides(claim: str, claim_lang: str, text: str, lang: str):
    """For a multiple of the claim ("four times as common in A as in B"): a test whether the
    larger of two figures of `text` sits with A and the smaller with B, as far as the groups
    named after them tell; the sides of the claim come from its comparison ("as … as",
    "than"). None when the claim names no two sides (then no ratio is read)."""
    found = [m for m in re.finditer(r"\b(?:as|wie|than|als)\b", claim, re.I)]
    multiple = re.search(r"\b(?:times|fold|mal|fach)\b|\b\w+(?:mal|fach)\b|\btwice\b|\bdoppelt\b", claim, re.I)
    after = [m for m in found if multiple is not None and m.start() > multiple.end()]
    # "four times as common in A as in B": the pivot is the last "as"/"than" after the multiple
    if len(after) < 1:
        return None
    m = after[-1]
    start, end = m.start(), m.end()
    left = set(lexical.content_terms(claim[multiple.end():start], claim_lang)) | set(
        lexical.content_terms(claim[:multiple.start()], claim_lang)) - set(lexical.content_terms(claim[end:], claim_lang))
    right = set(lexical.content_terms(claim[end:], claim_lang))
    left, right = left - right, right - left
    segments = _figure_segments(text)

    def terms_of(q: lexical.Quantity) -> set[str]:
        seg = next((g for g in segments if q.text in g), "")
        return set(lexical.content_terms(seg, lang))

    def check(big: lexical.Quantity, small: lexical.Quantity) -> bool:
        tb, ts = terms_of(big), terms_of(small)
        return not (len(tb & right) > len(tb & left) or len(ts & left) > len(ts & right))
    return check


def _derived(q: lexical.Quantity, nearby: list[lexical.Quantity], sides=None) -> bool:
    """A claimed figure that is the difference or ratio of two nearby figures of one unit
    ("rose by 14 points" for "from 58 % to 72 %"; "doubled" for 10 → 20)."""
    for a in nearby:
        for b in nearby:
            if a is b or _family(a.unit) != _family(b.unit):
                continue
            diff = abs(a.value - b.value)
            if q.unit == "%" and a.unit != "%" and diff and max(a.value, b.value):
                # "by about a third" for "from 2.6 to 1.7 minutes": the change relative to the start
                relative = 100 * diff / (a.value if a.role == "from" else max(a.value, b.value))
                if abs(relative - q.value) <= (0.15 * q.value if q.bound == "approx" else 0.5):
                    return True
            if q.unit == "x" and b.value and a.value > b.value and sides is not None and sides(a, b):
                ratio = a.value / b.value
                if (abs(ratio - q.value) <= 0.1 * q.value if q.bound in (None, "approx") else
                        q.value < ratio < 2 * q.value if q.bound == "min" else q.value / 2 < ratio < q.value):
                    return True  # "more than four times as often" for 14.2 % against 3.1 %
            if not _units_agree(q, a):
                continue
            if diff and round(diff, max(q.decimals, 1)) == round(q.value, max(q.decimals, 1)):
                return True
            if diff and q.bound in ("approx", "max") and q.value * 0.8 <= diff <= q.value * (1.1 if q.bound == "approx" else 1):
                return True  # "um fast zwei Monate" for 8.9 against 7.2 months
            if q.unit is None and b.value and round(a.value / b.value, 1) == q.value:
                return True
    return False


def _compare_directions(claim: str, clause: str) -> str | None:
    """"conflict" when the clause states the opposite direction on an axis the claim states,
    "agree" when it states the same, None when either states none (or the clause is mixed)."""
    mine, theirs = lexical.directions(claim), lexical.directions(clause)
    # "more frequent" is a count going up: against a source that states only how much, it is a quantity
    for a, b in ((mine, theirs), (theirs, mine)):
        if "frequency" in a and "frequency" not in b and "quantity" in b:
            a["quantity"] = a.get("quantity", []) + a.pop("frequency")
    agreed = 0
    for axis, signs in mine.items():
        other = theirs.get(axis)
        if not other:
            continue
        if len(set(signs)) == 1 and set(other) == {-signs[0]}:
            return "conflict"
        if len(signs) == len(other) >= 2 and signs == [-s for s in other]:
            # The same directions in another word order ("shortens waits by spreading requests more"
            # for "spreading more shortens waits") are read by what each direction is said of.
            if sorted(signs) != sorted(other) or _paired_directions(claim, clause, axis) != "agree":
                return "conflict"
            agreed += 1
            continue
        if len(set(other)) == 1 and -other[0] in signs and len(other) >= len(signs):
            # "larger radiators lowered it" against "larger radiators raised it": the claim states a
            # direction the source, stating only the other one and at least as often, never does
            return "conflict"
        if signs == other or (len(set(signs)) == 1 and set(other) == set(signs)):
            agreed += 1
    # Agreement needs every direction of the claim stated alike: "reduced X and improved Y"
    # is not backed by "reduced X" alone.
    return "agree" if mine and agreed == len(mine) else None


def _direction_subjects(text: str, axis: str) -> list[tuple[int, dict[str, float]]]:
    """Each direction of `axis` in the text with the content stems said of it: every word goes to
    the nearest direction word, weighing 1 / (1 + its distance in words)."""
    found = lexical.direction_positions(text).get(axis, [])
    if not found:
        return []
    lang = lexical.language(text)
    spans = lexical.word_spans(text)
    at = [next((i for i, (start, _) in enumerate(spans) if start >= pos), len(spans)) for pos, _ in found]
    subjects: list[dict[str, float]] = [{} for _ in found]
    cues = set(at)
    for i, (_, word) in enumerate(spans):
        if i in cues:
            continue
        nearest = min(range(len(at)), key=lambda k: abs(at[k] - i))
        for stem in _stems(word, lang):
            weight = 1 / (1 + abs(at[nearest] - i))
            subjects[nearest][stem] = max(subjects[nearest].get(stem, 0.0), weight)
    return [(sign, words) for (_, sign), words in zip(found, subjects)]


def _paired_directions(claim: str, clause: str, axis: str) -> str | None:
    """"agree" when each direction of the claim meets, in the clause, the direction said of the
    same words (nearest words weighing most) with the same sign; "conflict" when one meets the
    opposite sign; None when one shares no word with any, or is said of both alike."""
    theirs = _direction_subjects(clause, axis)
    verdict = "agree"
    for sign, words in _direction_subjects(claim, axis):
        scored = sorted(((sum(w * other[t] for t, w in words.items() if t in other), s) for s, other in theirs),
                        reverse=True)
        if not scored or scored[0][0] == 0 or (len(scored) > 1 and scored[1][0] == scored[0][0]
                                               and scored[1][1] != scored[0][1]):
            return None
        if scored[0][1] != sign:
            verdict = "conflict"
    return verdict


#: A condition or restriction a finding holds under ("provided that the aggregate is pre-wetted",
#: "nur bei Kindern unter sechs", "sofern", "unless"): the text after it up to the clause's end.
_CONDITION = re.compile(
    r"\b(?:provided\s+(?:that\s+)?|providing\s+(?:that\s+)?|as\s+long\s+as|only\s+(?:if|when|where|in|for|among|under)|"
    r"unless|on\s+condition\s+that|sofern|vorausgesetzt|solange|unter\s+der\s+voraussetzung|"
    r"nur\s+(?:wenn|dann|bei|in|für|unter|sofern|falls))\b(?P<rest>[^;.]*)",
    re.I,
)
_ONLY = re.compile(r"\b(?:only|nur|ausschließlich|solely|exclusively)\b", re.I)


def _guard_condition(claim: str, claim_lang: str, a: _Assessment) -> _Assessment:
    """A `supported` whose evidence holds only under a condition ("…, provided that …", "nur
    bei …", "sofern …") the claim leaves out, in words and in content, is a partial support:
    the claim states the finding more generally than its source."""
    if a.verdict is not Verdict.supported or a.sentence is None or _CONDITION.search(claim) or _ONLY.search(claim):
        return a
    m = _CONDITION.search(a.evidence or a.sentence.text)
    if m is None:
        return a
    lang = a.sentence.lang
    evidence = a.evidence or a.sentence.text
    # the condition's own terms: neither in the claim nor in the rest of the sentence it restricts
    mine = _stems(lexical.claim_core(claim), lang) | _stems(evidence[:m.start()], lang)
    own = [t for t in set(lexical.content_terms(m.group("rest"), lang))
           if lexical.term_match(t, mine, lang == "de", lang) < 0.5]
    if not own:
        return a
    return a.model_copy(update={"verdict": Verdict.partially_supported, "confidence": 0.55, "cue": "absolute",
                                "reason": f"the source states it only under a condition the claim leaves out "
                                          f"(“{_clip(m.group(0).strip(), 60)}”)"})


def _states_decline(text: str) -> bool:
    """Whether the text states a fall or a worsening ("profitierten deutlich weniger"): a claim
    stating no direction of its own ("the benefit was large") is not weakly backed by it."""
    return any(-1 in signs for axis, signs in lexical.directions(text).items() if axis in ("quantity", "quality"))


def _states_figure(claimed: list[lexical.Quantity], sentence: _Sentence) -> bool:
    """Whether the sentence states every figure of the claim (value and unit); False for a claim without one."""
    if not claimed:
        return False
    stated = [q for q in lexical.quantities(sentence.text, sentence.lang) if not q.weak]
    return all(_stated(c, stated) for c in claimed)


def _stated(claimed: lexical.Quantity, stated: list[lexical.Quantity]) -> bool:
    return any(lexical.same_value(claimed, q) and _units_agree(claimed, q) for q in stated)


def _pins_figures(claimed: list[lexical.Quantity], focus: _Sentence, context: str, lang: str) -> bool:
    """Whether the focus states two or more of the claim's figures and the passages read state
    the rest ("24-hour composites …, 38 % against 71 %" against a sentence with 38 % and 71 %
    and a methods passage with the 24-hour composites)."""
    stated = [q for q in lexical.quantities(focus.text, focus.lang) if not q.weak]
    if len({c.value for c in claimed if _stated(c, stated)}) < 2:
        return False
    around = [q for q in lexical.quantities(context, lang) if not q.weak]
    return all(_stated(c, around) for c in claimed)


def _states_share(claimed: list[lexical.Share], sentence: _Sentence) -> bool:
    """Whether the sentence states a share that agrees with one of the claim's (a fraction or a
    percentage, in digits or words)."""
    return bool(claimed) and any(c.agrees(s) for s in lexical.shares(sentence.text, sentence.lang)
                                 if s.form == "fraction" for c in claimed if s.kind == c.kind)


def _mixed_directions(claim: str, sentence: str) -> bool:
    """Whether the sentence states both directions on an axis on which the claim states one."""
    theirs = lexical.directions(sentence)
    return any(len(set(signs)) == 1 and set(theirs.get(axis, [])) == {-1, 1}
               for axis, signs in lexical.directions(claim).items())


_THAN = re.compile(r"\b(?:than|als)\b", re.I)


#: An equative with a multiple or a degree: "dreimal so hoch wie", "twice as high as".
_AS_AS = re.compile(r"\b(?:so|as)\s+[^\W\d_]+(?:\s+[^\W\d_]+)?\s+(?P<pivot>wie|as)\b", re.I)


def _comparison_pivot(text: str) -> re.Match | None:
    """Where a comparison turns: its "than"/"als" after a comparative or a direction word, or
    the second "as"/"wie" of "three times as high as"."""
    m = _THAN.search(text)
    # (read up to "than" itself: "for more than one hour" is a bound, no comparison)
    if m is not None and (lexical.directions(text[:m.end()]) or _comparative(text)):
        return m
    eq = _AS_AS.search(text)
    if eq is not None and lexical.directions(text[:eq.end()]):
        return eq
    return None


def _comparison_sides(text: str, lang: str) -> tuple[set[str], set[str]] | None:
    """The content terms before and after the pivot of a comparison ("A cooled more than B",
    "A wirkten stärker als B", "in A dreimal so hoch wie in B"), each without the other's."""
    m = _comparison_pivot(text)
    if m is None:
        return None
    start, end = (m.start("pivot"), m.end("pivot")) if "pivot" in m.re.groupindex else (m.start(), m.end())
    left, right = set(lexical.content_terms(text[:start], lang)), set(lexical.content_terms(text[end:], lang))
    return left - right, right - left


#: The comparative a comparison turns on: the "-er" word just before "than"/"als" ("earlier",
#: "schneller", "häufiger"), or "more"/"mehr" with the word after it.
_COMPARATIVE = re.compile(r"\b((?i:more|less|mehr|weniger)\s+[^\W\d_]+|[a-zäöüß][^\W\d_]{2,}er)\b"
                          r"(?:\s+[^\W\d_]+){0,1}\s+(?i:than|als)\b")
# (lower case: "Stadtbürger als Stifter" is a noun and "as", no comparison)


def _comparative(text: str) -> str | None:
    m = _COMPARATIVE.search(text)
    return m.group(1).lower() if m else None


def _comparison_swapped(claim: str, claim_lang: str, sentence: str, lang: str) -> bool:
    """Whether claim and sentence compare the same two things with the sides exchanged: what
    the claim puts before "than" the sentence puts after it, and the reverse."""
    mine, theirs = _comparison_sides(claim, claim_lang), _comparison_sides(sentence, lang)
    if mine is None or theirs is None:
        return False
    (my_left, my_right), (their_left, their_right) = mine, theirs
    if bool(my_left & their_right) and bool(my_right & their_left) and not my_right & their_right:
        return True
    # one side named in other words ("anderen" for "nichtdeutscher"): the side the claim names
    # in the source's words stands on the other side there, and on neither side of its own
    # (what both put before the pivot is the predicate, "verbesserten ihre Rechtschreibung", not a side)
    left_only, right_only = my_left - their_left, my_right - their_right
    return ((bool(left_only & their_right) and not my_right & their_right)
            or (bool(right_only & their_left) and not my_left & their_right))


#: Strong absolutes that say the same ("fully" closed is "completely" sealed).
_ABSOLUTE_KIND = {w: kind for kind, words in {
    "#complete": "entirely completely totally fully vollständig vollständige vollständigen völlig komplett "
                 "gänzlich",
    "#always": "always invariably immer stets",
    "#never": "never nie niemals",
}.items() for w in words.split()}


#: An association, not a cause: "was associated with", "ging mit … einher", "correlated".
_ASSOCIATION = re.compile(
    r"\b(?:associated\s+with|association|linked\s+(?:to|with)|correlat\w*|went\s+along\s+with|"
    r"related\s+to|relationship|einher\w*|zusammenhang\w*|zusammenhäng\w*|korrel\w*|assoziiert\w*|verbunden)\b",
    re.I)


def _overstatement(claim: str, source: str, clause: str | None = None) -> str | None:
    """The absolute words of the claim the source does not back: a strong one ("eliminates",
    "always", "vollständig") the source does not use, or a weak one ("all", "alle") against a
    hedged source; a word of certainty ("reliably", "nachweislich") or of cause ("caused",
    "verursacht") the source does not use; or a plain claim where the source's `clause` (the
    part closest to the claim) only hedges ("may reduce", "deuten darauf hin", "könnten").
    None when the claim hedges itself or nothing is overstated."""
    if lexical.hedged(claim):
        return None
    strong, weak = lexical.absolutes(claim)
    source_strong, source_weak = lexical.absolutes(source)
    said = {lexical.stem(w, "en") for w in source_strong + source_weak}
    said |= {_ABSOLUTE_KIND[w] for w in source_strong if w in _ABSOLUTE_KIND}
    unbacked = [w for w in strong if lexical.stem(w, "en") not in said and _ABSOLUTE_KIND.get(w) not in said]
    if unbacked:
        return ", ".join(unbacked)
    certain = [w for w in lexical.certainties(claim) if not lexical.certainties(source)]
    if certain:
        return f"{', '.join(certain)} where the source states no such certainty"
    if clause is not None and lexical.modally_hedged(clause) and not lexical.modally_hedged(claim):
        return "a plain statement of what the source states as possible"
    if (clause is not None and _ASSOCIATION.search(clause) and not _ASSOCIATION.search(claim)
            and (lexical.directions(claim) or lexical.certainties(claim))):
        return "a cause where the source reports an association"
    # "every one of the nine" is backed by "all nine": the weak absolutes say the same
    if weak and not source_weak:
        if lexical.hedged(source):
            return f"{', '.join(weak)} against hedged source language"
        stated = [q for q in lexical.quantities(source, lexical.language(source)) if q.unit == "%"]
        shares = [q for q in stated if q.value < 100]
        if shares and not any(q.value == 100 for q in stated):  # "all employees" against "58 % of respondents"
            return f"{', '.join(weak)} against {shares[0].text}"
    return None


#: What a claim may add to a finding: a cause ("prevents", "führt dazu"), a scope beyond the
#: sample ("across England", "bundesweit") or a permanence ("dauerhaft", "lasting").
_GENERALISATIONS = (
    ("a cause", re.compile(
        r"\b(?:caus(?:e|es|ed|ing)|prevent\w*|protects?|protected|protecting|leads?\s+to|led\s+to|results?\s+in|"
        r"because|thereby|proving|proves?|proven|determines?|determined|ensur\w*|verursach\w*|"
        r"verhinder\w*|schützt\w*|führ\w*\s+(?:dazu|zu)|sorg\w*\s+(?:\w+\s+){0,4}?für|weil|dadurch|bewirk\w*)\b",
        re.I)),
    ("a scope", re.compile(
        r"\b(?:(?i:across)\s+(?:all\b|the\s+whole\b|[A-Z])|(?i:everywhere|worldwide|nationwide|universal\w*|"
        r"in\s+general|generally|bundesweit\w*|deutschlandweit\w*|weltweit\w*|überall|in\s+ganz|generell\w*|"
        r"grundsätzlich\w*))")),
    ("a permanence", re.compile(
        r"\b(?:permanent\w*|lasting|long[-\s]term|for\s+good|well\s+into|dauerhaft\w*|nachhaltig\w*|"
        r"langfristig\w*|reliabl[ey]|zuverlässig\w*|nachweislich\w*)\b", re.I)),
)


_ALL = re.compile(r"\b(?:all|every|alle|allen|aller|sämtliche\w*)\b", re.I)


def _generalisation(claim: str, ranked: list[tuple[float, float, _Sentence]],
                    kinds: tuple[str, ...] = ("a cause", "a scope", "a permanence")) -> tuple[str, str] | None:
    """The cause, scope or permanence a plain (not negated, not hedged) claim states that no
    sentence read states in the affirmative ("prevents" against "was associated with a lower
    prevalence"; "dauerhaft" against "nach zwölf Monaten"): its kind and word; None if none."""
    if lexical.negated(claim) or lexical.modally_hedged(claim):
        return None
    for kind, pattern in _GENERALISATIONS:
        if kind not in kinds:
            continue
        m = pattern.search(claim)
        if m is None:
            continue
        if any(pattern.search(s.text) and not lexical.negated(s.text) for _, _, s in ranked):
            continue
        if kind == "a scope" and any(_ALL.search(s.text) for _, _, s in ranked):
            continue  # "across all groups" is backed by "in all four groups"
        return kind, m.group(0)
    return None


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- OpenAI-compatible HTTP judge ------------------------------------------


class ProviderError(Exception):
    """The judge provider failed."""

    #: the failure reason a job records when this error fails it
    code = "provider_error"


class ProviderUnavailable(ProviderError):
    """The judge provider cannot be reached or failed on its side (5xx); retry later."""


class ProviderRateLimited(ProviderError):
    """The judge provider asked us to slow down (HTTP 429)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        #: seconds to wait, from the Retry-After header, if the provider sent one
        self.retry_after = retry_after


class ProviderBadResponse(ProviderError):
    """The provider answered, but not in the wire format (an embeddings call; the judge
    retries a bad chat answer itself and ends `uncertain`)."""


class ProviderRejected(ProviderError):
    """The provider refused this request (a 4xx other than 429): no retry will change that."""


class ProviderPermanentError(ProviderRejected):
    """The provider refuses every request of this configuration: the job fails at once."""


class ProviderAuthFailed(ProviderPermanentError):
    """The provider refused the API key (HTTP 401 or 403)."""

    code = "provider_auth_failed"


class ProviderModelNotFound(ProviderPermanentError):
    """The provider does not know the model, or the endpoint (HTTP 404, or 400 "model not found")."""

    code = "provider_model_not_found"


#: How much of a provider's error body reaches a log line, an exception or a failure reason.
ERROR_BODY_LIMIT = 300
_SECRET_PATTERNS = (
    (re.compile(r"(?i)\bbearer\s+[^\s\"',;]+"), "Bearer [redacted]"),
    (re.compile(r"\b(?:sk|key|pk|rk|api)-[A-Za-z0-9_\-]{6,}"), "[redacted]"),
    (re.compile(r"(?i)\b(api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret|password)"
                r"(\"?\s*[:=]\s*\"?)[^\s\"'&,;}]+"), r"\1\2[redacted]"),
)
_MODEL_MISSING = re.compile(r"(?i)model.{0,80}(?:not\s+found|does\s+not\s+exist|unknown|not\s+exist|invalid)|"
                            r"(?:unknown|invalid|no\s+such)\s+model")


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def redact(text: str, secrets: Sequence[str] = (), *, limit: int = ERROR_BODY_LIMIT) -> str:
    """`text` with the configured secrets, bearer tokens, ``sk-…``/``key-…`` tokens and
    ``api_key=…`` values replaced by ``[redacted]``, then clipped to `limit` characters.
    Every provider text bound for a log, an exception or a failure reason passes here."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return _clip(text, limit)


class OpenAICompatibleClient:
    """The HTTP side of an OpenAI-compatible provider: base URL, bearer key, timeout and
    pooled connections (shared by the judge and the embedder). Every error it raises is
    typed, and its text is clipped and redacted (`redact`)."""

    #: what the provider is called in error messages
    role = "provider"

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self._secrets = (api_key,) if api_key else ()
        self._client = httpx.Client(
            base_url=base_url.rstrip("/") + "/", headers=headers, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self._client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _safe(self, text: str, limit: int = ERROR_BODY_LIMIT) -> str:
        return redact(text, self._secrets, limit=limit)

    def _post(self, path: str, body: dict) -> httpx.Response:
        """POST and check the status; raises a typed `ProviderError` with a redacted message."""
        try:
            response = self._client.post(path, json=body)
        except httpx.TransportError as exc:  # connect, read, timeouts, broken protocol
            raise ProviderUnavailable(self._safe(f"{self.role} unreachable: {exc!r}")) from None
        self._raise_for_status(response)
        return response

    def _raise_for_status(self, response: httpx.Response) -> None:
        status = response.status_code
        if status < 400:
            return
        body = self._safe(response.text)
        if status == 429:
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            raise ProviderRateLimited(f"{self.role} rate-limited us (429), retry after {retry_after}s", retry_after)
        if status in (401, 403):
            raise ProviderAuthFailed(f"{self.role} refused the API key: HTTP {status} {body}")
        if status == 404 or (status in (400, 422) and _MODEL_MISSING.search(response.text)):
            raise ProviderModelNotFound(f"{self.role} does not know model {self.model!r} (or the endpoint): "
                                        f"HTTP {status} {body}")
        if status >= 500 or status in (408, 409):
            raise ProviderUnavailable(f"{self.role} failed with HTTP {status} {body}")
        raise ProviderRejected(f"{self.role} rejected the request: HTTP {status} {body}")


SYSTEM_PROMPT = """You check citations in academic theses (English or German). You get a claim \
from a thesis and numbered passages, each with its page, from the source the claim cites. Decide \
whether the passages support the claim:
- "supported": the passages state the claim;
- "partially_supported": they state part of it, or state it more weakly (the claim overstates: \
"all", "always", "proves" where the source says "some", "may", "suggests");
- "not_supported": they do not state it, or contradict it (other figures, the opposite direction, \
a denied effect);
- "uncertain": the passages do not let you decide.
evidence_quote: copy the one sentence (or clause) your verdict rests on, character for character \
from a passage; "" when there is none. evidence_page: the page of that passage, or null. \
rationale: one or two sentences. confidence: between 0 and 1."""

#: Verdicts a provider may answer (source_missing is decided before judging).
_PROVIDER_VERDICTS = ("supported", "partially_supported", "not_supported", "uncertain")

#: The answer's JSON schema, sent as a strict ``response_format``.
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(_PROVIDER_VERDICTS)},
        "evidence_quote": {"type": "string"},
        "evidence_page": {"type": ["integer", "null"]},
        "rationale": {"type": "string"},
        "confidence": {"type": "number"},
    },
    "required": ["verdict", "evidence_quote", "evidence_page", "rationale", "confidence"],
    "additionalProperties": False,
}


class _Answer(BaseModel):
    model_config = {"extra": "forbid"}

    verdict: Literal["supported", "partially_supported", "not_supported", "uncertain"]
    evidence_quote: str
    evidence_page: int | None
    rationale: str
    confidence: float = Field(ge=0.0, le=1.0)

    @field_validator("verdict", mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        # Models write "Partially supported" or "partially-supported" as often as the spec.
        return re.sub(r"[\s-]+", "_", value.strip().lower()) if isinstance(value, str) else value


class _Unusable(Exception):
    """One answer of the provider that cannot be used; the judge asks again."""


class _Reply(BaseModel):
    content: object = None
    refusal: object = None
    finish_reason: str | None = None
    tokens: int = 0


#: Answers of one citation the judge reads before it gives up and says `uncertain`.
DEFAULT_ATTEMPTS = 3


class OpenAIJudge(OpenAICompatibleClient):
    """A judge backed by an OpenAI-compatible ``POST {base_url}/chat/completions``.

    It asks for structured output (a strict JSON schema: verdict, evidence_quote,
    evidence_page, rationale, confidence). An answer that is malformed, truncated
    (``finish_reason`` "length"), refused (``message.refusal``, ``finish_reason``
    "content_filter"), outside the schema or citing a page that is not among the passages
    is asked again, up to `attempts` answers; then the verdict is `uncertain` with the reason.
    A quote that does not occur in the passages (compared after normalising whitespace,
    quotes, dashes and case) makes the verdict `uncertain`. Provider errors are raised typed
    (`ProviderError`), never a bad answer. Each judgement carries the tokens it cost.
    """

    role = "judge provider"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        json_mode: bool = True,
        attempts: int = DEFAULT_ATTEMPTS,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(base_url=base_url, model=model, api_key=api_key, timeout=timeout, transport=transport)
        self.json_mode = json_mode
        self.attempts = max(1, attempts)
        self.name = f"openai:{model}"

    def judge(self, claim: str, passages: list[Hit]) -> Judgement:
        """Ask the provider; raises a `ProviderError` subclass when the provider fails."""
        if not passages:
            return _no_passages()  # nothing to show the model: no call, no cost
        messages = self._messages(claim, passages)
        problems: list[str] = []
        tokens = 0
        for _ in range(self.attempts):
            reply = self._complete(messages)
            tokens += reply.tokens
            try:
                judgement = self._read(reply, passages)
            except _Unusable as exc:
                problems.append(str(exc))
                continue
            return judgement.model_copy(update={"tokens": tokens})
        logger.warning("judge answers unusable", extra={"action": "judge_answer_unusable", "model": self.model,
                                                         "problems": problems})
        return Judgement(verdict=Verdict.uncertain, confidence=0.0, tokens=tokens,
                         rationale=f"The judge's {len(problems)} answers could not be used "
                                   f"({'; '.join(dict.fromkeys(problems))}); check the source yourself.")

    def _messages(self, claim: str, passages: Sequence[Hit]) -> list[dict[str, str]]:
        numbered = "\n\n".join(f"Passage {i} (page {p.page}):\n{p.text}" for i, p in enumerate(passages, 1))
        user = f"Claim:\n{claim}\n\n{numbered}"
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

    def _complete(self, messages: list[dict[str, str]]) -> _Reply:
        body: dict[str, object] = {"model": self.model, "messages": messages, "temperature": 0}
        if self.json_mode:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "citation_verdict", "strict": True, "schema": ANSWER_SCHEMA}}
        response = self._post("chat/completions", body)
        try:
            data = response.json()
            choice = data["choices"][0]
            message = choice.get("message") or {}
            usage = data.get("usage") or {}
            tokens = usage.get("total_tokens") or 0
            return _Reply(content=message.get("content"), refusal=message.get("refusal"),
                          finish_reason=choice.get("finish_reason"),
                          tokens=tokens if isinstance(tokens, int) and tokens > 0 else 0)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, ValidationError):
            # Not the chat-completions shape at all: counts as an unusable answer.
            return _Reply(content=None, finish_reason="not a chat completion")

    def _read(self, reply: _Reply, passages: Sequence[Hit]) -> Judgement:
        if reply.finish_reason == "not a chat completion":
            raise _Unusable("not a chat-completions response")
        if reply.refusal or reply.finish_reason == "content_filter":
            raise _Unusable(f"refused: {self._safe(str(reply.refusal or 'content filter'), 120)}")
        if reply.finish_reason == "length":
            raise _Unusable("truncated (finish_reason length)")
        if not isinstance(reply.content, str):
            raise _Unusable("no text in the answer")
        # Models asked for JSON still wrap it in ```json fences now and then.
        text = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", reply.content)
        try:
            raw = json.loads(text)
        except ValueError:
            raise _Unusable(f"malformed JSON: {self._safe(reply.content, 80)!r}") from None
        try:
            answer = _Answer.model_validate(raw)
        except ValidationError as exc:
            fields = ", ".join(".".join(str(p) for p in e["loc"]) or "answer" for e in exc.errors())
            raise _Unusable(f"answer outside the schema ({fields})") from None
        pages = {p.page for p in passages}
        if answer.evidence_page is not None and answer.evidence_page not in pages:
            raise _Unusable(f"evidence_page {answer.evidence_page} is not a page of the passages "
                            f"({', '.join(map(str, sorted(pages)))})")
        return self._judgement(answer, passages)

    def _judgement(self, answer: _Answer, passages: Sequence[Hit]) -> Judgement:
        verdict, rationale = Verdict(answer.verdict), answer.rationale.strip() or "(no rationale given)"
        quote = answer.evidence_quote.strip()
        if not quote:
            if verdict in (Verdict.supported, Verdict.partially_supported):
                return Judgement(verdict=Verdict.uncertain, confidence=min(answer.confidence, 0.3),
                                 rationale=f"The judge said {verdict.value} but quoted no evidence. {rationale}")
            return Judgement(verdict=verdict, confidence=answer.confidence, rationale=rationale)
        found = find_quote(quote, passages, prefer_page=answer.evidence_page)
        if found is None:
            return Judgement(verdict=Verdict.uncertain, confidence=min(answer.confidence, 0.3),
                             rationale=f"The judge said {verdict.value}, but its quote does not occur in the "
                                       f"passages: \"{_clip(quote, 120)}\". {rationale}")
        evidence, page = found
        return Judgement(verdict=verdict, confidence=answer.confidence, evidence=evidence, evidence_page=page,
                         rationale=rationale)


_QUOTE_FOLD = str.maketrans({"“": '"', "”": '"', "„": '"', "‟": '"', "«": '"', "»": '"', "‘": "'", "’": "'",
                             "‚": "'", "‹": "'", "›": "'", "`": "'", "–": "-", "—": "-", "‒": "-", "−": "-",
                             "‐": "-", "‑": "-", "\u00ad": ""})


def _normalised(text: str) -> tuple[str, list[int]]:
    """The text with whitespace collapsed, quotes and dashes folded, lower case; and for each
    character of it the offset of the character of `text` it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        ch = ch.translate(_QUOTE_FOLD)
        if not ch:
            continue
        if ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                where.append(i)
            continue
        for c in ch.lower():
            out.append(c)
            where.append(i)
    while out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


#: A quote shorter than this (or a single word) is not evidence, wherever it occurs.
MIN_QUOTE_CHARS = 12


def find_quote(quote: str, passages: Sequence[Hit], *, prefer_page: int | None = None) -> tuple[str, int] | None:
    """Where a quote occurs in the passages, compared after normalising whitespace, quotes,
    dashes and case: (the passage's own text of it, the passage's page), or None. A quote
    found on several pages is taken from `prefer_page` when it is one of them."""
    bare = quote.strip().strip("\"'“”„")
    # As quoted, then without the closing stop or ellipsis a model may add or drop.
    for candidate in dict.fromkeys((bare, bare.rstrip(".…").rstrip())):
        wanted, _ = _normalised(candidate)
        if len(wanted) < MIN_QUOTE_CHARS or " " not in wanted:
            continue  # "the" or "yes" occurs anywhere: too short to show anything
        found = []
        for p in passages:
            text, where = _normalised(p.text)
            at = text.find(wanted)
            if at >= 0:
                found.append((p.text[where[at]:where[at + len(wanted) - 1] + 1], p.page))
        if found:
            return next((f for f in found if f[1] == prefer_page), found[0])
    return None


# --- configuration ----------------------------------------------------------


class JudgeSettings(JudgeChoice):
    """Judge configuration: ``CITEQ_JUDGE`` (:class:`analysis.settings.JudgeChoice`) and
    the ``CITEQ_JUDGE_*`` variables of the openai judge."""

    base_url: str | None = env_field(None, "CITEQ_JUDGE_BASE_URL", "openai judge: endpoint base URL")
    model: str | None = env_field(None, "CITEQ_JUDGE_MODEL", "openai judge: model")
    api_key: str | None = env_field(None, "CITEQ_JUDGE_API_KEY",
                                    "openai judge: API key (redacted from every log and error)")
    timeout: float = env_field(30.0, "CITEQ_JUDGE_TIMEOUT", "openai judge: request timeout, seconds", gt=0)
    attempts: int = env_field(DEFAULT_ATTEMPTS, "CITEQ_JUDGE_ATTEMPTS",
                              "openai judge: answers read per citation before uncertain", ge=1, le=10)

    @property
    def kind(self) -> str:
        return self.judge_provider


def judge_from_env(env: Mapping[str, str]) -> Judge:
    """Build the configured judge from CITEQ_JUDGE (offline|openai), CITEQ_JUDGE_BASE_URL,
    CITEQ_JUDGE_MODEL, CITEQ_JUDGE_API_KEY, CITEQ_JUDGE_TIMEOUT (seconds) and
    CITEQ_JUDGE_ATTEMPTS (answers read per citation before it is `uncertain`).

    Raises ValueError naming the variable when the configuration is incomplete or a value
    is not valid (pydantic's ValidationError is one).
    """
    settings = JudgeSettings.from_env(env)
    if settings.kind == "offline":
        return OfflineJudge()
    for name, value in (("CITEQ_JUDGE_BASE_URL", settings.base_url), ("CITEQ_JUDGE_MODEL", settings.model)):
        if not value:
            raise ValueError(f"CITEQ_JUDGE=openai needs {name}")
    return OpenAIJudge(
        base_url=settings.base_url, model=settings.model, api_key=settings.api_key, timeout=settings.timeout,
        attempts=settings.attempts,
    )


#: Judge factories by name; ``CITEQ_JUDGE_FACTORY`` chooses one (empty: :func:`judge_from_env`).
#: A test or the demo registers its own in a module the worker loads next to the actors
#: (``dramatiq actors tests.e2e.hooks``).
JUDGE_FACTORIES: dict[str, Callable[[], Judge]] = {}


def register_judge_factory(name: str, factory: Callable[[], Judge]) -> Callable[[], Judge]:
    """Make ``factory`` the judge factory named ``name`` in this process."""
    JUDGE_FACTORIES[name] = factory
    return factory


def judge_factory(name: str) -> Callable[[], Judge]:
    """The judge factory registered as ``name``; ValueError (a misconfiguration) if none is."""
    try:
        return JUDGE_FACTORIES[name]
    except KeyError:
        raise ValueError(f"CITEQ_JUDGE_FACTORY={name!r}: no judge factory is registered under that name in this "
                         f"process (registered: {', '.join(sorted(JUDGE_FACTORIES)) or 'none'})") from None
