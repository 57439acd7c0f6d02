"""Split page text into passages for retrieval, and text (or pages) into sentences.

A passage never crosses a page boundary, so every passage (and every piece of
evidence shown to a user) has exactly one page number. Inside a page, passages
are cut at paragraph and sentence boundaries when possible; a single sentence
longer than the target is cut into word windows. Neighbouring passages of one
paragraph share about `overlap` words, so a statement that straddles a cut is
still found whole in one of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, Field

from analysis.pipeline.documents.pdftext import Page

DEFAULT_TARGET_WORDS = 120
DEFAULT_OVERLAP_WORDS = 20

#: Tokens ending in a period that do not end a sentence (English and German).
_ABBREVIATIONS = frozenset(
    """al e.g i.e cf vgl z.b d.h bzw usw etc fig figs tab eq p pp s vol no nr
    ed eds dr prof vs ca approx resp ibid et seq u.a n.d o j a kap abs ebd vgl bspw ggf""".split()
)
# A boundary candidate: sentence-final punctuation (maybe closed by a quote or
# bracket), whitespace, then something that can start a sentence.
_BOUNDARY = re.compile(r"""[.!?]["”’)\]]*\s+(?=["“‘(\[]?[A-ZÄÖÜ0-9])""")
#: A German ordinal is a number with a period ("den 18. Geburtstag", "des 20. Jahrhunderts",
#: "am 3. Oktober"): before these nouns the period ends no sentence.
_ORDINAL_NOUN = re.compile(
    r"\d{1,2}\.\s+(?:Jahrhundert|Jahrtausend|Geburtstag|Lebensjahr|Lebensmonat|Lebenswoche|Klasse|Jahrgang|"
    r"Schuljahr|Semester|Quartal|Monat|Woche|Tag|Mal|Platz|Rang|Auflage|Ausgabe|Kapitel|Sitzung|Runde|Welle|"
    r"Stock|Etage|Legislaturperiode|Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|"
    r"November|Dezember)", re.I)
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# A short line without closing punctuation is a heading ("2 Related work"):
# it ends where the line ends, or it would glue itself to the next sentence.
# Wrapped prose lines rarely qualify: they run longer and the next line goes on in
# lower case.
_HEADING_LINE = re.compile(
    r"(?m)^[ \t]*(?:\d+(?:\.\d+)*\.?[ \t]+)?[A-ZÄÖÜ0-9][^\n.!?:;,]{0,70}(?<![.!?:;,])[ \t]*$"
    r"(?=\n[ \t]*(?:[A-ZÄÖÜ0-9\[(\"“]|\n)|\Z)"
)


class Passage(BaseModel):
    """A retrieval unit: `ordinal` counts from 0 across the whole document."""

    ordinal: int = Field(ge=0)
    page: int = Field(ge=1)
    text: str


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Return (start, end) offsets of the sentences of `text`, whitespace trimmed.

    A heuristic splitter: it knows common abbreviations ("et al.", "e.g.",
    "vgl.") and initials ("J. Smith"), which is what citation-heavy prose needs.
    """
    depth = _paren_depths(text)
    cuts = {m.end() for m in _BOUNDARY.finditer(text)
            if not _ends_with_abbreviation(text, m.start()) and depth[m.start()] == 0
            and not _ORDINAL_NOUN.match(text, max(0, m.start() - 2) if text[m.start() - 2:m.start() - 1].isdigit()
                                        else m.start() - 1)}
    for line in _HEADING_LINE.finditer(text):
        if len(line.group(0).split()) <= 8:
            cuts.update((line.start(), line.end()))
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in sorted(cuts):
        _append_trimmed(spans, text, start, cut)
        start = max(start, cut)
    _append_trimmed(spans, text, start, len(text))
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of `text` with inner whitespace collapsed."""
    return [_squash(text[a:b]) for a, b in sentence_spans(text)]


def split_passages(
    pages: Iterable[Page],
    *,
    target_words: int = DEFAULT_TARGET_WORDS,
    overlap: int = DEFAULT_OVERLAP_WORDS,
) -> list[Passage]:
    """Cut pages into passages of about `target_words` words, never across pages."""
    if target_words < 1 or not 0 <= overlap < target_words:
        raise ValueError("need target_words >= 1 and 0 <= overlap < target_words")
    passages: list[Passage] = []
    for page in pages:
        for text in _page_passages(page.text, target_words, overlap):
            passages.append(Passage(ordinal=len(passages), page=page.number, text=text))
    return passages


#: A "sentence" shorter than this is a heading, a caption or a line of a table: no evidence.
MIN_SENTENCE_WORDS = 5


def split_page_sentences(pages: Iterable[Page], *, min_words: int = MIN_SENTENCE_WORDS) -> list[Passage]:
    """The sentences of the pages with their page numbers (``ordinal`` counts the sentences kept),
    leaving out those shorter than ``min_words`` words: what the evidence sentence is chosen from."""
    found: list[Passage] = []
    for page in pages:
        for sentence in split_sentences(page.text):
            if _count(sentence) >= min_words:
                found.append(Passage(ordinal=len(found), page=page.number, text=sentence))
    return found


def _page_passages(text: str, target: int, overlap: int) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(text):
        # A short paragraph joins its neighbour; a long enough one ends a passage.
        if current and _words(current) >= target // 2:
            out.append(" ".join(current))
            current = []
        for sentence in split_sentences(paragraph):
            for piece in _windows(sentence, target, overlap):
                if current and _words(current) + _count(piece) > target:
                    out.append(" ".join(current))
                    current = _tail(current, overlap)
                current.append(piece)
    if current:
        out.append(" ".join(current))
    return out


def _windows(sentence: str, target: int, overlap: int) -> list[str]:
    """A sentence longer than `target` words becomes overlapping word windows."""
    words = sentence.split()
    if len(words) <= target:
        return [sentence]
    step = target - overlap
    return [" ".join(words[i : i + target]) for i in range(0, len(words) - overlap, step)]


def _tail(sentences: list[str], overlap: int) -> list[str]:
    """The trailing whole sentences of a passage that fit in `overlap` words."""
    kept: list[str] = []
    for sentence in reversed(sentences):
        if _words(kept) + _count(sentence) > overlap:
            break
        kept.insert(0, sentence)
    return kept


def _paren_depths(text: str) -> list[int]:
    """How many parentheses are open at each offset: a sentence never ends inside one
    ("(siehe Müller u. a., o. J., S. 3)"). A stray ")" never goes below zero, and a "("
    left open closes at the paragraph's end."""
    depths, depth = [], 0
    last_close = text.rfind(")")  # a ")" follows offset i exactly when i < last_close
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == "\n" and depth and len(depths) > last_close:
            depth = 0
        depths.append(depth)
    return depths


def _ends_with_abbreviation(text: str, dot: int) -> bool:
    if text[dot] != ".":
        return False
    # The token before the dot, read backwards ([\w.]+ at the end of text[:dot]): a search
    # over the whole prefix made a long paragraph quadratic (issue 29).
    start = dot
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_."):
        start -= 1
    if start == dot:
        return False
    token = text[start:dot].lower()
    # A single capital letter before the dot is an initial ("J. Smith").
    return token in _ABBREVIATIONS or (len(token) == 1 and text[dot - 1].isupper())


def _append_trimmed(spans: list[tuple[int, int]], text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append((start, end))


def _squash(text: str) -> str:
    return " ".join(text.split())


def _count(text: str) -> int:
    return len(text.split())


def _words(sentences: list[str]) -> int:
    return sum(_count(s) for s in sentences)
