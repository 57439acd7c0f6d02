"""Turn uploaded bytes into numbered pages of plain text.

PDFs are read with `pypdf`: pure Python, no system libraries (no poppler, no
MuPDF), actively maintained, and it copes with the everyday damage of real-world
PDFs when asked not to be strict. Plain text and Markdown (`.txt`, `.md`) are one
page each, unless they contain form feeds, which split pages as printers do.

Every failure is a `ParseError` subclass whose message is a reason a user can act
on; a parse item fails with that reason and nothing else is harmed.
"""

from __future__ import annotations

import io
import unicodedata
from pathlib import PurePath

from pydantic import BaseModel, Field

#: The PDF header; the spec lets it start anywhere in the first 1024 bytes.
PDF_MAGIC = b"%PDF-"
TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown"})


class Page(BaseModel):
    """One page of extracted text; `number` is 1-based, as printed."""

    number: int = Field(ge=1)
    text: str


class ParseError(Exception):
    """The upload could not be read as a document."""

    def __init__(self, reason: str | None = None) -> None:
        self.reason = reason or (type(self).__doc__ or "").strip()
        super().__init__(self.reason)


class MalformedDocument(ParseError):
    """The file is damaged or is not the kind of document its name says."""


class EncryptedDocument(ParseError):
    """The PDF is password-protected; upload a copy without a password."""


class EmptyDocument(ParseError):
    """The file is empty."""


class NoExtractableText(ParseError):
    """The PDF has no text layer (it looks scanned); run OCR on it and upload again."""


class UnsupportedFileType(ParseError):
    """Only PDF, plain text (.txt) and Markdown (.md) files are supported."""


def extract_pages(data: bytes, filename: str) -> list[Page]:
    """Extract the pages of an upload, detecting PDFs by their magic bytes.

    Raises a `ParseError` subclass with a human-readable reason on any failure.
    Pages without text keep their place, so page numbers stay as printed.
    """
    if not data:
        raise EmptyDocument(f"{filename} is empty (0 bytes).")
    suffix = PurePath(filename).suffix.lower()
    if PDF_MAGIC in data[:1024]:
        return _pdf_pages(data, filename)
    if suffix == ".pdf":
        raise MalformedDocument(f"{filename} is named .pdf but is not a PDF (no %PDF- header).")
    if suffix in TEXT_SUFFIXES:
        return _text_pages(data, filename)
    raise UnsupportedFileType(
        f"{filename}: unsupported file type {suffix or '(no extension)'}; "
        "upload a PDF, .txt or .md file."
    )


def _pdf_pages(data: bytes, filename: str) -> list[Page]:
    reader = _open_pdf(data, filename)
    try:
        count = len(reader.pages)
    except Exception as exc:  # pypdf raises many types on broken page trees
        raise MalformedDocument(f"{filename}: the page tree is damaged ({exc}).") from exc
    if count == 0:
        raise EmptyDocument(f"{filename} is a PDF with no pages.")
    pages = [Page(number=i + 1, text=_page_text(reader, i, filename)) for i in range(count)]
    if not any(p.text.strip() for p in pages):
        raise NoExtractableText(
            f"{filename} has {count} page(s) but no extractable text; "
            "it looks scanned. Run OCR on it and upload again."
        )
    return pages


def _open_pdf(data: bytes, filename: str):
    # Imported here so that text-only callers never pay for pypdf's import.
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
    except Exception as exc:  # pypdf raises many types on hostile input
        raise MalformedDocument(f"{filename} is not a readable PDF ({exc}).") from exc
    if not reader.is_encrypted:
        return reader
    try:
        # Many PDFs are encrypted only with an owner password ("no copying");
        # the empty user password opens those for reading.
        opened = reader.decrypt("")
    except DependencyError as exc:
        raise EncryptedDocument(
            f"{filename} is encrypted with a cipher this server cannot open ({exc}); "
            "upload a copy without a password."
        ) from exc
    except Exception as exc:
        raise MalformedDocument(f"{filename}: its encryption dictionary is damaged ({exc}).") from exc
    if not opened:
        raise EncryptedDocument(f"{filename} is password-protected; upload a copy without a password.")
    return reader


def _page_text(reader, index: int, filename: str) -> str:
    try:
        text = reader.pages[index].extract_text() or ""
    except Exception as exc:  # damaged content streams surface here, page by page
        raise MalformedDocument(f"{filename}: page {index + 1} cannot be read ({exc}).") from exc
    return _normalize(text)


def _text_pages(data: bytes, filename: str) -> list[Page]:
    if b"\x00" in data:
        raise MalformedDocument(f"{filename} contains binary data, not text.")
    text = _decode(data, filename)
    if not text.strip():
        raise EmptyDocument(f"{filename} contains only whitespace.")
    chunks = text.split("\f")
    if len(chunks) > 1 and not chunks[-1].strip():
        chunks.pop()  # a trailing form feed ends the last page; it starts none
    return [Page(number=i + 1, text=_normalize(chunk)) for i, chunk in enumerate(chunks)]


def _decode(data: bytes, filename: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        # Theses written on Windows often arrive as cp1252 (umlauts, curly quotes).
        return data.decode("cp1252")
    except UnicodeDecodeError as exc:
        raise MalformedDocument(f"{filename} is neither UTF-8 nor Windows-1252 text.") from exc


def _normalize(text: str) -> str:
    # NFC so that "ü" from a PDF (often u + combining diaeresis) equals a typed "ü".
    text = unicodedata.normalize("NFC", text)
    return text.replace("\r\n", "\n").replace("\r", "\n")
