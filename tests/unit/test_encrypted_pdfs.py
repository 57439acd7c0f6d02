"""AES-encrypted PDFs (issue 29): one that opens without a user password parses; one that
needs a password fails as ``encrypted_document``, not as a damaged file. Real PDFs from the
sample corpus, encrypted by pypdf's writer."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from analysis.pipeline.documents.pdftext import EncryptedDocument
from analysis.pipeline.documents.readers import extract_document

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "okafor_lindqvist_2019.pdf"


def encrypted(user_password: str, algorithm: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(SAMPLE))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize("algorithm", ["AES-128", "AES-256"])
def test_an_aes_pdf_without_a_user_password_parses_like_the_original(algorithm):
    data = encrypted("", algorithm)
    assert b"/Encrypt" in data

    document = extract_document(data, "locked.pdf")

    original = extract_document(SAMPLE.read_bytes(), SAMPLE.name)
    assert [p.text for p in document.pages] == [p.text for p in original.pages]
    assert len(document.pages) >= 1 and document.pages[0].text.strip()


@pytest.mark.parametrize("algorithm", ["AES-128", "AES-256"])
def test_an_aes_pdf_with_a_user_password_is_an_encrypted_document(algorithm):
    with pytest.raises(EncryptedDocument, match="password-protected"):
        extract_document(encrypted("reader-secret", algorithm), "locked.pdf")
