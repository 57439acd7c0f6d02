"""The entry points: find the reference list, parse it, and extract every citation of a document.
"""

from __future__ import annotations

from collections.abc import Sequence
from analysis.pipeline.documents.document import FOOTNOTE_MARK, Document, Page, Paragraph
from analysis.pipeline.documents.headings import REFERENCE_HEADING_LINE, is_reference_heading
from analysis.pipeline.documents.plaintext import text_document

from analysis.pipeline.citations.claims import clauses
from analysis.pipeline.citations.markers import Marker, SAME_AUTHOR, by_sentence, find_markers, resolve_ibid
from analysis.pipeline.citations.models import Citation, Reference
from analysis.pipeline.citations.names import name_key, squash
from analysis.pipeline.citations.patterns import (AUTHOR_YEAR_START, DOTTED_ENTRY, MARK_AFTER_STOP,
    NUMERIC_ENTRY, PAREN_NUMBER_ENTRY)
from analysis.pipeline.citations.references import (NAMES_COLON_START, SAME_AUTHORS_ENTRY,
    author_year_entries, corporate_start, looks_whole, numeric_references, parse_entry, same_authors,
    unique_keys)
from analysis.pipeline.citations.resolution import resolve

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
    if NUMERIC_ENTRY.search(section):
        return numeric_references(section, NUMERIC_ENTRY)
    for pattern in (DOTTED_ENTRY, PAREN_NUMBER_ENTRY):  # "1. Smith J, …" or "1) Smith J, …"
        numbers = [int(n) for n in pattern.findall(section)]
        if len(numbers) >= 2 and numbers[:2] == [1, 2]:
            return numeric_references(section, pattern)
    return unique_keys(same_authors(
        [parse_entry(entry) for entry in author_year_entries(section)]))


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
    known = {name_key(r.first_author) for r in references if r.first_author}
    citations: list[Citation] = []
    previous: Marker | None = None
    for paragraph in body:
        # A footnote mark after the full stop belongs to the sentence before it.
        text = MARK_AFTER_STOP.sub(r"\2\1", " ".join(paragraph.text.split()))
        found = find_markers(text, numeric_style, footnotes, known)
        for (start, end), in_sentence in by_sentence(text, found):
            sentence = text[start:end]
            claims = clauses(sentence, start, [m for _, m in in_sentence])
            for offset, marker in in_sentence:
                claim = claims[marker.group]
                if marker.kind == "ibid":
                    marker = resolve_ibid(marker, previous)
                elif marker.authors[:1] == [SAME_AUTHOR] and previous is not None:
                    marker = marker.model_copy(update={"authors": previous.authors, "et_al": previous.et_al})
                reference, reason = resolve(marker, references)
                resolved_marker = marker.model_copy(update={"reference": reference or marker.reference})
                citations.append(Citation(
                    ordinal=len(citations), claim=claim,
                    sentence=squash(FOOTNOTE_MARK.sub("", sentence)), marker=marker.text, kind=marker.kind,
                    locator=marker.locator, page=paragraph.page_at(offset, text) if paged else None,
                    cited_authors=marker.authors, cited_year=marker.year, cited_number=marker.number,
                    reference=reference, unresolved_reason=reason,
                ))
                previous = resolved_marker
    return citations


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
    starts = [bool(AUTHOR_YEAR_START.match(l) or NUMERIC_ENTRY.match(l) or DOTTED_ENTRY.match(l)
                   or PAREN_NUMBER_ENTRY.match(l) or looks_whole(l) or SAME_AUTHORS_ENTRY.match(l)
                   or corporate_start(l) or NAMES_COLON_START.match(l))
              for l in lines]
    return " ".join(lines) if sum(starts) == 0 or (sum(starts) == 1 and starts[0]) else text
