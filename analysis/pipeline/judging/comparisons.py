"""Comparisons ("more than", "as ... as"), swapped sides, overstatement (absolute words against
hedges) and generalisation (an added cause, scope or permanence).
"""

from __future__ import annotations

import re

from analysis.pipeline.judging import lexical

from analysis.pipeline.judging.assessment import Sentence

_THAN = re.compile(r"\b(?:than|als)\b", re.I)


#: An equative with a multiple or a degree: "dreimal so hoch wie", "twice as high as".
AS_AS = re.compile(r"\b(?:so|as)\s+[^\W\d_]+(?:\s+[^\W\d_]+)?\s+(?P<pivot>wie|as)\b", re.I)


def comparison_pivot(text: str) -> re.Match | None:
    """Where a comparison turns: its "than"/"als" after a comparative or a direction word, or
    the second "as"/"wie" of "three times as high as"."""
    m = _THAN.search(text)
    # (read up to "than" itself: "for more than one hour" is a bound, no comparison)
    if m is not None and (lexical.directions(text[:m.end()]) or comparative(text)):
        return m
    eq = AS_AS.search(text)
    if eq is not None and lexical.directions(text[:eq.end()]):
        return eq
    return None


def comparison_sides(text: str, lang: str) -> tuple[set[str], set[str]] | None:
    """The content terms before and after the pivot of a comparison ("A cooled more than B",
    "A wirkten stärker als B", "in A dreimal so hoch wie in B"), each without the other's."""
    m = comparison_pivot(text)
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


def comparative(text: str) -> str | None:
    m = _COMPARATIVE.search(text)
    return m.group(1).lower() if m else None


def comparison_swapped(claim: str, claim_lang: str, sentence: str, lang: str) -> bool:
    """Whether claim and sentence compare the same two things with the sides exchanged: what
    the claim puts before "than" the sentence puts after it, and the reverse."""
    mine, theirs = comparison_sides(claim, claim_lang), comparison_sides(sentence, lang)
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


def overstatement(claim: str, source: str, clause: str | None = None) -> str | None:
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


def generalisation(claim: str, ranked: list[tuple[float, float, Sentence]],
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
