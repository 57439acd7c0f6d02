"""Number words and share words in English and German ("two", "zwei", "half", "majority").
"""

from __future__ import annotations


import re

NUMBER_VALUES = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30, "hundred": 100,
    "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10,
    "elf": 11, "zwölf": 12, "zwanzig": 20, "dreißig": 30, "hundert": 100,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
    "dreizehn": 13, "vierzehn": 14, "fünfzehn": 15, "sechzehn": 16, "siebzehn": 17, "achtzehn": 18, "neunzehn": 19,
    "vierzig": 40, "fünfzig": 50, "sechzig": 60, "siebzig": 70, "achtzig": 80, "neunzig": 90,
    "twice": 2, "doubled": 2, "halved": 0.5, "doppelt": 2, "verdoppelt": 2, "halbiert": 0.5,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_ONES = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
NUMBER_VALUES.update({f"{t}-{o}": tv + ov for t, tv in _TENS.items() for o, ov in _ONES.items()})
NUMBER_VALUES.update({t: v for t, v in _TENS.items() if t not in NUMBER_VALUES})
# Longest first, and no match inside a hyphenated one ("eight" of "fifty-eight").
NUMBER_WORD = re.compile(r"(?<![\w-])(" + "|".join(sorted(NUMBER_VALUES, key=len, reverse=True)) + r")(?![\w-])",
                          re.I)


# -- shares (figures in words, and percentages, as parts of a whole) --------------------------

#: A fraction word to its value; "third" and the like need a numerator ("a third", "zwei Drittel").
FRACTION_VALUES = {
    "half": 0.5, "halves": 0.5, "hälfte": 0.5, "halb": 0.5, "halbe": 0.5, "halben": 0.5, "halber": 0.5,
    "halbes": 0.5, "third": 1 / 3, "thirds": 1 / 3, "drittel": 1 / 3, "quarter": 0.25, "quarters": 0.25,
    "viertel": 0.25, "fifth": 0.2, "fifths": 0.2, "fünftel": 0.2, "sixth": 1 / 6, "sixths": 1 / 6,
    "sechstel": 1 / 6, "eighth": 0.125, "eighths": 0.125, "achtel": 0.125, "tenth": 0.1, "tenths": 0.1,
    "zehntel": 0.1,
}
NUMERATORS = {"a": 1, "an": 1, "one": 1, "ein": 1, "eine": 1, "einem": 1, "einen": 1, "einer": 1, "eines": 1,
               "two": 2, "three": 3, "four": 4, "five": 5, "seven": 7, "nine": 9,
               "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sieben": 7, "neun": 9}
#: Small counts in words, for ratios ("one in seven", "vier von zehn", "nine out of ten").
COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
           "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "hundred": 100, "ein": 1, "eine": 1, "einer": 1,
           "einem": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9,
           "zehn": 10, "elf": 11, "zwölf": 12, "zwanzig": 20, "hundert": 100}
_COUNT = r"(?:" + "|".join(sorted(COUNTS, key=len, reverse=True)) + r"|\d{1,3})"
#: A ratio in words: "one delivery in seven", "nine out of ten", "vier von zehn", "jeder Achte".
RATIO = re.compile(
    r"\b(?P<n>" + _COUNT + r")\s+(?:[^\W\d_]+\s+){0,2}?(?:in|out\s+of)\s+(?:every\s+)?(?P<d>" + _COUNT + r")\b"
    r"|\b(?P<on>" + _COUNT + r")\s+of\s+(?:the\s+|these\s+|those\s+)?(?P<od>" + _COUNT + r")\b"
    r"|\b(?P<vn>" + _COUNT + r")\s+(?:von|aus)\s+(?P<vd>" + _COUNT + r")\b"
    r"|\bjede[rsnm]?\s+(?P<ord>zweite|dritte|vierte|fünfte|sechste|siebte|achte|neunte|zehnte|zwanzigste)\w*",
    re.I,
)
ORDINALS = {"zweite": 2, "dritte": 3, "vierte": 4, "fünfte": 5, "sechste": 6, "siebte": 7, "achte": 8, "neunte": 9,
             "zehnte": 10, "zwanzigste": 20}


#: Numbers in words ("eleven", "forty-six", "zwölf", "Drittel"): figures, not content terms.
NUMBER_WORDS = frozenset({*(w for k in NUMBER_VALUES for w in k.split("-")), *COUNTS, *_TENS, *_ONES,
                          *(k for k in FRACTION_VALUES), "dozen", "dutzend", "thousand", "tausend",
                          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
                          "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn",
                          "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig",
                          "mindestens", "höchstens", "wenigstens"}
                         - {"a", "an", "ein", "eine", "einem", "einen", "einer", "eines"})
SHARE_WORD = re.compile(
    r"\b(?:(?P<num>" + "|".join(NUMERATORS) + r")\s+)?(?P<frac>" + "|".join(FRACTION_VALUES) + r")\b"
    r"|\b(?P<halved>halved|halbiert|halbierte\w*)\b"
    r"|\b(?P<twice>twice|doubled|doppelt|verdoppelt\w*)\b|\b(?P<thrice>tripled|verdreifacht\w*)\b"
    r"|\b(?P<nearall>(?:nearly|almost|virtually|practically|fast|nahezu|beinahe|praktisch)\s+"
    r"(?:all|alle|sämtliche|every|each|jede[rsnm]?)"
    r"|(?:nearly|almost)\s+(?:the\s+)?(?:entire|whole))\b"
    r"|\b(?P<most>the\s+majority|a\s+majority|die\s+mehrheit|eine\s+mehrheit|mehrheitlich|die\s+meisten|"
    r"the\s+bulk|most\s+of|(?<!the\s)(?<!at\s)most(?=\s+[^\W\d_]+\b)(?!\s+[^\W\d_]+(?:ly|ive|ant|ent|al|ic|ous|"
    r"ful|able|ible|est|er)\b))\b"
    r"|\b(?P<few>a\s+minority|eine\s+minderheit|a\s+small\s+minority)\b"
    r"|\b(?P<rest>the\s+rest|the\s+remainder|the\s+remaining|der\s+rest|den\s+rest|die\s+übrigen|"
    r"das\s+übrige|der\s+übrige)\b"
    r"|\b(?P<all>all|entire|entirely|whole|wholly|every|the\s+total|in\s+full|completely|alle|aller|allen|"
    r"gesamte|gesamten|gesamter|ganze|ganzen|ganzer|sämtliche|sämtlichen|jede|jeder|jedes|vollständig|"
    r"komplett|restlos)\b",
    re.I,
)
#: Absolute words of degree ("completely", "vollständig"): a share of a group only when nothing else is.
ADVERBIAL_ALL = re.compile(r"entirely|wholly|completely|in\s+full|vollständig|komplett|restlos", re.I)
#: Words that state a share or bound it ("knapp zwei Drittel"): figures, checked by `shares`, not content terms.
SHARE_WORDS = frozenset({*FRACTION_VALUES, "majority", "minority", "mehrheit", "minderheit", "knapp", "rund",
                         "etwa", "roughly", "approximately", "nearly", "almost", "halved", "halbiert",
                         *(o + e for o in ORDINALS for e in ("", "n", "r", "s", "m"))})
#: "by a third" names a change, not a share: left out.
BY_BEFORE = re.compile(r"\b(?:by|um)\s+(?:(?!\d{4}\b)\w+\s+){0,2}$", re.I)  # not "by 1900 to 19 %"
