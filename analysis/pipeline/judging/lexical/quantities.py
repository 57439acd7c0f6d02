"""Figures in a text: value, unit, decimals, bound and role (`Quantity`), and when two agree.
"""

from __future__ import annotations


import re
from dataclasses import dataclass
from functools import lru_cache

from analysis.pipeline.judging.lexical.numerals import (BY_BEFORE, FRACTION_VALUES, NUMBER_VALUES,
    NUMBER_WORD, NUMERATORS, SHARE_WORD)

# -- figures --------------------------------------------------------------------------------

#: Unit spellings (English and German) to one canonical name each.
_UNITS = {
    "percentage points": "pp", "percentage point": "pp", "prozentpunkte": "pp", "prozentpunkten": "pp",
    "prozentpunkt": "pp", "pp": "pp", "%": "%", "percent": "%", "per cent": "%", "prozent": "%",
    "°c": "°C", "° c": "°C", "degrees celsius": "°C", "grad celsius": "°C", "grad": "°", "degrees": "°",
    "k": "K", "kelvin": "K",
    "hours": "h", "hour": "h", "h": "h", "stunden": "h", "stunde": "h", "std": "h",
    "minutes": "min", "minute": "min", "min": "min", "minuten": "min",
    "seconds": "s", "second": "s", "sekunden": "s", "sekunde": "s", "s": "s",
    "days": "d", "day": "d", "tage": "d", "tagen": "d", "tag": "d",
    "weeks": "wk", "week": "wk", "wochen": "wk", "woche": "wk",
    "months": "mo", "month": "mo", "monate": "mo", "monaten": "mo", "monat": "mo",
    "years": "yr", "year": "yr", "jahre": "yr", "jahren": "yr", "jahr": "yr",
    "kg": "kg", "g": "g", "mg": "mg", "t": "t", "tonnes": "t", "tons": "t", "tonnen": "t",
    "km/h": "km/h", "kmh": "km/h", "m/s": "m/s", "km": "km", "m": "m", "cm": "cm", "mm": "mm", "m²": "m2", "m2": "m2", "km²": "km2",
    "kwh": "kWh", "mwh": "MWh", "w": "W", "kw": "kW", "mw": "MW", "db": "dB", "mmhg": "mmHg",
    "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR", "$": "USD", "usd": "USD", "dollars": "USD",
    "fold": "x", "-fold": "x", "times": "x", "fach": "x", "-fach": "x", "mal": "x",
    "points": "pt", "punkte": "pt", "punkten": "pt",
}
_UNIT_RE = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
_NUM = r"\d+(?:[.,\u202f\u00a0]\d{3})*(?:[.,]\d+)?|\d+"
_QUANTITY = re.compile(
    rf"(?<![\w.,])(?<![A-Za-zÄÖÜäöüß]-)(?P<cur>[€$]\s?)?(?P<a>{_NUM})"
    rf"(?:\s*(?:–|—|-|to|bis)\s*(?P<b>{_NUM}))?"
    rf"(?:\s*(?P<unit>{_UNIT_RE})(?![\w]))?",
    re.I,
)
#: Numbers that label rather than measure: "Table 2", "Abb. 3", "p. 14", "Study 1".
_LABEL_BEFORE = re.compile(
    r"\b(?:table|tab|figure|fig|chapter|section|study|experiment|page|abb|abbildung|tabelle|kapitel|"
    r"abschnitt|studie|seite|model|hypothesis|hypothese|wave|welle|phase|nr|klasse|jahrgangsstufe|grade)\.?\s*$"
    r"|\b(?:p|pp|s|no)\.\s*$",
    re.I,
)
_UNIT_AFTER = re.compile(rf"\s*({_UNIT_RE})(?![\w])", re.I)


@dataclass(frozen=True)
class Quantity:
    """A figure of a text: its value, its unit (None when bare), and its decimals as written."""

    value: float
    unit: str | None
    decimals: int
    text: str
    #: a year, a count spelled out, or another figure that identifies rather than measures
    weak: bool = False
    #: "from" or "to" when the figure is the start or the end of a change ("from 12 % to 21 %")
    role: str | None = None
    #: "approx" ("about 20 %"), "min" ("more than 1,000") or "max" ("less than 5 %") as written
    bound: str | None = None
    #: one end of a range ("86–99 %", "5 to 8 weeks") rather than of a change
    ranged: bool = False


def _parse_number(raw: str, lang: str) -> tuple[float, int] | None:
    s = raw.replace("\u202f", " ").replace("\u00a0", " ")
    if " " in s:
        s = s.replace(" ", "")
    if "," in s and "." in s:
        decimal = "," if s.rfind(",") > s.rfind(".") else "."
        s = s.replace("." if decimal == "," else ",", "").replace(decimal, ".")
    elif "," in s or "." in s:
        sep = "," if "," in s else "."
        groups = s.split(sep)
        thousands = len(groups) > 2 or (len(groups[-1]) == 3 and (sep == "," if lang == "en" else sep == "."))
        s = s.replace(sep, "") if thousands else s.replace(sep, ".")
    try:
        value = float(s)
    except ValueError:
        return None
    decimals = len(s.split(".")[1]) if "." in s else 0
    return value, decimals


#: An ordinal names a place in a series, it measures nothing: "20th century", "des 20. Jahrhunderts".
_ORDINAL_AFTER = re.compile(
    r"(?:st|nd|rd|th)\b|\.\s+(?:Jahrhundert|Jahrtausend|Geburtstag|Lebensjahr|Lebensmonat|Lebenswoche|Klasse|"
    r"Jahrgang|Schuljahr|Semester|Quartal|Monat|Woche|Tag|Mal|Platz|Rang|Auflage|Ausgabe|Kapitel|Sitzung|"
    r"Runde|Welle|Stock|Etage|Legislaturperiode|Januar|Februar|März|April|Mai|Juni|Juli|August|September|"
    r"Oktober|November|Dezember)", re.I)


def quantities(text: str, lang: str) -> list[Quantity]:
    """The figures of a text with their units; a range gives both ends the unit it ends in."""
    return list(_quantities(text, lang))


@lru_cache(maxsize=8192)
def _quantities(text: str, lang: str) -> tuple[Quantity, ...]:
    found: list[Quantity] = []
    for m in _QUANTITY.finditer(text):
        if _LABEL_BEFORE.search(text[max(0, m.start() - 14):m.start()]):
            continue
        if not m.group("unit") and not m.group("cur") and _ORDINAL_AFTER.match(text, m.end()):
            continue
        unit = _UNITS.get(m.group("unit").lower()) if m.group("unit") else None
        if m.group("cur"):
            unit = _UNITS[m.group("cur").strip()]
        raws = (m.group("a"), m.group("b"))
        ends = [_parse_number(raw, lang) if raw is not None else None for raw in raws]
        if ends[1] is not None and ends[0] is not None and _year_like(*ends[0]) and not _year_like(*ends[1]):
            # "by 1900 to 19 per cent": a year, then the figure it dates, not a range of per cent
            ends[0] = None
        before = text[max(0, m.start() - 12):m.start()]
        ranged = ends[0] is not None and ends[1] is not None and not _FROM.search(before)
        for end, (raw, parsed) in enumerate(zip(raws, ends)):
            if parsed is None:
                continue
            value, decimals = parsed
            year = unit is None and _year_like(value, decimals) and raw.isdigit()  # "2,000 adults" is no year
            if end == 1:
                role = "to"
            elif ends[1] is not None:
                role = "from"
            else:
                role = _role(before)
                if role == "from" and not _CHANGE_TO_AFTER.match(text, m.end()):
                    role = None  # "eine Wirksamkeit von 94 %": of, not from
            bound = _bound(text[max(0, m.start() - 24):m.start()]) if end == 0 else None
            written = m.group(0).strip() if ends[0] is not None else text[m.start("b"):m.end()].strip()
            found.append(Quantity(value, unit, decimals, written, weak=year, role=role, bound=bound, ranged=ranged))
    for m in NUMBER_WORD.finditer(text):
        unit = _UNIT_AFTER.match(text, m.end())
        canonical = _UNITS.get(unit.group(1).lower()) if unit else None
        # "six weeks" measures; a bare "three" may just count things ("three cities").
        found.append(Quantity(float(NUMBER_VALUES[m.group(1).lower()]), canonical, 0,
                              m.group(0) + (unit.group(0) if unit else ""), weak=canonical is None,
                              bound=_bound(text[max(0, m.start() - 24):m.start()])))
    # A change by a fraction in words ("fell by one third", "um gut ein Viertel") is a change in per cent.
    for m in SHARE_WORD.finditer(text):
        if not (m.group("num") and m.group("frac")) or not BY_BEFORE.search(text[max(0, m.start() - 30):m.start()]):
            continue
        before = text[max(0, m.start() - 30):m.start()]
        bound = "min" if _CHANGE_OVER.search(before) else "max" if _CHANGE_UNDER.search(before) else "approx"
        value = NUMERATORS[m.group("num").lower()] * FRACTION_VALUES[m.group("frac").lower()] * 100
        found.append(Quantity(round(value, 1), "%", 1, m.group(0), bound=bound))
    return tuple(found)


#: "by a good third", "um gut ein Viertel": more than the fraction; "knapp ein Drittel": less.
_CHANGE_OVER = re.compile(r"\b(?:over|more\s+than|a\s+good|well\s+over|gut|über|mehr\s+als)\s+$", re.I)
_CHANGE_UNDER = re.compile(r"\b(?:nearly|almost|just\s+under|knapp|fast|beinahe|nicht\s+ganz)\s+$", re.I)


_FROM = re.compile(r"\b(?:from|von)\s*$", re.I)
_TO = re.compile(r"\b(?:to|auf)\s*$", re.I)


#: after "from 12 %" / "von 12 %": the end of the change ("… to 21 %", "… im Jahr 2019 auf 21 %")
_CHANGE_TO_AFTER = re.compile(r"[^;]{0,60}?\b(?:to|into|auf|bis|zu)\s+(?:\w+\s+)?[\d€$]", re.I)


def _year_like(value: float, decimals: int) -> bool:
    return decimals == 0 and 1800 <= value <= 2100


def _role(before: str) -> str | None:
    return "from" if _FROM.search(before) else "to" if _TO.search(before) else None


_BOUNDS = (
    ("approx", re.compile(r"\b(?:about|approximately|around|roughly|nearly|almost|circa|ca\.|some|"
                          r"rund|etwa|ungefähr|knapp|fast|annähernd|beinahe|zirka)\s*$", re.I)),
    ("min", re.compile(r"(?:\b(?:over|above|more\s+than|at\s+least|exceeding|über|mehr\s+als|mindestens|"
                       r"oberhalb\s+von)|>|≥)\s*$", re.I)),
    # "up to 20 °C" names a peak, not a bound: it needs the same figure.
    ("max", re.compile(r"(?:\b(?:under|below|less\s+than|fewer\s+than|at\s+most|unter|weniger\s+als|"
                       r"höchstens|maximal)|<|≤)\s*$", re.I)),
)


def _bound(before: str) -> str | None:
    return next((name for name, pattern in _BOUNDS if pattern.search(before)), None)


def same_value(claimed: Quantity, stated: Quantity) -> bool:
    """Whether a source figure states the claimed value: equal, or equal once rounded to the
    claim's decimals ("about 12 %" for 12.3 %), and not the start of a change the claim
    calls its end ("rose to 12 %" for "from 12 % to 21 %") or the reverse."""
    if claimed.role and stated.role and claimed.role != stated.role:
        return False
    if claimed.value == stated.value:
        return True
    # A bounded or approximate claim is met by any figure inside its bound ("over 1,000" by 1,204).
    if claimed.bound == "min" and stated.bound is None:
        return stated.value > claimed.value
    if claimed.bound == "max" and stated.bound is None:
        return stated.value < claimed.value
    if claimed.bound == "approx" and claimed.value:
        return abs(stated.value - claimed.value) <= 0.1 * abs(claimed.value)
        return True
    return round(stated.value, claimed.decimals) == claimed.value and stated.decimals > claimed.decimals


def compatible_units(a: Quantity, b: Quantity) -> bool:
    """Units that may measure the same quantity: equal, or one of them bare."""
    return a.unit is None or b.unit is None or a.unit == b.unit
