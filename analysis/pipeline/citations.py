"""Find cited claims in a thesis and resolve them to references and sources.

Three steps, each pure, working from a reader's `Document` (analysis/pipeline/document.py):

1. The reference list is what follows the last heading that names one, in English or
   German and in any heading syntax: References, Bibliography, Works Cited, Literature,
   Reference List, Sources, Literaturverzeichnis, Literatur, Quellenverzeichnis, Quellen
   (``## References``, ``7 References``, ``7. Literatur``, ``REFERENCES:``). Its entries
   are numeric (``[n] ...`` or ``n. ...``) or author–year; they never become citations.
2. `extract_citations` finds every citation in the body paragraphs (headings are never
   part of a claim):

   * author–year (APA 7, Harvard), parenthetical ``(Müller, 2019)`` and narrative
     ``Smith (2020)``; several works in one parenthesis ``(Smith et al., 2020; Lee 2018)``;
     several years ``(Lee, 2018, 2019a)``; locators ``p.``/``pp.``/``S.``/``Kap.`` and
     ``: 12``; ``et al.``/``u. a.``; ``&``/``and``/``und``; year suffixes ``2020a``;
     ``n.d.``/``o. J.``; prefixes ``see``, ``see also``, ``cf.``, ``e.g.``, ``vgl.``,
     ``siehe``, ``z. B.``; ``ebd.``/``ibid.`` (with or without a locator), which cite the
     work of the citation before;
   * numeric (IEEE, Vancouver): ``[1]``, ``[1, 3]``, ``[2–5]``, ``[2-5]``;
   * footnotes: the sentence carrying the mark ``[^n]`` is the claim, and the footnote
     holds an author–year (``Vgl. Müller 2019, S. 12.``), a full reference, or ``Ebd.``.

   The claim is the clause the citation supports with every marker removed. A sentence
   whose citations support different clauses ("X rose (A, 2020), whereas Y fell (B,
   2019)") gives each citation its own clause. A narrative citation's reporting frame is
   dropped when it only frames the content ("According to Castillo (2018), …",
   "Castillo (2018) found that …", "Laut Müller (2019) …", "Müller (2019) zeigt, dass
   …"); otherwise the name stays and only the year goes ("Castillo measured …").
3. `resolve_sources` ties references to uploaded sources: by DOI; by first author and
   year on the source's first pages; by title where two works of one author and year
   (2020a/2020b) both fit; by the source's own metadata (PDF /Author, /Title); by title
   similarity. Ambiguity is never guessed: the citation stays unresolved with the reason.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from analysis.pipeline.chunking import sentence_spans
from analysis.inputs import DOI_PATTERN
from analysis.pipeline.document import FOOTNOTE_MARK, Document, Page, Paragraph
from analysis.pipeline.headings import REFERENCE_HEADING_LINE, is_reference_heading
from analysis.pipeline.plaintext import text_document

# Ranges like [1-9999] are typos or not citations; cap what one group expands to.
MAX_RANGE = 50

_PARTICLE = r"(?:(?:van|von|de|der|den|da|di|du|le|la|zu|ten|ter)\s+)"
_WORD = r"[A-ZÄÖÜ](?:[\w-]|['’](?!s\b))+"  # "O'Brien", not "Castillo's"
_NAME = _PARTICLE + rf"*{_WORD}"
# "World Health Organization"; "Verband urbaner Lieferdienste" (a German adjective before a capitalised word)
_LONG_NAME = _NAME + (rf"(?:\s+(?:{_WORD}|of|for|and|on|in|the|für|und|der|des|zur|zum"
                      rf"|[a-zäöüß]{{2,}}(?:er|en|es|e)(?=\s+[A-ZÄÖÜ]))){{0,6}}?")
_NO_DATE = r"n\.\s?d\.|o\.\s?J\.|o\.\s?D\.|ohne\s+Jahr"
_IN_PRESS = r"in\s+press|im\s+Druck"
_YEAR = rf"(?:(?:19|20)\d{{2}}[a-z]?|{_NO_DATE}|{_IN_PRESS})"
_ET_AL = r"(?:\s+(?:et\s+al\.?|u\.\s?a\.))"
_LOCATOR = (r"(?:(?:p|pp|S|Kap|ch|chap|para|Abs|Rn|Tab|Fig)\.\s*\d+(?:\s*[–-]\s*\d+)?(?:\s*ff?\.)?"
            r"|:\s*\d+(?:\s*[–-]\s*\d+)?|\d{1,3}(?:\s*[–-]\s*\d{1,3})?(?![\d.]))")
_PREFIX = r"(?:(?:see\s+also|see|cf\.|e\.\s?g\.,?|i\.\s?e\.,?|vgl\.(?:\s+auch)?|siehe(?:\s+auch)?|z\.\s?B\.)\s+)"
_AUTHORS = (
    rf"{_LONG_NAME}(?:\s*\[[A-ZÄÖÜ][\w&-]{{1,15}}\])?{_ET_AL}?"  # "World Health Organization [WHO]"
    rf"|{_NAME}(?:,\s*{_NAME})*,?\s+(?:&|and|und)\s+{_NAME}{_ET_AL}?"
    rf"|{_NAME}(?:\s*/\s*{_NAME})+"
)
# "2019a, b": the letters after the first year name more works of that year.
# "Sennhauser (a. a. O.: 47)", "(Mayer, op. cit., p. 3)": the author's work cited before, no year
_SAME_WORK = r"(?:a\.\s?a\.\s?O\.|op\.\s?cit\.|loc\.\s?cit\.)"
_YEARS = rf"(?:{_YEAR}(?:,\s*(?:{_YEAR}|[a-z](?![\w.])))*|{_SAME_WORK})"
# A remark after the citation: "(see Smith, 2020, for a review)".
_REMARK = r"(?:,?\s+(?:for|on|esp\.|especially|insbesondere|zur|zum|für|mit)\b[^;()]{0,80})?"
_PAREN_ITEM = re.compile(
    rf"(?i:{_PREFIX})?"
    rf"(?P<marker>(?P<authors>{_AUTHORS}),?\s+(?P<years>{_YEARS})(?:,?\s*(?P<locator>{_LOCATOR}))?){_REMARK}"
)
_IBID = re.compile(rf"(?P<marker>(?:ebd|ebenda|ibid|ibidem)\.?(?:,?\s*(?P<locator>{_LOCATOR}))?)", re.I)
_CITED_IN = re.compile(r"(?i),?\s*(?:as\s+cited\s+in|cited\s+in|quoted\s+in|zitiert\s+nach|zit\.\s+nach|"
                       r"nach)\s+(?=[A-ZÄÖÜ])")
_PAREN_GROUP = re.compile(r"\(([^()]{3,400})\)")
_NARRATIVE = re.compile(
    rf"(?<![\w'’-])(?P<authors>{_NAME}{_ET_AL}?|{_NAME}\s+(?:and|&|und)\s+{_NAME}{_ET_AL}?"
    rf"|{_NAME}(?:\s*/\s*{_NAME})+)(?:['’]s?)?"
    rf"\s+\((?P<years>{_YEARS})(?:,?\s*(?P<locator>{_LOCATOR}))?\)"
)
_NUM_ITEM = r"\d{1,4}(?:\s*[–—-]\s*\d{1,4})?"
_NUMERIC = re.compile(rf"\[(?P<items>{_NUM_ITEM}(?:\s*[,;]\s*{_NUM_ITEM})*)"
                      rf"(?:,\s*(?P<locator>(?:p|pp|S|ch|Kap)\.\s*\d+(?:\s*[–-]\s*\d+)?))?\]"
                      rf"(?:\s*[–—-]\s*\[(?P<upto>\d{{1,4}})\])?")
# Capitalised words that can stand before "(2020)" without being an author.
_NOT_AUTHORS = frozenset(
    """In The Since During Until From Table Figure Fig Tab Im Seit Bis Nach Laut According See Vgl Cf This These
    Dies Diese Before After As Stand Version Circa Ca Spring Summer Autumn Fall Winter Frühjahr Frühling Sommer
    Herbst January February March April May June July August September October November December Januar Februar
    März Mai Juni Juli Oktober Dezember Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Okt Dez""".split())

_NUMERIC_ENTRY = re.compile(r"(?m)^[ \t]*\[(\d{1,4})\][ \t]*")
_DOTTED_ENTRY = re.compile(r"(?m)^[ \t]*(\d{1,4})\.[ \t]+(?=\S)")
_PAREN_NUMBER_ENTRY = re.compile(r"(?m)^[ \t]*(\d{1,4})\)[ \t]+(?=\S)")
_AUTHOR_YEAR_START = re.compile(
    rf"^\s*{_NAME}(?:\s[A-ZÄÖÜ][\w'’-]+)?,\s+(?:[A-ZÄÖÜ]\.|[A-ZÄÖÜ][a-zäöüß]+)"
)
_DOI_IN_TEXT = re.compile(r"10\.\d{4,9}/[^\s\"<>]+")
_YEAR_IN_TEXT = re.compile(rf"(?<![\w.])({_YEAR})(?!\w)")
_SURNAME_INITIALS = re.compile(rf"({_NAME}),\s+(?:[A-ZÄÖÜ]\.[\s-]?)+")
_INITIALS_SURNAME = re.compile(rf"(?:[A-ZÄÖÜ]\.\s?)+\s*({_NAME})")
_VANCOUVER = re.compile(rf"^\s*{_NAME}\s+[A-ZÄÖÜ]{{1,3}}(?:,\s*{_NAME}\s+[A-ZÄÖÜ]{{1,3}})*(?:,?\s*et\s+al)?\s*$")
_VANCOUVER_NAME = re.compile(rf"({_NAME})\s+[A-ZÄÖÜ]{{1,3}}\b")
_STOP = frozenset(
    """a an the of and or in on for to with by from at as is are was were be this that
    its their der die das und oder in im von zu mit für auf ein eine einer des den""".split()
)
_REPORTING = (
    r"(?:found|find|finds|showed|shows|show|shown|reported|reports|report|demonstrated|demonstrates|demonstrate"
    r"|argued|argues|argue|stated|states|state|noted|notes|note|observed|observes|observe|concluded|concludes"
    r"|conclude|suggested|suggests|suggest|claimed|claims|claim|indicated|indicates|indicate|estimated"
    r"|estimates|estimate|confirmed|confirms|confirm|established|establishes|proposed|proposes|explained"
    r"|explains|pointed\s+out|points\s+out|emphasi[sz]ed|emphasi[sz]es|highlighted|highlights|documented"
    r"|documents|wrote|writes|holds|held|revealed|reveals|determined|determines"
    r"|zeigt|zeigen|zeigte|zeigten|fand|fanden|findet|finden|berichtet|berichten|berichtete|berichteten"
    r"|stellt\s+fest|stellen\s+fest|stellte\s+fest|stellten\s+fest|argumentiert|argumentieren|belegt|belegen"
    r"|belegte|betont|betonen|weist\s+nach|wiesen\s+nach|wies\s+nach|kommt\s+zu\s+dem\s+(?:Schluss|Ergebnis)"
    r"|kam\s+zu\s+dem\s+(?:Schluss|Ergebnis)|schreibt|schreiben|beschreibt|beschreiben|erklärt|erklären"
    r"|schätzt|schätzen|bestätigt|bestätigen)"
)
_FRAME_BEFORE = re.compile(
    r"(?i)(?:^|(?<=[\s,;(]))(?:according\s+to|as\s+(?:reported|shown|noted|argued|described|found|"
    r"demonstrated)\s+by|laut|nach|gemäß|zufolge)\s*$")
_FRAME_AFTER = re.compile(
    rf"^\s*,?\s*(?:(?:also|further|furthermore|similarly|recently|likewise|auch|zudem|ebenfalls|außerdem"
    rf"|bereits|schon)\s+)?{_REPORTING}\s*(?:,\s*)?(?:that|dass|daß)\b\s*,?\s*")
_FRAME_ZUFOLGE = re.compile(r"^\s*zufolge\s*,?\s*", re.I)
_SPLIT_AFTER = re.compile(
    r"^\s*(?:[,;:]|(?:whereas|while|whilst|but|although|though|however|während|wohingegen|aber|jedoch"
    r"|doch|obwohl|sondern)\b)", re.I)
_BOUNDARY_BEFORE = re.compile(
    r"(?:[,;:]|\b(?:whereas|while|whilst|but|although|während|wohingegen|aber|jedoch))\s*"
    r"(?:(?:according\s+to|as\s+\w+\s+by|laut|nach|gemäß)\s*)?$", re.I)
_BOUNDARY_INSIDE = re.compile(
    r";|,\s*(?=(?:whereas|while|whilst|but|although|though|however|während|wohingegen|aber|jedoch|doch"
    r"|obwohl|sondern)\b)", re.I)
_MARK_AFTER_STOP = re.compile(r"([.!?])((?:\[\^[^\]\s]+\])+)")
_LEADING_CONNECTOR = re.compile(
    r"^(?:\s|[,;:]|(?:whereas|while|whilst|but|and|or|although|though|however|yet|während|wohingegen|aber"
    r"|und|oder|jedoch|doch|obwohl|sondern|sowie)\b)+", re.I)


class Reference(BaseModel):
    """One entry of the thesis's reference list, fields pulled out best-effort."""

    key: str  #: "[3]" for numeric entries, "smith2020" for author–year ones
    number: int | None = None
    authors: list[str] = Field(default_factory=list)  #: surnames, in order
    #: other names of a corporate first author: "WHO" for "World Health Organization"
    aliases: list[str] = Field(default_factory=list)
    year: str | None = None  #: with its letter suffix, "2019a"; "n.d." when undated
    title: str | None = None
    doi: str | None = None
    raw: str

    @property
    def first_author(self) -> str | None:
        """The first author's surname, if one was found."""
        return self.authors[0] if self.authors else None

    @property
    def label(self) -> str:
        """How a reader names it: "[3]" or "Smith 2020"."""
        if self.number is not None:
            return f"[{self.number}]"
        names = self.first_author
        if names and len(self.authors) > 2:
            names += " et al."
        elif names and len(self.authors) == 2:
            names += f" & {self.authors[1]}"
        return " ".join(filter(None, [names, self.year])) or self.raw[:40]


class Citation(BaseModel):
    """One citation of one reference, in one sentence of the thesis."""

    ordinal: int = Field(ge=0)  #: position among all citations, in reading order
    claim: str  #: the clause the citation supports, every citation marker removed
    sentence: str  #: the sentence as written (footnote marks removed)
    marker: str  #: the literal text of this citation: "Smith et al., 2020", "[4]", "ebd., S. 5"
    #: parenthetical | narrative | numeric | footnote | ibid
    kind: str = "parenthetical"
    locator: str | None = None  #: "p. 12", "S. 4–5"
    page: int | None = None
    cited_authors: list[str] = Field(default_factory=list)
    cited_year: str | None = None
    cited_number: int | None = None
    reference: Reference | None = None
    #: why `reference` is None: no entry, or several entries fit equally
    unresolved_reason: str | None = None


class SourceInfo(BaseModel):
    """What is known about an uploaded source when matching it to references."""

    id: str
    filename: str
    text: str  #: the text of its first page(s)
    #: optional doi, title, author, created_year (PDF metadata stored at parse time)
    metadata: dict[str, str] = Field(default_factory=dict)


class SourceMatch(BaseModel):
    """How a citation was tied to an uploaded source, or why it was not."""

    source_id: str | None = None
    method: str | None = None  #: doi | author_year | title | metadata
    reason: str | None = None  #: why nothing matched (None when matched)


def is_valid_doi(s: str) -> bool:
    """True if `s` has the shape of a DOI (``10.<registrant>/<suffix>``)."""
    return bool(DOI_PATTERN.match(s.strip()))


def normalize_doi(s: str) -> str | None:
    """The bare, lower-case DOI in `s` ("https://doi.org/10.1/X." → "10.1/x"), or None."""
    found = find_doi(s)
    return found.lower() if found else None


def find_reference_section(text: str) -> tuple[str, str]:
    """Split `text` into (body, reference list) at the last reference heading line.

    The last heading wins because a table of contents names the section too.
    Without a heading the whole text is body and the list is empty.
    """
    headings = list(REFERENCE_HEADING_LINE.finditer(text))
    if not headings:
        return text, ""
    last = headings[-1]
    return text[: last.start()], text[last.end() :]


def parse_references(section: str) -> list[Reference]:
    """Parse a reference list, numeric (``[n] ...`` or ``n. ...``) or author–year."""
    if _NUMERIC_ENTRY.search(section):
        return _numeric_references(section, _NUMERIC_ENTRY)
    for pattern in (_DOTTED_ENTRY, _PAREN_NUMBER_ENTRY):  # "1. Smith J, …" or "1) Smith J, …"
        numbers = [int(n) for n in pattern.findall(section)]
        if len(numbers) >= 2 and numbers[:2] == [1, 2]:
            return _numeric_references(section, pattern)
    return _unique_keys(_same_authors(
        [_reference(entry) for entry in _author_year_entries(section)]))


def extract_citations(thesis: str | Sequence[Page] | Document) -> list[Citation]:
    """Find every citation in the body of a thesis and resolve it to a reference.

    Pass a `Document` (or pages) to get page numbers; a plain string gives `page=None`.
    """
    if isinstance(thesis, Document):
        document, paged = thesis, True
    elif isinstance(thesis, str):
        document, paged = text_document([Page(number=1, text=thesis)]), False
    else:
        document, paged = text_document(list(thesis)), True
    body, section = _split_document(document)
    references = parse_references(section)
    numeric_style = not references or references[0].number is not None
    footnotes = {f.label: f.text for f in document.footnotes}
    known = {_name_key(r.first_author) for r in references if r.first_author}
    citations: list[Citation] = []
    previous: _Marker | None = None
    for paragraph in body:
        # A footnote mark after the full stop belongs to the sentence before it.
        text = _MARK_AFTER_STOP.sub(r"\2\1", " ".join(paragraph.text.split()))
        found = _find_markers(text, numeric_style, footnotes, known)
        for (start, end), in_sentence in _by_sentence(text, found):
            sentence = text[start:end]
            claims = _clauses(sentence, start, [m for _, m in in_sentence])
            for offset, marker in in_sentence:
                claim = claims[marker.group]
                if marker.kind == "ibid":
                    marker = _ibid(marker, previous)
                elif marker.authors[:1] == [_SAME_AUTHOR] and previous is not None:
                    marker = marker.model_copy(update={"authors": previous.authors, "et_al": previous.et_al})
                reference, reason = _resolve(marker, references)
                resolved_marker = marker.model_copy(update={"reference": reference or marker.reference})
                citations.append(Citation(
                    ordinal=len(citations), claim=claim,
                    sentence=_squash(FOOTNOTE_MARK.sub("", sentence)), marker=marker.text, kind=marker.kind,
                    locator=marker.locator, page=paragraph.page_at(offset, text) if paged else None,
                    cited_authors=marker.authors, cited_year=marker.year, cited_number=marker.number,
                    reference=reference, unresolved_reason=reason,
                ))
                previous = resolved_marker
    return citations


def resolve_sources(citations: Iterable[Citation], sources: Sequence[SourceInfo]) -> dict[int, SourceMatch]:
    """Each citation's ordinal → its source, the method that found it, or why none was.

    Tried in order: the reference's DOI in a source's text or metadata; the first author's
    surname and the year on the source's first pages (several such sources: the one whose
    text holds the reference's title clearly best); the source's metadata; the title's
    words alone. Two sources that fit equally leave the citation unresolved, with the reason.
    """
    prepared = [_PreparedSource(s) for s in sources]
    cache: dict[str, SourceMatch] = {}
    result: dict[int, SourceMatch] = {}
    for citation in citations:
        ref = citation.reference
        if ref is None:
            result[citation.ordinal] = SourceMatch(reason=citation.unresolved_reason or "no reference entry")
            continue
        if ref.key not in cache:
            cache[ref.key] = _match_reference(ref, prepared)
        result[citation.ordinal] = cache[ref.key]
    return result


def match_sources(citations: Iterable[Citation], sources: Sequence[SourceInfo]) -> dict[int, str | None]:
    """Map each citation's ordinal to the id of the uploaded source it cites, or None."""
    return {o: m.source_id for o, m in resolve_sources(citations, sources).items()}


# --- the document's parts ---------------------------------------------------


def _split_document(document: Document) -> tuple[list[Paragraph], str]:
    """(body paragraphs, reference list text). The list is what follows the last reference
    heading up to the next heading of its level or above (an appendix stays body)."""
    paragraphs = sorted(document.paragraphs, key=lambda p: p.position)
    heads = [h for h in document.headings if is_reference_heading(h.text)]
    if not heads:
        return _split_inline(paragraphs)
    head = max(heads, key=lambda h: h.position)
    after = [h for h in document.headings if h.position > head.position and h.level <= head.level]
    end = min((h.position for h in after), default=None)
    in_list = [p for p in paragraphs if p.position > head.position and (end is None or p.position < end)]
    body = [p for p in paragraphs if p.position < head.position or (end is not None and p.position > end)]
    return body, "\n".join(_entry_lines(p.text) for p in in_list)


def _split_inline(paragraphs: list[Paragraph]) -> tuple[list[Paragraph], str]:
    """No heading was recognised: a line of a paragraph may still be one."""
    for i in range(len(paragraphs) - 1, -1, -1):
        lines = paragraphs[i].text.splitlines()
        for j in range(len(lines) - 1, -1, -1):
            if is_reference_heading(lines[j]):
                before = "\n".join(lines[:j]).strip()
                body = paragraphs[:i] + ([paragraphs[i].model_copy(update={"text": before})] if before else [])
                rest = "\n".join(lines[j + 1:])
                return body, "\n".join([rest] + [_entry_lines(p.text) for p in paragraphs[i + 1:]])
    return paragraphs, ""


def _entry_lines(text: str) -> str:
    """A paragraph of the list: if it holds one entry from its first line on, one line, so
    wrapped lines stay one. (A paragraph that starts with the end of the entry before, cut by
    a page or column break, keeps its lines.)"""
    lines = text.splitlines()
    starts = [bool(_AUTHOR_YEAR_START.match(l) or _NUMERIC_ENTRY.match(l) or _DOTTED_ENTRY.match(l)
                   or _PAREN_NUMBER_ENTRY.match(l) or _looks_whole(l) or _SAME_AUTHORS_ENTRY.match(l)
                   or _corporate_start(l) or _NAMES_COLON_START.match(l))
              for l in lines]
    return " ".join(lines) if sum(starts) == 0 or (sum(starts) == 1 and starts[0]) else text


# --- reference list ---------------------------------------------------------


# An entry by the authors of the entry before: "———. 2019. Title." (Chicago), "Ders.: Titel" (German).
_SAME_AUTHORS_ENTRY = re.compile(r"^\s*(?:[—–_-]\s*){2,}\.?,?\s*|^\s*(?:Ders|Dies|Dieselbe|Derselbe|Dieselben)\.\s*")


def _same_authors(refs: list[Reference]) -> list[Reference]:
    out: list[Reference] = []
    for ref in refs:
        if out and _SAME_AUTHORS_ENTRY.match(ref.raw) and out[-1].authors:
            before = out[-1]
            ref = ref.model_copy(update={"authors": before.authors, "aliases": before.aliases,
                                         "key": f"{_name_key(before.authors[0])}{ref.year or ''}"})
        out.append(ref)
    return out


def _numeric_references(section: str, pattern: re.Pattern) -> list[Reference]:
    parts = pattern.split(section)
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
    """Group wrapped lines into entries: a new entry starts with "Surname, X." once the
    entry before is complete (it carries its publication year); a line holding a whole
    entry (one paragraph) is one. A line indented deeper than its entry's first line (a
    hanging indent) continues that entry."""
    entries: list[str] = []
    indent = 0
    lines = [line for line in section.splitlines() if line.strip() and not _PAGE_NUMBER_LINE.match(line)]
    # A list whose entries mostly put the year right after the names (APA, Harvard): there
    # a line starting "Berlin, Springer." continues an entry; only a line with names and
    # year, or with names alone (a long author list wrapped), starts one.
    year_first = sum(_looks_whole(line) for line in lines) >= max(2, len(lines) // 4)
    for line in lines:
        depth = len(line) - len(line.lstrip())
        complete = not entries or _complete(entries[-1])
        starts_entry = depth <= indent or not entries
        starts_entry = starts_entry and (bool(_AUTHOR_YEAR_START.match(line) or _SAME_AUTHORS_ENTRY.match(line))
                                         or _corporate_start(line) or (complete and _undated_whole(line)) or (
            bool(_YEAR_IN_TEXT.search(line)) and len(line.split()) >= 6 and bool(re.match(r"\s*[A-ZÄÖÜ]", line))
            and complete and _looks_whole(line)))
        if starts_entry and year_first and not (_looks_whole(line) or _SAME_AUTHORS_ENTRY.match(line)
                                                or _NAMES_COLON_START.match(line) or _corporate_start(line)
                                                or (complete and _FULL_NAME_START.match(line)
                                                    and _YEAR_IN_TEXT.search(line))):
            starts_entry = (not _YEAR_IN_TEXT.search(line) and re.search(r"(?:[,&]|\b(?:and|und))\s*$", line)
                            is not None and _names_only(line))
        if starts_entry and complete:
            entries.append(line.strip())
            indent = depth
        elif entries:
            entries[-1] += " " + line.strip()
        else:
            entries.append(line.strip())
            indent = depth
    return [_squash(e) for e in entries]


# "Lafleur, Marianne. \"Title.\" Journal, 2020": an MLA or Chicago entry (a given name written
# out, a full stop) among APA ones, its year at the end.
_FULL_NAME_START = re.compile(r"^\s*[A-ZÄÖÜ][\w'’-]+(?:[\s-][A-ZÄÖÜ][\w'’-]+)?,\s+[A-ZÄÖÜ][a-zäöüß]{2,}"
                              r"(?:\s+[A-ZÄÖÜ]\.)?(?:,?\s+(?:and|und)\s+[^.]{3,60})?\.\s+\S")

# "Hartung, Klaus: Titel …", "Brandt, Ilse (Hg.): …" — German entries, the year at the end.
_NAMES_COLON_START = re.compile(
    r"^\s*[A-ZÄÖÜ][\w'’-]+(?:\s+[A-ZÄÖÜ][\w'’-]+)?,\s+(?:[A-ZÄÖÜ][\w'’-]+|[A-ZÄÖÜ]\.)(?:[\s-]+(?:[A-ZÄÖÜ][\w'’-]+|[A-ZÄÖÜ]\.))*"
    r"(?:\s*(?:/|;|u\.|und)\s*[A-ZÄÖÜ][^:]{0,80})?(?:\s*\((?:Hg|Hrsg|Ed|Eds)\.\))?:\s")


def _complete(entry: str) -> bool:
    """An entry carries its publication year (a year of a range in a title does not count)
    and ends like one: a full stop, a bracket, a number, a DOI or a link (not "Inflation 1923,")."""
    if not re.search(r"(?:[.)\]]|\d|https?://\S+|doi:\s*\S+)\s*$", entry):
        return False
    plain = re.sub(r"(?i)(?:https?://|doi:\s*)\S+", " ", entry)
    return _publication_year(plain)[0] is not None


def _corporate_start(line: str) -> bool:
    """"World Health Organization (WHO): Guidelines …", "Statistisches Bundesamt (Hg.): …":
    a body's name, a colon and a title (a place and its publisher, "Frankfurt am Main:
    Campus 2009.", is too short to be one)."""
    head, colon, rest = line.strip().partition(": ")
    if not colon and line.rstrip().endswith(":"):
        # the title wrapped to the next line: "LAWINENWARNDIENST ALPENLAND (Hrsg.):" — a body
        # named as editor, or in DIN's capitals, is no place
        head = line.strip()[:-1]
        return len(head) < 120 and (re.search(r"\((?:Hrsg|Hg|Ed|Eds)\.\)\s*$", head) is not None
                                    or (head.isupper() and len(head.split()) >= 2)) and _names_only(head)
    return bool(colon) and len(head) < 120 and re.match(r"[A-ZÄÖÜ]", head) is not None \
        and (len(head.split()) >= 2 or re.search(r"[\[(]", head) is not None) \
        and len(rest.split()) >= 4 and _names_only(head)


_PAGE_NUMBER_LINE = re.compile(r"^\s*\d{1,4}\s*$")
_UNDATED_END = re.compile(r"(?:\bo\.\s?J\.|\bn\.\s?d\.|\bohne\s+Jahr)\s*\.?\s*$", re.I)


def _undated_whole(line: str) -> bool:
    """An undated entry on one line whose author is a body ("Stadtbibliothek Lindenau.
    Jahresbericht 2022. Lindenau, o. J."): names, a full stop, and an undated end."""
    head = line.strip().split(". ", 1)[0]
    return bool(_UNDATED_END.search(line)) and re.match(r"[A-ZÄÖÜ]", head) is not None \
        and len(head.split()) <= 8 and _names_only(head)


def _looks_whole(line: str) -> bool:
    """A corporate-author entry on one line: "World Health Organization (WHO). (2020). Title. …"."""
    if not re.match(r"\s*[A-ZÄÖÜ]", line):
        return False
    year, after_names = _publication_year(line)
    return after_names and year is not None and year.start() < 200


def _reference(entry: str) -> Reference:
    """Author(s), publication year, title and DOI of one entry, in any common style.

    The publication year is the one right after the names (APA, Harvard, author-date:
    ``Smith, J. (2019).``, ``Smith, John. 2019.``); otherwise the last year of the entry
    (after the place in German humanities entries, ``Leipzig 2015``; at the end in IEEE,
    MLA and notes-bibliography entries), never a year of a range (``1918–1933``), a year
    inside a quoted title, a page or volume number, or an access date.
    """
    doi = find_doi(entry)
    plain = _DOI_IN_TEXT.sub(" ", re.sub(r"(?i)(?:https?://|doi:\s*)\S+", " ", entry))
    year_match, author_date = _publication_year(plain)
    year = _year(year_match.group(1)) if year_match else None
    segment = plain[: year_match.start()] if author_date else plain[: _author_end(plain, year_match)]
    authors = _surnames(segment)
    key = f"{_name_key(authors[0]) if authors else 'anon'}{year or ''}"
    return Reference(key=key, authors=authors, aliases=_aliases(segment, authors), year=year,
                     title=_title(plain, year_match, author_date), doi=doi, raw=entry)


_PUB_YEAR = re.compile(rf"(?<![\w./–—-])\(?({_YEAR})(?![\w/]|\s*[–—-]\s*\d)\)?")
# A page, volume or issue number, or an access date, is no publication year. ("S." and
# "p." are left out: before a year they are far more often initials than pages.)
_NOT_PUB_BEFORE = re.compile(
    r"(?:\b(?:pp|[Vv]ol|Bd|Nr|[Nn]o|Heft|Jg|Jahrg|ISBN|ISSN)\.?\s*"
    r"|(?i:\b(?:accessed|retrieved|cited|viewed|zugriff|zugegriffen|abgerufen|aufgerufen|zuletzt"
    r"|stand\s*(?::|vom\b|am\b)))[^;]{0,30})$")
_ABBREVIATIONS = frozenset("al hg hrsg ed eds jr sr co inc ltd red bearb mitarb übers trans dr prof st".split())
_NAME_WORDS = frozenset("""and und & et al of for the für de da di du la le van von der den zu ten ter y e on in
    u a hg hrsg ed eds""".split())


def _publication_year(plain: str) -> tuple[re.Match | None, bool]:
    """(the publication year's match, whether it stands right after the names)."""
    quoted = [m.span() for m in re.finditer(r"[\"“„][^\"“”„]{3,300}[\"”“]", plain)]
    candidates = [m for m in _PUB_YEAR.finditer(plain)
                  if not any(a <= m.start() < b for a, b in quoted)
                  and not _NOT_PUB_BEFORE.search(plain[max(0, m.start() - 40):m.start()])]
    if not candidates:
        return None, False
    if _only_names_before(plain, candidates[0]):
        return candidates[0], True
    return candidates[-1], False


def _only_names_before(plain: str, year: re.Match) -> bool:
    """True if only author names stand before `year` ("Smith, J., & Lee, K. (2019)",
    "World Health Organization (WHO). 2019."), not a title or a place."""
    before = plain[: year.start()]
    paren = year.group(0).startswith("(")
    core = before.rstrip()
    separated = paren or core.endswith((".", ",", ")", "]"))
    colon_after = plain[year.end():year.end() + 2].lstrip().startswith(":")
    if not separated and not colon_after and ("," in core.rstrip(".,") or len(core.split()) > 6):
        return False
    return _names_only(core)


def _names_only(text: str) -> bool:
    """True if `text` holds author names and nothing else: no title, place or publisher."""
    core = text.strip().rstrip(".,&").strip()
    if not core or len(core) > 250 or re.search(r"[:\"“„”?!]", core):
        return False
    for word in re.finditer(r"([\w'’-]+)\.\s", core + " "):
        if len(word.group(1)) >= 2 and word.group(1).casefold() not in _ABBREVIATIONS:
            return False  # "Hartung, Klaus. Die Krise 1923" — a title after the names
    lower = [w for w in re.findall(r"[\w'’-]+", core) if w[0].islower() and w.casefold() not in _NAME_WORDS]
    return len(lower) <= 2


def _author_end(plain: str, year_match: re.Match | None) -> int:
    """Where the names of an entry end when the year does not follow them: at a quoted
    title (IEEE, MLA), a colon (German ``Hartung, Klaus: Titel``), or the first full stop
    after a name that is no initial (``Smith, John. Title.``)."""
    ends = [year_match.start()] if year_match else [min(len(plain), 120)]
    quote = re.search(r"[\"“„]", plain)
    if quote:
        ends.append(quote.start())
    colon = re.search(r":\s", plain)
    if colon:
        ends.append(colon.start())
    for stop in re.finditer(r"([\w'’-]+)\.(?=\s)", plain):
        word = stop.group(1)
        if len(word) >= 2 and word.casefold() not in _ABBREVIATIONS and not word.isupper():
            ends.append(stop.start(1) + len(word))
            break
    return min(ends)


def _year(text: str) -> str:
    """"2019a" stays; every spelling of "no date" (n.d., o. J.) is "n.d."."""
    text = text.strip("() ")
    if re.fullmatch(_IN_PRESS, text):
        return "in press"
    return "n.d." if re.fullmatch(_NO_DATE, text) else text


_GIVEN = re.compile(r"(?:[A-ZÄÖÜ][\w'’-]+|[A-ZÄÖÜ]\.(?:-[A-ZÄÖÜ]\.)?)"
                    r"(?:\s+(?:[A-ZÄÖÜ][\w'’-]+|[A-ZÄÖÜ]\.(?:-[A-ZÄÖÜ]\.)?|van|von|de|der|den|da|di|du|le|la|zu|ten|ter))*")
_EDITOR = re.compile(r"\((?:Hg|Hrsg|eds?|Eds?|Red)\.?\)|,?\s*\b(?:Hg|Hrsg|eds?|Eds?)\.(?=\s|$|[,:;])")


def _surnames(segment: str) -> list[str]:
    names = [m.group(1) for m in _SURNAME_INITIALS.finditer(segment)]
    if not names:
        names = _vancouver_names(segment)
    if not names:
        names = [m.group(1) for m in _INITIALS_SURNAME.finditer(segment)]
    if not names:
        names = _full_names(segment)
    if not names:
        names = _corporate_name(segment)
    return [_strip_particles(n) for n in names]


def _full_names(segment: str) -> list[str]:
    """Given names written out: "Smith, John, and Kim Lee" (MLA, Chicago), "Seidel,
    Otto/Winter, Paula" or "Hartung, Klaus (Hg.)" (German)."""
    cleaned = _EDITOR.sub(" ", segment)
    cleaned = re.sub(r"\s+(?:et\s+al\.?|u\.\s?a\.)", " ", cleaned)
    parts = [p.strip(" .") for p in re.split(r"\s*[,;/]\s*(?:(?:and|und|&)\s+)?|\s+(?:and|und|&)\s+", cleaned)]
    parts = [p for p in parts if p]
    if len(parts) < 2 or not re.fullmatch(_NAME, parts[0]) or not _GIVEN.fullmatch(parts[1]):
        return []
    names, i = [parts[0]], 2
    while i < len(parts):
        part = parts[i]
        if re.fullmatch(_NAME, part) and i + 1 < len(parts) and _GIVEN.fullmatch(parts[i + 1]) \
                and len(parts[i + 1].split()) == 1:
            names.append(part)  # "Winter, Paula"
            i += 2
        elif _GIVEN.fullmatch(part) and len(part.split()) >= 2:
            names.append(part.split()[-1])  # "Kim Lee"
            i += 1
        else:
            break
    return names


def _corporate_name(segment: str) -> list[str]:
    """A body as author: "World Health Organization (WHO)", "Deutsches Institut für
    Wirtschaftsforschung [DIW]", "OECD" — the whole name, without its abbreviation."""
    text = re.sub(r"\s*[\[(][^\])]{1,20}[\])]", " ", segment).strip(" .,(")
    whole = re.fullmatch(rf"{_NAME}(?:\s+(?:{_WORD}|of|for|and|on|the|für|und|des|der|die|de|du|la))*", _squash(text))
    if whole and len(whole.group(0).split()) <= 10:
        return [whole.group(0)]
    first = re.search(_LONG_NAME + r"(?=[\s.,(]|$)", segment.strip(" .,("))
    return [first.group(0)] if first else []


def _aliases(segment: str, authors: list[str]) -> list[str]:
    """Other names of a corporate first author: its abbreviation as written ("(WHO)",
    "[DIW]") and the one its capitals spell ("Organisation for Economic Co-operation and
    Development" → "OECD")."""
    if not authors or len(authors[0].split()) < 2:
        return []
    out = [m.group(1) for m in re.finditer(r"[\[(]([A-ZÄÖÜ][\wÄÖÜäöü&-]{1,15})[\])]", segment)
           if not re.fullmatch(r"(?:Hg|Hrsg|Eds?|Red)", m.group(1))]
    acronym = _acronym(authors[0])
    if acronym and acronym not in out:
        out.append(acronym)
    return out


def _acronym(name: str) -> str | None:
    """The capitals of a name of several words: "World Health Organization" → "WHO"."""
    words = name.split()
    if len(words) < 2:
        return None
    letters = "".join(piece[0] for w in words for piece in w.split("-") if piece and piece[0].isupper())
    return letters if len(letters) >= 2 else None


def _vancouver_names(segment: str) -> list[str]:
    """Vancouver: "Castillo R, Feld AB, Moreau J. Title. …" (initials without dots)."""
    head = segment.split(". ")[0]
    if not _VANCOUVER.match(head):
        return []
    return [m.group(1) for m in _VANCOUVER_NAME.finditer(head)]


def _title(entry: str, year_match: re.Match | None, author_date: bool) -> str | None:
    quoted = re.search(r"[\"“„](.{6,300}?)[,.]?[\"”“]", entry)
    if quoted:
        return quoted.group(1).strip(" ,.")
    # Harvard's single quotes: "(2021) 'Title', Journal"; an apostrophe inside a word
    # ("Children's") is followed by a letter, so it ends no title.
    quoted = re.search(r"(?:^|(?<=[\s(]))['‘](?=\S)(.{6,300}?)[,.]?['’](?=[,.;:]?(?:\s|$))", entry)
    if quoted:
        return quoted.group(1).strip(" ,.")
    if _VANCOUVER.match(entry.split(". ")[0]) and entry.count(". ") >= 1:
        return entry.split(". ")[1].strip(" .") or None
    if author_date and year_match is not None:
        after = entry[year_match.end():]
        if year_match.group(0).startswith("(") and not year_match.group(0).endswith(")"):
            after = after[after.find(")") + 1:] if ")" in after[:40] else after  # "(2019, March 3)"
        after = _TITLE_TAIL.split(after.lstrip(" ).,:"))[0]
        # The title runs to the first full stop that is followed by a capital (the venue).
        end = re.search(r"[.?!](?=\s+[A-ZÄÖÜ]|\s*$)", after)
        return after[: end.start() if end else len(after)].strip() or None
    start = _author_end(entry, year_match)
    if year_match is not None and year_match.start() <= start:
        return None
    region = entry[start:year_match.start() if year_match else len(entry)].lstrip(" .:,")
    region = _TITLE_TAIL.split(region)[0]
    end = re.search(r"[.?!](?=\s+[A-ZÄÖÜ])", region)
    if end:
        title = region[: end.start()]
    elif year_match is not None and "," in region:
        title = region[: region.rfind(",")]  # "Titel, Leipzig 2015", "Titel, Frankfurt: Campus 2009"
    else:
        title = region
    title = title.strip(" .,:")
    return title or None


# What follows a title: a collection it appears in ("Titel, in: Sammelband"), its editor
# or translator ("hg. v.", "edited by"), its edition ("5. Aufl.", "2nd ed.").
_TITLE_TAIL = re.compile(
    r"[,.]\s+(?:in|In)\s*:\s|[,.]\s+(?:hg\.|hrsg\.|Hg\.|Hrsg\.|ed\.\s+by|edited\s+by|übers\.|trans\.|translated\s+by)\s"
    r"|[,.]?\s*\d+\.?\s*(?:(?:überarb|erw|aktual|neu\s+bearb)\.?\s*(?:und\s+)?)*(?:Aufl(?:age)?\.?|Ed\.|ed\.|edn\.?)(?=\s|,|$)"
    r"|[,.]?\s*\d+(?:st|nd|rd|th)\s+(?:ed|edn|edition)\b")


def find_doi(text: str) -> str | None:
    """The first DOI written in ``text`` (bare, ``doi:`` or a doi.org link), trailing punctuation off."""
    match = _DOI_IN_TEXT.search(text)
    return match.group(0).rstrip(".,;)]>") if match else None


# --- markers in the body ----------------------------------------------------


class _Marker(BaseModel):
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


def _find_markers(text: str, numeric_style: bool, footnotes: dict[str, str],
                  known: frozenset[str] | set[str] = frozenset()) -> list[tuple[int, _Marker]]:
    found = _parenthetical(text) + _narrative(text, known) + _footnote_marks(text, footnotes, numeric_style, known)
    if numeric_style:
        found += _numeric(text)
    return sorted(found, key=lambda item: item[0])


def _parenthetical(text: str) -> list[tuple[int, _Marker]]:
    found = []
    for group in _PAREN_GROUP.finditer(text):
        offset = group.start(1)
        inner = group.group(1)
        secondary = _CITED_IN.search(inner)
        if secondary:  # the reader read the citing work, and only it is in the list
            offset, inner = offset + secondary.end(), inner[secondary.end():]
        for part in re.finditer(r"[^;]+", inner):
            found += _items(part.group(0), offset + part.start(), group.span(), "parenthetical")
    return found


def _items(part: str, offset: int, span: tuple[int, int], kind: str) -> list[tuple[int, _Marker]]:
    """The citations of one ``;``-separated item: a work (maybe several years) or ebd./ibid."""
    stripped = part.strip()
    ibid = _IBID.fullmatch(re.sub(rf"(?i)^{_PREFIX}", "", stripped))
    if ibid:
        pos = offset + part.index(ibid.group("marker"))
        return [(pos, _Marker(text=_squash(ibid["marker"]), kind="ibid", group=span, locator=ibid["locator"]))]
    item = _PAREN_ITEM.fullmatch(stripped) or _PAREN_ITEM.fullmatch(stripped.rstrip("."))
    if item is None or item["authors"].split()[0] in _NOT_AUTHORS:
        return []
    pos = offset + part.index(item.group("marker"))
    if re.fullmatch(_SAME_WORK, item["years"].strip()):
        return [(pos, _Marker(text=_squash(item["marker"]), kind=kind, group=span,
                              authors=_cited_names(item["authors"]), et_al=_et_al(item), locator=item["locator"],
                              short_title=""))]
    return [(pos, _Marker(text=text, kind=kind, group=span, authors=_cited_names(item["authors"]),
                          et_al=_et_al(item), year=_year(year), locator=item["locator"]))
            for year, text in _split_years(item)]


_NAME_BEFORE = re.compile(rf"(?:(?<=\s)|^)(?:(?:{_WORD}|of|for|on|and|für|und|des)\s+){{1,6}}$")


def _narrative(text: str, known: frozenset[str] | set[str] = frozenset()) -> list[tuple[int, _Marker]]:
    found = []
    for match in _NARRATIVE.finditer(text):
        start, names = match.start(), match["authors"]
        before = _NAME_BEFORE.search(text[:start])
        if before:  # a corporate author of the list: "the World Health Organization (2019) reports"
            words = text[before.start():start].split()
            for i in range(len(words)):
                if _name_key(" ".join(words[i:] + [names])) in known:
                    start = start - len(" ".join(words[i:])) - 1
                    names = " ".join(words[i:] + [names])
                    break
        if names.split()[0] in _NOT_AUTHORS:
            continue
        authors, et_al = _cited_names(names), _et_al(match)
        if re.fullmatch(_SAME_WORK, match["years"].strip()):
            found.append((start, _Marker(text=_squash(text[start:match.end()]), kind="narrative",
                                         group=(start, match.end()), authors=authors, et_al=et_al,
                                         locator=match["locator"], short_title="")))
            continue
        years = _year_list(match["years"])
        for year in years:
            literal = text[start:match.end()] if len(years) == 1 else f"{names} ({year})"
            marker = _Marker(text=_squash(literal), kind="narrative", group=(start, match.end()), authors=authors,
                             et_al=et_al, year=_year(year), locator=match["locator"])
            found.append((start, marker))
    return found


def _numeric(text: str) -> list[tuple[int, _Marker]]:
    # Brackets side by side ("[1], [4]", "[2]; [7]") are one group: the claim before them
    # is every one's, and the separator between them is no claim of its own.
    runs: list[list[re.Match]] = []
    for match in _NUMERIC.finditer(text):
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
                found.append((group[0], _Marker(text=f"[{number}]", kind="numeric", group=group,
                                                number=number, locator=match["locator"])))
    return found


def _footnote_marks(text: str, footnotes: dict[str, str], numeric_style: bool,
                    known: frozenset[str] | set[str] = frozenset()) -> list[tuple[int, _Marker]]:
    """A footnote mark cites what its footnote holds: author–year items, a full reference, ebd.
    A raised number without a footnote, in a thesis with a numbered list, is a numeric
    citation set in superscript (Vancouver)."""
    found = []
    for mark in FOOTNOTE_MARK.finditer(text):
        note = footnotes.get(mark.group(1))
        if not note:
            if numeric_style and re.fullmatch(rf"{_NUM_ITEM}(?:,{_NUM_ITEM})*", mark.group(1)):
                found += [(mark.start(), _Marker(text=f"[{n}]", kind="numeric", group=mark.span(), number=n))
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
    rf"^(?:{_GIVEN_WORD}\s+){{1,3}}(?P<surname>{_NAME})"
    rf"(?:,?\s+(?:and|&|und)\s+(?:{_GIVEN_WORD}\s+){{1,3}}{_NAME})?,\s+\S")
_NO_TITLE = r"(?:a\.\s?a\.\s?O\.?|op\.\s?cit\.?|loc\.\s?cit\.?)"
# A short title instead of a year: "Hartung, Mieterschutz, S. 118", "Miller, Tenants and
# Courts, 50", "Hartung, a. a. O., S. 5", "Hartung: Mieterschutz (wie Anm. 3), S. 118".
_SHORT_TITLE_NOTE = re.compile(
    rf"(?P<authors>{_NAME}(?:\s*/\s*{_NAME})*(?:\s+(?:and|&|und)\s+{_NAME})?){_ET_AL}?(?:,\s*(?:[A-ZÄÖÜ]\.\s*)+)?"
    rf"(?:[,:]\s+(?!(?:S|p|pp)\.\s*\d)(?P<title>{_NO_TITLE}|[^,;()]{{2,120}}?))?"
    rf"(?:\s*\((?:wie|see|s\.|vgl\.)\s+(?:Anm|Fn|n|note)\.?[^)]*\))?"
    rf"(?:,?\s*(?P<locator>{_LOCATOR}))?\s*\.?\s*$")
_SAME_AUTHOR = "Ders."  #: the author of the citation before ("Ders.", "Dies.", "Id.")
_SAME_AUTHOR_NOTE = re.compile(r"(?:Ders|Dies|Dieselbe|Derselbe|Dieselben|Id|Idem|Eadem)\.(?=\s*,)")
_LEAD_IN = re.compile(
    r"^(?:(?:(?i:see\s+also|see|cf\.|compare|vgl\.(?:\s+auch)?|siehe(?:\s+auch)?)|e\.\s?g\.|z\.\s?B\.)\s*,?\s*"
    r"|(?!(?:ebd|ebenda|ibid|ibidem|a\.\s?a\.\s?O|op\.\s?cit)\b)[a-zäöüß][\w-]*\.?,?\s+(?=\S)){1,5}")
_NOTE_LOCATOR = re.compile(
    r"(?:,\s*(?P<page>(?:S|p|pp)\.\s*\d+(?:\s*[–-]\s*\d+)?(?:\s*ff?\.?)?)"
    r"|\),?\s*(?P<bare>\d{1,4}(?:\s*[–-]\s*\d{1,4})?))\s*\.?\s*$")


def _footnote_items(part: str, span: tuple[int, int], known: frozenset[str] | set[str] = frozenset()) -> list[_Marker]:
    """The citations one ``;``-separated part of a footnote holds: ebd./ibid.; a full
    reference ("Hartung, Klaus: Titel, Leipzig 2015, S. 112", "Sarah Miller, Title (Oxford:
    Clarendon, 2012), 45"); an author–year; or a short title of a work by an author of the
    list ("Hartung, Mieterschutz, S. 118")."""
    stripped = re.sub(rf"(?i)^\s*{_PREFIX}", "", part.strip()).strip()
    stripped = re.sub(r"(?<=\d)\s*\.$", "", stripped)  # "Ibid., 47." / "S. 112."
    ibid = _IBID.match(stripped)
    if ibid and re.fullmatch(r"[\s.,]*", stripped[ibid.end():]):
        return [_Marker(text=_squash(ibid["marker"]), kind="ibid", group=span, locator=ibid["locator"])]
    stripped = _LEAD_IN.sub("", stripped)  # "Vgl. hierzu ausführlich Hartung …", "See, e.g., Smith …"
    lead = re.match(r"([A-ZÄÖÜ][\w-]*),?\s+(?=([A-ZÄÖÜ][\w'’-]+))", stripped)
    if lead and _name_key(lead.group(1)) not in known and _name_key(lead.group(2)) in known \
            and not _FIRST_LAST_NOTE.match(stripped):  # "Ilari Kettunen, Title": a given name
        stripped = stripped[lead.end():]  # "Anders Hartung 2015", "Ähnlich Brandt 2009"
    same = _SAME_AUTHOR_NOTE.match(stripped)
    if same:  # "Ders., Kündigungsschutz, S. 5": the author of the note before, another work
        items = _short_title_item("Same" + stripped[same.end():], span, {"same"})
        return [m.model_copy(update={"authors": [_SAME_AUTHOR], "text": _squash(same.group(0) + m.text[4:])})
                for m in items]
    located = _NOTE_LOCATOR.search(stripped)
    locator = (located["page"] or located["bare"]) if located else None
    first_last = _FIRST_LAST_NOTE.match(stripped)
    if first_last and _name_key(_strip_particles(first_last["surname"])) in known:
        year, _ = _publication_year(stripped)
        if year is not None:
            surname = _strip_particles(first_last["surname"])
            return [_Marker(text=_squash(f"{surname} {_year(year.group(1))}"), kind="footnote", group=span,
                            authors=[surname], year=_year(year.group(1)), locator=locator)]
    if _AUTHOR_YEAR_START.match(stripped) and _YEAR_IN_TEXT.search(stripped) and len(stripped.split()) > 5:
        ref = _reference(stripped)  # a full reference: "Müller, A. (2019). Title. Journal."
        if ref.authors and ref.year:
            return [_Marker(text=_squash(f"{ref.authors[0]} {ref.year}"), kind="footnote", group=span,
                            authors=ref.authors, year=ref.year, reference=ref, locator=locator)]
    item = re.match(
        rf"(?P<marker>(?P<authors>{_AUTHORS}),?\s+\(?(?P<years>{_YEARS})\)?"
        rf"(?:,?\s*(?P<locator>{_LOCATOR}))?)", stripped)
    if item is None:  # a short title between name and year: "Müller, Hitze in Städten, 2019, S. 12"
        item = re.match(rf"(?P<marker>(?P<authors>{_NAME}(?:\s*/\s*{_NAME})*){_ET_AL}?,\s+[^;]{{1,120}}?"
                        rf"(?<![–—-])(?<![–—-]\s)\b(?P<years>{_YEAR})(?!\s*[–—-]\s*\d)(?:,?\s*(?P<locator>{_LOCATOR}))?)",
                        stripped)
    if item is None:
        ref = _reference(stripped)  # any full reference by an author of the list, corporate ones too
        if ref.authors and ref.year and _name_key(ref.authors[0]) in known:
            return [_Marker(text=_squash(f"{ref.authors[0]} {ref.year}"), kind="footnote", group=span,
                            authors=ref.authors, year=ref.year, reference=ref, locator=locator)]
        return _short_title_item(stripped, span, known)
    if item["authors"].split()[0] in _NOT_AUTHORS:
        return []
    return [_Marker(text=text, kind="footnote", group=span, authors=_cited_names(item["authors"]), et_al=_et_al(item),
                    year=_year(year), locator=item["locator"]) for year, text in _split_years(item)]


def _short_title_item(note: str, span: tuple[int, int], known: frozenset[str] | set[str]) -> list[_Marker]:
    """"Hartung, Mieterschutz, S. 118": only for an author of the reference list, so a
    remark that happens to start with a name is no citation. A quoted short title may
    hold the comma that ends it (Chicago: 'Miller, "Tenants," 50')."""
    printed = note
    note = re.sub(r"([,.])([\"”’])(?=\s)", r"\2\1", note)  # same length: spans hold for both
    item = _SHORT_TITLE_NOTE.match(note)
    if item is None or item["authors"].split()[0] in _NOT_AUTHORS:
        return []
    authors = _cited_names(item["authors"])
    if not authors or _name_key(authors[0]) not in known:
        return []
    written = (item["title"] or "").strip()
    title = "" if not written or re.fullmatch(_NO_TITLE, written) else written.strip(" .\"“”„‘’'")
    text = _squash(printed[: item.end("locator")] if item["locator"] else printed).rstrip(" .")
    return [_Marker(text=text, kind="footnote", group=span, authors=authors, et_al=_et_al(item),
                    short_title=title, locator=item["locator"])]


def _ibid(marker: _Marker, previous: _Marker | None) -> _Marker:
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
    authors = _squash(item["authors"])
    first = (years[0], _squash(item["marker"])) if len(years) == 1 else (years[0], f"{authors}, {years[0]}")
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
    parts = re.split(r",|/|\s&\s|\sand\s|\sund\s", _squash(authors))
    return [_strip_particles(n.strip()) for n in parts if n.strip()]


def _by_sentence(text: str, found: list[tuple[int, _Marker]]):
    """Group markers by the sentence that contains them, in reading order."""
    spans = sentence_spans(text)
    grouped: dict[tuple[int, int], list[tuple[int, _Marker]]] = {}
    for offset, marker in found:
        span = next((s for s in spans if s[0] <= offset < s[1]), None)
        if span is None:  # a mark after the sentence's full stop ("… rose.[^3]")
            span = next((s for s in reversed(spans) if s[0] <= offset), (offset, offset + len(marker.text)))
        if span[1] < marker.group[1]:
            span = (span[0], marker.group[1])
        grouped.setdefault(span, []).append((offset, marker))
    return sorted(grouped.items())


# --- claims ------------------------------------------------------------------


def _clauses(sentence: str, origin: int, markers: list[_Marker]) -> dict[tuple[int, int], str]:
    """The claim of each marker group of one sentence (which starts at `origin` of its
    paragraph), keyed by the group's span in the paragraph.

    A sentence is cut between groups only at a clause boundary: after a parenthetical (or
    numeric, or footnote) group that a comma, a semicolon or "whereas"/"während" follows,
    and before a narrative group that such a boundary precedes. A group owns the clause
    it falls in; without boundaries every group shares the whole sentence.
    """
    local: dict[tuple[int, int], _Marker] = {}
    for marker in markers:
        span = (max(0, marker.group[0] - origin), min(len(sentence), marker.group[1] - origin))
        local.setdefault(span, marker)
    cuts = {0, len(sentence)}
    ordered = sorted(local)
    for (start, end), (next_start, _) in zip(ordered, ordered[1:]):
        between = sentence[end:next_start]
        if local[(start, end)].kind != "narrative" and _SPLIT_AFTER.match(between):
            cuts.add(end)  # "X rose (A, 2020), whereas Y fell (B, 2019)"
        elif local[(next_start, _)].kind == "narrative" and _BOUNDARY_BEFORE.search(between):
            cuts.add(end + _BOUNDARY_BEFORE.search(between).start())  # "…, whereas Nakamura (2020) found …"
        else:
            inner = _BOUNDARY_INSIDE.search(between)
            if inner:  # "Nakamura (2020) found X, whereas Y fell (Lee, 2019)"
                cuts.add(end + inner.start())
    bounds = sorted(cuts)
    segments = list(zip(bounds, bounds[1:]))
    claims: dict[tuple[int, int], str] = {}
    for span, marker in local.items():
        seg = next((s for s in segments if s[0] <= span[0] < s[1]), (0, len(sentence)))
        inside = {(a - seg[0], b - seg[0]): m for (a, b), m in local.items() if seg[0] <= a < seg[1]}
        claims[marker.group] = _claim(sentence[seg[0]:seg[1]], inside)
    for marker in markers:
        claims.setdefault(marker.group, claims[next(iter(claims))] if claims else _claim(sentence, {}))
    return claims


def _claim(segment: str, groups: dict[tuple[int, int], _Marker]) -> str:
    """A clause with its markers removed and a narrative frame dropped or reduced to the name."""
    out = segment
    for (start, end), marker in sorted(groups.items(), reverse=True):
        if marker.kind == "narrative":
            before, after = out[:start], out[end:]
            frame = _FRAME_BEFORE.search(before)
            zufolge = _FRAME_ZUFOLGE.match(after)
            reporting = _FRAME_AFTER.match(after)
            if frame:
                out = before[: frame.start()] + re.sub(r"^\s*,", "", after)
            elif zufolge:
                out = before + after[zufolge.end():]
            elif reporting:
                out = before + after[reporting.end():]
            else:
                names = _squash(re.sub(r"\s*\(.*$", "", out[start:end]))  # "Castillo's (2018)" -> "Castillo's"
                out = before + names + after
        else:
            out = out[:start] + out[end:]
    out = FOOTNOTE_MARK.sub("", out)
    out = _squash(out)
    out = re.sub(r"\s+([,.;:!?])", r"\1", out).replace("()", "").replace("[]", "")
    out = _LEADING_CONNECTOR.sub("", out).strip()
    out = re.sub(r"[,;:\s]+$", "", out)
    if out and not re.search(r"[.!?]$", out):
        out += "."
    return out


# --- resolving markers to the reference list ---------------------------------


def _resolve(marker: _Marker, references: list[Reference]) -> tuple[Reference | None, str | None]:
    label = _marker_label(marker)
    if marker.kind == "ibid" and marker.reference is not None:  # the work the citation before resolved to
        return marker.reference, None
    if marker.authors and marker.year is None and marker.short_title is not None:
        return _resolve_short_title(marker, references, label)
    if marker.number is not None:
        ref = next((r for r in references if r.number == marker.number), None)
        return ref, None if ref else f"no reference entry for '{label}'"
    if not marker.authors or marker.year is None:
        return None, "ebd./ibid. without a citation before it" if marker.kind == "ibid" else \
            f"no reference entry for '{label}'"
    candidates = [r for r in references if _names_fit(marker.authors[0], r) and _same_year(marker.year, r.year)]
    words = marker.authors[0].split()
    for i in range(1, len(words)):  # a word before the name: "Anders Hartung 2015", "Ähnlich Brandt 2009"
        if candidates:
            break
        candidates = [r for r in references
                      if _names_fit(" ".join(words[i:]), r) and _same_year(marker.year, r.year)]
    if not candidates:
        if marker.reference is not None:  # the footnote wrote the whole reference
            return marker.reference, None
        return None, f"no reference entry for '{label}'"
    scores = [(_fit(marker, r), r) for r in candidates]
    best = max(s for s, _ in scores)
    top = [r for s, r in scores if s == best]
    if len(top) > 1:
        return None, f"ambiguous: {len(top)} reference entries match '{label}'"
    return top[0], None


def _resolve_short_title(marker: _Marker, references: list[Reference],
                         label: str) -> tuple[Reference | None, str | None]:
    """The one entry of the author whose title holds the short title's words (each word
    may be shortened: "Mieterschutz Weimar"); without a short title (a. a. O.) the
    author's only entry."""
    same = [r for r in references if _names_fit(marker.authors[0], r)]
    words = _content_words(marker.short_title or "")
    if words:
        same = [r for r in same if r.title and all(
            any(t.startswith(w) for t in _content_words(r.title)) for w in words)]
    if len(same) == 1:
        return same[0], None
    if len(same) > 1:
        return None, f"ambiguous: {len(same)} reference entries match '{label}'"
    return None, f"no reference entry for '{label}'"


def _marker_label(marker: _Marker) -> str:
    if marker.number is not None:
        return f"[{marker.number}]"
    if not marker.authors:
        return marker.text
    names = marker.authors[0] + (" et al." if marker.et_al or len(marker.authors) > 2 else
                                 f" & {marker.authors[1]}" if len(marker.authors) == 2 else "")
    if marker.year is None and marker.short_title is not None:
        return f"{names}, {marker.short_title}" if marker.short_title else names
    return f"{names} {marker.year}"


def _names_fit(cited: str, ref: Reference) -> bool:
    """The cited first author is the entry's: the same surname, or a corporate author by
    its name or abbreviation ("WHO" for "World Health Organization (WHO)")."""
    if not ref.authors:
        return False
    cited_key, listed = _name_key(cited), _name_key(ref.authors[0])
    if _same_name(cited_key, listed):
        return True
    listed_forms = {_name_key(a) for a in ref.aliases}
    cited_acronym = _acronym(cited)
    if cited_acronym:
        return _name_key(cited_acronym) in listed_forms | {listed}
    return cited_key in listed_forms


def _same_name(cited: str, listed: str) -> bool:
    return cited == listed or cited.startswith(listed + " ") or listed.startswith(cited + " ")


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
    return cited[:4] == listed[:4] and cited[:2].isdigit() and (len(cited) == 4 or len(listed) == 4)


# --- sources ----------------------------------------------------------------


#: Where a source's own title stands: its first lines (a title of two lines, a subtitle,
#: a byline or a journal line before it), within its first characters, before its prose.
_TITLE_PAGE_TOP, _TITLE_LINES, _TITLE_LINE_WORDS = 1000, 4, 20


class _PreparedSource:
    """A source's first pages and metadata, normalised once for all references."""

    def __init__(self, source: SourceInfo) -> None:
        self.id = source.id
        self.head = source.text[:8000]
        # Names and years inside citations ("(Okafor, 2021)", "Abel (2020) showed") are
        # works the source cites, never its own byline.
        # Its first line is its own even when it reads like a citation: "Nicola Harrow (2022)
        # Keeping the music going ..." is a byline.
        first, _, rest = self.head.lstrip().partition("\n")
        self.own = _squash(first + " " + _without_citations(rest))
        self.names = _name_key(self.own)
        self.dois = {d.rstrip(".,;)]>").lower() for d in _DOI_IN_TEXT.findall(source.text)}
        if source.metadata.get("doi"):
            self.dois.add(source.metadata["doi"].lower())
        self.title = source.metadata.get("title", "")
        self.words = set(_content_words(self.head + " " + self.title))
        #: The words of its title page's top and of its /Title: where a title names a work.
        top = []
        for line in source.text[:_TITLE_PAGE_TOP].splitlines():
            if len(top) == _TITLE_LINES or (len(line.split()) > _TITLE_LINE_WORDS
                                             and re.search(r"\w\w[.!?](?:\s+[A-ZÄÖÜ]|\s*$)", line)):
                break  # the first line of running prose (long, with a full stop) ends the title page's top
            if line.strip():
                top.append(line)
        self.top_words = set(_content_words(" ".join(top) + " " + self.title))
        self.author = _name_key(source.metadata.get("author", ""))
        self.created_year = source.metadata.get("created_year")
        self.filename_key = _name_key(source.filename)


def _match_reference(ref: Reference, sources: list[_PreparedSource]) -> SourceMatch:
    label = ref.label
    sources = _distinct(sources)
    if ref.doi:
        hits = [s for s in sources if ref.doi.lower() in s.dois]
        if len(hits) == 1:
            return SourceMatch(source_id=hits[0].id, method="doi")
        if len(hits) > 1:
            return _ambiguous(hits, label)
    if ref.year and not ref.year[:4].isdigit():  # n.d., in press: the author and the title
        named = [s for s in sources if _author_on_page(ref, s.names, s.own) or _metadata_names(ref, s)]
        best, tied = _best_by_title(ref, named, minimum=0.5)
        if best is not None:
            return SourceMatch(source_id=best.id, method="title")
        if len(tied) > 1:
            return _ambiguous(tied, label)
    by_author = [s for s in sources if _author_year_on_page(ref, s)]
    if len(by_author) == 1:
        return SourceMatch(source_id=by_author[0].id, method="author_year")
    if len(by_author) > 1:
        best, tied = _best_by_title(ref, by_author, minimum=0.5)
        if best is not None:
            return SourceMatch(source_id=best.id, method="title")
        # A source that only mentions the author further down (citing the work itself)
        # gives way to the one whose byline, near the top, names the author.
        byline = [s for s in (tied or by_author) if _author_year_on_page(ref, s, within=_BYLINE)]
        if len(byline) == 1:
            return SourceMatch(source_id=byline[0].id, method="author_year")
        return _ambiguous(tied or by_author, label)
    by_metadata = [s for s in sources if _metadata_fits(ref, s)]
    if len(by_metadata) == 1:
        return SourceMatch(source_id=by_metadata[0].id, method="metadata")
    # By the title alone it must stand at the top of the source (its title line) or in its
    # metadata: a source on the same topic holds a title's words somewhere on its first pages.
    # And a source whose metadata names another author is another work of the same title words.
    candidates = [s for s in sources if not s.author or not ref.first_author or _metadata_names(ref, s)]
    best, tied = _best_by_title(ref, candidates, minimum=0.8, top=True)
    if best is not None:
        return SourceMatch(source_id=best.id, method="title")
    if len(tied) > 1:
        return _ambiguous(tied, label)
    if len(by_metadata) > 1:
        return _ambiguous(by_metadata, label)
    return SourceMatch(reason=f"reference found but no uploaded source matches '{label}'")


def _distinct(sources: list[_PreparedSource]) -> list[_PreparedSource]:
    """One of each set of identical uploads (same text): copies are no ambiguity."""
    seen: set[tuple] = set()
    out = []
    for source in sources:
        # Scans with the same (empty) text layer but their own metadata are different works.
        identity = (source.head, source.author, source.title, tuple(sorted(source.dois)))
        if identity not in seen:
            seen.add(identity)
            out.append(source)
    return out


def _ambiguous(sources: list[_PreparedSource], label: str) -> SourceMatch:
    return SourceMatch(reason=f"ambiguous: {len(sources)} sources match '{label}'")


def _best_by_title(ref: Reference, sources: list[_PreparedSource], *, minimum: float,
                   top: bool = False) -> tuple[_PreparedSource | None, list[_PreparedSource]]:
    """The one source whose text (with top: the top of its first page) holds the title
    clearly best, else (None, the tied ones)."""
    scored = sorted(((_title_score(ref, s, top=top), s) for s in sources), key=lambda pair: -pair[0])
    if not scored or scored[0][0] < minimum:
        return None, []
    top = [s for score, s in scored if score >= scored[0][0] - 0.05]
    return (top[0], top) if len(top) == 1 else (None, top)


_BYLINE = 600  # characters of a first page that hold title, authors and venue


def _author_year_on_page(ref: Reference, source: _PreparedSource, within: int | None = None) -> bool:
    if not ref.first_author or not ref.year or not ref.year[:4].isdigit():
        return False
    name = re.escape(_name_key(ref.first_author))
    year = ref.year[:4]
    names, own = (source.names, source.own) if within is None else (source.names[:within], source.own[:within])
    on_page = _author_on_page(ref, names, own) and re.search(rf"\b{year}\b", own)
    if within is not None:
        return bool(on_page)
    in_filename = re.search(name, source.filename_key) and year in source.filename_key
    return bool(on_page or in_filename)


def _author_on_page(ref: Reference, names: str, own: str) -> bool:
    """The first author's surname (or a corporate author's name, or its abbreviation
    written in capitals) on the page, outside citations."""
    name = r"\s+".join(re.escape(w) for w in _name_key(ref.first_author or "").split())
    if name and re.search(rf"\b{name}\b", names):
        return True
    return any(re.search(rf"\b{re.escape(alias)}\b", own) for alias in ref.aliases)


_CITATION_IN_SOURCE = re.compile(
    rf"\([^()]{{0,200}}?[A-ZÄÖÜ][\w'’-]+[^()]{{0,40}}?,?\s+(?:19|20)\d{{2}}[a-z]?\b[^()]{{0,200}}\)"
    rf"|{_NAME}{_ET_AL}?(?:\s+(?:and|&|und)\s+{_NAME})?['’]?s?\s+\((?:19|20)\d{{2}}[a-z]?[^()]{{0,20}}\)")


def _without_citations(text: str) -> str:
    return _CITATION_IN_SOURCE.sub(" ", text)


def _metadata_names(ref: Reference, source: _PreparedSource) -> bool:
    return bool(ref.first_author and source.author
                and re.search(rf"\b{re.escape(_name_key(ref.first_author))}\b", source.author))


def _metadata_fits(ref: Reference, source: _PreparedSource) -> bool:
    """The source's own /Author names the first author, and its /Title or year agrees."""
    if not ref.first_author or not source.author:
        return False
    if not re.search(rf"\b{re.escape(_name_key(ref.first_author))}\b", source.author):
        return False
    if source.title and ref.title:
        words = _content_words(ref.title)
        title_words = set(_content_words(source.title))
        if words and sum(w in title_words for w in words) / len(words) >= 0.6:
            return True
    return bool(ref.year and source.created_year and ref.year[:4] == source.created_year)


def _title_score(ref: Reference, source: _PreparedSource, *, top: bool = False) -> float:
    words = _title_words(ref)
    if len(words) < 3:
        return 0.0
    found = source.top_words if top else source.words
    return sum(w in found for w in words) / len(words)


def _title_words(ref: Reference) -> list[str]:
    """The title's content words; a title of one or two ("Mikrodepots planen. Ein Leitfaden
    für Kommunen.") takes its subtitle's, the sentence after it in the entry."""
    # APA's descriptions in brackets ("[Working paper]", "[Doctoral dissertation]") are no title.
    words = _content_words(re.sub(r"\[[^\]]{0,60}\]", " ", ref.title or ""))
    if ref.title and len(words) < 3:
        after = ref.raw.split(ref.title, 1)[-1]
        subtitle = re.match(r"\s*[.:?!]\s*([^.]{3,200})\.", after)
        if subtitle:
            words += _content_words(subtitle.group(1))
    return words


# --- helpers ----------------------------------------------------------------


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
