"""Shares of a group in a text (`Share`): "most", "two in five", "weniger als die Hälfte".
"""

from __future__ import annotations


import re
from dataclasses import dataclass
from functools import lru_cache

from analysis.pipeline.judging.lexical.cues import is_cue
from analysis.pipeline.judging.lexical.numerals import (ADVERBIAL_ALL, BY_BEFORE, COUNTS, FRACTION_VALUES,
    NUMERATORS, ORDINALS, RATIO, SHARE_WORD)
from analysis.pipeline.judging.lexical.quantities import quantities
from analysis.pipeline.judging.lexical.terms import content_terms
from analysis.pipeline.judging.lexical.words import stem

def _count(word: str) -> int | None:
    word = word.lower()
    return int(word) if word.isdigit() else COUNTS.get(word)
#: "a 20 % increase", "20 % more", "between 10 % and 12 % above": a change, not a share.
_CHANGE_AFTER = re.compile(r"^\s*(?:(?:and|to|und|bis)\s+\d+(?:[.,]\d+)?\s*(?:%|per\s+cent|prozent)\s*)?"
                           r"(?:increase|decrease|rise|drop|fall|decline|growth|higher|lower|more|less|"
                           r"fewer|anstieg|rückgang|zuwachs|höher|niedriger|mehr|weniger|above|below|"
                           r"(?:über|unter)\s+(?:dem|der|den)\b)\b", re.I)
_ORDINAL_BEFORE = re.compile(r"\b(?:first|second|latter|former|erste\w*|zweite\w*|letzte\w*)\s+$", re.I)
_SHARE_BOUNDS = (
    ("under", re.compile(r"\b(?:nearly|almost|just\s+under|just\s+below|slightly\s+less\s+than|not\s+quite|"
                         r"fast|knapp|beinahe|nicht\s+ganz|gut\s+unter)\s+(?:the\s+|die\s+|der\s+)?$", re.I)),
    ("over", re.compile(r"\b(?:just\s+over|just\s+above|slightly\s+more\s+than|a\s+little\s+over|well\s+over|"
                        r"gut|etwas\s+mehr\s+als|knapp\s+über)\s+(?:the\s+|die\s+|der\s+)?$", re.I)),
    ("max", re.compile(r"(?:\b(?:less\s+than|fewer\s+than|under|below|at\s+most|not\s+even|weniger\s+als|unter|"
                       r"höchstens|nicht\s+einmal|kaum)|<|≤)\s+(?:the\s+|die\s+|der\s+)?$", re.I)),
    ("min", re.compile(r"(?:\b(?:more\s+than|over|above|at\s+least|exceeding|mehr\s+als|über|mindestens)|>|≥)\s+"
                       r"(?:the\s+|die\s+|der\s+)?$", re.I)),
    ("approx", re.compile(r"\b(?:about|approximately|around|roughly|some|circa|ca\.|rund|etwa|ungefähr|zirka|"
                          r"annähernd|grob)\s+(?:the\s+|die\s+|der\s+)?$", re.I)),
)


@dataclass(frozen=True)
class Share:
    """A part of a whole (or a multiple) a text states, in digits or in words, as the interval
    [low, high] of values it allows: "about half" → [0.425, 0.575], "less than a fifth" →
    [0, 0.2), "all" → [1, 1], "the rest" → [0, 1)."""

    low: float
    high: float
    #: "share" (of a whole or of a level: "half", "48 %", "all") or "multiple" ("twice", "3-fold")
    kind: str
    text: str
    #: content stems of the words it quantifies ("half of the revenue" → revenue), maybe empty
    subject: frozenset[str] = frozenset()
    #: "all", "rest" or "fraction": an absolute word, a remainder, or a figure
    form: str = "fraction"

    def agrees(self, other: Share) -> bool:
        return self.low <= other.high + 1e-9 and other.low <= self.high + 1e-9


def _interval(value: float, bound: str | None, *, exact: bool) -> tuple[float, float]:
    spread = max(0.005, 0.01 * value) if exact else max(0.03, 0.1 * value)
    if bound == "approx":
        spread = max(0.05, 0.15 * value) if not exact else max(0.02, 0.1 * value)
    if bound == "under":
        return value - max(0.07, 0.2 * value), value + 0.005
    if bound == "over":
        return value - 0.005, value + max(0.07, 0.2 * value)
    if bound == "max":
        return 0.0, value - 1e-6
    if bound == "min":
        return value + 1e-6, 1.0 if value < 1 else value * 10
    return value - spread, value + spread


def _subject(after: str, lang: str) -> frozenset[str]:
    after = re.split(r"[.;:!?,()]", after, maxsplit=1)[0]
    after = re.sub(r"^\s*(?:of|der|des|von|aller|den|dem)\b", "", after, flags=re.I)
    terms = [t for t in content_terms(after, lang) if not is_cue(t)][:3]
    return frozenset(stem(t, lang) for t in terms)


def shares(text: str, lang: str) -> list[Share]:
    """See `_shares` (cached: the judge asks for a sentence's shares many times)."""
    return list(_shares(text, lang))


@lru_cache(maxsize=8192)
def _shares(text: str, lang: str) -> tuple[Share, ...]:
    """The shares a text states: fraction words with their numerators and bounds ("knapp zwei
    Drittel", "less than a fifth"), majorities and minorities, absolute words ("all", "the
    entire", "sämtliche"), remainders ("the rest"), percentages that are no change ("48 %",
    not "by 48 %"), and multiples ("twice", "halved", "3-fold")."""
    found: list[Share] = []
    for m in SHARE_WORD.finditer(text):
        before = text[max(0, m.start() - 30):m.start()]
        bound = next((name for name, pattern in _SHARE_BOUNDS if pattern.search(before)), None)
        subject = _subject(text[m.end():m.end() + 60], lang)
        word = m.group(0)
        if m.group("frac"):
            frac = m.group("frac").lower()
            value = FRACTION_VALUES[frac]
            if m.group("num"):
                value *= NUMERATORS[m.group("num").lower()]
            elif not frac.startswith(("half", "hälfte", "halb")):
                continue  # "the third quarter", "Viertel" of a town: no share without a numerator
            if BY_BEFORE.search(before) or _ORDINAL_BEFORE.search(before):
                continue
            if frac.startswith("halb") and not re.search(r"\b(?:auf|zur|um)\s+(?:\w+\s+)?$|\bnur\s+$", before, re.I):
                continue  # "halb so hoch" is a multiple; "eine halbe Stunde" measures time
            low, high = _interval(value, bound, exact=False)
            # "half as many cycles", "a third as often": a multiple of another figure, not a share
            kind = "multiple" if re.match(r"\s+(?:as|so)\b", text[m.end():], re.I) else "share"
            found.append(Share(low, high, kind, word, subject))
        elif m.group("halved"):
            found.append(Share(0.45, 0.55, "share", word, subject))
        elif m.group("twice") or m.group("thrice"):
            value = 2.0 if m.group("twice") else 3.0
            found.append(Share(value * 0.9, value * 1.1, "multiple", word, subject))
        elif m.group("nearall"):
            found.append(Share(0.8, 0.999, "share", word, subject))
        elif m.group("most"):
            low, high = (0.5 + 1e-6, 1.0)
            if bound == "max":  # "less than most" hardly occurs; "nicht die Mehrheit"
                continue
            found.append(Share(low, high, "share", word, subject))
        elif m.group("few"):
            found.append(Share(0.0, 0.5 - 1e-6, "share", word, subject))
        elif m.group("rest"):
            found.append(Share(0.0, 0.999, "share", word, subject, form="rest"))
        elif m.group("all"):
            if re.match(r"\s+(?:but|except|außer)\b", text[m.end():], re.I) or BY_BEFORE.search(before):
                continue
            if re.match(r"\s+(?:" + "|".join(ORDINALS) + r")", text[m.end():], re.I):
                continue  # "jeder Achte" is one in eight (read below), not everyone
            # "all year", "all day long": a span of time, not a share of a group
            if re.match(r"\s+(?:year|day|week|month|night|season|winter|summer)s?\b", text[m.end():], re.I):
                continue
            found.append(Share(1.0, 1.0, "share", word, subject, form="all"))
    for m in RATIO.finditer(text):
        if m.group("ord"):
            n, d = 1, ORDINALS[m.group("ord").lower()]
        else:
            n = _count(m.group("n") or m.group("vn") or m.group("on"))
            d = _count(m.group("d") or m.group("vd") or m.group("od"))
        # "stieg von 2 auf 5" is no ratio: both counts must be small and the part below the whole
        if not n or not d or n >= d or (m.group("vn") is not None and m.group("vn").isdigit()
                                        and m.group("vd").isdigit()):
            continue
        # "2 mm wide in 85 % of the slabs": figures in digits make a ratio only side by side ("1 in 7")
        if m.group("n") is not None and (m.group("n").isdigit() or m.group("d").isdigit())\
                and not re.fullmatch(r"\d+\s+(?:in|out\s+of)\s+(?:every\s+)?\d+", m.group(0), re.I):
            continue
        # "one of the two groups" singles one out, "every one of the twelve" is all of them
        if m.group("on") is not None and (n < 2 or re.search(r"\b(?:every|each|any)\s+$", text[:m.start()], re.I)):
            continue
        before = text[max(0, m.start() - 30):m.start()]
        if BY_BEFORE.search(before):
            continue
        bound = next((name for name, pattern in _SHARE_BOUNDS if pattern.search(before)), None)
        low, high = _interval(n / d, bound, exact=False)
        found.append(Share(low, high, "share", m.group(0), _subject(text[m.end():m.end() + 60], lang)))
    figures = quantities(text, lang)
    for i, q in enumerate(figures):
        if q.unit not in ("%", "x") or q.weak or (q.role == "from" and not q.ranged):
            continue
        if q.ranged and q.role == "to" and i and figures[i - 1].ranged and figures[i - 1].text == q.text:
            continue  # read with the range's start
        start = text.find(q.text)
        before = text[max(0, start - 30):start] if start >= 0 else ""
        after = text[start + len(q.text):start + len(q.text) + 60] if start >= 0 else ""
        if q.unit == "%":
            if BY_BEFORE.search(before) or _CHANGE_AFTER.search(after):
                continue
            bound = {"approx": "approx", "min": "min", "max": "max"}.get(q.bound or "")
            low, high = _interval(q.value / 100, bound, exact=True)
            end = figures[i + 1] if q.ranged and i + 1 < len(figures) else None
            if end is not None and end.ranged and end.text == q.text:
                # "86–99 %": a share anywhere in the range
                end_low, end_high = _interval(end.value / 100, None, exact=True)
                low, high = min(low, end_low), max(high, end_high)
            found.append(Share(low, high, "share", q.text, _subject(after, lang)))
        else:
            found.append(Share(q.value * 0.95, q.value * 1.05, "multiple", q.text, _subject(after, lang)))
    if any(sh.kind == "share" and sh.form != "all" for sh in found):
        # "Weniger als die Hälfte der Kolumbarien deckt die Kosten vollständig": beside a share of the
        # group, an adverb of degree says how far each member does it, not that all members do
        found = [sh for sh in found if not (sh.form == "all" and ADVERBIAL_ALL.fullmatch(sh.text))]
    return tuple(found)
