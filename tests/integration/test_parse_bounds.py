"""What the parse sandbox hands the worker is bounded (issue 29): a document over
CITEQ_PARSE_MAX_TEXT_CHARS fails its item ``document_too_long`` with a reason and harms
nothing else; the upload reaches the sandbox as a file copied a slice at a time. Real
Postgres, real files, the real sandbox."""

from __future__ import annotations

import pytest

from analysis.pipeline.documents.pdftext import DocumentTooLong
from analysis.pipeline.documents.readers import extract_document_within
from analysis.pipeline.intake import parsing, uploads
from analysis.pipeline.intake.uploads import UploadFile
from analysis.settings import PipelineSettings
from tests.conftest import query
from tests.integration.conftest import SAMPLES, open_account


def test_a_document_over_the_text_cap_fails_its_item_typed_and_the_others_parse(queue_broker, conn, monkeypatch):
    monkeypatch.setattr(parsing, "SLICE_BYTES", 4096)  # several slices per file
    open_account(conn, 1)
    source = SAMPLES / "mueller_2021_spaced_homework.txt"
    long_line = ("spacing homework improves recall " * 2000).encode()  # 66,000 characters, one line
    staged = uploads.stage_upload(1, [UploadFile(filename="long.txt", data=long_line, kind="source"),
                                      UploadFile(filename=source.name, data=source.read_bytes(), kind="source"),
                                      UploadFile(filename="sample.pdf", kind="source",
                                                 data=(SAMPLES / "okafor_lindqvist_2019.pdf").read_bytes())], settings=PipelineSettings())

    status = parsing.parse_job(staged.parse_job_id, broker=queue_broker,
                               settings=PipelineSettings.from_env(parse_max_text_chars=20_000))

    assert status == "partial"
    items = dict((r[0], r[1:]) for r in query(conn, "SELECT filename, status::text, error_code, error_reason, "
                                                    "file_bytes IS NULL FROM parse_items ORDER BY ordinal"))
    assert items["long.txt"][:2] == ("failed", "document_too_long")
    assert "66,000 characters" in items["long.txt"][2] and "20,000" in items["long.txt"][2]
    assert items[source.name][0] == items["sample.pdf"][0] == "parsed"
    assert all(row[3] for row in items.values())  # no staged bytes kept
    # the parsed ones are whole: the slices were put back together in order
    (text,) = query(conn, "SELECT string_agg(p.text, '') FROM document_pages p JOIN documents d "
                          "ON d.id = p.document_id WHERE d.filename = %s", source.name)[0]
    assert " ".join(text.split())[:200] == " ".join(source.read_text().split())[:200]
    assert query(conn, "SELECT size_bytes FROM documents WHERE filename = 'sample.pdf'")[0][0] == \
        (SAMPLES / "okafor_lindqvist_2019.pdf").stat().st_size


@pytest.mark.parametrize("data, filename, cap, shown", [
    (b"word " * 30_000, "long.txt", 100_000, "150,000 characters"),  # read, then counted
    (b"a" * 50_000, "long.md", 10_000, "more than 10,000 characters"),  # refused unread: > 4 bytes a character
])
def test_the_cap_counts_characters_and_refuses_a_long_text_before_reading_it(data, filename, cap, shown):
    with pytest.raises(DocumentTooLong, match=shown):
        extract_document_within(data, filename, cap)
    assert extract_document_within(b"# Title\n\nA short text.\n", "short.md", cap).pages
