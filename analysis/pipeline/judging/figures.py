"""Figures in a claim against figures in the evidence: values and units, bounds, counts, ratios and
whose figure a number is.
"""

from __future__ import annotations


import dataclasses
import re
from pydantic import BaseModel

from analysis.pipeline.judging import lexical

from analysis.pipeline.judging.assessment import Sentence
from analysis.pipeline.judging.comparisons import comparison_pivot, comparison_sides
from analysis.pipeline.judging.scoring import Scorer, stems_of

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


def compare_figures(claim: str, claim_lang: str, focus: Sentence, context: str, *,
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


def figure_of_another_subject(claim: str, claim_lang: str, focus: Sentence, scorer: Scorer) -> str | None:
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
        mine_groups = [group_after(seg, q, focus.lang) for seg, q in mine]
        same = frozenset().union(*mine_groups)
        # the group the claim gives its figure for ("21 % on pasture farms")
        claim_group = frozenset().union(*(group_after(seg, q, claim_lang) for seg in _figure_segments(claim)
                                          for q in lexical.quantities(seg, claim_lang) if lexical.same_value(c, q)))
        claim_terms = scorer.stems(claim, claim_lang)
        for seg, q in rivals:
            theirs = group_after(seg, q, focus.lang)
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


def group_after(segment: str, q: lexical.Quantity, lang: str) -> frozenset[str]:
    """The content stems of the phrases naming whom a figure of `segment` is about, when they
    follow it within a few words ("12 % by the adolescents" → adolescents); empty when none does."""
    at = segment.find(q.text)
    if at < 0:
        return frozenset()
    tail = " ".join(segment[at + len(q.text):].split()[:8])
    found: frozenset[str] = frozenset()
    for m in _GROUP.finditer(tail):
        found |= stems_of(m.group(1), lang)
    return found


def _bound_met_by_another_kind(claimed: lexical.Quantity, stated: lexical.Quantity) -> bool:
    """Whether a bare bound of the claim ("more than 2,000 adults", "R² above 0.95") would be met
    only by a figure of another kind: one that measures something else ("£4,800"), a year
    ("2022"), or, for a bound on a fraction below 1, a count or any figure from 1 up (any "9" of
    the source is above 0.95). A bound is read against figures of its kind."""
    return (claimed.bound in ("min", "max") and claimed.unit is None and stated.value != claimed.value
            and (stated.unit is not None or stated.weak or claimed.value < 1 <= stated.value))


def bound_count_unmet(claim: str, claim_lang: str, focus: Sentence) -> str | None:
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


def main_clause_negated(claim: str) -> bool:
    """Whether the claim's own statement is negated, not only a subordinate clause of it
    ("…, weil dafür kein Zahnarzt nötig war", "Kinder, in deren Familien nicht Deutsch gesprochen
    wird, …"): its parts between commas, without those a conjunction or relative pronoun opens."""
    parts = [p for p in re.split(r"[,;]", claim) if p.strip()]
    main = [p for i, p in enumerate(parts) if i == 0 or not _SUBORDINATE.match(p)]
    # a relative clause right after the subject ("Kinder, in deren …, erweiterten"): the first part
    # keeps its subject, the clause is dropped
    return lexical.negated(" , ".join(main))


def comparison_by_figures(claim: str, claim_lang: str, focus: Sentence) -> str | None:
    """A comparison of the claim ("A higher than B", "Frauen stärker als Männer") read against
    two figures of one unit in the focus, each in a segment naming one of the claim's sides
    ("46 % … bei den Careleavern; in der Gesamtbevölkerung 71 %"): "agree" or "conflict" when
    the figures order the sides as the claim does or the other way round; None when the claim
    compares nothing, or the figures cannot be placed with its sides."""
    sides = comparison_sides(claim, claim_lang)
    pivot = comparison_pivot(claim)
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


def states_decline(text: str) -> bool:
    """Whether the text states a fall or a worsening ("profitierten deutlich weniger"): a claim
    stating no direction of its own ("the benefit was large") is not weakly backed by it."""
    return any(-1 in signs for axis, signs in lexical.directions(text).items() if axis in ("quantity", "quality"))


def states_figure(claimed: list[lexical.Quantity], sentence: Sentence) -> bool:
    """Whether the sentence states every figure of the claim (value and unit); False for a claim without one."""
    if not claimed:
        return False
    stated = [q for q in lexical.quantities(sentence.text, sentence.lang) if not q.weak]
    return all(_stated(c, stated) for c in claimed)


def _stated(claimed: lexical.Quantity, stated: list[lexical.Quantity]) -> bool:
    return any(lexical.same_value(claimed, q) and _units_agree(claimed, q) for q in stated)


def pins_figures(claimed: list[lexical.Quantity], focus: Sentence, context: str, lang: str) -> bool:
    """Whether the focus states two or more of the claim's figures and the passages read state
    the rest ("24-hour composites …, 38 % against 71 %" against a sentence with 38 % and 71 %
    and a methods passage with the 24-hour composites)."""
    stated = [q for q in lexical.quantities(focus.text, focus.lang) if not q.weak]
    if len({c.value for c in claimed if _stated(c, stated)}) < 2:
        return False
    around = [q for q in lexical.quantities(context, lang) if not q.weak]
    return all(_stated(c, around) for c in claimed)


def states_share(claimed: list[lexical.Share], sentence: Sentence) -> bool:
    """Whether the sentence states a share that agrees with one of the claim's (a fraction or a
    percentage, in digits or words)."""
    return bool(claimed) and any(c.agrees(s) for s in lexical.shares(sentence.text, sentence.lang)
                                 if s.form == "fraction" for c in claimed if s.kind == c.kind)


def mixed_directions(claim: str, sentence: str) -> bool:
    """Whether the sentence states both directions on an axis on which the claim states one."""
    theirs = lexical.directions(sentence)
    return any(len(set(signs)) == 1 and set(theirs.get(axis, [])) == {-1, 1}
               for axis, signs in lexical.directions(claim).items())
