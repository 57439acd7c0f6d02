"""Shares of a group ("most", "two thirds", "weniger als die Hälfte") and counts in a claim
against those in the evidence: the guards that stop a support the evidence contradicts.
"""

from __future__ import annotations

import re

from analysis.pipeline.judging import lexical

from analysis.pipeline.judging.assessment import Assessment
from analysis.pipeline.judging.figures import group_after
from analysis.pipeline.judging.verdicts import Verdict

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


def shares_contradicted(claim: str, claim_lang: str, evidence: str, window: str, lang: str) -> tuple[str, bool] | None:
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


def share_of_the_group(claim: str, claim_lang: str, evidence: str, lang: str) -> str | None:
    """The reason when the evidence gives a share for the group the claim names ("14 Prozent
    von Grafen und Hochadel") that disagrees with the claim's share for it ("mehr als ein
    Drittel … von Grafen und Hochadel"), and no share it gives that group agrees."""
    stated = [(s, group_after(evidence, s, lang)) for s in lexical.shares(evidence, lang) if s.form == "fraction"]
    if len(stated) < 2:
        return None
    for share in lexical.shares(claim, claim_lang):
        if share.form != "fraction":
            continue
        group = group_after(claim, share, claim_lang)
        common = frozenset.intersection(*(g for _, g in stated)) if all(g for _, g in stated) else frozenset()
        distinct = group - common
        theirs = [s for s, g in stated if s.kind == share.kind and distinct & g]
        if distinct and theirs and not any(share.agrees(s) for s in theirs):
            return (f"the source gives the claim's group “{theirs[0].text}”, not “{share.text}”")
    return None


def shares_agreeing(claim: str, claim_lang: str, evidence: str, lang: str) -> bool:
    """Whether each share of the claim meets an agreeing share of the evidence ("a third" and 33 %)."""
    claimed = lexical.shares(claim, claim_lang)
    stated = lexical.shares(evidence, lang)
    return bool(claimed) and all(any(_comparable(c, s, lang, in_evidence=True) and c.agrees(s) for s in stated)
                                 for c in claimed)


def guard_shares(claim: str, claim_lang: str, a: Assessment) -> Assessment:
    """The one check every `supported` passes: the claim's figures and shares, in digits or in
    words, are not contradicted by the evidence or its neighbouring sentences. Whatever path
    found the support (a direction, a shared denial, one sentence's or two sentences' coverage),
    a contradicted share makes it `not_supported` (an "all" against "nearly all": `partially_supported`)."""
    if a.verdict is not Verdict.supported or a.sentence is None:
        return a
    found = shares_contradicted(claim, claim_lang, a.evidence or a.sentence.text, a.sentence.window,
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


def guard_counts(claim: str, claim_lang: str, a: Assessment) -> Assessment:
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
