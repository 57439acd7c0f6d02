"""Hostile documents in an upload cost no more than their own failure (issue 11): one too
complex to read fails fast with ``document_too_complex``; text holding a NUL is stored
without it; a write the database refuses fails its item instead of leaving it running."""

from __future__ import annotations

from analysis.pipeline.intake import parsing, uploads
from analysis.settings import PipelineSettings
from analysis.pipeline.intake.uploads import UploadFile
from tests.conftest import query
from tests.hostile_pdfs import shared_stream_pdf, text_pdf
from tests.integration.conftest import open_account, sample_files


def items_of(user_id: int, parse_job_id: int) -> dict:
    return {i.filename: i for i in uploads.parse_status(user_id, parse_job_id, settings=PipelineSettings()).items}


def test_a_document_over_the_cpu_budget_fails_as_too_complex_and_the_rest_of_its_upload_parses(
        queue_broker, conn):
    open_account(conn, 1)
    staged = uploads.stage_upload(1, [UploadFile(filename="shared-stream.pdf", data=shared_stream_pdf())]
                                  + sample_files("castillo_2018_green_roofs.pdf"), settings=PipelineSettings())

    status = parsing.parse_job(staged.parse_job_id, settings=PipelineSettings(parse_cpu_seconds=1))

    assert status == "partial"
    items = items_of(1, staged.parse_job_id)
    assert items["shared-stream.pdf"].error_code == "document_too_complex"
    assert "CPU" in items["shared-stream.pdf"].error_reason
    assert items["castillo_2018_green_roofs.pdf"].status == uploads.ParseItemStatus.PARSED
    assert query(conn, "SELECT count(*) FROM parse_items WHERE file_bytes IS NOT NULL")[0][0] == 0


def test_text_holding_a_nul_is_stored_without_it(queue_broker, conn):
    open_account(conn, 1)
    data = text_pdf(b"Green roofs cool\\000 cities by 2 degrees (Castillo, 2018).")
    staged = uploads.stage_upload(1, [UploadFile(filename="nul.pdf", data=data, kind="thesis")],
                                  settings=PipelineSettings())

    assert parsing.parse_job(staged.parse_job_id, settings=PipelineSettings()) == "succeeded"

    (text,), = query(conn, "SELECT text FROM document_pages")
    assert text == "Green roofs cool cities by 2 degrees (Castillo, 2018)."
    assert query(conn, "SELECT count(*) FROM chunks WHERE position(chr(1) in text) > 0")[0][0] == 0


def test_a_write_the_database_refuses_fails_the_item_with_a_reason_instead_of_looping(
        queue_broker, conn, monkeypatch):
    open_account(conn, 1)
    # Given text that reaches the database with its NUL (as before the cleaning existed)
    monkeypatch.setattr(parsing, "clean_tree", lambda value: value)
    staged = uploads.stage_upload(1, [UploadFile(filename="nul.pdf", data=text_pdf(b"a\\000b"))]
                                  + sample_files("nakamura_heat_notes.txt"), settings=PipelineSettings())

    assert parsing.parse_job(staged.parse_job_id, settings=PipelineSettings()) == "partial"

    items = items_of(1, staged.parse_job_id)
    assert items["nul.pdf"].error_code == "document_not_stored"
    assert query(conn, "SELECT attempts FROM parse_items WHERE filename = 'nul.pdf'")[0][0] == 1
    assert items["nakamura_heat_notes.txt"].status == uploads.ParseItemStatus.PARSED
