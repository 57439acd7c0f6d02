"""The PDF reader: text with its positions (pypdf's ``visitor_text``), laid out again.

pypdf stays the one PDF library: it is already how PDFs are opened and decrypted, it is
pure Python, and its visitor hands every piece of text with its text and transformation
matrices and its font size — all the layout this reader needs. pdfminer.six (or
pdfplumber over it) would add a second, slower parse of every file for character boxes
we would still have to regroup. From the positions this reader

* groups pieces into lines by their baseline, and reads a two-column page column by
  column (a column is found by many lines starting at the same x in the right half while
  the left half holds text on the same baselines; a full-width line, such as a title,
  ends the columns above it);
* removes running headers and footers (lines at the top or bottom of a page whose text,
  digits aside, repeats on at least half of the pages) and page numbers ("3", "- 3 -",
  "Page 3 of 10", "Seite 3 von 10", roman numerals);
* takes small lines at the bottom of a page that start with a number as footnotes, and a
  small number set beside body text as a footnote mark ``[^n]``;
* finds headings by size (larger than the body text, or bold), and by shape (a short,
  unpunctuated line on its own, or a reference-list heading);
* joins words hyphenated at a line end ("evi-/dence" → "evidence") unless the joined word
  is not plausible: the second part starts upper case ("Covid-/Pandemie"), the hyphenated
  spelling occurs elsewhere in the document, or the second part is a common compound
  part ("evidence-/based");
* spells out ligatures (ﬁ ﬂ ﬀ ﬃ ﬄ) and drops soft hyphens (analysis.pipeline.documents.document.normalize_text).
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field

from analysis.pipeline.documents.document import (FOOTNOTE_MARK, Document, DocumentBuilder, Page, normalize_text, superscript_label,
                       superscript_marks)
from analysis.pipeline.documents.headings import is_reference_heading
from analysis.pipeline.documents.pdftext import EmptyDocument, MalformedDocument, NoExtractableText, open_pdf
from analysis.pipeline.documents.sandbox import limit_cpu

#: Second parts that make a compound, not a broken word: "evidence-based", "long-term".
COMPOUND_PARTS = frozenset(
    """based related term level scale specific driven oriented like free wide known making
    friendly aware dependent centred centered focused sized rich poor intensive bound
    born induced informed led run scale step type wise up down in out off on over""".split()
)
_PAGE_NUMBER = re.compile(
    r"^(?:[-–—]\s*)?(?:(?:page|seite|p\.|s\.)\s*)?(?:\d{1,4}|[ivxlcdm]{1,7})(?:\s*(?:of|von|/)\s*\d{1,4})?"
    r"(?:\s*[-–—])?$", re.I)
_NUMBERED_HEADING = re.compile(r"^\d+(?:\.\d+)*\.?\s+[A-ZÄÖÜ]")
_SMALL = 0.86  # a size at most this share of the body size is "small" (footnotes, marks)


@dataclass
class _Frag:
    x: float
    y: float
    size: float
    text: str
    bold: bool

    @property
    def end(self) -> float:
        return self.x + 0.5 * self.size * len(self.text)  # an estimate: no glyph widths


@dataclass
class _Line:
    frags: list[_Frag]
    column: int = 0  # 0 full width or left column, 1 right column
    text: str = ""
    size: float = 0.0
    bold: bool = False
    mark_only: bool = False
    label: str | None = None  # a footnote line's leading number

    @property
    def x(self) -> float:
        return self.frags[0].x

    @property
    def y(self) -> float:
        return self.frags[0].y


@dataclass
class _Block:
    kind: str  # "heading" | "paragraph"
    page: int
    lines: list[str] = field(default_factory=list)
    size: float = 0.0
    #: page -> index of its first line, for a paragraph running on over a page break
    pages: dict[int, int] = field(default_factory=dict)


#: The CPU-time a PDF may take in the parse sandbox grows from a small base with its pages
#: and bytes (capped by CITEQ_PARSE_CPU_SECONDS). Honest pages cost 0.01-0.1 s here (the
#: sample PDFs); an 18.5 kB PDF whose pages share one huge content stream cost seconds a page
#: and took the whole 30 s budget (issue 26): now a small hostile file stops within seconds.
CPU_BASE_SECONDS = 2.0
CPU_SECONDS_PER_PAGE = 0.25
CPU_SECONDS_PER_MB = 1.0


def cpu_allowance(pages: int, size_bytes: int) -> float:
    """CPU seconds a PDF of ``pages`` pages and ``size_bytes`` bytes may take to read."""
    return CPU_BASE_SECONDS + CPU_SECONDS_PER_PAGE * pages + CPU_SECONDS_PER_MB * size_bytes / 1e6


def read_pdf(data: bytes, filename: str) -> Document:
    """Read a PDF into pages, headings, paragraphs and footnotes, with its metadata. In the
    parse sandbox its CPU budget is lowered to :func:`cpu_allowance` once the pages are counted."""
    reader = open_pdf(data, filename)
    try:
        count = len(reader.pages)
    except Exception as exc:  # pypdf raises many types on broken page trees
        raise MalformedDocument(f"{filename}: the page tree is damaged ({exc}).") from exc
    if count == 0:
        raise EmptyDocument(f"{filename} is a PDF with no pages.")
    limit_cpu(cpu_allowance(count, len(data)))
    frags = [_page_frags(reader, i, filename) for i in range(count)]
    if not any(frags):
        raise NoExtractableText(
            f"{filename} has {count} page(s) but no extractable text; "
            "it looks scanned. Run OCR on it and upload again."
        )
    body = _body_size(frags)
    pages = [_lines(page_frags, _width(reader, i), body) for i, page_frags in enumerate(frags)]
    _drop_running_lines(pages)
    return _Layout(pages, body).document(_metadata(reader))


def _width(reader, index: int) -> float:
    try:
        return float(reader.pages[index].mediabox.width) or 595.0
    except Exception:
        return 595.0


def _page_frags(reader, index: int, filename: str) -> list[_Frag]:
    frags: list[_Frag] = []

    def visit(text, cm, tm, font, font_size):
        if not text or not text.strip():
            return
        a, b, c, d, e, f = [float(v) for v in tm]
        x = e * cm[0] + f * cm[2] + cm[4]
        y = e * cm[1] + f * cm[3] + cm[5]
        size = abs(float(font_size or 0)) * math.hypot(a, b) * math.hypot(cm[0], cm[1]) or 10.0
        name = str((font or {}).get("/BaseFont", "")) if hasattr(font, "get") else ""
        bold = bool(re.search(r"bold|black|heavy|semibold", name, re.I))
        for k, piece in enumerate(normalize_text(text).split("\n")):
            if piece.strip():
                frags.append(_Frag(x, y - k * size * 1.2, size, piece, bold))

    try:
        reader.pages[index].extract_text(visitor_text=visit)
    except Exception as exc:  # damaged content streams surface here, page by page
        raise MalformedDocument(f"{filename}: page {index + 1} cannot be read ({exc}).") from exc
    return frags


def _body_size(pages: list[list[_Frag]]) -> float:
    sizes = Counter()
    for frags in pages:
        for f in frags:
            sizes[round(f.size, 1)] += len(f.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


# -- lines and columns -----------------------------------------------------------------------


def _lines(frags: list[_Frag], width: float, body: float) -> list[_Line]:
    """The page's lines in reading order (a two-column page column by column)."""
    rows: list[list[_Frag]] = []
    for frag in sorted(frags, key=lambda f: (-f.y, f.x)):
        if rows:
            anchor = max(rows[-1], key=lambda f: f.size)
            # Within half the larger size of the row's largest piece: a raised mark or a
            # font change stays on its line. But a piece starting where one of the row
            # starts, on another baseline, is the next line of that column, even when a
            # large heading beside it spans both.
            stacked = any(abs(frag.x - f.x) < 1 and abs(frag.y - f.y) > 0.5 * min(frag.size, f.size)
                          for f in rows[-1])
            if abs(anchor.y - frag.y) <= 0.5 * max(anchor.size, frag.size) and not stacked:
                rows[-1].append(frag)
                continue
        rows.append([frag])
    for row in rows:
        row.sort(key=lambda f: f.x)
    split = _column_split(rows, width)
    ordered: list[_Line] = []
    if split is None:
        ordered = [_Line(row) for row in rows]
    else:
        left: list[_Line] = []
        right: list[_Line] = []
        for row in rows:
            lefts = [f for f in row if f.x < split - 1]
            rights = [f for f in row if f.x >= split - 1]
            spanning = lefts and not rights and max(f.end for f in lefts) > split + 0.05 * width
            if spanning:  # a full-width line ends the columns above it
                ordered += left + right + [_Line(row)]
                left, right = [], []
                continue
            if lefts:
                left.append(_Line(lefts, 0))
            if rights:
                right.append(_Line(rights, 1))
        ordered += left + right
    for line in ordered:
        _finish_line(line, body)
    return [line for line in ordered if line.text.strip()]


def _column_split(rows: list[list[_Frag]], width: float) -> float | None:
    """The x where a right column starts, if the page has two columns: many lines start at
    one x in the middle of the page (beside left-column text or, when the columns' lines
    do not share baselines, on their own), and others start at the left margin."""
    starts = Counter()
    beside = Counter()  # of those, starts on a row that has left-column text too
    left_rows = 0
    for row in rows:
        left_rows += row[0].x < 0.3 * width
        for i, frag in enumerate(row):
            if 0.35 * width <= frag.x <= 0.7 * width and (i == 0 or frag.x - row[i - 1].end > 0.02 * width):
                starts[round(frag.x / 3) * 3] += 1
                beside[round(frag.x / 3) * 3] += i > 0 and row[0].x < 0.3 * width
    if not starts or left_rows < 3:
        return None
    x, count = starts.most_common(1)[0]
    paired = sum(n for sx, n in starts.items() if abs(sx - x) <= 6)
    # A right column of a few lines (the end of a reference list at the top of the last
    # page) is too short to be a fifth of the page, but its lines stand beside left text.
    side_by_side = sum(n for sx, n in beside.items() if abs(sx - x) <= 6)
    return float(x - 3) if paired >= 3 and (paired >= 0.2 * len(rows) or side_by_side >= 3) else None


def _finish_line(line: _Line, body: float) -> None:
    """The line's text (footnote marks as ``[^n]``), dominant size and boldness."""
    parts: list[str] = []
    weights = Counter()
    prev: _Frag | None = None
    main = max(line.frags, key=lambda f: (f.size, len(f.text))).size
    for i, frag in enumerate(line.frags):
        text = frag.text
        is_mark = bool(re.fullmatch(r"\d{1,3}(?:[,–-]\s?\d{1,3})*|[*†‡]", text.strip())) and frag.size <= _SMALL * main
        if is_mark and i == 0 and len(line.frags) > 1 and text.strip().isdigit():
            line.label = text.strip()  # a footnote's own number, set small before its text
            prev = frag
            continue
        if is_mark and i > 0:
            parts.append("[^" + "".join(text.split()) + "]")
            prev = frag
            continue
        if parts and prev is not None and not parts[-1].endswith(" ") and not text.startswith(" "):
            # A space where the piece starts past the previous one's (estimated) end, or after
            # punctuation; none inside a word split by a font change or kerning.
            after_gap = frag.x > prev.end - 0.2 * frag.size
            after_punctuation = text[:1].isalnum() and not parts[-1][-1:].isalnum()
            if after_gap or after_punctuation:
                text = " " + text
        parts.append(text)
        weights[round(frag.size, 1)] += len(frag.text)
        prev = frag
    line.text = " ".join("".join(parts).split())
    if line.label is None:
        label, rest = superscript_label(line.text)
        if label is not None and rest:  # "² Weber 2017, S. 3." opens footnote 2
            line.label, line.text = label, rest
    line.text = superscript_marks(line.text)
    line.size = weights.most_common(1)[0][0] if weights else main
    line.bold = all(f.bold for f in line.frags if f.text.strip())
    line.mark_only = not weights


def _drop_running_lines(pages: list[list[_Line]]) -> None:
    """Remove page numbers, and headers and footers that repeat across pages."""
    def edges(lines: list[_Line]) -> list[_Line]:
        if len(lines) < 3:
            return []  # a page of one or two lines is content, whatever repeats
        by_y = sorted(lines, key=lambda l: -l.y)
        return by_y[:2] + by_y[-2:]

    counts = Counter()
    for lines in pages:
        counts.update({_running_key(l.text) for l in edges(lines)})
    threshold = max(2, math.ceil(0.5 * len(pages)))
    for lines in pages:
        drop = [l for l in edges(lines)
                if _PAGE_NUMBER.match(l.text.strip()) or (len(pages) > 1 and counts[_running_key(l.text)] >= threshold)]
        for line in drop:
            if line in lines:
                lines.remove(line)


def _running_key(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


# -- blocks ----------------------------------------------------------------------------------


class _Layout:
    """Turns each page's lines into headings, paragraphs, footnotes and the page text."""

    def __init__(self, pages: list[list[_Line]], body: float) -> None:
        self.pages = pages
        self.body = body
        self.vocabulary = Counter(w.lower() for lines in pages for l in lines for w in re.findall(r"[\w-]+", l.text))
        self.blocks: list[_Block] = []
        self.builder = DocumentBuilder()

    def document(self, metadata: dict[str, str]) -> Document:
        page_texts: list[list[str]] = [[] for _ in self.pages]
        for number, lines in enumerate(self.pages, start=1):
            body_lines, notes = self._footnotes(lines)
            self._page_blocks(body_lines, number)
            for label, text in notes:
                self.builder.footnote(label, text, number)
                page_texts[number - 1].append(f"{label} {text}")
        for block in self.blocks:
            self._emit(block)
        texts = self._page_texts()
        pages = [Page(number=i + 1, text="\n\n".join(filter(None, [texts.get(i + 1, ""), "\n".join(page_texts[i])])))
                 for i in range(len(self.pages))]
        return self.builder.build(pages, metadata)

    def _footnotes(self, lines: list[_Line]) -> tuple[list[_Line], list[tuple[str, str]]]:
        """Small lines at the page bottom that start with a number are footnotes, unless the
        small print is most of the page."""
        zone: list[_Line] = []
        for line in sorted(lines, key=lambda l: l.y):
            if line.size > _SMALL * self.body:
                break
            zone.insert(0, line)
        if len(zone) * 2 > len(lines):
            return lines, []  # most of the page is small print (a list set small): no footnotes
        notes: list[list[str]] = []
        for line in zone:
            label = line.label
            text = line.text
            if label is None:
                m = re.match(r"^(\d{1,3})[.)]?\s+(\S.*)$", text)
                if m:
                    label, text = m.group(1), m.group(2)
            if label is not None:
                notes.append([label, text])
            elif notes:
                notes[-1][1] = self._join(notes[-1][1], text)
        if not notes:
            return lines, []
        first = next(i for i, l in enumerate(zone) if l.label or re.match(r"^\d{1,3}[.)]?\s", l.text))
        taken = set(map(id, zone[first:]))
        return [l for l in lines if id(l) not in taken], [(n[0], n[1]) for n in notes]

    def _page_blocks(self, lines: list[_Line], page: int) -> None:
        gaps = [a.y - b.y for a, b in zip(lines, lines[1:])
                if a.column == b.column and 0 < a.y - b.y < 3 * self.body and abs(a.size - self.body) < 0.5]
        spacing = statistics.median(gaps) if gaps else 1.2 * self.body
        left = {c: min((l.x for l in lines if l.column == c), default=0.0) for c in (0, 1)}
        prev: _Line | None = None
        for i, line in enumerate(lines):
            if self._is_heading(line, lines, i):
                if self.blocks and self.blocks[-1].kind == "heading" and prev is not None \
                        and abs(self.blocks[-1].size - line.size) < 0.5 and prev.y - line.y < 2 * line.size \
                        and self.blocks[-1].page == page:
                    self.blocks[-1].lines.append(line.text)  # a heading wrapped over two lines
                else:
                    self.blocks.append(_Block("heading", page, [line.text], line.size))
                prev = line
                continue
            current = self.blocks[-1] if self.blocks else None
            starts = (
                current is None or current.kind == "heading" or prev is None
                or (prev.column != line.column and _ends_sentence(current.lines[-1]))
                or (prev.column == line.column and prev.y - line.y > 1.45 * spacing)
                or (line.x > left[line.column] + 0.8 * line.size and _ends_sentence(current.lines[-1]))
            )
            if prev is None and current is not None and current.kind == "paragraph" \
                    and not _ends_sentence(current.lines[-1]) and not line.text[:1].isupper():
                starts = False  # a paragraph running on from the previous page
            elif prev is None and current is not None and current.kind == "paragraph" \
                    and current.lines[-1].endswith("-"):
                starts = False
            if starts:
                self.blocks.append(_Block("paragraph", page, [line.text], line.size))
            else:
                self._append(current, line.text, page)
            prev = line

    def _is_heading(self, line: _Line, lines: list[_Line], i: int) -> bool:
        text = line.text.strip()
        words = text.split()
        if not words or len(words) > 15 or re.search(r"[.,;]$", text) or FOOTNOTE_MARK.search(text):
            return False
        if is_reference_heading(text):
            return True
        if line.size >= 1.12 * self.body or (line.bold and len(words) <= 12):
            return not re.fullmatch(r"[\d\W]+", text)
        # At body size: a short numbered line standing alone ("2.1 Methods", a gap above and below).
        alone_above = i == 0 or lines[i - 1].y - line.y > 1.8 * line.size or lines[i - 1].column != line.column
        alone_below = i + 1 == len(lines) or line.y - lines[i + 1].y > 1.8 * line.size
        return alone_above and alone_below and _NUMBERED_HEADING.match(text) is not None and len(words) <= 8

    def _append(self, block: _Block, text: str, page: int) -> None:
        block.lines.append(text)
        if page != block.page:
            block.pages.setdefault(page, len(block.lines) - 1)

    def _emit(self, block: _Block) -> None:
        if block.kind == "heading":
            self.builder.heading(self._level(block.size), " ".join(block.lines), block.page)
            return
        text = block.lines[0]
        breaks = []
        for i, line in enumerate(block.lines[1:], start=1):
            for page, first in block.pages.items():
                if first == i:
                    breaks.append((len(re.sub(r"\s", "", text)), page))
            text = self._join(text, line, keep_break=True)
        self.builder.paragraph(text, block.page, breaks)

    def _level(self, size: float) -> int:
        sizes = sorted({round(b.size) for b in self.blocks if b.kind == "heading"}, reverse=True)
        return sizes.index(round(size)) + 1 if round(size) in sizes else 1

    def _join(self, text: str, line: str, keep_break: bool = False) -> str:
        """Append a line, joining a word hyphenated across the break when that is plausible."""
        m = re.search(r"(\w+)-$", text)
        if m and line[:1].isalpha():
            first = m.group(1)
            second = re.match(r"[\w]+", line).group(0)
            rest = line[len(second):]
            joined, hyphenated = (first + second).lower(), f"{first}-{second}".lower()
            keep = (second[0].isupper() or second.lower() in COMPOUND_PARTS
                    or (self.vocabulary[hyphenated] > 0 and self.vocabulary[joined] == 0))
            word = f"{first}-{second}" if keep else first + second
            return text[: m.start()] + word + rest
        return text + ("\n" if keep_break else " ") + line

    def _page_texts(self) -> dict[int, str]:
        texts: dict[int, list[str]] = {}
        for block in self.blocks:
            if block.kind == "heading":
                texts.setdefault(block.page, []).append(" ".join(block.lines))
                continue
            breaks = block.pages
            chunks = [(block.page, 0)] + sorted((p, i) for p, i in breaks.items() if p != block.page)
            for k, (page, start) in enumerate(chunks):
                end = chunks[k + 1][1] if k + 1 < len(chunks) else len(block.lines)
                part = ""
                for line in block.lines[start:end]:
                    part = self._join(part, line) if part else line
                texts.setdefault(page, []).append(FOOTNOTE_MARK.sub("", part))
        return {page: "\n\n".join(parts) for page, parts in texts.items()}


def _ends_sentence(text: str) -> bool:
    return bool(re.search(r"[.!?:](?:[\"”’)\]]|\[\^[^\]]+\])*$", text.strip()))


def _metadata(reader) -> dict[str, str]:
    """/Author, /Title, /Subject and the year of /CreationDate, as far as they are set."""
    try:
        info = reader.metadata or {}
    except Exception:  # a damaged info dictionary loses the metadata, not the text
        return {}
    out: dict[str, str] = {}
    for key, name in (("/Author", "author"), ("/Title", "title"), ("/Subject", "subject")):
        value = info.get(key)
        if value and str(value).strip():
            out[name] = " ".join(str(value).split())[:500]
    created = str(info.get("/CreationDate") or "")
    year = re.search(r"(?:D:)?((?:19|20)\d{2})", created)
    if year:
        out["created_year"] = year.group(1)
    return out
