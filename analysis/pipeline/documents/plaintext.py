"""The readers of Markdown and plain text, from pages of text to a `Document` (pages,
headings, paragraphs, footnotes): the formats whose structure is written in the text itself.

Also the fallback of documents stored before their structure was (``stored_document`` in
analysis/pipeline/documents/readers.py) and of citation extraction from bare text.
"""

from __future__ import annotations

import re

from analysis.pipeline.documents.document import Document, DocumentBuilder, Page
from analysis.pipeline.documents.headings import is_reference_heading

_ATX = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_SETEXT = re.compile(r"^[ \t]{0,3}(=+|-+)[ \t]*$")
_FOOTNOTE_DEF = re.compile(r"^[ \t]{0,3}\[\^([^\]\s]{1,16})\]:[ \t]*(.*)$")
_NUMBERED_HEADING = re.compile(r"^(\d+(?:\.\d+)*)\.?[ \t]+[A-ZÄÖÜ]")
_TERMINAL = re.compile(r"[.!?:;,]\s*$")


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
