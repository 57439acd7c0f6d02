"""Real documents for the reader and pipeline tests, built on the spot.

PDFs come from fpdf2 with every line placed by hand, so a test knows exactly where a line
breaks, which lines run as headers and footers, where the columns are and which lines are
footnotes. DOCX files come from python-docx, with a real footnote part added to the
package (python-docx writes none of its own). The core Helvetica font keeps the PDFs free
of system fonts (Latin-1: "ü" works, an en dash does not).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

#: A thesis in one neutral form, rendered into every format by the helpers below.
THESIS_TITLE = "Cooling Cities with Green Roofs"
THESIS_BODY = [
    ("heading", "1 Introduction"),
    ("para", "Green roofs lowered roof surface temperatures by up to 20 degrees (Castillo, 2018). "
             "According to Castillo (2018), green roofs reduce the energy needed for cooling."),
    ("para", "Heat waves raised mortality among older adults [FN]. Street trees shade pedestrians "
             "(Ghost, 2001)."),
    ("heading", "2 Results"),
    ("para", "Nakamura (2020) found that excess mortality rose by 18 percent, whereas deaths at home "
             "fell (Lee, 2019)."),
]
THESIS_FOOTNOTE = "Vgl. Nakamura 2020, p. 3."
THESIS_REFERENCES = [
    "Castillo, R., & Feld, A. (2018). Surface temperatures of green roofs. Urban Climate, 6, 12-29. "
    "https://doi.org/10.5555/GR.2018.77",
    "Lee, K. (2019). Where people die in heat waves. Public Health Notes, 3, 1-9.",
    "Nakamura, Y. (2020). Heat waves and excess mortality in older adults. Working notes, 7.",
]
#: Sources for the thesis: Castillo by DOI (written with a prefix and upper case), Nakamura
#: by author and year on its first page; Lee is listed but never uploaded; Ghost is not listed.
SOURCES = {
    "castillo_source.txt": "Surface temperatures of green roofs\nR. Castillo and A. Feld\n"
                           "doi:10.5555/gr.2018.77.\n\nExtensive green roofs lowered midday roof surface "
                           "temperatures by up to 20 degrees. They also reduced the energy needed for cooling.\n",
    "heat_notes.txt": "Heat waves and excess mortality in older adults\nYuki Nakamura, 2020\n\n"
                      "Excess mortality rose by 18 percent among adults over 75 during heat waves.\n",
}


def thesis_markdown() -> str:
    lines = [f"# {THESIS_TITLE}", ""]
    for kind, text in THESIS_BODY:
        lines += [f"## {text}" if kind == "heading" else text.replace("[FN]", "[^1]"), ""]
    lines += ["## References", ""] + [f"{r}\n" for r in THESIS_REFERENCES]
    lines += [f"[^1]: {THESIS_FOOTNOTE}", ""]
    return "\n".join(lines)


def thesis_text() -> str:
    """Plain text has no footnotes: the footnoted sentence cites in parentheses instead."""
    lines = [THESIS_TITLE, "", ]
    for kind, text in THESIS_BODY:
        lines += [text.replace(" [FN]", " (Nakamura, 2020)"), ""]
    lines += ["References", ""] + [f"{r}\n" for r in THESIS_REFERENCES]
    return "\n".join(lines)


def thesis_docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading(THESIS_TITLE, level=0)
    for kind, text in THESIS_BODY:
        if kind == "heading":
            document.add_heading(text, level=1)
            continue
        before, _, after = text.partition("[FN]")
        paragraph = document.add_paragraph(before.rstrip())
        if after or "[FN]" in text:
            add_footnote_reference(paragraph, 1)
            paragraph.add_run(after)
    document.add_heading("References", level=1)
    for ref in THESIS_REFERENCES:
        document.add_paragraph(ref)
    add_footnotes_part(document, {1: THESIS_FOOTNOTE})
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def add_footnote_reference(paragraph, note_id: int) -> None:
    """A real ``w:footnoteReference`` run, as Word writes one."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    run = paragraph.add_run()
    props = OxmlElement("w:rPr")
    align = OxmlElement("w:vertAlign")
    align.set(qn("w:val"), "superscript")
    props.append(align)
    run._r.append(props)
    reference = OxmlElement("w:footnoteReference")
    reference.set(qn("w:id"), str(note_id))
    run._r.append(reference)


def add_footnotes_part(document, notes: dict[int, str]) -> None:
    """word/footnotes.xml with Word's two separators and the given notes, related to the body."""
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part

    ns = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = "".join(
        f'<w:footnote w:id="{i}"><w:p><w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:footnoteRef/></w:r>'
        f'<w:r><w:t xml:space="preserve"> {text}</w:t></w:r></w:p></w:footnote>' for i, text in notes.items())
    xml = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:footnotes xmlns:w="{ns}">'
           '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
           '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r>'
           f'</w:p></w:footnote>{body}</w:footnotes>')
    part = Part(PackURI("/word/footnotes.xml"),
                "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml",
                xml.encode("utf-8"), document.part.package)
    document.part.relate_to(part, RT.FOOTNOTES)


# -- PDFs, placed line by line -----------------------------------------------------------------


@dataclass
class PdfLine:
    text: str
    x: float = 25.0
    size: float = 11.0
    bold: bool = False
    gap: float = 0.0  #: extra space above the line, in mm
    y: float | None = None  #: an absolute position (mm from the top), for columns and footers
    marks: list[tuple[str, str]] = field(default_factory=list)  #: (text before, superscript) pieces


def make_pdf(pages: list[list[PdfLine]], *, header: str | None = None, footer: str | None = None,
             metadata: dict[str, str] | None = None) -> bytes:
    """A PDF whose lines sit exactly where the test says; `header`/`footer` repeat on every
    page ("{n}" and "{total}" become the page number and count)."""
    from fpdf import FPDF

    pdf = FPDF(format="A4", unit="mm")
    pdf.set_auto_page_break(False)
    for key, value in (metadata or {}).items():
        getattr(pdf, f"set_{key}")(value)
    for number, lines in enumerate(pages, start=1):
        pdf.add_page()
        if header:
            _put(pdf, 25, 12, header.format(n=number, total=len(pages)), 9)
        if footer:
            _put(pdf, 95, 287, footer.format(n=number, total=len(pages)), 9)
        y = 30.0
        for line in lines:
            if line.y is not None:
                line_y = line.y
            else:
                y += line.gap
                line_y = y
                y += line.size * 0.5
            if line.marks:
                x = line.x
                for before, mark in line.marks:
                    _put(pdf, x, line_y, before, line.size, line.bold)
                    x += pdf.get_string_width(before)
                    if mark:
                        _put(pdf, x, line_y - 1.2, mark, line.size * 0.6)
                        x += pdf.get_string_width(mark) + 0.3
            else:
                _put(pdf, line.x, line_y, line.text, line.size, line.bold)
    return bytes(pdf.output())


def _put(pdf, x: float, y: float, text: str, size: float, bold: bool = False) -> None:
    pdf.set_font("helvetica", "B" if bold else "", size)
    pdf.text(x, y, text)


def thesis_pdf() -> bytes:
    """The thesis as a two-page PDF with a running header, page numbers, a footnote with a
    superscript mark, and hyphenated line ends."""
    page1 = [
        PdfLine(THESIS_TITLE, size=16, bold=True),
        PdfLine("1 Introduction", size=13, bold=True, gap=6),
        PdfLine("Green roofs lowered roof surface temperatures by up to 20 degrees", gap=3),
        PdfLine("(Castillo, 2018). According to Castillo (2018), green roofs reduce the ener-"),
        PdfLine("gy needed for cooling."),
        PdfLine("", marks=[("Heat waves raised mortality among older adults.", "1"),
                           (" Street trees shade pedestrians", "")], gap=3),
        PdfLine("(Ghost, 2001)."),
        PdfLine("1 " + THESIS_FOOTNOTE, size=8, y=270),
    ]
    page2 = [
        PdfLine("2 Results", size=13, bold=True),
        PdfLine("Nakamura (2020) found that excess mortality rose by 18 percent, where-", gap=3),
        PdfLine("as deaths at home fell (Lee, 2019)."),
        PdfLine("References", size=13, bold=True, gap=6),
    ]
    for ref in THESIS_REFERENCES:
        words = ref.split()
        page2.append(PdfLine(" ".join(words[:9]), gap=2))
        page2.append(PdfLine(" ".join(words[9:]), x=30))
    return make_pdf([page1, page2], header="Green roofs - a thesis", footer="Page {n} of {total}",
                    metadata={"author": "A. Student", "title": THESIS_TITLE})
