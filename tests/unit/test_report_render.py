"""The report's renderers on hand-made rows (no database): CSV quoting and BOM, HTML escaping."""

from __future__ import annotations

import csv
import io

from analysis.surface import report


def test_csv_escapes_quotes_newlines_and_formulas_and_parses_back():
    job, rows = _job_row(), [
        (0, 'Smith, "2020"', 'He said "no",\nthen\r\nyes; a, b', 2, None, None, None, None, "no reference found",
         "source_missing", 1.0, None, None, "No source", None, None),
        (1, "[2]", "=HYPERLINK(\"http://x\")", None, 5, "s.pdf", "[2] S.", "doi", None, "supported", 0.5,
         "quoted \"evidence\"", 3, "ok", 9, None),
    ]
    built = report.assemble(job, rows)
    text = report.render_csv(built)
    parsed = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")))
    assert len(parsed) == 3
    assert parsed[1][3] == 'He said "no",\nthen\r\nyes; a, b' and parsed[1][2] == 'Smith, "2020"'
    assert parsed[2][3] == "'=HYPERLINK(\"http://x\")"  # never a live formula in a spreadsheet
    assert parsed[2][10] == 'quoted "evidence"' and parsed[2][11] == "3" and parsed[2][13] == "yes"
    assert built.counts["supported"] == 1 and built.counts["source_missing"] == 1 and built.judged == 2


def test_html_escapes_every_value():
    job = _job_row(filename="<script>alert(1)</script>.pdf")
    rows = [(0, "<b>x</b>", "<img src=x onerror=alert(1)>", 1, None, None, "<i>ref</i>", None, "why & <how>",
             None, None, None, None, None, None, None)]
    doc = report.render_html(report.assemble(job, rows))
    assert "<script>" not in doc and "<img" not in doc and "<b>x" not in doc and "<i>ref" not in doc
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.pdf" in doc and "why &amp; &lt;how&gt;" in doc
    assert 'data-verdict="pending"' in doc


def _job_row(filename: str = "thesis.pdf") -> tuple:
    from datetime import datetime, timezone

    now = datetime.now(timezone.utc)
    return (1, "running", None, None, "bm25", now, now, None, None, 10, filename, 3,
            [{"id": 5, "filename": "s.pdf", "doi": None, "pages": 4}])


def test_csv_of_a_report_without_citations_is_its_header_row():
    text = report.render_csv(report.assemble(_job_row(), []))
    assert text == "\ufeff" + ",".join(report.CSV_COLUMNS) + "\r\n"


def test_the_html_report_opens_with_what_needs_attention_in_verdict_order_and_the_verdict_first_in_each_row():
    rows = [(i, f"[{i}]", f"claim {i}", 1, 5, "s.pdf", None, "author_year", None, verdict, 0.5, "quote", 2, "why",
             None, None)
            for i, verdict in enumerate(["supported", "uncertain", "not_supported", "uncertain", "partially_supported"])]
    doc = report.render_html(report.assemble(_job_row(), rows))
    block = doc[doc.index('<section class="attention">'):doc.index("</section>")]
    assert "4 of 5 citations need you." in block
    assert [part.split('"')[0] for part in block.split('<li class="v-')[1:]] == [
        "not_supported", "partially_supported", "uncertain"]
    assert "2 uncertain</span> citations 2, 4" in block
    assert doc.index("Needs attention") < doc.index("<h2>Citations</h2>")
    first_row = doc[doc.index('id="citation-1"'):]
    assert first_row.index('class="verdict"') < first_row.index('class="claim"')
    assert "author_year" not in doc and "found by author and year" in doc and "Checked by" in doc


def test_a_report_with_nothing_to_look_at_says_so():
    rows = [(0, "[1]", "claim", 1, 5, "s.pdf", None, "doi", None, "supported", 0.9, "q", 2, "why", None, None)]
    doc = report.render_html(report.assemble(_job_row(), rows))
    assert "Nothing needs attention: every citation is supported by its source." in doc


def test_a_german_claim_with_english_evidence_says_so_with_the_evidence_page():
    rows = [
        (0, "(Achterberg 2020)", "Die Therapietreue unterschied sich zwischen den Gruppen nicht.", 2, 5, "s.pdf",
         None, "author_year", None, "uncertain", 0.0,
         "Medication adherence, assessed by pill counts, did not differ between the groups.", 2, "why", None, None),
        (1, "(Achterberg 2020)", "Adherence did not differ between the groups.", 3, 5, "s.pdf", None,
         "author_year", None, "supported", 0.8,
         "Medication adherence, assessed by pill counts, did not differ between the groups.", 2, "why", None, None),
    ]
    built = report.assemble(_job_row(), rows)

    assert [c.cross_language for c in built.citations] == ["German claim, English source", None]
    assert '"cross_language": "German claim, English source"' in report.render_json(built)
    doc = report.render_html(built)
    assert doc.count("source p. 2") == 2
    assert doc.count('source p. 2 · <span class="cross-language">German claim, English source</span>') == 1
