"""One thesis in each format (PDF, DOCX, Markdown, plain text) through the real parse step
(a worker) and the real extraction against Postgres: citations, claims, pages, the
method that resolved each source and the reason where none did."""

from __future__ import annotations

import pytest

from analysis.settings import PipelineSettings
from analysis.pipeline.intake import uploads
from analysis.pipeline.intake.uploads import UploadFile
from tests import documents
from tests.conftest import query
from tests.integration.conftest import documents_by_name, open_account, parse_done, running_worker, wait_for
from tests.integration.test_pipeline import start_analysis

FORMATS = {
    "thesis.pdf": documents.thesis_pdf,
    "thesis.docx": documents.thesis_docx,
    "thesis.md": lambda: documents.thesis_markdown().encode(),
    "thesis.txt": lambda: documents.thesis_text().encode(),
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_thesis_in_each_format_is_parsed_extracted_and_resolved(queue_broker, conn, name):
    # Given a thesis in this format and two of its three listed sources, parsed by a worker
    open_account(conn, 1, credits=10)
    files = [UploadFile(filename=name, data=FORMATS[name](), kind="thesis")]
    files += [UploadFile(filename=n, data=t.encode(), kind="source") for n, t in documents.SOURCES.items()]
    staged = uploads.stage_upload(1, files, settings=PipelineSettings())
    with running_worker(queue_broker, threads=2):
        wait_for(lambda: parse_done(conn, staged.parse_job_id), message="parse job finished")
    docs = documents_by_name(conn, staged.session_id)
    assert set(docs) == {name, *documents.SOURCES}
    # The structure outlives the parsing process: it is in Postgres
    structure = query(conn, "SELECT structure FROM documents WHERE id = %s", docs[name])[0][0]
    assert {"References", "1 Introduction"} <= {h["text"] for h in structure["headings"]}

    # When an analysis of it is run
    job_id = start_analysis(conn, queue_broker, 1, docs[name], [docs[n] for n in documents.SOURCES])

    rows = query(conn, """
        SELECT c.marker, c.claim, c.page, d.filename, c.match_method, c.unresolved_reason
        FROM job_citations c LEFT JOIN documents d ON d.id = c.source_document_id
        WHERE c.job_id = %s ORDER BY c.ordinal""", job_id)
    by_marker = {r[0]: r for r in rows}
    # Then every citation is found, with the claim it supports and no heading glued to it
    nakamura_fn = "Nakamura, 2020" if name.endswith(".txt") else "Nakamura 2020, p. 3"
    assert [r[0] for r in rows] == ["Castillo, 2018", "Castillo (2018)", nakamura_fn, "Ghost, 2001",
                                    "Nakamura (2020)", "Lee, 2019"]
    assert by_marker["Castillo, 2018"][1] == "Green roofs lowered roof surface temperatures by up to 20 degrees."
    assert by_marker["Castillo (2018)"][1] == "green roofs reduce the energy needed for cooling."
    assert by_marker[nakamura_fn][1] == "Heat waves raised mortality among older adults."
    assert by_marker["Nakamura (2020)"][1] == "excess mortality rose by 18 percent."
    assert by_marker["Lee, 2019"][1] == "deaths at home fell."
    # And resolved by DOI (prefix, upper case, trailing dot) and by author and year
    assert by_marker["Castillo, 2018"][3:5] == ("castillo_source.txt", "doi")
    assert by_marker["Nakamura (2020)"][3:5] == ("heat_notes.txt", "author_year")
    # Or left unresolved with the reason
    assert by_marker["Ghost, 2001"][3:] == (None, None, "no reference entry for 'Ghost 2001'")
    assert by_marker["Lee, 2019"][3:] == (None, None, "reference found but no uploaded source matches 'Lee 2019'")
    # With the page each citation is on
    expected_pages = [1, 1, 1, 1, 2, 2] if name.endswith(".pdf") else [1] * 6
    assert [r[2] for r in rows] == expected_pages
