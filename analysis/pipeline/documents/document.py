"""The structure every reader returns: pages, headings, paragraphs and footnotes.

Citation extraction works from this structure, never from raw page text: headings are
structure (never part of a claim), a paragraph is the unit sentences are cut from, and a
footnote mark in a paragraph reads ``[^label]`` wherever it came from (a PDF's superscript
number, a DOCX footnote reference, Markdown's own syntax). `position` orders headings and
paragraphs together in reading order, so the paragraphs under a heading can be found.

Everything here is a pydantic model, so a document crosses a process boundary (the parse
sandbox) as it is, and it is stored as JSON (``documents.structure``) so extraction works
from it after a redeploy.
"""

from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel, Field

#: How a footnote mark is written in paragraph text, whatever the format.
FOOTNOTE_MARK = re.compile(r"\[\^([^\]\s]{1,16})\]")

_SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_SUPERSCRIPT_DIGITS = str.maketrans(_SUPERSCRIPT, "0123456789")
_SUPERSCRIPT_MARK = re.compile(rf"(?<=[^\s{_SUPERSCRIPT}])([{_SUPERSCRIPT}]+)")
_SUPERSCRIPT_LABEL = re.compile(rf"^\s*([{_SUPERSCRIPT}]+)\s*")
_LIGATURES = str.maketrans({"ﬁ": "fi", "ﬂ": "fl", "ﬀ": "ff", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st",
                            "\u00a0": " ", "\u2009": " ", "\u202f": " "})


class Page(BaseModel):
    """One page of extracted text; `number` is 1-based, as printed."""

    number: int = Field(ge=1)
    text: str


class Heading(BaseModel):
    """A section heading: 1 is the top level."""

    level: int = Field(ge=1)
    text: str
    page: int = Field(ge=1)
    position: int = Field(ge=0)


class Paragraph(BaseModel):
    """A paragraph of body text; its lines keep their breaks (reference lists need them)."""

    text: str
    page: int = Field(ge=1)  #: the page it starts on
    position: int = Field(ge=0)
    #: (characters before the break, whitespace not counted; page) for each page the
    #: paragraph runs on to, so a citation knows its page however the text is spaced
    breaks: list[tuple[int, int]] = Field(default_factory=list)

    def page_at(self, offset: int, text: str) -> int:
        """The page of `offset` in `text`, a re-spaced copy of this paragraph's text."""
        page = self.page
        if self.breaks:
            seen = len(re.sub(r"\s", "", text[:offset]))
            for before, number in self.breaks:
                if seen >= before:
                    page = number
        return page


class Footnote(BaseModel):
    """A footnote's text; `label` is what its mark ``[^label]`` in a paragraph says."""

    label: str
    text: str
    page: int = Field(ge=1)


class Document(BaseModel):
    """What a reader makes of a file; `metadata` holds what the file says about itself
    (PDF /Author, /Title, /CreationDate, DOCX core properties), all strings."""

    pages: list[Page]
    headings: list[Heading] = Field(default_factory=list)
    paragraphs: list[Paragraph] = Field(default_factory=list)
    footnotes: list[Footnote] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)

    def structure(self) -> dict:
        """What extraction needs besides the pages (stored as ``documents.structure``)."""
        return self.model_dump(include={"headings", "paragraphs", "footnotes"})

    @classmethod
    def from_stored(cls, pages: list[Page], structure: dict) -> "Document":
        """A document back from its stored pages and structure (``structure()``); one stored
        without a structure comes back through ``readers.stored_document``."""
        return cls(pages=pages, **structure)


class DocumentBuilder:
    """Collects headings and paragraphs in reading order."""

    def __init__(self) -> None:
        self.headings: list[Heading] = []
        self.paragraphs: list[Paragraph] = []
        self.footnotes: list[Footnote] = []
        self._position = 0

    def heading(self, level: int, text: str, page: int) -> None:
        text = " ".join(text.split()).strip(" #")
        if text:
            self.headings.append(Heading(level=max(1, level), text=text, page=page, position=self._next()))

    def paragraph(self, text: str, page: int, breaks: list[tuple[int, int]] | None = None) -> None:
        text = "\n".join(line.strip() for line in text.strip().splitlines() if line.strip())
        if text:
            self.paragraphs.append(Paragraph(text=text, page=page, position=self._next(), breaks=breaks or []))

    def footnote(self, label: str, text: str, page: int) -> None:
        text = " ".join(text.split())
        if text:
            self.footnotes.append(Footnote(label=label, text=text, page=page))

    def build(self, pages: list[Page], metadata: dict[str, str] | None = None) -> Document:
        return Document(pages=pages, headings=self.headings, paragraphs=self.paragraphs,
                        footnotes=self.footnotes, metadata=metadata or {})

    def _next(self) -> int:
        self._position += 1
        return self._position - 1


def normalize_text(text: str) -> str:
    """NFC (a PDF's "u + combining diaeresis" equals a typed "ü"), ligatures spelled out,
    odd spaces made plain, line ends unified; a soft hyphen at a line end joins the word."""
    text = unicodedata.normalize("NFC", text).translate(_LIGATURES)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub(r"\u00ad[ \t]*\n[ \t]*", "", text)
    return text.replace("\u00ad", "")


def superscript_marks(text: str) -> str:
    """Unicode superscript digits set after a word ("rose.²") are footnote marks: ``[^2]``."""
    return _SUPERSCRIPT_MARK.sub(lambda m: f"[^{m.group(1).translate(_SUPERSCRIPT_DIGITS)}]", text)


def superscript_label(text: str) -> tuple[str | None, str]:
    """A footnote line that starts with superscript digits ("² Weber 2017"): (label, rest)."""
    m = _SUPERSCRIPT_LABEL.match(text)
    if m is None:
        return None, text
    return m.group(1).translate(_SUPERSCRIPT_DIGITS), text[m.end():]
