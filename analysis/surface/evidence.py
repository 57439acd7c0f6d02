"""A citation in its place: the thesis page with the claim marked, and the cited source's
page with the quoted evidence marked, read from the stored document structure (headings
and paragraphs as the reader found them), never from an external viewer.

Marks are character ranges into each block's text, found whitespace- and case-insensitively
(a PDF's line breaks and hyphen-free re-spacing do not matter). Evidence of two sentences
(a claim drawn from two adjacent sentences) gets a mark per sentence; a claim whose citation
marker was cut out of its sentence is found by its first and last words.
"""

from __future__ import annotations

import json
import re
import unicodedata

from pydantic import BaseModel

from analysis import db

#: Sentence ends inside a quoted passage: each sentence is marked where it stands.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[\"'„“(\[]?[A-ZÄÖÜ0-9])")
#: Words at each end of a quote that must be found when the whole quote is not.
_ANCHOR_WORDS = 5


class Block(BaseModel):
    kind: str  #: heading or paragraph
    text: str
    marks: list[tuple[int, int]] = []  #: [start, end) character ranges to highlight


class PageView(BaseModel):
    document_id: int
    filename: str
    page: int
    pages: int | None  #: the document's page count
    blocks: list[Block]
    quote: str | None  #: what is marked
    found: bool  #: whether the quote was found on the page


class PartView(BaseModel):
    """One part of a claim the judge split into parts, and the source sentence closest to it."""

    part: str
    sentence: str | None  #: None: no sentence of the source shares its words
    page: int | None
    coverage: float  #: share of the part's key terms the sentence states
    marked: bool = False  #: the sentence is marked on the source page shown


class EvidenceView(BaseModel):
    number: int
    verdict: str | None
    claim: str
    thesis: PageView | None  #: None when the citation has no thesis page
    source: PageView | None  #: None without a resolved source or a quoted page
    parts: list[PartView] = []  #: empty when the claim was judged whole (or judged before parts were kept)


def view(broker, job_id: int, number: int, *, user_id: int) -> EvidenceView | None:
    """Citation ``number`` (1-based) of the user's job in place; None when there is no such citation."""
    with broker.connection() as conn, conn.cursor() as cur:
        row = db.one(cur, "citation_evidence_one", job_id=job_id, user_id=user_id, ordinal=number - 1)
        if row is None:
            return None
        ordinal, verdict, claim, sentence, page, thesis_id, source_id, evidence, evidence_page, stored_parts = row
        parts = [PartView(**p) for p in (json.loads(stored_parts) if isinstance(stored_parts, str)
                                         else stored_parts or [])]
        thesis = _page(cur, user_id, thesis_id, page, [claim], fallback=[sentence]) if page else None
        source = (_page(cur, user_id, source_id, evidence_page, sentences(evidence))
                  if source_id and evidence and evidence_page else None)
    if source is not None:
        _mark_parts(source, parts)
    return EvidenceView(number=ordinal + 1, verdict=verdict, claim=claim, thesis=thesis, source=source, parts=parts)


def _mark_parts(source: PageView, parts: list[PartView]) -> None:
    """Mark each part's sentence that stands on the source page shown, beside the quote (a sentence
    on another page is listed with its page)."""
    for part in parts:
        if part.sentence and part.page == source.page:
            scratch = [Block(kind=b.kind, text=b.text) for b in source.blocks]
            part.marked = mark(scratch, sentences(part.sentence))
            for block, found in zip(source.blocks, scratch):
                # the quoted sentence is often one of the parts': it is marked once
                block.marks.extend(m for m in found.marks
                                   if not any(a <= m[0] and m[1] <= b for a, b in block.marks))


def _page(cur, user_id: int, document_id: int, page: int, quotes: list[str],
          fallback: list[str] = ()) -> PageView | None:
    row = db.one(cur, "document_page_blocks_one", user_id=user_id, document_id=document_id, page=page)
    if row is None:
        return None
    filename, page_text, blocks, pages = row
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
    found = [Block(**b) for b in blocks] or [Block(kind="paragraph", text=p) for p in _paragraphs(page_text or "")]
    hit = mark(found, quotes) or (bool(fallback) and mark(found, fallback))
    return PageView(document_id=document_id, filename=filename, page=page, pages=pages, blocks=found,
                    quote=" ".join(quotes), found=bool(hit))


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def sentences(quote: str) -> list[str]:
    """The sentences of a quoted passage."""
    return [s.strip() for s in _SENTENCE_END.split(quote.strip()) if s.strip()]


def mark(blocks: list[Block], quotes: list[str]) -> bool:
    """Mark each quote in the first block that holds it, or across blocks where it runs over
    several (a quote that takes in a title block or a heading shows exactly that); whether
    all were found."""
    found_all = True
    for quote in quotes:
        for block in blocks:
            span = locate(block.text, quote)
            if span is not None:
                block.marks.append(span)
                break
        else:
            found_all = _mark_across(blocks, quote) and found_all
    return found_all and bool(quotes)


def _mark_across(blocks: list[Block], quote: str) -> bool:
    key, where = "", []
    for n, block in enumerate(blocks):
        k, w = _key(block.text)
        key += k
        where.extend((n, i) for i in w)
    wanted, _ = _key(quote.strip().rstrip(".!?;:,"))
    at = key.find(wanted) if wanted else -1
    if at < 0:
        return False
    covered: dict[int, list[int]] = {}
    for n, i in where[at:at + len(wanted)]:
        covered.setdefault(n, []).append(i)
    for n, chars in covered.items():
        blocks[n].marks.append((min(chars), max(chars) + 1))
    return True


def _key(text: str) -> tuple[str, list[int]]:
    """The text without whitespace, case-folded, and where each of its characters came from."""
    chars, where = [], []
    for i, ch in enumerate(text):
        if ch.isspace() or ch == "\u00ad":
            continue
        folded = unicodedata.normalize("NFKC", ch).casefold()
        chars.append(folded)
        where.extend([i] * len(folded))
    return "".join(chars), where


def locate(text: str, quote: str) -> tuple[int, int] | None:
    """[start, end) of ``quote`` in ``text``, ignoring whitespace and case; failing that, the span
    from its first to its last few words (a marker cut out of the middle); else None."""
    key, where = _key(text)
    wanted, _ = _key(quote.strip().rstrip(".!?;:,"))
    if not wanted:
        return None
    at = key.find(wanted)
    if at >= 0:
        return where[at], where[at + len(wanted) - 1] + 1
    words = quote.split()
    if len(words) < 2 * _ANCHOR_WORDS:
        return None
    head, _ = _key(" ".join(words[:_ANCHOR_WORDS]))
    tail, _ = _key(" ".join(words[-_ANCHOR_WORDS:]).rstrip(".!?;:,"))
    start = key.find(head)
    end = key.find(tail, start + len(head)) if start >= 0 else -1
    if start < 0 or end < 0 or (end + len(tail) - start) > 2 * len(wanted):
        return None
    return where[start], where[end + len(tail) - 1] + 1
