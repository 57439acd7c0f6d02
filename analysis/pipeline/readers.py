"""One reader per format, each returning a `Document` (pages, headings, paragraphs,
footnotes): PDF (analysis/pipeline/pdflayout.py), DOCX (analysis/pipeline/docxreader.py), Markdown and plain
text (here).

`extract_document(data, filename)` is the one call the parse step makes; it picks the
reader by the PDF magic bytes first and the file's suffix second, and raises a
`ParseError` subclass with a reason a user can act on.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from analysis.pipeline.document import Document, DocumentBuilder, Page, normalize_text
from analysis.pipeline.pdftext import (PDF_MAGIC, EmptyDocument, MalformedDocument, UnsupportedFileType, decode_text)

TEXT_SUFFIXES = frozenset({".txt", ".text"})
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
DOCX_SUFFIXES = frozenset({".docx"})
#: Every suffix an upload may have (a PDF is recognised by its bytes whatever its name).
SUPPORTED_SUFFIXES = frozenset({".pdf"}) | TEXT_SUFFIXES | MARKDOWN_SUFFIXES | DOCX_SUFFIXES

_ATX = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_SETEXT = re.compile(r"^[ \t]{0,3}(=+|-+)[ \t]*$")
_FOOTNOTE_DEF = re.compile(r"^[ \t]{0,3}\[\^([^\]\s]{1,16})\]:[ \t]*(.*)$")
_NUMBERED_HEADING = re.compile(r"^(\d+(?:\.\d+)*)\.?[ \t]+[A-ZÄÖÜ]")
_TERMINAL = re.compile(r"[.!?:;,]\s*$")


def extract_document(data: bytes, filename: str) -> Document:
    """Read an upload into a `Document`; a `ParseError` subclass on any failure."""
    if not data:
        raise EmptyDocument(f"{filename} is empty (0 bytes).")
    suffix = PurePath(filename).suffix.lower()
    if PDF_MAGIC in data[:1024]:
        from analysis.pipeline.pdflayout import read_pdf

        return read_pdf(data, filename)
    if suffix == ".pdf":
        raise MalformedDocument(f"{filename} is named .pdf but is not a PDF (no %PDF- header).")
    if suffix in DOCX_SUFFIXES:
        from analysis.pipeline.docxreader import read_docx

        return read_docx(data, filename)
    if suffix in MARKDOWN_SUFFIXES:
        return markdown_document(_text_pages(data, filename))
    if suffix in TEXT_SUFFIXES:
        return text_document(_text_pages(data, filename))
    raise UnsupportedFileType(
        f"{filename}: unsupported file type {suffix or '(no extension)'}; "
        "upload a PDF, Word (.docx), Markdown (.md) or plain text (.txt) file."
    )


def _text_pages(data: bytes, filename: str) -> list[Page]:
    if b"\x00" in data:
        raise MalformedDocument(f"{filename} contains binary data, not text.")
    text = decode_text(data, filename)
    if not text.strip():
        raise EmptyDocument(f"{filename} contains only whitespace.")
    chunks = text.split("\f")
    if len(chunks) > 1 and not chunks[-1].strip():
        chunks.pop()  # a trailing form feed ends the last page; it starts none
    return [Page(number=i + 1, text=normalize_text(chunk)) for i, chunk in enumerate(chunks)]


# -- plain text ------------------------------------------------------------------------------


def text_document(pages: list[Page]) -> Document:
    """Plain text: paragraphs are separated by blank lines; a heading is a line of its own
    that is short and unpunctuated (``2 Methods``, ``References``), or written the
    Markdown way (``## References``, an underlined title). Wrapped lines stay in their
    paragraph."""
    builder = DocumentBuilder()
    for page in pages:
        for block in _blocks(page.text):
            _text_block(builder, block, page.number)
    return builder.build(pages)


def _blocks(text: str) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip():
            blocks[-1].append(line.rstrip())
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def _text_block(builder: DocumentBuilder, lines: list[str], page: int) -> None:
    if len(lines) == 2 and _SETEXT.match(lines[1]) and not _TERMINAL.search(lines[0]):
        builder.heading(1 if "=" in lines[1] else 2, lines[0], page)
        return
    current: list[str] = []
    for i, line in enumerate(lines):
        atx = _ATX.match(line)
        heading_level = len(atx.group(1)) if atx else None
        previous_ends = i == 0 or _TERMINAL.search(lines[i - 1]) is not None or _heading_level(lines[i - 1])
        if heading_level is None and previous_ends:
            heading_level = _heading_level(line, alone=len(lines) == 1)
        if heading_level:
            builder.paragraph("\n".join(current), page)
            current = []
            builder.heading(heading_level, atx.group(2) if atx else line, page)
        else:
            current.append(line)
    builder.paragraph("\n".join(current), page)


def _heading_level(line: str, *, alone: bool = True) -> int | None:
    """The level of a line that reads as a heading, else None."""
    from analysis.pipeline.citations import is_reference_heading

    text = line.strip()
    atx = _ATX.match(text)
    if atx:
        return len(atx.group(1))
    if is_reference_heading(text):
        return 1
    words = text.split()
    if not words or len(words) > (12 if alone else 8) or _TERMINAL.search(text) or text.endswith(")"):
        return None
    numbered = _NUMBERED_HEADING.match(text)
    if numbered:
        return numbered.group(1).count(".") + 1
    # Unnumbered: only a line on its own. Inside a block it may be a short wrapped line.
    if alone and text[0].isupper() and len(words) <= 8:
        return 2
    return None


# -- Markdown --------------------------------------------------------------------------------


def markdown_document(pages: list[Page]) -> Document:
    """Markdown: ATX (``#``) and setext headings, paragraphs, list items (one paragraph each;
    an ordered item keeps its number, as numbered reference lists need it), block quotes,
    footnotes ``[^1]: …``. Inline markup (emphasis, links, code) is reduced to its text;
    code blocks, tables and HTML comments are not prose and are left out."""
    builder = DocumentBuilder()
    for page in pages:
        _markdown_page(builder, _strip_comments(page.text), page.number)
    return builder.build(pages)


def _strip_comments(text: str) -> str:
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def _markdown_page(builder: DocumentBuilder, text: str, page: int) -> None:
    lines = text.splitlines()
    current: list[str] = []
    footnote: list[str] | None = None  # [label, text...] while a definition continues
    fenced = False

    def flush() -> None:
        nonlocal current
        builder.paragraph(_inline("\n".join(current)), page)
        current = []

    def end_footnote() -> None:
        nonlocal footnote
        if footnote:
            builder.footnote(footnote[0], _inline(" ".join(footnote[1:])), page)
        footnote = None

    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            flush(), end_footnote()
            fenced = not fenced
            continue
        if fenced:
            continue
        definition = _FOOTNOTE_DEF.match(line)
        if definition:
            flush(), end_footnote()
            footnote = [definition.group(1), definition.group(2)]
            continue
        if footnote is not None and stripped and line[:1] in (" ", "\t"):
            footnote.append(stripped)
            continue
        if not stripped:
            flush()
            end_footnote()
            continue
        end_footnote()
        atx = _ATX.match(line)
        if atx:
            flush()
            builder.heading(len(atx.group(1)), _inline(atx.group(2)), page)
            continue
        if _SETEXT.match(line) and current and len(current) == 1 and stripped[0] in "=-" and len(stripped) >= 2:
            builder.heading(1 if stripped[0] == "=" else 2, _inline(current[0]), page)
            current = []
            continue
        if re.fullmatch(r"[-*_](\s*[-*_]){2,}", stripped) or stripped.startswith("|"):
            flush()  # a rule or a table row
            continue
        stripped = re.sub(r"^(>\s?)+", "", stripped)
        bullet = re.match(r"^[-*+][ \t]+", stripped)
        ordered = re.match(r"^\d{1,4}[.)][ \t]+", stripped)
        if bullet or ordered:
            flush()
            stripped = stripped[bullet.end():] if bullet else stripped
        current.append(stripped)
    flush()
    end_footnote()


def _inline(text: str) -> str:
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)  # images: their alt text
    text = re.sub(r"(?<!\^)\[([^\]^][^\]]*)\]\((?:[^()]|\([^)]*\))*\)", r"\1", text)  # links: their text
    text = re.sub(r"<(https?://[^>]+)>", r"\1", text)
    text = re.sub(r"</?[A-Za-z][^>]*>", "", text)  # inline HTML tags
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?!\*)", r"\1", text)
    text = re.sub(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])", r"\1", text)
    return re.sub(r"\\([\\`*_{}\[\]()#+\-.!])", r"\1", text)  # backslash escapes
