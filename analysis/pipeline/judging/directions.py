"""Directions (rise/fall, better/worse) in a claim against the evidence's, paired by what each is
said of, and the guards on direction and on a condition the claim drops.
"""

from __future__ import annotations

import math
import re

from analysis.pipeline.judging import lexical

from analysis.pipeline.judging.assessment import Assessment
from analysis.pipeline.judging.figures import mixed_directions
from analysis.pipeline.judging.scoring import stems_of
from analysis.pipeline.judging.verdicts import Verdict
from analysis.pipeline.judging.wording import CLAUSE_BREAK
from analysis.pipeline.providers.client import clip

def part_terms(part: str, lang: str) -> bool:
    """Whether a claim part says enough to be looked for: two content terms, or one long one in
    a part of three words or more ("und auch die Luftqualität verbesserte sich")."""
    terms = set(lexical.content_terms(part, lang))
    return len(terms) >= 2 or (len(part.split()) >= 3 and any(len(t) >= 7 for t in terms))


def guard_directions(claim: str, a: Assessment) -> Assessment:
    """The check every `supported` passes for directions, as `_guard_shares` for shares: the
    evidence (the sentence, or the two adjacent sentences quoted) states no direction opposite
    to the claim's on the same axis, and not both directions where the claim states one."""
    if a.verdict is not Verdict.supported or a.sentence is None:
        return a
    evidence = a.evidence or a.sentence.text
    # Clause by clause: "X rose, while Y fell" backs "X rose"; one clause stating both does not decide.
    clauses = [c for c in CLAUSE_BREAK.split(evidence) if c and c.strip()]
    found = [compare_directions(claim, c) for c in clauses]
    mine = lexical.directions(claim)
    if any(any(lexical.directions(c).get(axis) == signs for axis, signs in mine.items()) for c in clauses):
        found.append("agree")  # a clause states one of the claim's directions as the claim does
    if "conflict" in found and "agree" not in found:
        return a.model_copy(update={"verdict": Verdict.not_supported, "confidence": 0.6, "cue": "direction",
                                    "reason": "the source states the opposite direction"})
    if "agree" not in found and mixed_directions(claim, evidence):
        return a.model_copy(update={"verdict": Verdict.uncertain, "confidence": 0.4, "cue": "weak",
                                    "reason": "the source's sentence states both directions; check which one the "
                                              "claim's subject takes"})
    return a


def compare_directions(claim: str, clause: str) -> str | None:
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
        for stem in stems_of(word, lang):
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
        scored = sorted(((math.fsum(w * other[t] for t, w in words.items() if t in other), s) for s, other in theirs),
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


def guard_condition(claim: str, claim_lang: str, a: Assessment) -> Assessment:
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
    mine = stems_of(lexical.claim_core(claim), lang) | stems_of(evidence[:m.start()], lang)
    own = [t for t in set(lexical.content_terms(m.group("rest"), lang))
           if lexical.term_match(t, mine, lang == "de", lang) < 0.5]
    if not own:
        return a
    return a.model_copy(update={"verdict": Verdict.partially_supported, "confidence": 0.55, "cue": "absolute",
                                "reason": f"the source states it only under a condition the claim leaves out "
                                          f"(“{clip(m.group(0).strip(), 60)}”)"})
