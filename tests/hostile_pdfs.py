"""Real PDF files built byte by byte, for what no sample file shows: documents made to be
expensive to read, and text that holds control characters. pypdf reads them as it reads
any PDF (objects, a cross-reference table, a trailer)."""

from __future__ import annotations

import io
import zlib


def pdf(pages: list[int], streams: list[bytes], *, compress: bool = True) -> bytes:
    """A PDF whose page ``i`` draws content stream ``pages[i]`` of ``streams`` in Helvetica."""
    first_stream, first_page = 3, 3 + len(streams)
    font = first_page + len(pages)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (first_page + i) for i in range(len(pages))), len(pages)),
    ]
    for content in streams:
        body = zlib.compress(content, 9) if compress else content
        head = b"<< /Length %d /Filter /FlateDecode >>" % len(body) if compress else b"<< /Length %d >>" % len(body)
        objects.append(head + b"\nstream\n" + body + b"\nendstream")
    for index in pages:
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                       b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (first_stream + index, font))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.writelines(b"%010d 00000 n \n" % o for o in offsets)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def text_pdf(*lines: bytes) -> bytes:
    """One page showing each of ``lines`` (PDF string syntax: ``\\000`` is a NUL)."""
    ops = b"".join(b"BT /F1 12 Tf 72 %d Td (%s) Tj ET\n" % (720 - 16 * i, line) for i, line in enumerate(lines))
    return pdf([0], [ops], compress=False)


def shared_stream_pdf(pages: int = 8, repeats: int = 100_000) -> bytes:
    """Many pages drawing one compressed content stream of ``repeats`` text operators: a few
    kB on disk, seconds of CPU per page for a text extractor (issue 11: 18.5 kB, 4 pages,
    36 s). With the defaults, about 15 kB."""
    ops = b"BT /F1 9 Tf 1 0 0 1 72 700 Tm (citeq) Tj ET\n" * repeats
    return pdf([0] * pages, [ops])
