"""Page extraction from real files: sample PDFs, text sources and broken fixtures."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from analysis.pipeline.documents.pdftext import (
    EmptyDocument,
    EncryptedDocument,
    MalformedDocument,
    NoExtractableText,
    ParseError,
    UnsupportedFileType,
)
from analysis.pipeline.documents.readers import extract_pages

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_data"
FIXTURES = ROOT / "tests" / "data"


def test_multi_page_thesis_pdf_keeps_page_numbers_and_text():
    # Given a generated thesis PDF with a text layer over several pages
    data = (SAMPLES / "thesis_retrieval_practice.pdf").read_bytes()
    # When its pages are extracted
    pages = extract_pages(data, "thesis_retrieval_practice.pdf")
    # Then pages are numbered from 1 and carry the text where it was printed
    assert [p.number for p in pages] == list(range(1, len(pages) + 1))
    assert len(pages) >= 2
    assert "Retrieval Practice in Everyday Teaching" in pages[0].text
    assert "References" in pages[-1].text or "References" in pages[-2].text
    assert "Müller" in " ".join(p.text for p in pages)


def test_text_source_is_one_page_with_umlauts_intact():
    data = (SAMPLES / "mueller_2021_spaced_homework.txt").read_bytes()
    pages = extract_pages(data, "mueller_2021_spaced_homework.txt")
    assert len(pages) == 1
    assert pages[0].number == 1
    assert "Hanna Müller" in pages[0].text


def test_form_feeds_split_a_text_file_into_pages_and_a_trailing_one_adds_none():
    data = b"first page\fsecond page\fthird page\f"
    pages = extract_pages(data, "notes.md")
    assert [(p.number, p.text) for p in pages] == [(1, "first page"), (2, "second page"), (3, "third page")]


def test_pdf_is_detected_by_magic_bytes_not_by_extension():
    # Given PDF bytes uploaded under a misleading name
    data = (SAMPLES / "castillo_2018_green_roofs.pdf").read_bytes()
    # When extracted
    pages = extract_pages(data, "castillo.txt")
    # Then they are read as a PDF, not decoded as text
    assert "extensive green roofs" in pages[0].text.lower()
    assert "%PDF" not in pages[0].text


def test_windows_1252_text_is_decoded():
    pages = extract_pages("Müller schrieb „Grüße“.".encode("cp1252"), "brief.txt")
    assert pages[0].text == "Müller schrieb „Grüße“."


def test_pdf_with_owner_password_only_opens():
    # Given a PDF encrypted with an empty user password (a "no copying" PDF)
    writer = PdfWriter(clone_from=PdfReader(SAMPLES / "hartmann_2020_feedback.pdf"))
    writer.encrypt(user_password="", owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    # When extracted
    pages = extract_pages(buffer.getvalue(), "locked.pdf")
    # Then the text is readable
    assert "Immediate feedback" in pages[0].text


@pytest.mark.parametrize(
    ("fixture", "error", "reason_part"),
    [
        ("truncated.pdf", MalformedDocument, "not a readable PDF"),
        ("encrypted.pdf", EncryptedDocument, "password"),
        ("empty.pdf", EmptyDocument, "empty"),
        ("image_only.pdf", NoExtractableText, "OCR"),
    ],
)
def test_broken_files_fail_with_a_typed_error_and_a_human_reason(fixture, error, reason_part):
    # Given a broken fixture file
    data = (FIXTURES / fixture).read_bytes()
    # When it is extracted, Then the specific ParseError names the file and the reason
    with pytest.raises(error) as caught:
        extract_pages(data, fixture)
    assert isinstance(caught.value, ParseError)
    assert fixture in caught.value.reason
    assert reason_part in caught.value.reason
    assert str(caught.value) == caught.value.reason


@pytest.mark.parametrize(
    ("data", "filename", "error"),
    [
        (b"just text, not a pdf", "paper.pdf", MalformedDocument),
        (b"PK\x03\x04 zip bytes", "thesis.docx", MalformedDocument),  # .docx is read now; this is no zip
        (b"PK\x03\x04 zip bytes", "thesis.odt", UnsupportedFileType),
        (b"no extension", "README", UnsupportedFileType),
        (b" \n\t \n", "blank.txt", EmptyDocument),
        (b"text\x00with nul", "data.txt", MalformedDocument),
        (b"\x81\x8d\x8f\x90\x9d", "odd.txt", MalformedDocument),
    ],
)
def test_wrong_content_fails_with_the_matching_error(data, filename, error):
    with pytest.raises(error) as caught:
        extract_pages(data, filename)
    assert caught.value.reason


def test_error_without_a_reason_uses_its_docstring():
    assert "OCR" in str(NoExtractableText())
