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
from analysis.pipeline.documents.pdftext import (PDF_MAGIC, DocumentTooLong, EmptyDocument, MalformedDocument,
                                                 UnsupportedFileType, decode_text)
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


def extract_document_within(data: bytes, filename: str, max_chars: int) -> Document:
    """`extract_document`, refused with `DocumentTooLong` when its pages hold more than
    ``max_chars`` characters. Run in the parse sandbox, so what it hands back to the worker
    is bounded whatever the upload (issue 29: a 50 MB one-line text took a worker to 870 MB)."""
    suffix = PurePath(filename).suffix.lower()
    if len(data) > 4 * max_chars and suffix in TEXT_SUFFIXES | MARKDOWN_SUFFIXES and PDF_MAGIC not in data[:1024]:
        too_long = f"more than {max_chars:,}"  # UTF-8 spends at most 4 bytes on a character
    else:
        document = extract_document(data, filename)
        chars = sum(len(p.text) for p in document.pages)
        if chars <= max_chars:
            return document
        too_long = f"{chars:,}"
    raise DocumentTooLong(f"{filename} holds {too_long} characters of text; one document may hold "
                          f"{max_chars:,}. Split it into parts and upload those.")


def extract_file_within(path: str, filename: str, max_chars: int) -> Document:
    """`extract_document_within` of the bytes in the file at ``path`` (the parse sandbox reads
    the upload itself: the worker hands it a path, not the bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    return extract_document_within(data, filename, max_chars)


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
