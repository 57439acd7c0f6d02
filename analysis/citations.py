"""Find cited claims in a thesis and resolve them to references and sources.

Three steps, each pure:

1. `parse_references` reads the reference list (the last section headed
   References, Bibliography, Literatur or Literaturverzeichnis): numeric entries
   ``[n] ...`` or author–year entries that start with surnames and carry a year.
2. `extract_citations` finds every citation marker in the body, in both styles:
   ``(Müller, 2019)``, ``(Smith et al., 2020; Lee 2018)``, ``Smith (2020)``,
   ``(Smith & Jones, 2020)``, ``(Smith and Jones 2020)``, ``(Müller, 2019a)``,
   ``[3]``, ``[1, 4–6]``, and resolves each to its `Reference`.
3. `match_sources` ties references to uploaded sources: by DOI, then by first
   author and year on the source's first page, then by title similarity.

The claim of a citation is the sentence that contains its marker, **with every
citation marker removed** (parenthetical groups, bracketed numbers and the
author–year of narrative citations), because the judge compares what is
asserted, not who asserted it; the untouched sentence is kept as `sentence`.
A marker inside a bracket group (``[1, 4–6]``) is reported per number as
``[1]``, ``[4]``, ``[5]``, ``[6]``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from analysis.chunking import sentence_spans
from analysis.pdftext import Page

# Ranges like [1-9999] are typos or not citations; cap what one group expands to.
MAX_RANGE = 50
DOI_PATTERN = re.compile(r"^10\.\d{4,9}/\S+$")

_PARTICLE = r"(?:(?:van|von|de|der|den|da|di|du|le|la|zu)\s+)"
_NAME = _PARTICLE + r"*[A-ZÄÖÜ][\w'’-]+"
_YEAR = r"(?:19|20)\d{2}[a-z]?"
_LOCATOR = r"(?:p|pp|S|Kap|ch)\.\s*\d+(?:\s*[–-]\s*\d+)?"
_AUTHORS = (
    rf"{_NAME}(?:\s+et\s+al\.?)?"
    rf"|{_NAME}(?:,\s*{_NAME})*,?\s+(?:&|and|und)\s+{_NAME}"
)
_PAREN_ITEM = re.compile(
    rf"(?:(?:see|e\.g\.,?|cf\.|vgl\.|siehe|z\.\s?B\.)\s+)?"
    rf"(?P<marker>(?P<authors>{_AUTHORS}),?\s+(?P<years>{_YEAR}(?:,\s*{_YEAR})*)(?:,\s*{_LOCATOR})?)"
)
_PAREN_GROUP = re.compile(r"\(([^()]{4,400})\)")
_NARRATIVE = re.compile(
    rf"(?P<authors>{_NAME}(?:\s+et\s+al\.)?|{_NAME}\s+(?:and|&|und)\s+{_NAME})"
    rf"\s+\((?P<years>{_YEAR}(?:,\s*{_YEAR})*)(?:,\s*{_LOCATOR})?\)"
)
_NUM_ITEM = r"\d{1,4}(?:\s*[–—-]\s*\d{1,4})?"
_NUMERIC = re.compile(rf"\[(?P<items>{_NUM_ITEM}(?:\s*[,;]\s*{_NUM_ITEM})*)\]")
# Capitalised words that can stand before "(2020)" without being an author.
_NOT_AUTHORS = frozenset({"In", "The", "Since", "During", "Until", "From", "Table", "Figure", "Im", "Seit"})

_HEADING = re.compile(
    r"(?im)^[ \t]*(?:\d+(?:\.\d+)*\.?[ \t]+)?"
    r"(?:references|bibliography|works cited|literatur|literaturverzeichnis|quellenverzeichnis)"
    r"[ \t]*:?[ \t]*$"
)
_NUMERIC_ENTRY = re.compile(r"(?m)^[ \t]*\[(\d{1,4})\][ \t]*")
_AUTHOR_YEAR_START = re.compile(
    rf"^\s*{_NAME}(?:\s[A-ZÄÖÜ][\w'’-]+)?,\s+(?:[A-ZÄÖÜ]\.|[A-ZÄÖÜ][a-zäöüß]+)"
)
_DOI_IN_TEXT = re.compile(r"10\.\d{4,9}/[^\s\"<>]+")
_YEAR_IN_TEXT = re.compile(rf"\b({_YEAR})\b")
_SURNAME_INITIALS = re.compile(rf"({_NAME}),\s+(?:[A-ZÄÖÜ]\.[\s-]?)+")
_INITIALS_SURNAME = re.compile(rf"(?:[A-ZÄÖÜ]\.\s?)+\s*({_NAME})")
_STOP = frozenset(
    """a an the of and or in on for to with by from at as is are was were be this that
    its their der die das und oder in im von zu mit für auf ein eine einer des den""".split()
)


class Reference(BaseModel):
    """One entry of the thesis's reference list, fields pulled out best-effort."""

    key: str  #: "[3]" for numeric entries, "smith2020" for author–year ones
    number: int | None = None
    authors: list[str] = Field(default_factory=list)  #: surnames, in order
    year: str | None = None  #: with its letter suffix, "2019a"
    title: str | None = None
    doi: str | None = None
    raw: str

    @property
    def first_author(self) -> str | None:
        """The first author's surname, if one was found."""
        return self.authors[0] if self.authors else None


class Citation(BaseModel):
    """One citation of one reference, in one sentence of the thesis."""

    ordinal: int = Field(ge=0)  #: position among all citations, in reading order
    claim: str  #: the sentence with all citation markers removed
    sentence: str  #: the sentence as written
    marker: str  #: the literal text of this citation: "Smith et al., 2020", "[4]"
    page: int | None = None
    cited_authors: list[str] = Field(default_factory=list)
    cited_year: str | None = None
    cited_number: int | None = None
    reference: Reference | None = None


class SourceInfo(BaseModel):
    """What is known about an uploaded source when matching it to references."""

    id: str
    filename: str
    text: str  #: the text of its first page(s)
    metadata: dict[str, str] = Field(default_factory=dict)  #: optional doi, title, author, year


def is_valid_doi(s: str) -> bool:
    """True if `s` has the shape of a DOI (``10.<registrant>/<suffix>``)."""
    return bool(DOI_PATTERN.match(s.strip()))


def find_reference_section(text: str) -> tuple[str, str]:
    """Split `text` into (body, reference list) at the last reference heading.

    The last heading wins because a table of contents names the section too.
    Without a heading the whole text is body and the list is empty.
    """
    headings = list(_HEADING.finditer(text))
    if not headings:
        return text, ""
    last = headings[-1]
    return text[: last.start()], text[last.end() :]


def parse_references(section: str) -> list[Reference]:
    """Parse a reference list, numeric (``[n] ...``) or author–year."""
    if _NUMERIC_ENTRY.search(section):
        return _numeric_references(section)
    return _unique_keys([_reference(entry) for entry in _author_year_entries(section)])


def extract_citations(thesis: str | Sequence[Page]) -> list[Citation]:
    """Find every citation in the body of a thesis and resolve it to a reference.

    Pass pages to get page numbers; a plain string gives `page=None`.
    """
    text, starts = _join_pages(thesis)
    body, section = find_reference_section(text)
    references = parse_references(section)
    numeric_style = not references or references[0].number is not None
    found = _find_markers(body, numeric_style)
    citations: list[Citation] = []
    for (start, end), sentence_markers in _by_sentence(body, found):
        sentence = body[start:end]
        for offset, marker in sentence_markers:
            citation = Citation(
                ordinal=len(citations),
                claim=_claim(sentence),
                sentence=_squash(sentence),
                marker=marker.text,
                page=_page_of(offset, starts),
                cited_authors=marker.authors,
                cited_year=marker.year,
                cited_number=marker.number,
                reference=_resolve(marker, references),
            )
            citations.append(citation)
    return citations


def match_sources(citations: Iterable[Citation], sources: Sequence[SourceInfo]) -> dict[int, str | None]:
    """Map each citation's ordinal to the id of the uploaded source it cites, or None.

    Tried in order: the reference's DOI found in a source's text or metadata; the
    first author's surname and the year on the source's first page; the title's
    words on the first page. A citation without a resolved reference maps to None.
    """
    prepared = [_PreparedSource(s) for s in sources]
    cache: dict[str, str | None] = {}
    result: dict[int, str | None] = {}
    for citation in citations:
        ref = citation.reference
        if ref is None:
            result[citation.ordinal] = None
            continue
        if ref.key not in cache:
            cache[ref.key] = _match_reference(ref, prepared)
        result[citation.ordinal] = cache[ref.key]
    return result


# --- reference list ---------------------------------------------------------


def _numeric_references(section: str) -> list[Reference]:
    parts = _NUMERIC_ENTRY.split(section)
    refs = []
    for number, body in zip(parts[1::2], parts[2::2]):
        entry = _squash(body)
        ref = _reference(entry)
        refs.append(ref.model_copy(update={"key": f"[{int(number)}]", "number": int(number)}))
    return refs


def _unique_keys(refs: list[Reference]) -> list[Reference]:
    """Two "Smith 2020" entries get keys smith2020 and smith2020#2."""
    seen: dict[str, int] = {}
    out = []
    for ref in refs:
        seen[ref.key] = seen.get(ref.key, 0) + 1
        out.append(ref if seen[ref.key] == 1 else ref.model_copy(update={"key": f"{ref.key}#{seen[ref.key]}"}))
    return out


def _author_year_entries(section: str) -> list[str]:
    """Group wrapped lines into entries: a new entry starts with "Surname, X."."""
    entries: list[str] = []
    for line in section.splitlines():
        if not line.strip() or line.strip().isdigit():  # blank lines, page numbers
            continue
        starts_entry = bool(_AUTHOR_YEAR_START.match(line))
        if starts_entry and (not entries or _YEAR_IN_TEXT.search(entries[-1])):
            entries.append(line.strip())
        elif entries:
            entries[-1] += " " + line.strip()
    return [_squash(e) for e in entries]


def _reference(entry: str) -> Reference:
    doi = _find_doi(entry)
    plain = _DOI_IN_TEXT.sub(" ", re.sub(r"https?://\S+", " ", entry))
    year_match = re.search(rf"\(({_YEAR})\)", plain) or _YEAR_IN_TEXT.search(plain)
    year = year_match.group(1) if year_match else None
    authors = _surnames(_author_segment(plain, year_match))
    key = f"{_name_key(authors[0]) if authors else 'anon'}{year or ''}"
    return Reference(key=key, authors=authors, year=year, title=_title(plain, year_match), doi=doi, raw=entry)


def _author_segment(entry: str, year_match: re.Match | None) -> str:
    quote = re.search(r"[\"“]", entry)
    if quote and (year_match is None or quote.start() < year_match.start()):
        return entry[: quote.start()]  # IEEE: J. Smith and K. Lee, "Title," ...
    return entry[: year_match.start()] if year_match else entry[:120]


def _surnames(segment: str) -> list[str]:
    names = [m.group(1) for m in _SURNAME_INITIALS.finditer(segment)]
    if not names:
        names = [m.group(1) for m in _INITIALS_SURNAME.finditer(segment)]
    if not names:
        first = re.search(_NAME, segment)
        names = [first.group(0)] if first else []
    return [_strip_particles(n) for n in names]


def _title(entry: str, year_match: re.Match | None) -> str | None:
    quoted = re.search(r"[\"“](.{6,300}?)[,.]?[\"”]", entry)
    if quoted:
        return quoted.group(1).strip(" ,.")
    if year_match is None:
        return None
    after = entry[year_match.end() :].lstrip(" ).,")
    # The title runs to the first full stop that is followed by a capital (the venue).
    end = re.search(r"[.?!](?=\s+[A-ZÄÖÜ]|\s*$)", after)
    title = after[: end.start() if end else len(after)].strip()
    return title or None


def _find_doi(text: str) -> str | None:
    match = _DOI_IN_TEXT.search(text)
    return match.group(0).rstrip(".,;)]") if match else None


# --- markers in the body ----------------------------------------------------


class _Marker(BaseModel):
    text: str
    authors: list[str] = Field(default_factory=list)
    et_al: bool = False
    year: str | None = None
    number: int | None = None


def _find_markers(body: str, numeric_style: bool) -> list[tuple[int, _Marker]]:
    found = _parenthetical(body) + _narrative(body)
    if numeric_style:
        found += _numeric(body)
    return sorted(found, key=lambda item: item[0])


def _parenthetical(body: str) -> list[tuple[int, _Marker]]:
    found = []
    for group in _PAREN_GROUP.finditer(body):
        offset = group.start(1)
        for part in re.finditer(r"[^;]+", group.group(1)):
            item = _PAREN_ITEM.fullmatch(part.group(0).strip())
            if item is None:
                continue
            pos = offset + part.start() + part.group(0).index(item.group("marker"))
            for year, text in _split_years(item):
                marker = _Marker(text=text, authors=_cited_names(item["authors"]), et_al=_et_al(item), year=year)
                found.append((pos, marker))
    return found


def _narrative(body: str) -> list[tuple[int, _Marker]]:
    found = []
    for match in _NARRATIVE.finditer(body):
        if match.group("authors").split()[0] in _NOT_AUTHORS:
            continue
        authors, et_al = _cited_names(match["authors"]), _et_al(match)
        for year in re.findall(_YEAR, match["years"]):
            text = _squash(f"{match['authors']} ({year})")
            marker = _Marker(text=text, authors=authors, et_al=et_al, year=year)
            found.append((match.start(), marker))
    return found


def _numeric(body: str) -> list[tuple[int, _Marker]]:
    found = []
    for match in _NUMERIC.finditer(body):
        for number in _expand(match["items"]):
            found.append((match.start(), _Marker(text=f"[{number}]", number=number)))
    return found


def _et_al(match: re.Match) -> bool:
    return re.search(r"\bet\s+al\b", match["authors"]) is not None


def _split_years(item: re.Match) -> list[tuple[str, str]]:
    """(year, marker) per work: "Smith, 2019a, 2020" cites two; the first keeps the literal text."""
    years = re.findall(_YEAR, item["years"])
    authors = _squash(item["authors"])
    first = (years[0], _squash(item["marker"])) if len(years) == 1 else (years[0], f"{authors}, {years[0]}")
    return [first] + [(y, f"{authors}, {y}") for y in years[1:]]


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
    authors = re.sub(r"\s+et\s+al\.?", "", authors)
    parts = re.split(r",|\s&\s|\sand\s|\sund\s", _squash(authors))
    return [_strip_particles(n.strip()) for n in parts if n.strip()]


def _by_sentence(body: str, found: list[tuple[int, _Marker]]):
    """Group markers by the sentence that contains them, in reading order."""
    spans = sentence_spans(body)
    grouped: dict[tuple[int, int], list[tuple[int, _Marker]]] = {}
    for offset, marker in found:
        span = next((s for s in spans if s[0] <= offset < s[1]), (offset, offset + len(marker.text)))
        grouped.setdefault(span, []).append((offset, marker))
    return sorted(grouped.items())


def _claim(sentence: str) -> str:
    for start, end in sorted(_marker_spans(sentence), reverse=True):
        sentence = sentence[:start] + sentence[end:]
    claim = _squash(sentence)
    return re.sub(r"\s+([,.;:!?])", r"\1", claim).replace("()", "").strip()


def _marker_spans(sentence: str) -> list[tuple[int, int]]:
    """Where the citation markers of a sentence are, to cut them from the claim."""
    spans = [
        m.span() for m in _PAREN_GROUP.finditer(sentence)
        if any(_PAREN_ITEM.fullmatch(p.strip()) for p in m.group(1).split(";"))
    ]
    spans += [m.span() for m in _NARRATIVE.finditer(sentence) if m["authors"].split()[0] not in _NOT_AUTHORS]
    return spans + [m.span() for m in _NUMERIC.finditer(sentence)]


def _resolve(marker: _Marker, references: list[Reference]) -> Reference | None:
    if marker.number is not None:
        return next((r for r in references if r.number == marker.number), None)
    if not marker.authors or marker.year is None:
        return None
    first = _name_key(marker.authors[0])
    candidates = [
        r for r in references
        if r.authors and _name_key(r.authors[0]) == first and _same_year(marker.year, r.year)
    ]
    # max() keeps the first of equals: list order breaks the remaining ties.
    return max(candidates, key=lambda r: _fit(marker, r), default=None)


def _fit(marker: _Marker, ref: Reference) -> int:
    """How well a same-first-author, same-year entry fits the marker's shape."""
    score = 4 * (ref.year == marker.year)
    others = {_name_key(a) for a in ref.authors[1:]}
    score += 2 * sum(_name_key(a) in others for a in marker.authors[1:])
    # APA: "et al." stands for three or more authors; no "et al." lists them all.
    if marker.et_al:
        score += len(ref.authors) >= 3
    else:
        score += len(ref.authors) == len(marker.authors)
    return score


def _same_year(cited: str, listed: str | None) -> bool:
    if listed is None:
        return False
    if cited == listed:
        return True
    # "2019" against "2019a" (or back) is the same work when the letter was dropped.
    return cited[:4] == listed[:4] and (len(cited) == 4 or len(listed) == 4)


# --- sources ----------------------------------------------------------------


class _PreparedSource:
    """A source's first page, normalised once for all references."""

    def __init__(self, source: SourceInfo) -> None:
        self.id = source.id
        self.head = source.text[:6000]
        self.names = _name_key(self.head)
        self.dois = {d.rstrip(".,;)]").lower() for d in _DOI_IN_TEXT.findall(source.text)}
        if source.metadata.get("doi"):
            self.dois.add(source.metadata["doi"].lower())
        self.words = set(_content_words(self.head + " " + source.metadata.get("title", "")))
        self.filename_key = _name_key(source.filename)


def _match_reference(ref: Reference, sources: list[_PreparedSource]) -> str | None:
    if ref.doi:
        for source in sources:
            if ref.doi.lower() in source.dois:
                return source.id
    by_author = [s for s in sources if _author_year_on_page(ref, s)]
    if by_author:
        return max(by_author, key=lambda s: _title_score(ref, s)).id
    scored = [(s, _title_score(ref, s)) for s in sources]
    best = max(scored, key=lambda pair: pair[1], default=(None, 0.0))
    return best[0].id if best[0] is not None and best[1] >= 0.8 else None


def _author_year_on_page(ref: Reference, source: _PreparedSource) -> bool:
    if not ref.first_author or not ref.year:
        return False
    name = re.escape(_name_key(ref.first_author))
    year = ref.year[:4]
    on_page = re.search(rf"\b{name}\b", source.names) and re.search(rf"\b{year}\b", source.head)
    in_filename = re.search(name, source.filename_key) and year in source.filename_key
    return bool(on_page or in_filename)


def _title_score(ref: Reference, source: _PreparedSource) -> float:
    words = _content_words(ref.title or "")
    if len(words) < 3:
        return 0.0
    return sum(w in source.words for w in words) / len(words)


# --- helpers ----------------------------------------------------------------


def _join_pages(thesis: str | Sequence[Page]) -> tuple[str, list[tuple[int, int]]]:
    """One text plus (offset, page number) of each page start."""
    if isinstance(thesis, str):
        return thesis, []
    parts, starts, offset = [], [], 0
    for page in thesis:
        starts.append((offset, page.number))
        parts.append(page.text)
        offset += len(page.text) + 1
    return "\n".join(parts), starts


def _page_of(offset: int, starts: list[tuple[int, int]]) -> int | None:
    page = None
    for start, number in starts:
        if start > offset:
            break
        page = number
    return page


def _name_key(name: str) -> str:
    """Compare names across spellings: "Müller", "Mueller" and "MULLER" agree."""
    folded = name.casefold().replace("ß", "ss")
    for umlaut, plain in (("ä", "a"), ("ö", "o"), ("ü", "u"), ("ae", "a"), ("oe", "o"), ("ue", "u")):
        folded = folded.replace(umlaut, plain)
    decomposed = unicodedata.normalize("NFKD", folded)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _strip_particles(name: str) -> str:
    return re.sub(rf"^{_PARTICLE}+", "", name).strip()


def _content_words(text: str) -> list[str]:
    return [w for w in re.findall(r"\w{3,}", _name_key(text)) if w not in _STOP]


def _squash(text: str) -> str:
    return " ".join(text.split())
