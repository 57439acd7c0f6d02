"""Turn uploaded bytes into numbered pages of plain text, and the errors of every reader.

The readers themselves are in analysis/pipeline/documents/readers.py (one per format: PDF, DOCX, Markdown,
plain text; `readers.extract_pages` is their pages alone). PDFs are opened with `pypdf`: pure
Python, no system libraries (no poppler, no MuPDF), actively maintained, and it copes with
the everyday damage of real-world PDFs when asked not to be strict.

Every failure is a `ParseError` subclass whose message is a reason a user can act on; a
parse item fails with that reason and nothing else is harmed.
"""

from __future__ import annotations

import io

from analysis.pipeline.documents.document import Page


#: The PDF header; the spec lets it start anywhere in the first 1024 bytes.
PDF_MAGIC = b"%PDF-"

__all__ = ["Page", "ParseError"]


class ParseError(Exception):
    """The upload could not be read as a document."""

    def __init__(self, reason: str | None = None) -> None:
        self.reason = reason or (type(self).__doc__ or "").strip()
        super().__init__(self.reason)


class MalformedDocument(ParseError):
    """The file is damaged or is not the kind of document its name says."""


class EncryptedDocument(ParseError):
    """The PDF is password-protected; upload a copy without a password."""


class DocumentTooLong(ParseError):
    """The document has more text than one upload may have; split it into parts."""


class EmptyDocument(ParseError):
    """The file is empty."""


class NoExtractableText(ParseError):
    """The PDF has no text layer (it looks scanned); run OCR on it and upload again."""


class UnsupportedFileType(ParseError):
    """Only PDF, Word (.docx), Markdown (.md) and plain text (.txt) files are supported."""


def open_pdf(data: bytes, filename: str):
    """A pypdf reader over `data`, decrypted when only an owner password locks it."""
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


def decode_text(data: bytes, filename: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        # Theses written on Windows often arrive as cp1252 (umlauts, curly quotes).
        return data.decode("cp1252")
    except UnicodeDecodeError as exc:
        raise MalformedDocument(f"{filename} is neither UTF-8 nor Windows-1252 text.") from exc
