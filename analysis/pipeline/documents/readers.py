"""One reader per format, each returning a `Document` (pages, headings, paragraphs,
footnotes): PDF (analysis/pipeline/documents/pdflayout.py), DOCX (analysis/pipeline/documents/docxreader.py), Markdown and plain
text (analysis/pipeline/documents/plaintext.py).

`extract_document(data, filename)` is the one call the parse step makes; it picks the
reader by the PDF magic bytes first and the file's suffix second, and raises a
`ParseError` subclass with a reason a user can act on.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from analysis.pipeline.documents.document import Document, Page, normalize_text
from analysis.pipeline.documents.pdftext import (PDF_MAGIC, EmptyDocument, MalformedDocument, UnsupportedFileType, decode_text)
from analysis.pipeline.documents.plaintext import markdown_document, text_document

TEXT_SUFFIXES = frozenset({".txt", ".text"})
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
DOCX_SUFFIXES = frozenset({".docx"})
#: Every suffix an upload may have (a PDF is recognised by its bytes whatever its name).
SUPPORTED_SUFFIXES = frozenset({".pdf"}) | TEXT_SUFFIXES | MARKDOWN_SUFFIXES | DOCX_SUFFIXES



def extract_document(data: bytes, filename: str) -> Document:
    """Read an upload into a `Document`; a `ParseError` subclass on any failure."""
    if not data:
        raise EmptyDocument(f"{filename} is empty (0 bytes).")
    suffix = PurePath(filename).suffix.lower()
    if PDF_MAGIC in data[:1024]:
        from analysis.pipeline.documents.pdflayout import read_pdf

        return read_pdf(data, filename)
    if suffix == ".pdf":
        raise MalformedDocument(f"{filename} is named .pdf but is not a PDF (no %PDF- header).")
    if suffix in DOCX_SUFFIXES:
        from analysis.pipeline.documents.docxreader import read_docx

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


def extract_pages(data: bytes, filename: str) -> list[Page]:
    """The pages of an upload in any supported format, without the rest of its structure.

    Raises a `ParseError` subclass with a human-readable reason on any failure.
    Pages without text keep their place, so page numbers stay as printed.
    """
    return extract_document(data, filename).pages


def stored_document(pages: list[Page], structure: dict | None) -> Document:
    """A document back from its stored pages and structure; one parsed before the structure
    was stored (None) is read again from its pages by the plain-text reader."""
    if not structure:
        return text_document(pages)
    return Document.from_stored(pages, structure)
