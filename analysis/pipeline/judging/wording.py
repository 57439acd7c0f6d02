"""Patterns of wording the offline judge reads: clause breaks, significance, null findings, rates,
contrasts, comparisons, superlatives and majorities.
"""

from __future__ import annotations

import re


# "however", "jedoch", "doch" mostly sit inside a clause ("was, however, unchanged"; "war jedoch
# unverändert"): no break there.
CLAUSE_BREAK = re.compile(
    r"\s*;\s+|,?\s+(?=(?:but|whereas|while|although|though|yet|aber|sondern|"
    r"während|wohingegen|obwohl|wobei)\b)|,?\s+(?=(?:and|und)\s)",
    re.I,
)


#: Where a claim adds a part to another ("…, and Y", "…, which Z", "sowie", "und zudem"): finer than
#: `_CLAUSE_BREAK`, for finding a part the source does not state.
PART_BREAK = re.compile(
    r"\s*;\s+|,?\s+(?=(?:but|whereas|while|although|though|yet|aber|sondern|während|wohingegen|obwohl|wobei)\b)"
    r"|,?\s+(?=(?:and|und|as\s+well\s+as|sowie)\s)|,\s+(?=(?:which|wodurch|womit|was|thereby|dadurch)\b)"
    # a conclusion drawn from the finding: "…, so older homes can switch without renovation"
    r"|,\s+(?=(?:so|therefore|thus|hence|meaning|sodass|daher|deshalb|folglich|weshalb)\b)",
    re.I,
)


#: Sameness stated of the subject, not a word describing it ("of similar size"): "were the same",
#: "did not differ", "just as often as", "gleich häufig", "unterschied sich nicht".
EQUAL = re.compile(
    r"\b(?:was|were|is|are|remained|stayed)\s+(?:\w+\s+)?(?:the\s+same|similar|equal|identical|comparable)\b"
    r"|\bdid\s+not\s+differ\b|\bno\s+(?:significant\s+|meaningful\s+)?difference\b|\bequally\b"
    r"|\bas\s+(?:often|much|many|high|likely|frequently|well)\s+as\b"
    r"|\b(?:war|waren|ist|sind|blieb|blieben|lag|lagen)\s+(?:\w+\s+){0,3}?(?:gleich|ähnlich|vergleichbar|identisch)\b"
    r"|\b(?:gleich|ebenso|genauso)\s+(?:oft|häufig|hoch|groß|viel|stark|gut)\b|\bgleichermaßen\b"
    r"|\bunterschied\w*\s+sich\s+nicht\b|\bkein\w*\s+(?:signifikanten?\s+|bedeutsamen?\s+|nennenswerten?\s+)?unterschied\w*",
    re.I,
)


SIGNIFICANT = re.compile(r"\bsignifi\w+", re.I)
_INSIGNIFICANT = re.compile(
    r"\b(?:not|no|nicht|kein\w*|non)[\s-]+(?:longer\s+|more\s+|mehr\s+|länger\s+)?"
    r"(?:statistically\s+|statistisch\s+)?signifi\w+|\binsignifi\w+", re.I)


#: A clause that reports no effect, no change or no difference ("serum potassium did not change",
#: "no difference in re-consultation", "hatte keinen messbaren Einfluss", "kein signifikanter
#: Unterschied"): a null finding, which contradicts a claim that the same thing changed or differed.
NULL_FINDING = re.compile(
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
INTENSIFIED = re.compile(
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


def rates_differ(claim: str, sentence: str) -> str | None:
    """The reason when the claim says how often at another rate than the sentence ("every
    week" against "monthly") and the sentence never states the claim's rate."""
    mine = {name for name, p in _RATE_PATTERNS.items() if p.search(claim)}
    theirs = {name for name, p in _RATE_PATTERNS.items() if p.search(sentence)}
    if len(mine) == 1 and theirs and not mine & theirs:
        return f"the claim says {mine.pop()}ly, the source {'/'.join(sorted(theirs))}ly".replace("dayly", "daily")
    return None


def only_insignificant(text: str) -> bool:
    """Whether every "significant" of the text is denied ("the difference was not statistically
    significant", "kein signifikanter Unterschied"): the text reports no difference, whatever its figures."""
    denied = len(_INSIGNIFICANT.findall(text))
    return denied > 0 and denied == len(SIGNIFICANT.findall(text))


#: A sentence that contrasts two things ("X lost it, while Y kept it"): overlap with it alone
#: cannot tell which side a claim took.
CONTRAST = re.compile(r"\b(?:while|whereas|but|unlike|in\s+contrast|however|aber|während|wohingegen|jedoch|"
                       r"im\s+gegensatz|anders\s+als|sondern)\b", re.I)


#: A comparison or a bound in words ("lasted more than a year"): a cue overlap cannot check.
COMPARISON = re.compile(r"\b(?:more|less|fewer|longer|shorter|mehr|weniger|länger|kürzer)\s+(?:than|als)\b"
                         r"|\b(?:equally|as\s+\w+\s+as|ebenso|genauso|gleich\s+\w+\s+wie)\b", re.I)


#: Superlatives of degree, by pole: the claim's "most strongly affected" against the source's
#: "weakest among" the same group ranks that group at the other end.
_SUPERLATIVE_HIGH = (r"highest|largest|greatest|biggest|strongest|most|maximum|höchste\w*|größte\w*|stärkste\w*|"
                     r"meiste\w*|am\s+(?:höchsten|größten|stärksten|meisten|häufigsten)")
_SUPERLATIVE_LOW = (r"lowest|smallest|weakest|least|fewest|minimum|niedrigste\w*|geringste\w*|kleinste\w*|"
                    r"schwächste\w*|wenigste\w*|am\s+(?:niedrigsten|geringsten|kleinsten|schwächsten|wenigsten|seltensten)")
SUPERLATIVE = re.compile(rf"\b(?:{_SUPERLATIVE_HIGH}|{_SUPERLATIVE_LOW})\b", re.I)
_SUPERLATIVE_POLE = {"high": re.compile(rf"\b(?:{_SUPERLATIVE_HIGH})\b", re.I),
                     "low": re.compile(rf"\b(?:{_SUPERLATIVE_LOW})\b", re.I)}
#: "most" of a majority ("most participants", "die meisten Kinder") ranks nothing.
_MAJORITY = re.compile(r"\b(?:most\s+(?!(?:\w+ly|affected|likely|common|frequent|important)\b)\w+|(?:die|der|den)\s+meisten)\b",
                       re.I)


def superlative_pole(text: str) -> str | None:
    text = _MAJORITY.sub(" ", text)
    poles = [pole for pole, pattern in _SUPERLATIVE_POLE.items() if pattern.search(text)]
    return poles[0] if len(poles) == 1 else None


def superlative_side(claim: str, claim_terms: set[str], sentence: str, stems) -> str | None:
    """"conflict" when the claim ranks its subject at one end ("adults over 65 were most
    affected") and the sentence puts the claim's subject words after its superlative of the
    other end ("strongest among children …, weakest among adults over 65"); "agree" when it
    puts them after the claim's end; None when it ranks nothing or cannot tell."""
    if _ranks_another_group(claim, sentence):
        return "conflict"
    pole = superlative_pole(claim)
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
DIGITS = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?")


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
        mine, theirs = set(DIGITS.findall(claim)), set(DIGITS.findall(segment))
        if mine and theirs and not mine & theirs:
            return True
    return False


def two_figures(text: str) -> bool:
    return len(DIGITS.findall(text)) >= 2


#: Any figure or count, in digits or words ("two groups", "a third", "die Hälfte"): a claim with
#: one gets no weak (low-band) support from word overlap.
NUMERAL = re.compile(
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
FRACTION = re.compile(
    r"\b(?:half|halves|third|thirds|quarter|quarters|fifth|fifths|tenth|tenths|one\s+in\s+\w+|"
    r"hälfte|drittel|viertel|fünftel|zehntel|jede[rs]?\s+(?:zweite|dritte|vierte|fünfte|zehnte)\w*)\b",
    re.I,
)
