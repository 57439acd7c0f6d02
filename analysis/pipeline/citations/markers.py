"""Citation markers in the body: parenthetical, narrative, numeric and footnote citations.
"""

from __future__ import annotations


import re
from bisect import bisect_right

from pydantic import BaseModel, Field

from analysis.pipeline.retrieval.chunking import sentence_spans
from analysis.pipeline.documents.document import FOOTNOTE_MARK

from analysis.pipeline.citations.models import Reference
from analysis.pipeline.citations.names import name_key, squash, strip_particles
from analysis.pipeline.citations.patterns import (AUTHORS, AUTHOR_YEAR_START, CITED_IN, ET_AL, IBID, LOCATOR,
    MAX_RANGE, NAME, NARRATIVE, NOT_AUTHORS, NUMERIC, NUM_ITEM, PAREN_GROUP, PAREN_ITEM, PREFIX, SAME_WORK,
    WORD, YEAR, YEARS, YEAR_IN_TEXT)
from analysis.pipeline.citations.references import parse_entry, publication_year, year_of

class Marker(BaseModel):
    text: str
    kind: str
    group: tuple[int, int]  #: the span of the whole marker group in the paragraph
    authors: list[str] = Field(default_factory=list)
    et_al: bool = False
    year: str | None = None
    number: int | None = None
    locator: str | None = None
    reference: Reference | None = None  #: a full reference written in a footnote
    short_title: str | None = None  #: a footnote's short title instead of a year ("" for a. a. O.)


def find_markers(text: str, numeric_style: bool, footnotes: dict[str, str],
                  known: frozenset[str] | set[str] = frozenset()) -> list[tuple[int, Marker]]:
    found = _parenthetical(text) + _narrative(text, known) + _footnote_marks(text, footnotes, numeric_style, known)
    if numeric_style:
        found += _numeric(text)
    return sorted(found, key=lambda item: item[0])


def _parenthetical(text: str) -> list[tuple[int, Marker]]:
    found = []
    for group in PAREN_GROUP.finditer(text):
        offset = group.start(1)
        inner = group.group(1)
        secondary = CITED_IN.search(inner)
        if secondary:  # the reader read the citing work, and only it is in the list
            offset, inner = offset + secondary.end(), inner[secondary.end():]
        for part in re.finditer(r"[^;]+", inner):
            found += _items(part.group(0), offset + part.start(), group.span(), "parenthetical")
    return found


def _items(part: str, offset: int, span: tuple[int, int], kind: str) -> list[tuple[int, Marker]]:
    """The citations of one ``;``-separated item: a work (maybe several years) or ebd./ibid."""
    stripped = part.strip()
    ibid = IBID.fullmatch(re.sub(rf"(?i)^{PREFIX}", "", stripped))
    if ibid:
        pos = offset + part.index(ibid.group("marker"))
        return [(pos, Marker(text=squash(ibid["marker"]), kind="ibid", group=span, locator=ibid["locator"]))]
    item = PAREN_ITEM.fullmatch(stripped) or PAREN_ITEM.fullmatch(stripped.rstrip("."))
    if item is None or item["authors"].split()[0] in NOT_AUTHORS:
        return []
    pos = offset + part.index(item.group("marker"))
    if re.fullmatch(SAME_WORK, item["years"].strip()):
        return [(pos, Marker(text=squash(item["marker"]), kind=kind, group=span,
                              authors=_cited_names(item["authors"]), et_al=_et_al(item), locator=item["locator"],
                              short_title=""))]
    return [(pos, Marker(text=text, kind=kind, group=span, authors=_cited_names(item["authors"]),
                          et_al=_et_al(item), year=year_of(year), locator=item["locator"]))
            for year, text in _split_years(item)]


_NAME_BEFORE = re.compile(rf"(?:(?<=\s)|^)(?:(?:{WORD}|of|for|on|and|für|und|des)\s+){{1,6}}$")


def _narrative(text: str, known: frozenset[str] | set[str] = frozenset()) -> list[tuple[int, Marker]]:
    found = []
    for match in NARRATIVE.finditer(text):
        start, names = match.start(), match["authors"]
        before = _NAME_BEFORE.search(text[:start])
        if before:  # a corporate author of the list: "the World Health Organization (2019) reports"
            words = text[before.start():start].split()
            for i in range(len(words)):
                if name_key(" ".join(words[i:] + [names])) in known:
                    start = start - len(" ".join(words[i:])) - 1
                    names = " ".join(words[i:] + [names])
                    break
        if names.split()[0] in NOT_AUTHORS:
            continue
        authors, et_al = _cited_names(names), _et_al(match)
        if re.fullmatch(SAME_WORK, match["years"].strip()):
            found.append((start, Marker(text=squash(text[start:match.end()]), kind="narrative",
                                         group=(start, match.end()), authors=authors, et_al=et_al,
                                         locator=match["locator"], short_title="")))
            continue
        years = _year_list(match["years"])
        for year in years:
            literal = text[start:match.end()] if len(years) == 1 else f"{names} ({year})"
            marker = Marker(text=squash(literal), kind="narrative", group=(start, match.end()), authors=authors,
                             et_al=et_al, year=year_of(year), locator=match["locator"])
            found.append((start, marker))
    return found


def _numeric(text: str) -> list[tuple[int, Marker]]:
    # Brackets side by side ("[1], [4]", "[2]; [7]") are one group: the claim before them
    # is every one's, and the separator between them is no claim of its own.
    runs: list[list[re.Match]] = []
    for match in NUMERIC.finditer(text):
        if runs and re.fullmatch(r"[\s,;]*", text[runs[-1][-1].end():match.start()]):
            runs[-1].append(match)
        else:
            runs.append([match])
    found = []
    for run in runs:
        group = (run[0].start(), run[-1].end())
        for match in run:
            items = match["items"] + (f"-{match['upto']}" if match["upto"] else "")  # "[1]–[3]"
            for number in _expand(items):
                found.append((group[0], Marker(text=f"[{number}]", kind="numeric", group=group,
                                                number=number, locator=match["locator"])))
    return found


def _footnote_marks(text: str, footnotes: dict[str, str], numeric_style: bool,
                    known: frozenset[str] | set[str] = frozenset()) -> list[tuple[int, Marker]]:
    """A footnote mark cites what its footnote holds: author–year items, a full reference, ebd.
    A raised number without a footnote, in a thesis with a numbered list, is a numeric
    citation set in superscript (Vancouver)."""
    found = []
    for mark in FOOTNOTE_MARK.finditer(text):
        note = footnotes.get(mark.group(1))
        if not note:
            if numeric_style and re.fullmatch(rf"{NUM_ITEM}(?:,{NUM_ITEM})*", mark.group(1)):
                found += [(mark.start(), Marker(text=f"[{n}]", kind="numeric", group=mark.span(), number=n))
                          for n in _expand(mark.group(1))]
            continue
        for part in _note_parts(note):
            found += [(mark.start(), m) for m in _footnote_items(part, mark.span(), known)]
    return found


_ENDS_WITH_LOCATOR = re.compile(r"(?:\b(?:S|p|pp)\.\s*\d+(?:\s*[–-]\s*\d+)?(?:\s*ff?)?|\d{4}[a-z]?)$")


def _note_parts(note: str) -> list[str]:
    """A footnote's citations: parts split at ";", and at a full stop after a page or a
    year that a new sentence follows ("Vgl. Hartung 2015, S. 112. Ähnlich Brandt 2009.")."""
    parts = []
    for part in re.findall(r"[^;]+", note):
        start = 0
        for stop in re.finditer(r"\.\s+(?=[A-ZÄÖÜ])", part):
            before = part[start:stop.start()]
            if _ENDS_WITH_LOCATOR.search(before) and ":" not in before:
                parts.append(before)
                start = stop.end()
        parts.append(part[start:])
    return parts


_GIVEN_WORD = r"(?:[A-ZÄÖÜ][a-zäöüß'’-]+|[A-ZÄÖÜ]\.)"
# Chicago's first note: "Sarah Miller, Tenants and Courts (Oxford: Clarendon, 2012), 45."
_FIRST_LAST_NOTE = re.compile(
    rf"^(?:{_GIVEN_WORD}\s+){{1,3}}(?P<surname>{NAME})"
    rf"(?:,?\s+(?:and|&|und)\s+(?:{_GIVEN_WORD}\s+){{1,3}}{NAME})?,\s+\S")
_NO_TITLE = r"(?:a\.\s?a\.\s?O\.?|op\.\s?cit\.?|loc\.\s?cit\.?)"
# A short title instead of a year: "Hartung, Mieterschutz, S. 118", "Miller, Tenants and
# Courts, 50", "Hartung, a. a. O., S. 5", "Hartung: Mieterschutz (wie Anm. 3), S. 118".
_SHORT_TITLE_NOTE = re.compile(
    rf"(?P<authors>{NAME}(?:\s*/\s*{NAME})*(?:\s+(?:and|&|und)\s+{NAME})?){ET_AL}?(?:,\s*(?:[A-ZÄÖÜ]\.\s*)+)?"
    rf"(?:[,:]\s+(?!(?:S|p|pp)\.\s*\d)(?P<title>{_NO_TITLE}|[^,;()]{{2,120}}?))?"
    rf"(?:\s*\((?:wie|see|s\.|vgl\.)\s+(?:Anm|Fn|n|note)\.?[^)]*\))?"
    rf"(?:,?\s*(?P<locator>{LOCATOR}))?\s*\.?\s*$")
SAME_AUTHOR = "Ders."  #: the author of the citation before ("Ders.", "Dies.", "Id.")
_SAME_AUTHOR_NOTE = re.compile(r"(?:Ders|Dies|Dieselbe|Derselbe|Dieselben|Id|Idem|Eadem)\.(?=\s*,)")
_LEAD_IN = re.compile(
    r"^(?:(?:(?i:see\s+also|see|cf\.|compare|vgl\.(?:\s+auch)?|siehe(?:\s+auch)?)|e\.\s?g\.|z\.\s?B\.)\s*,?\s*"
    r"|(?!(?:ebd|ebenda|ibid|ibidem|a\.\s?a\.\s?O|op\.\s?cit)\b)[a-zäöüß][\w-]*\.?,?\s+(?=\S)){1,5}")
_NOTE_LOCATOR = re.compile(
    r"(?:,\s*(?P<page>(?:S|p|pp)\.\s*\d+(?:\s*[–-]\s*\d+)?(?:\s*ff?\.?)?)"
    r"|\),?\s*(?P<bare>\d{1,4}(?:\s*[–-]\s*\d{1,4})?))\s*\.?\s*$")


def _footnote_items(part: str, span: tuple[int, int], known: frozenset[str] | set[str] = frozenset()) -> list[Marker]:
    """The citations one ``;``-separated part of a footnote holds: ebd./ibid.; a full
    reference ("Hartung, Klaus: Titel, Leipzig 2015, S. 112", "Sarah Miller, Title (Oxford:
    Clarendon, 2012), 45"); an author–year; or a short title of a work by an author of the
    list ("Hartung, Mieterschutz, S. 118")."""
    stripped = re.sub(rf"(?i)^\s*{PREFIX}", "", part.strip()).strip()
    stripped = re.sub(r"(?<=\d)\s*\.$", "", stripped)  # "Ibid., 47." / "S. 112."
    ibid = IBID.match(stripped)
    if ibid and re.fullmatch(r"[\s.,]*", stripped[ibid.end():]):
        return [Marker(text=squash(ibid["marker"]), kind="ibid", group=span, locator=ibid["locator"])]
    stripped = _LEAD_IN.sub("", stripped)  # "Vgl. hierzu ausführlich Hartung …", "See, e.g., Smith …"
    lead = re.match(r"([A-ZÄÖÜ][\w-]*),?\s+(?=([A-ZÄÖÜ][\w'’-]+))", stripped)
    if lead and name_key(lead.group(1)) not in known and name_key(lead.group(2)) in known\
            and not _FIRST_LAST_NOTE.match(stripped):  # "Ilari Kettunen, Title": a given name
        stripped = stripped[lead.end():]  # "Anders Hartung 2015", "Ähnlich Brandt 2009"
    same = _SAME_AUTHOR_NOTE.match(stripped)
    if same:  # "Ders., Kündigungsschutz, S. 5": the author of the note before, another work
        items = _short_title_item("Same" + stripped[same.end():], span, {"same"})
        return [m.model_copy(update={"authors": [SAME_AUTHOR], "text": squash(same.group(0) + m.text[4:])})
                for m in items]
    located = _NOTE_LOCATOR.search(stripped)
    locator = (located["page"] or located["bare"]) if located else None
    first_last = _FIRST_LAST_NOTE.match(stripped)
    if first_last and name_key(strip_particles(first_last["surname"])) in known:
        year, _ = publication_year(stripped)
        if year is not None:
            surname = strip_particles(first_last["surname"])
            return [Marker(text=squash(f"{surname} {year_of(year.group(1))}"), kind="footnote", group=span,
                            authors=[surname], year=year_of(year.group(1)), locator=locator)]
    if AUTHOR_YEAR_START.match(stripped) and YEAR_IN_TEXT.search(stripped) and len(stripped.split()) > 5:
        ref = parse_entry(stripped)  # a full reference: "Müller, A. (2019). Title. Journal."
        if ref.authors and ref.year:
            return [Marker(text=squash(f"{ref.authors[0]} {ref.year}"), kind="footnote", group=span,
                            authors=ref.authors, year=ref.year, reference=ref, locator=locator)]
    item = re.match(
        rf"(?P<marker>(?P<authors>{AUTHORS}),?\s+\(?(?P<years>{YEARS})\)?"
        rf"(?:,?\s*(?P<locator>{LOCATOR}))?)", stripped)
    if item is None:  # a short title between name and year: "Müller, Hitze in Städten, 2019, S. 12"
        item = re.match(rf"(?P<marker>(?P<authors>{NAME}(?:\s*/\s*{NAME})*){ET_AL}?,\s+[^;]{{1,120}}?"
                        rf"(?<![–—-])(?<![–—-]\s)\b(?P<years>{YEAR})(?!\s*[–—-]\s*\d)(?:,?\s*(?P<locator>{LOCATOR}))?)",
                        stripped)
    if item is None:
        ref = parse_entry(stripped)  # any full reference by an author of the list, corporate ones too
        if ref.authors and ref.year and name_key(ref.authors[0]) in known:
            return [Marker(text=squash(f"{ref.authors[0]} {ref.year}"), kind="footnote", group=span,
                            authors=ref.authors, year=ref.year, reference=ref, locator=locator)]
        return _short_title_item(stripped, span, known)
    if item["authors"].split()[0] in NOT_AUTHORS:
        return []
    return [Marker(text=text, kind="footnote", group=span, authors=_cited_names(item["authors"]), et_al=_et_al(item),
                    year=year_of(year), locator=item["locator"]) for year, text in _split_years(item)]


def _short_title_item(note: str, span: tuple[int, int], known: frozenset[str] | set[str]) -> list[Marker]:
    """"Hartung, Mieterschutz, S. 118": only for an author of the reference list, so a
    remark that happens to start with a name is no citation. A quoted short title may
    hold the comma that ends it (Chicago: 'Miller, "Tenants," 50')."""
    printed = note
    note = re.sub(r"([,.])([\"”’])(?=\s)", r"\2\1", note)  # same length: spans hold for both
    item = _SHORT_TITLE_NOTE.match(note)
    if item is None or item["authors"].split()[0] in NOT_AUTHORS:
        return []
    authors = _cited_names(item["authors"])
    if not authors or name_key(authors[0]) not in known:
        return []
    written = (item["title"] or "").strip()
    title = "" if not written or re.fullmatch(_NO_TITLE, written) else written.strip(" .\"“”„‘’'")
    text = squash(printed[: item.end("locator")] if item["locator"] else printed).rstrip(" .")
    return [Marker(text=text, kind="footnote", group=span, authors=authors, et_al=_et_al(item),
                    short_title=title, locator=item["locator"])]


def resolve_ibid(marker: Marker, previous: Marker | None) -> Marker:
    """ebd./ibid. cites the work of the citation before it."""
    if previous is None:
        return marker
    return marker.model_copy(update={
        "authors": previous.authors, "et_al": previous.et_al, "year": previous.year, "number": previous.number,
        "reference": previous.reference, "short_title": previous.short_title})


def _et_al(match: re.Match) -> bool:
    return re.search(r"\b(?:et\s+al|u\.\s?a)\b", match["authors"]) is not None


def _split_years(item: re.Match) -> list[tuple[str, str]]:
    """(year, marker) per work: "Smith, 2019a, 2020" cites two; the first keeps the literal text."""
    years = _year_list(item["years"])
    authors = squash(item["authors"])
    first = (years[0], squash(item["marker"])) if len(years) == 1 else (years[0], f"{authors}, {years[0]}")
    return [first] + [(y, f"{authors}, {y}") for y in years[1:]]


def _year_list(text: str) -> list[str]:
    """"2019a, b, 2020" -> ["2019a", "2019b", "2020"]."""
    years: list[str] = []
    for token in re.split(r",\s*", text.strip()):
        if re.fullmatch(r"[a-z]", token) and years and years[-1][:4].isdigit():
            years.append(years[-1][:4] + token)
        elif token:
            years.append(token)
    return years


def _expand(items: str) -> list[int]:
    numbers: list[int] = []
    for item in re.split(r"\s*[,;]\s*", items):
        bounds = [int(n) for n in re.split(r"\s*[–—-]\s*", item)]
        low, high = bounds[0], bounds[-1]
        if high < low or high - low > MAX_RANGE:
            high = low
        numbers.extend(n for n in range(low, high + 1) if n not in numbers)
    return numbers


def _cited_names(authors: str) -> list[str]:
    authors = re.sub(r"\s+(?:et\s+al\.?|u\.\s?a\.)|\s*\[[^\]]*\]", "", authors)
    parts = re.split(r",|/|\s&\s|\sand\s|\sund\s", squash(authors))
    return [strip_particles(n.strip()) for n in parts if n.strip()]


def by_sentence(text: str, found: list[tuple[int, Marker]]):
    """Group markers by the sentence that contains them, in reading order."""
    spans = sentence_spans(text)  # sorted and disjoint: the sentence at an offset is a bisection away
    starts = [s[0] for s in spans]
    grouped: dict[tuple[int, int], list[tuple[int, Marker]]] = {}
    for offset, marker in found:
        at = bisect_right(starts, offset) - 1
        # the sentence holding the mark, else the last one before it: a mark after the
        # sentence's full stop ("… rose.[^3]")
        span = spans[at] if at >= 0 else (offset, offset + len(marker.text))
        if span[1] < marker.group[1]:
            span = (span[0], marker.group[1])
        grouped.setdefault(span, []).append((offset, marker))
    return sorted(grouped.items())
