"""The DOCX reader: python-docx (maintained, pure Python over lxml) for paragraphs and
their styles, and the package's ``word/footnotes.xml`` for real footnotes, which
python-docx does not model (and ``word/endnotes.xml`` for endnotes).

A paragraph styled "Heading N", "Überschrift N" or "Title"/"Titel" (or with an outline
level) is a heading. A footnote reference in a run becomes ``[^id]`` in the paragraph's
text, and the footnote's text is stored under that id. Word stores no pages; explicit
page breaks and the page breaks Word rendered last (``lastRenderedPageBreak``) count
pages, so a citation's page is the one Word showed when the file was saved.
"""

from __future__ import annotations

import io
import re
import zipfile

from analysis.pipeline.documents.document import Document, DocumentBuilder, Page, normalize_text
from analysis.pipeline.documents.pdftext import EmptyDocument, MalformedDocument

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLE = re.compile(r"^(?:heading|überschrift|titre|kop)\s*(\d)$", re.I)


def read_docx(data: bytes, filename: str) -> Document:
    """Read a .docx into pages, headings, paragraphs and footnotes, with its core properties."""
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise MalformedDocument(f"{filename} is not a readable Word document ({exc}).") from exc
    except Exception as exc:  # python-docx and lxml raise many types on damaged packages
        raise MalformedDocument(f"{filename} is not a readable Word document ({exc}).") from exc
    builder = DocumentBuilder()
    page = 1
    page_texts: dict[int, list[str]] = {1: []}
    for paragraph in document.paragraphs:
        text, breaks_before, breaks_after = _paragraph_text(paragraph._p)
        page += breaks_before
        page_texts.setdefault(page, [])
        text = normalize_text(text).strip()
        if text:
            level = _heading_level(paragraph)
            if level:
                builder.heading(level, text, page)
            else:
                builder.paragraph(text, page)
            page_texts[page].append(re.sub(r"\[\^[^\]]+\]", "", text))
        page += breaks_after
    for label, note in _notes(document, "footnote") + _notes(document, "endnote"):
        builder.footnote(label, normalize_text(note), _footnote_page(builder, label))
    if not any(page_texts.values()):
        raise EmptyDocument(f"{filename} is a Word document without text.")
    last = max(page_texts)
    pages = [Page(number=n, text="\n\n".join(page_texts.get(n, []))) for n in range(1, last + 1)]
    return builder.build(pages, _core_properties(document))


def _paragraph_text(p) -> tuple[str, int, int]:
    """The paragraph's text with footnote marks, and page breaks before and after its text."""
    parts: list[str] = []
    before = after = 0
    for element in p.iter():
        tag = element.tag
        if tag == f"{_W}t":
            text = element.text or ""
            if _superscript(element) and re.fullmatch(r"\s*\d{1,3}(?:[,–-]\s?\d{1,3})*\s*", text):
                text = "[^" + "".join(text.split()) + "]"  # a raised number: a mark (Vancouver cites so)
            parts.append(text)
        elif tag == f"{_W}tab":
            parts.append(" ")
        elif tag in (f"{_W}br", f"{_W}cr"):
            if element.get(f"{_W}type") == "page":
                if "".join(parts).strip():
                    after += 1
                else:
                    before += 1
            else:
                parts.append("\n")
        elif tag == f"{_W}lastRenderedPageBreak":
            if "".join(parts).strip():
                after += 1
            else:
                before += 1
        elif tag == f"{_W}footnoteReference":
            parts.append(f"[^{element.get(f'{_W}id')}]")
        elif tag == f"{_W}endnoteReference":
            parts.append(f"[^e{element.get(f'{_W}id')}]")
        elif tag == f"{_W}noBreakHyphen":
            parts.append("-")
    return "".join(parts), before, after


def _superscript(t) -> bool:
    run = t.getparent()
    align = run.find(f"{_W}rPr/{_W}vertAlign") if run is not None else None
    return align is not None and align.get(f"{_W}val") == "superscript"


def _heading_level(paragraph) -> int | None:
    style = paragraph.style
    names = []
    while style is not None and len(names) < 5:
        names.append(style.name or "")
        style = style.base_style
    for name in names:
        match = _HEADING_STYLE.match(name.strip())
        if match:
            return max(1, int(match.group(1)))
        if name.strip().lower() in ("title", "titel"):
            return 1
    outline = paragraph._p.find(f"{_W}pPr/{_W}outlineLvl")
    if outline is not None and (outline.get(f"{_W}val") or "").isdigit() and int(outline.get(f"{_W}val")) < 9:
        return int(outline.get(f"{_W}val")) + 1
    return None


def _notes(document, kind: str) -> list[tuple[str, str]]:
    """(label, text) of each real footnote (word/footnotes.xml) or endnote (word/endnotes.xml,
    labelled "e<id>" apart from the footnotes); Word's separators are left out."""
    from lxml import etree

    part = next((rel.target_part for rel in document.part.rels.values()
                 if not rel.is_external and rel.reltype.endswith(f"/{kind}s")), None)
    if part is None:
        return []
    try:
        root = etree.fromstring(part.blob)
    except etree.XMLSyntaxError:
        return []  # damaged notes lose the notes, not the document
    notes = []
    for note in root.iter(f"{_W}{kind}"):
        if note.get(f"{_W}type") in ("separator", "continuationSeparator", "continuationNotice"):
            continue
        paragraphs = ["".join(t.text or "" for t in p.iter(f"{_W}t")) for p in note.iter(f"{_W}p")]
        text = " ".join(" ".join(paragraphs).split())
        if text:
            notes.append(((kind == "endnote") * "e" + str(note.get(f"{_W}id")), text))
    return notes


def _footnote_page(builder: DocumentBuilder, label: str) -> int:
    mark = f"[^{label}]"
    return next((p.page for p in builder.paragraphs if mark in p.text), 1)


def _core_properties(document) -> dict[str, str]:
    props = document.core_properties
    out = {}
    if props.author:
        out["author"] = props.author
    if props.title:
        out["title"] = props.title
    if props.created:
        out["created_year"] = str(props.created.year)
    return out
