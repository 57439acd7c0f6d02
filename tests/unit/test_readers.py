"""Each reader on a real file: PDF (fpdf2: running headers, page numbers, two columns,
footnotes, hyphenation), DOCX (python-docx with a real footnote part), Markdown, text."""

from __future__ import annotations

import io

import pytest

from analysis.pipeline.documents.document import Document, normalize_text
from analysis.pipeline.documents.pdftext import MalformedDocument, UnsupportedFileType
from analysis.pipeline.documents.readers import extract_document
from tests import documents
from tests.documents import PdfLine, make_pdf


def _texts(doc: Document) -> list[str]:
    return [" ".join(p.text.split()) for p in doc.paragraphs]


def test_pdf_reader_drops_running_headers_and_page_numbers_and_keeps_structure():
    doc = extract_document(documents.thesis_pdf(), "thesis.pdf")
    everything = " ".join(p.text for p in doc.pages) + " ".join(_texts(doc))
    assert "Green roofs - a thesis" not in everything
    assert "Page 1 of 2" not in everything and "Page 2 of 2" not in everything
    assert [(h.text, h.page) for h in doc.headings] == [
        (documents.THESIS_TITLE, 1), ("1 Introduction", 1), ("2 Results", 2), ("References", 2)]
    assert doc.headings[0].level < doc.headings[1].level
    # Headings are never part of a paragraph
    assert not any(t.startswith(("1 Introduction", "2 Results")) for t in _texts(doc))
    assert doc.metadata["author"] == "A. Student" and doc.metadata["title"] == documents.THESIS_TITLE


def test_pdf_reader_joins_hyphenated_words_and_keeps_real_compounds():
    page = [
        PdfLine("The evi-"), PdfLine("dence is strong for evidence-"), PdfLine("based teaching in the Covid-"),
        PdfLine("Pandemie and for long-"), PdfLine("term effects, as the data show."),
    ]
    doc = extract_document(make_pdf([page]), "h.pdf")
    assert _texts(doc) == ["The evidence is strong for evidence-based teaching in the Covid-Pandemie "
                           "and for long-term effects, as the data show."]


def test_pdf_reader_reads_a_two_column_page_column_by_column():
    left = ["Left one begins the", "left column and it", "goes on down here.", "Left ends here."]
    right = ["Right one begins the", "right column and it", "goes on down there.", "Right ends here."]
    page = [PdfLine("A Title Spanning The Whole Page Width Of The Paper Here", size=14, bold=True, y=25)]
    for i, (l, r) in enumerate(zip(left, right)):
        page += [PdfLine(l, x=20, y=40 + 6 * i), PdfLine(r, x=110, y=40 + 6 * i)]
    doc = extract_document(make_pdf([page]), "cols.pdf")
    text = " ".join(_texts(doc))
    assert text == " ".join(left + right)
    assert doc.headings[0].text.startswith("A Title Spanning")


def test_pdf_reader_takes_small_numbered_bottom_lines_as_footnotes_and_marks_them():
    doc = extract_document(documents.thesis_pdf(), "thesis.pdf")
    assert [(f.label, f.text, f.page) for f in doc.footnotes] == [("1", documents.THESIS_FOOTNOTE, 1)]
    assert any("older adults.[^1]" in t for t in _texts(doc))
    assert documents.THESIS_FOOTNOTE not in " ".join(_texts(doc))


def test_pdf_page_numbers_in_german_and_alone_are_dropped():
    words = ["alpha", "beta", "gamma"]
    pages = [[PdfLine(f"Text of the {w} page goes here,", y=60), PdfLine(f"and {w} says something.", y=66),
              PdfLine(f"More about {w} follows.", y=80)] for w in words]
    doc = extract_document(make_pdf(pages, footer="Seite {n}"), "de.pdf")
    assert "Seite" not in " ".join(p.text for p in doc.pages)
    doc = extract_document(make_pdf(pages, footer="- {n} -"), "n.pdf")
    assert [p.text for p in doc.pages] == [
        f"Text of the {w} page goes here, and {w} says something.\n\nMore about {w} follows." for w in words]


def test_docx_reader_reads_heading_styles_paragraphs_and_real_footnotes():
    doc = extract_document(documents.thesis_docx(), "thesis.docx")
    assert [(h.text, h.level) for h in doc.headings] == [
        (documents.THESIS_TITLE, 1), ("1 Introduction", 1), ("2 Results", 1), ("References", 1)]
    assert [(f.label, f.text) for f in doc.footnotes] == [("1", documents.THESIS_FOOTNOTE)]
    assert "Heat waves raised mortality among older adults[^1]. Street trees shade pedestrians (Ghost, 2001)." \
        in _texts(doc)
    assert len(doc.paragraphs) == 6 and doc.pages[0].number == 1


def test_docx_reader_knows_german_heading_styles_and_page_breaks():
    import docx
    from docx.enum.text import WD_BREAK

    document = docx.Document()
    document.styles["Heading 2"].name = "Überschrift 2"
    document.add_paragraph("Einleitung", style="Überschrift 2")
    document.add_paragraph("Erster Absatz.").add_run().add_break(WD_BREAK.PAGE)
    document.add_paragraph("Zweiter Absatz auf Seite zwei.")
    buffer = io.BytesIO()
    document.save(buffer)
    doc = extract_document(buffer.getvalue(), "de.docx")
    assert [(h.text, h.level) for h in doc.headings] == [("Einleitung", 2)]
    assert [(p.text, p.page) for p in doc.paragraphs] == [("Erster Absatz.", 1), ("Zweiter Absatz auf Seite zwei.", 2)]


def test_markdown_reader_headings_paragraphs_footnotes_and_inline_markup():
    text = ("Title\n=====\n\nIntro *with* **markup** and a [link](https://x.org) here.[^a]\nwrapped line.\n\n"
            "Section\n-------\n\n### Deeper\n\n- item one (Lee, 2018)\n- item two\n\n1. Numbered entry\n\n"
            "```\ncode (Nope, 2000)\n```\n\n[^a]: Lee 2018, p. 4.\n    continued.\n")
    doc = extract_document(text.encode(), "t.md")
    assert [(h.level, h.text) for h in doc.headings] == [(1, "Title"), (2, "Section"), (3, "Deeper")]
    assert _texts(doc) == ["Intro with markup and a link here.[^a] wrapped line.", "item one (Lee, 2018)",
                           "item two", "1. Numbered entry"]
    assert [(f.label, f.text) for f in doc.footnotes] == [("a", "Lee 2018, p. 4. continued.")]


def test_text_reader_paragraphs_and_headings_by_shape():
    text = "1 Introduction\n\nFirst line of a paragraph\nwrapped on. Done.\n\n## References\n\nLee, K. (2018). T. J.\n"
    doc = extract_document(text.encode(), "t.txt")
    assert [h.text for h in doc.headings] == ["1 Introduction", "References"]
    assert _texts(doc)[0] == "First line of a paragraph wrapped on. Done."
    assert doc.paragraphs[0].text.count("\n") == 1  # line breaks kept for reference lists


def test_ligatures_and_soft_hyphens_are_normalised():
    assert normalize_text("ﬁrst ﬂow eﬀect oﬃce baﬄe") == "first flow effect office baffle"
    assert normalize_text("evi\u00ad\ndence and soft\u00adhyphen") == "evidence and softhyphen"
    doc = extract_document("Die ﬁnale Studie.".encode(), "t.txt")
    assert doc.paragraphs[0].text == "Die finale Studie."


def test_unknown_types_and_broken_docx_fail_with_their_errors():
    with pytest.raises(UnsupportedFileType, match="docx"):
        extract_document(b"data", "thesis.odt")
    with pytest.raises(MalformedDocument, match="Word"):
        extract_document(b"PK\x03\x04 broken", "thesis.docx")


def test_a_document_is_picklable_and_round_trips_through_its_stored_structure():
    import pickle

    doc = extract_document(documents.thesis_docx(), "thesis.docx")
    assert pickle.loads(pickle.dumps(doc)) == doc
    again = Document.from_stored(doc.pages, doc.structure())
    assert again.model_dump(exclude={"metadata"}) == doc.model_dump(exclude={"metadata"})


def test_a_paragraph_running_over_a_page_break_knows_where_each_citation_is():
    from analysis.pipeline.citations import extract_citations

    pages = [[PdfLine("Intro", size=14, bold=True), PdfLine("Roofs cool the top floor (Abel, 2020) and they", gap=3),
              PdfLine("save energy in summer, as the")],
             [PdfLine("measurements of a whole year show (Baker, 2019)."), PdfLine("References", size=14, bold=True, gap=6),
              PdfLine("Abel, A. (2020). Roofs. J, 1.", gap=3), PdfLine("Baker, B. (2019). Energy. J, 2.", gap=3)]]
    doc = extract_document(make_pdf(pages), "run-on.pdf")
    body = [p for p in doc.paragraphs if "Roofs cool" in p.text]
    assert len(body) == 1 and body[0].page == 1 and body[0].breaks
    assert [(c.marker, c.page) for c in extract_citations(doc)] == [("Abel, 2020", 1), ("Baker, 2019", 2)]


def test_superscript_numbers_without_footnotes_are_numeric_citations_in_a_numbered_thesis():
    from analysis.pipeline.citations import extract_citations

    page = [PdfLine("", marks=[("Green roofs cool the roof surface.", "1,3"), (" Streets stay warm.", "2")]),
            PdfLine("References", size=14, bold=True, gap=6),
            PdfLine("1. Castillo R. Green roofs. Urban Clim. 2018;6:1-9.", gap=3),
            PdfLine("2. Nakamura Y. Heat waves. Notes. 2020.", gap=3),
            PdfLine("3. Feld A. Roof surfaces. J Build. 2019;2:3-4.", gap=3)]
    citations = extract_citations(extract_document(make_pdf([page]), "vancouver.pdf"))
    assert [(c.marker, c.kind, c.claim) for c in citations] == [
        ("[1]", "numeric", "Green roofs cool the roof surface."), ("[3]", "numeric", "Green roofs cool the roof surface."),
        ("[2]", "numeric", "Streets stay warm.")]
    assert [c.reference.first_author for c in citations] == ["Castillo", "Feld", "Nakamura"]


def test_unicode_superscript_marks_and_footnote_labels_in_a_pdf():
    from fpdf import FPDF

    from analysis.pipeline.citations import extract_citations

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    pdf.text(25, 40, "Heat raises mortality among older adults.\u00b9 Roofs cool the top floor.\u00b2")
    pdf.set_font("helvetica", size=14)
    pdf.text(25, 60, "Literatur")
    pdf.set_font("helvetica", size=11)
    pdf.text(25, 70, "M\u00fcller, H. (2019). Hitze. Arbeitspapier.")
    pdf.text(25, 78, "Weber, M. (2017). Dächer. Zeitschrift, 2, 1-4.")
    pdf.set_font("helvetica", size=8)
    pdf.text(25, 270, "\u00b9 Vgl. M\u00fcller 2019, S. 12.")
    pdf.text(25, 275, "\u00b2 Weber 2017, S. 3.")
    doc = extract_document(bytes(pdf.output()), "sup.pdf")
    assert [(f.label, f.text) for f in doc.footnotes] == [("1", "Vgl. Müller 2019, S. 12."), ("2", "Weber 2017, S. 3.")]
    citations = extract_citations(doc)
    assert [(c.marker, c.claim, c.reference.key) for c in citations] == [
        ("Müller 2019, S. 12", "Heat raises mortality among older adults.", "muller2019"),
        ("Weber 2017, S. 3", "Roofs cool the top floor.", "weber2017")]


def test_docx_superscript_numbers_cite_a_numbered_list():
    import docx

    from analysis.pipeline.citations import extract_citations

    document = docx.Document()
    paragraph = document.add_paragraph("Green roofs cool the roof surface.")
    paragraph.add_run("1,2").font.superscript = True
    document.add_heading("References", level=1)
    document.add_paragraph("1. Castillo R. Green roofs. Urban Clim. 2018;6:1-9.")
    document.add_paragraph("2. Nakamura Y. Heat waves. Notes. 2020.")
    buffer = io.BytesIO()
    document.save(buffer)
    citations = extract_citations(extract_document(buffer.getvalue(), "v.docx"))
    assert [(c.marker, c.claim, c.reference.first_author) for c in citations] == [
        ("[1]", "Green roofs cool the roof surface.", "Castillo"), ("[2]", "Green roofs cool the roof surface.", "Nakamura")]


def test_a_large_heading_in_the_left_column_does_not_merge_the_right_columns_lines():
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("helvetica", size=10)
    left = ["Ferries carry most island freight.", "Timetables changed in 2019.", "Delays grew on two routes.",
            "Crews were short in winter.", "Ports raised their tolls.", "Fewer boats sailed at night."]
    right = ["The main effect of the new timetable", "was on commuters. Their trips grew longer by",
             "about ten minutes on average. The change in",
             "punctuality was larger on the northern routes", "than on the southern ones.", "Freight was spared."]
    for i, text in enumerate(left):
        pdf.text(20, 40 + 4.2 * i, text)
    for i, text in enumerate(right):
        pdf.text(110, 40 + 4.2 * i, text)
    pdf.set_font("helvetica", size=18)
    pdf.text(20, 46.3, "Sampling")  # large, halfway between the right column's second and third lines
    doc = extract_document(bytes(pdf.output()), "columns.pdf")
    text = " ".join(p.text.replace("\n", " ") for p in doc.paragraphs)
    assert "longer by about ten minutes" in text
    assert "The change in punctuality was larger on the northern routes" in text


def test_a_right_column_of_a_few_lines_beside_a_long_left_one_is_still_a_column():
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("helvetica", size=10)
    left = [f"Left column sentence number {i} goes on here." for i in range(1, 31)]
    right = ["Okafor, N. (2020) Ferry fares and", "island incomes. Leith: Harbour Press.",
             "Varga, T. (2017) Night crossings.", "Oban: Sound Books."]
    for i, text in enumerate(left):
        pdf.text(20, 30 + 5 * i, text)
    for i, text in enumerate(right):
        pdf.text(110, 30 + 5 * i, text)
    doc = extract_document(bytes(pdf.output()), "short-right.pdf")
    text = " ".join(p.text.replace("\n", " ") for p in doc.paragraphs)
    assert "number 1 goes on here. Left column sentence number 2" in text
    assert "Ferry fares and island incomes. Leith: Harbour Press." in text
    assert text.index("number 30") < text.index("Okafor")
