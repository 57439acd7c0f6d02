"""Build the labelled evaluation corpus (eval/) from its committed specs.

Developer tool: it needs `fpdf2` (the dev extra) and a DejaVu TrueType font, which users
never do, because the generated files are committed next to their specs. Run from the
repository root:

    .venv/bin/python scripts/make_eval_corpus.py            # every eval/*/spec.json
    .venv/bin/python scripts/make_eval_corpus.py eval/e02_med_numeric_pdf

Each thesis folder holds ``spec.json`` (what to build and the truth of every planted
citation) and ``spec/`` (the thesis body and the source texts as plain UTF-8). This
script writes the thesis (PDF, DOCX, Markdown or text), its sources under ``sources/`` and
``labels.json``: the page every marker landed on and the claim it supports, computed
from the rendering, so labels never drift from the files. eval/README.md describes both
formats. All texts are invented; DOIs use 10.5555, Crossref's test prefix.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "eval"
FONT_DIRS = [Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/TTF"), Path("/Library/Fonts")]
FIXED_DATE = dt.datetime(2025, 3, 1, 12, 0, tzinfo=dt.timezone.utc)
#: ⟦c01:marker as written⟧, ⟦c03,c04:[2–5]⟧, ⟦c07:^text of a footnote⟧
MARKUP = re.compile(r"⟦([\w,]+):(.*?)⟧", re.S)
PAGEBREAK = "---pagebreak---"
#: Abbreviations that do not end a sentence (for the default claim of a citation).
ABBREVIATIONS = ("e.g.", "i.e.", "cf.", "vgl.", "z. B.", "d. h.", "bzw.", "ca.", "Dr.", "Nr.", "u. a.", "et al.",
                 "p.", "pp.", "S.", "vs.", "etc.", "Abs.", "Art.", "Fig.", "No.")


# -- the spec -------------------------------------------------------------------------------


@dataclass
class Block:
    kind: str  #: heading | para | pagebreak
    text: str = ""
    level: int = 1


@dataclass
class Mark:
    """A planted marker in the rendered text."""

    ids: list[str]
    text: str  #: as written (for a footnote: its number)
    footnote: str | None = None
    page: int = 1
    start: int = 0  #: offset in its rendered paragraph
    end: int = 0
    para: int = 0


def read_blocks(body: str) -> list[Block]:
    """Body text: ``#`` headings, blank-line paragraphs, ``---pagebreak---`` lines."""
    blocks: list[Block] = []
    for chunk in re.split(r"\n\s*\n", body.strip()):
        chunk = chunk.strip()
        if chunk == PAGEBREAK:
            blocks.append(Block("pagebreak"))
        elif chunk.startswith("#"):
            level = len(chunk) - len(chunk.lstrip("#"))
            blocks.append(Block("heading", chunk[level:].strip(), level))
        else:
            blocks.append(Block("para", " ".join(chunk.split())))
    return blocks


def render_para(text: str, footnote_style: str, counter: list[int]) -> tuple[str, list[Mark]]:
    """The paragraph as printed and its marks. Footnotes become ``footnote_style``
    (``md``: ``[^n]``; ``docx``: an empty span the DOCX writer turns into a reference)."""
    out, marks, pos = [], [], 0
    for m in MARKUP.finditer(text):
        out.append(text[pos:m.start()])
        ids, body = m.group(1).split(","), m.group(2)
        start = sum(len(p) for p in out)
        if body.startswith("^"):
            counter[0] += 1
            n = counter[0]
            shown = f"[^{n}]" if footnote_style == "md" else ""
            marks.append(Mark(ids, str(n), footnote=body[1:].strip(), start=start, end=start + len(shown)))
            out.append(shown)
        else:
            marks.append(Mark(ids, body, start=start, end=start + len(body)))
            out.append(body)
        pos = m.end()
    out.append(text[pos:])
    return "".join(out), marks


def sentence_of(text: str, start: int, spans: list[tuple[int, int]]) -> tuple[int, int]:
    """The sentence around offset ``start``; a full stop inside a marker or an
    abbreviation ends nothing."""
    def is_boundary(i: int) -> bool:
        if any(a <= i < b for a, b in spans):
            return False
        if not (i + 1 >= len(text) or text[i + 1] == " "):
            return False
        head = text[:i + 1]
        if any(head.endswith(" " + a) or head == a for a in ABBREVIATIONS):
            return False
        nxt = text[i + 2:i + 3]
        return nxt == "" or nxt.isupper() or nxt.isdigit() or nxt in "\"“„("
    begin = 0
    for i in range(start - 1, -1, -1):
        if text[i] in ".!?" and is_boundary(i):
            begin = i + 2
            break
    end = len(text)
    for i in range(start, len(text)):
        if text[i] in ".!?" and is_boundary(i):
            end = i + 1
            break
    return begin, end


def default_claim(text: str, marks: list[Mark], mark: Mark) -> str:
    spans = [(m.start, m.end) for m in marks]
    begin, end = sentence_of(text, mark.start, spans)
    sentence = text[begin:end]
    for m in sorted(marks, key=lambda m: -m.start):
        if begin <= m.start < end:
            cut_a, cut_b = m.start - begin, m.end - begin
            sentence = sentence[:cut_a] + sentence[cut_b:]
    sentence = re.sub(r"\(\s*\)|\[\s*\]", "", sentence)
    sentence = re.sub(r"\(\s*[;,]?\s*\)", "", sentence)
    sentence = " ".join(sentence.split())
    return re.sub(r"\s+([,.;:!?])", r"\1", sentence).strip()


# -- PDF ------------------------------------------------------------------------------------


def _font(name: str) -> Path:
    for d in FONT_DIRS:
        if (d / name).exists():
            return d / name
    sys.exit(f"font {name} not found in {FONT_DIRS}: install fonts-dejavu")


LIGATURES = (("ffi", "ﬃ"), ("ffl", "ﬄ"), ("fi", "ﬁ"), ("fl", "ﬂ"), ("ff", "ﬀ"))
VOWELS = set("aeiouyäöüAEIOUYÄÖÜ")


class PdfLayout:
    """A small typesetter: greedy lines, hyphenation at line ends, one or two columns,
    running header and footer, ligature glyphs; knows the page of every word it sets."""

    def __init__(self, *, columns: int = 1, header: str | None = None, footer: str | None = None,
                 ligatures: bool = False, hyphenate: bool = False, order: str = "column",
                 title: str | None = None, author: str | None = None, size: float = 11) -> None:
        from fpdf import FPDF

        pdf = FPDF(format="A4", unit="mm")
        pdf.set_auto_page_break(False)
        pdf.add_font("Serif", "", str(_font("DejaVuSerif.ttf")))
        pdf.add_font("Serif", "B", str(_font("DejaVuSerif-Bold.ttf")))
        pdf.set_creation_date(FIXED_DATE)
        pdf.set_producer("citeq eval corpus")
        if title:
            pdf.set_title(title)
        if author:
            pdf.set_author(author)
        self.pdf, self.columns, self.header, self.footer = pdf, columns, header, footer
        self.ligatures, self.hyphenate, self.order, self.size = ligatures, hyphenate, order, size
        self.left, self.right, self.top, self.bottom = 22.0, 22.0, 25.0, 272.0
        self.gutter = 8.0
        self.col_width = (210 - self.left - self.right - self.gutter * (columns - 1)) / columns
        self.page = 0
        self.lines: list[tuple[int, float, str, str, float]] = []  # column, y, style, text, size
        self._new_page()

    def _new_page(self) -> None:
        if self.page:
            self._flush()
        self.pdf.add_page()
        self.page += 1
        self.col, self.y = 0, self.top

    def _flush(self) -> None:
        pdf = self.pdf
        if self.header:
            pdf.set_font("Serif", "", 8.5)
            pdf.text(self.left, 14, self.header)
        if self.footer:
            pdf.set_font("Serif", "", 8.5)
            label = self.footer.format(page=self.page)
            pdf.text(105 - pdf.get_string_width(label) / 2, 285, label)
        lines = self.lines
        if self.order == "row":  # content stream row by row across the columns
            lines = sorted(lines, key=lambda line: (round(line[1], 1), line[0]))
        for col, y, style, text, size in lines:
            pdf.set_font("Serif", style, size)
            pdf.text(self.left + col * (self.col_width + self.gutter), y, text)
        self.lines = []

    def _advance(self, height: float) -> None:
        if self.y + height > self.bottom:
            if self.col + 1 < self.columns:
                self.col, self.y = self.col + 1, self.top
            else:
                self._new_page()

    def _set(self, text: str, style: str, size: float, height: float) -> int:
        self._advance(height)
        self.y += height
        self.lines.append((self.col, self.y, style, text, size))
        return self.page

    def page_break(self) -> None:
        self._new_page()

    def vspace(self, mm: float) -> None:
        if self.y > self.top:
            self.y += mm

    def heading(self, text: str, size: float | None = None) -> None:
        size = size or self.size + 2
        self.vspace(3)
        if self.y + 3 * size * 0.45 > self.bottom:  # keep a heading with its first lines
            self._advance(self.bottom)
        for line in self._break(text.split(), "B", size, protect=set(range(len(text.split())))):
            self._set(line[0], "B", size, size * 0.5)
        self.y += 1.5

    def paragraph(self, text: str, marks: list[Mark], *, size: float | None = None) -> None:
        """Set a paragraph; each mark's page is the page of its first word."""
        size = size or self.size
        words, owners, protect, pos = [], [], set(), 0
        for w in text.split(" "):
            begin, end = pos, pos + len(w)
            pos = end + 1
            if not w:
                continue
            inside = [m for m in marks if m.start < end and m.end > begin]
            owners.append([m for m in marks if begin <= m.start < end])
            if inside:
                protect.add(len(words))
            words.append(w)
        for line, owned in self._break(words, "", size, protect=protect, owners=owners):
            page = self._set(line, "", size, size * 0.47)
            for m in owned:
                m.page = page
        self.y += 2.2

    def _glyphs(self, word: str) -> str:
        if not self.ligatures:
            return word
        for plain, glyph in LIGATURES:
            word = word.replace(plain, glyph)
        return word

    def _break(self, words, style, size, *, protect, owners=None):
        """Greedy line breaking; (line text, marks starting on it)."""
        pdf = self.pdf
        pdf.set_font("Serif", style, size)
        width = self.col_width
        owners = owners or [[] for _ in words]
        line, owned = "", []
        i = 0
        shown = [w if i in protect else self._glyphs(w) for i, w in enumerate(words)]
        pending = None  # the rest of a hyphenated word
        while i < len(words):
            word = pending if pending is not None else shown[i]
            candidate = f"{line} {word}" if line else word
            if pdf.get_string_width(candidate) <= width:
                line = candidate
                if pending is None:
                    owned += owners[i]
                pending = None
                i += 1
                continue
            if self.hyphenate and i not in protect and pending is None:
                split = self._hyphen_point(word, line, width)
                if split:
                    line = f"{line} {word[:split]}-" if line else word[:split] + "-"
                    owned += owners[i]
                    yield line, owned
                    line, owned, pending = "", [], word[split:]
                    continue
            if not line:  # a word longer than the line: set it alone
                line = word
                owned += owners[i] if pending is None else []
                pending = None
                i += 1
            yield line, owned
            line, owned = "", []
        if line:
            yield line, owned

    def _hyphen_point(self, word: str, line: str, width: float) -> int | None:
        """Where to break a long plain word so its head fits: after a vowel followed by a
        consonant, at least three letters either side."""
        core = word.rstrip(".,;:")
        if len(core) < 8 or not core.isalpha():
            return None
        def fits(split: int) -> bool:
            head = f"{line} {word[:split]}-" if line else word[:split] + "-"
            return self.pdf.get_string_width(head) <= self.col_width

        def consonant(ch: str) -> bool:
            return ch.isalpha() and ch not in VOWELS

        for split in range(len(core) - 3, 2, -1):  # between two consonants after a vowel: "recom-mend"
            if (consonant(core[split - 1]) and consonant(core[split]) and core[split - 2] in VOWELS
                    and core[split + 1] in VOWELS and fits(split)):
                return split
        for split in range(len(core) - 3, 2, -1):  # before a consonant that starts a syllable: "re-port"
            if core[split - 1] in VOWELS and consonant(core[split]) and core[split + 1] in VOWELS and fits(split):
                return split
        return None

    def output(self) -> bytes:
        self._flush()
        return bytes(self.pdf.output())


# -- DOCX -----------------------------------------------------------------------------------

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def _run(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r>'


def _para(runs: str, style: str | None = None) -> str:
    props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f"<w:p>{props}{runs}</w:p>"


def write_docx(path: Path, items: list[tuple[str, str, list[Mark]]], *, title: str | None,
               author: str | None) -> None:
    """A Word document written part by part (python-docx cannot make footnotes).

    ``items``: (kind, text, marks) with kind heading1, heading2, para, pagebreak. Footnote
    marks become real footnotes (word/footnotes.xml, referenced by w:footnoteReference).
    """
    body, notes = [], []
    for kind, text, marks in items:
        if kind == "pagebreak":
            body.append('<w:p><w:r><w:br w:type="page"/></w:r></w:p>')
            continue
        if kind.startswith("heading"):
            body.append(_para(_run(text), "Heading" + kind[-1]))
            continue
        runs, pos = [], 0
        for m in sorted(marks, key=lambda m: m.start):
            if m.footnote is None:
                continue
            runs.append(_run(text[pos:m.start]))
            runs.append('<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr>'
                        f'<w:footnoteReference w:id="{m.text}"/></w:r>')
            notes.append(f'<w:footnote w:id="{m.text}"><w:p><w:pPr><w:pStyle w:val="FootnoteText"/></w:pPr>'
                         '<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteRef/></w:r>'
                         f'{_run(" " + m.footnote)}</w:p></w:footnote>')
            pos = m.end
        runs.append(_run(text[pos:]))
        body.append(_para("".join(runs)))
    document = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="{W_NS}" '
                f'xmlns:r="{R_NS}"><w:body>{"".join(body)}<w:sectPr><w:pgSz w:w="11906" w:h="16838"/>'
                '<w:pgMar w:top="1417" w:right="1417" w:bottom="1134" w:left="1417" w:header="708" '
                'w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>')
    footnotes = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:footnotes xmlns:w="{W_NS}" '
                 f'xmlns:r="{R_NS}"><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r>'
                 '</w:p></w:footnote><w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r>'
                 f'<w:continuationSeparator/></w:r></w:p></w:footnote>{"".join(notes)}</w:footnotes>')
    styles = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:styles xmlns:w="{W_NS}">'
              '<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>'
              '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/>'
              '<w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/><w:pPr><w:outlineLvl w:val="0"/>'
              '</w:pPr><w:rPr><w:b/><w:sz w:val="32"/></w:rPr></w:style>'
              '<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/>'
              '<w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/><w:pPr><w:outlineLvl w:val="1"/>'
              '</w:pPr><w:rPr><w:b/><w:sz w:val="26"/></w:rPr></w:style>'
              '<w:style w:type="paragraph" w:styleId="FootnoteText"><w:name w:val="footnote text"/>'
              '<w:basedOn w:val="Normal"/><w:rPr><w:sz w:val="20"/></w:rPr></w:style>'
              '<w:style w:type="character" w:styleId="FootnoteReference"><w:name w:val="footnote reference"/>'
              '<w:rPr><w:vertAlign w:val="superscript"/></w:rPr></w:style></w:styles>')
    settings = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:settings xmlns:w="{W_NS}">'
                '<w:footnotePr><w:footnote w:id="-1"/><w:footnote w:id="0"/></w:footnotePr></w:settings>')
    rels = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships '
            'xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            'styles" Target="styles.xml"/>'
            '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            'settings" Target="settings.xml"/>'
            '<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            'footnotes" Target="footnotes.xml"/></Relationships>')
    root_rels = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships '
                 'xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                 '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                 'relationships/officeDocument" Target="word/document.xml"/>'
                 '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/'
                 'metadata/core-properties" Target="docProps/core.xml"/></Relationships>')
    wml = "application/vnd.openxmlformats-officedocument.wordprocessingml"
    types = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types '
             'xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
             '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
             '<Default Extension="xml" ContentType="application/xml"/>'
             f'<Override PartName="/word/document.xml" ContentType="{wml}.document.main+xml"/>'
             f'<Override PartName="/word/styles.xml" ContentType="{wml}.styles+xml"/>'
             f'<Override PartName="/word/settings.xml" ContentType="{wml}.settings+xml"/>'
             f'<Override PartName="/word/footnotes.xml" ContentType="{wml}.footnotes+xml"/>'
             '<Override PartName="/docProps/core.xml" '
             'ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>')
    core = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<cp:coreProperties '
            'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
            + (f"<dc:title>{escape(title)}</dc:title>" if title else "")
            + (f"<dc:creator>{escape(author)}</dc:creator>" if author else "")
            + '<dcterms:created xsi:type="dcterms:W3CDTF">2025-03-01T12:00:00Z</dcterms:created>'
            '</cp:coreProperties>')
    parts = {"[Content_Types].xml": types, "_rels/.rels": root_rels, "docProps/core.xml": core,
             "word/document.xml": document, "word/_rels/document.xml.rels": rels, "word/styles.xml": styles,
             "word/settings.xml": settings, "word/footnotes.xml": footnotes}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, xml in parts.items():
            info = zipfile.ZipInfo(name, date_time=(2025, 3, 1, 12, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, xml)


# -- one thesis -----------------------------------------------------------------------------


@dataclass
class Rendered:
    paras: list[tuple[str, list[Mark]]] = field(default_factory=list)


def build(folder: Path) -> dict:
    spec = json.loads((folder / "spec.json").read_text())
    thesis = spec["thesis"]
    fmt = thesis["format"]
    blocks = read_blocks((folder / "spec" / thesis["body"]).read_text())
    refs = spec["references"]
    ref_lines = [r["text"] for r in refs]
    counter = [0]
    footnote_style = "md" if fmt == "md" else "docx" if fmt == "docx" else "none"
    items: list[tuple[str, str, list[Mark]]] = []
    for b in blocks:
        if b.kind == "para":
            text, marks = render_para(b.text, footnote_style, counter)
            items.append(("para", text, marks))
        elif b.kind == "heading":
            items.append((f"heading{min(b.level, 2)}", b.text, []))
        else:
            items.append(("pagebreak", "", []))
    heading = thesis["references_heading"]
    out = folder / thesis["file"]
    front = [thesis["title"], thesis.get("byline", "")]
    if fmt == "pdf":
        layout = thesis.get("layout", {})
        pdf = PdfLayout(columns=layout.get("columns", 1), header=layout.get("header"), footer=layout.get("footer"),
                        ligatures=layout.get("ligatures", False), hyphenate=layout.get("hyphenate", False),
                        order=layout.get("order", "column"), size=layout.get("size", 11))
        pdf.heading(front[0], size=15)
        if front[1]:
            pdf.paragraph(front[1], [])
        for kind, text, marks in items:
            if kind == "pagebreak":
                pdf.page_break()
            elif kind.startswith("heading"):
                pdf.heading(text)
            else:
                pdf.paragraph(text, marks)
        pdf.heading(heading)
        for line in ref_lines:
            pdf.paragraph(line, [], size=pdf.size - 1)
        out.write_bytes(pdf.output())
    elif fmt == "docx":
        head = [("heading1", front[0], [])] + ([("para", front[1], [])] if front[1] else [])
        write_docx(out, head + items + [("heading1", heading, [])] + [("para", line, []) for line in ref_lines],
                   title=front[0], author=thesis.get("author"))
        page = 1
        for kind, _, marks in items:
            page += kind == "pagebreak"
            for m in marks:
                m.page = page
    else:
        lines = [("# " if fmt == "md" else "") + front[0], ""]
        if front[1]:
            lines += [front[1], ""]
        page = 1
        for kind, text, marks in items:
            if kind == "pagebreak":
                if fmt == "txt":
                    lines.append("\f")
                    page += 1
                continue
            for m in marks:
                m.page = page
            if kind.startswith("heading"):
                level = int(kind[-1])
                lines += [("#" * (level + 1) + " " if fmt == "md" else "") + text, ""]
            else:
                lines += [_wrap(text) if fmt == "txt" else text, ""]
        lines += [heading, ""]
        for line in ref_lines:
            lines += [_wrap(line) if fmt == "txt" else line, ""]
        if fmt == "md":
            notes = [m for _, _, marks in items for m in marks if m.footnote is not None]
            lines += [f"[^{m.text}]: {m.footnote}" for m in notes]
        out.write_text("\n".join(lines).replace("\n\f\n", "\f") + "\n")
    for s in spec["sources"]:
        build_source(folder, s)
    return labels(spec, items)


def _wrap(text: str, width: int = 92) -> str:
    """Hard line breaks, as text exported from an editor often has."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False))


def build_source(folder: Path, s: dict) -> None:
    text = (folder / "spec" / s["text"]).read_text().strip()
    path = folder / s["file"]
    path.parent.mkdir(exist_ok=True)
    kind = path.suffix.lstrip(".")
    if kind == "pdf":
        meta = s.get("pdf_metadata", {})
        pdf = PdfLayout(header=s.get("header"), footer=s.get("footer"), ligatures=s.get("ligatures", False),
                        hyphenate=s.get("hyphenate", False), title=meta.get("title"), author=meta.get("author"),
                        size=10.5)
        for b in read_blocks(text):
            if b.kind == "heading":
                pdf.heading(b.text, size=13 if b.level == 1 else 11.5)
            elif b.kind == "pagebreak":
                pdf.page_break()
            else:
                pdf.paragraph(b.text, [])
        path.write_bytes(pdf.output())
    elif kind == "docx":
        items = []
        for b in read_blocks(text):
            items.append((f"heading{min(b.level, 2)}" if b.kind == "heading" else b.kind, b.text, []))
        meta = s.get("docx_metadata", {})
        write_docx(path, items, title=meta.get("title"), author=meta.get("author"))
    elif kind == "md":
        path.write_text(text + "\n")
    else:
        blocks = read_blocks(text)
        path.write_text("\n\n".join(b.text if b.kind != "pagebreak" else "\f" for b in blocks) + "\n")


def labels(spec: dict, items) -> dict:
    refs = {r["key"]: r for r in spec["references"]}
    sources = {s["reference"]: s for s in spec["sources"]}
    cites = spec["citations"]
    found: dict[str, dict] = {}
    for kind, text, marks in items:
        for m in marks:
            for cid in m.ids:
                c = cites[cid]
                ref = refs[c["ref"]]
                found[cid] = {
                    "id": cid,
                    "marker": m.text if m.footnote is None else f"footnote {m.text}",
                    "footnote": m.footnote,
                    "claim": c.get("claim") or default_claim(text, marks, m),
                    "page": m.page,
                    "reference": ref["text"],
                    "ref_author": ref.get("author"),
                    "ref_year": ref.get("year"),
                    "ref_number": ref.get("number"),
                    "source": sources[c["ref"]]["file"] if c["ref"] in sources else None,
                    "verdict": c["verdict"],
                    "forms": c.get("forms", []),
                    "contradiction": c.get("contradiction", []),
                    "note": c.get("note", ""),
                }
                for key in ("evidence_pages", "evidence"):  # where labelled (eval/README.md)
                    if key in c:
                        found[cid][key] = c[key]
    missing = sorted(set(cites) - set(found))
    if missing:
        sys.exit(f"{spec['thesis']['file']}: citations without a marker in the body: {missing}")
    thesis = spec["thesis"]
    return {
        "thesis": thesis["file"],
        "format": thesis["format"],
        "language": thesis["language"],
        "style": thesis["style"],
        "field": thesis.get("field"),
        "features": thesis.get("features", []),
        "sources": [{"file": s["file"], "reference": refs[s["reference"]]["text"],
                     "identified_by": s["identified_by"]} for s in spec["sources"]],
        "not_uploaded": [r["text"] for k, r in refs.items() if k not in sources],
        "citations": sorted(found.values(), key=lambda c: c["id"]),
    }


def main(argv: list[str]) -> int:
    folders = [Path(a) for a in argv] or sorted(p.parent for p in EVAL.glob("*/spec.json"))
    total = 0
    for folder in folders:
        result = build(folder.resolve())
        (folder / "labels.json").write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n")
        total += len(result["citations"])
        print(f"{folder.name}: {result['thesis']}, {len(result['citations'])} citations, "
              f"{len(result['sources'])} sources")
    print(f"{len(folders)} theses, {total} planted citations")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
