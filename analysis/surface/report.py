"""The report of one analysis: what a lecturer reads, as one model rendered four ways.

:func:`build` reads it from the database only (two named queries of ``surface/queries.sql``, both
filtered by the user, so another user's job is never read), never from a worker's memory:
a report of a running job shows the verdicts written so far and the citations still
waiting for a judge. :func:`render_html` (a self-contained, printable A4 document),
:func:`render_csv` (UTF-8 with a BOM for spreadsheets), :func:`render_json` and
:func:`verdict_table` (plain text for a terminal) all render that one model, so the
dashboard, the HTTP routes, ``citeq report`` and the demo show the same facts.

The model is :mod:`analysis.surface.report_model`'s and the HTML document
:mod:`analysis.surface.report_html`'s; callers import both from here.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone

from analysis import db
from analysis.surface import terminal
from analysis.surface.report_html import html_chunks, render_html
from analysis.surface.report_model import (
    LANGUAGE_NAMES, MATCHED_BY, NO_CITATIONS, NONE, PENDING, VERDICT_LABELS, JobFacts, Report, ReportCitation,
    ResolvedReference, SourceFacts, ThesisFacts, finding, judge_words, label, retrieval_words,
)

#: The names callers import from here (``report.build``, ``report.render_html``, ``report.Report``):
#: the model and the HTML document live in report_model and report_html.
__all__ = [
    "CSV_COLUMNS", "LANGUAGE_NAMES", "MATCHED_BY", "NO_CITATIONS", "NONE", "PENDING", "STREAM_BATCH",
    "VERDICT_LABELS", "JobFacts", "Report", "ReportCitation", "ResolvedReference", "SourceFacts", "ThesisFacts",
    "assemble", "build", "build_head", "citation_batches", "csv_chunks", "finding", "html_chunks",
    "json_chunks", "judge_words", "label", "render_csv", "render_html", "render_json", "retrieval_words",
    "stream", "verdict_table",
]


# -- building ---------------------------------------------------------------------------------


def build(broker, job_id: int, *, user_id: int) -> Report | None:
    """The report of the user's job, or None when the user has no such job."""
    with broker.connection() as conn, conn.cursor() as cur:
        job = db.one(cur, "report_job_one", job_id=job_id, user_id=user_id)
        if job is None:
            return None
        rows = db.many(cur, "report_citations_many", job_id=job_id, user_id=user_id)
    return assemble(job, rows)


#: Citations read per query when a report is streamed (about 0.1–1 MB rendered).
STREAM_BATCH = 200


def build_head(broker, job_id: int, *, user_id: int) -> Report | None:
    """The report of the user's job without its citations (``citations`` is empty), with the
    counts, total and sources of all of them: what precedes the citations when the report is
    streamed. None when the user has no such job."""
    with broker.connection() as conn, conn.cursor() as cur:
        job = db.one(cur, "report_job_one", job_id=job_id, user_id=user_id)
        if job is None:
            return None
        counts = dict(db.many(cur, "report_counts_many", job_id=job_id, user_id=user_id))
        references = db.many(cur, "report_references_many", job_id=job_id, user_id=user_id)
        attention = dict(db.many(cur, "report_attention_many", job_id=job_id, user_id=user_id))
    head = assemble(job, [])
    head.attention = {v: list(numbers) for v, numbers in attention.items()}
    head.counts.update(counts)
    head.total = sum(counts.values())
    head.judged = head.total - head.counts[PENDING]
    resolved: dict[int, list[ResolvedReference]] = {}
    for source_id, reference, method in references:
        resolved.setdefault(source_id, []).append(ResolvedReference(reference=reference, match_method=method))
    for source in head.sources:
        source.references = resolved.get(source.document_id, [])
    return head


def citation_batches(broker, job_id: int, *, user_id: int, size: int = STREAM_BATCH) -> Iterator[list[ReportCitation]]:
    """The job's citations in thesis order, ``size`` per query, each query on a connection
    held only for that query (a slow reader of a streamed report holds none).

    The batches are read one after another, so a report of a running job may show a
    verdict written after its counts were read; a finished job's report is exact."""
    after = -1
    while True:
        with broker.connection() as conn, conn.cursor() as cur:
            rows = db.many(cur, "report_citations_page_many", job_id=job_id, user_id=user_id, after=after,
                           size=size)
        if not rows:
            return
        yield [ReportCitation(**dict(zip(_CITATION_FIELDS, r))) for r in rows]
        after = rows[-1][0]


def stream(broker, job_id: int, fmt: str, *, user_id: int,
           size: int = STREAM_BATCH) -> tuple[Report, Iterator[str]] | None:
    """The report of the user's job in ``fmt`` (html, csv, json) as pieces of text, read from
    the database batch by batch as the pieces are taken: memory stays bounded however long
    the report is. The same text as ``render_<fmt>(build(...))``. None: no such job."""
    head = build_head(broker, job_id, user_id=user_id)
    if head is None:
        return None
    batches = citation_batches(broker, job_id, user_id=user_id, size=size)
    if fmt == "csv":
        return head, csv_chunks(batches)
    return head, (html_chunks if fmt == "html" else json_chunks)(head, batches)


_CITATION_FIELDS = ["ordinal", "marker", "claim", "page", "source_document_id", "source_filename", "reference",
                    "match_method", "unresolved_reason", "verdict", "confidence", "evidence", "evidence_page",
                    "rationale", "carried_from_id", "judged_at", "rule"]


def assemble(job: tuple, citation_rows: list[tuple], *, now: datetime | None = None) -> Report:
    """The report from the rows of ``report_job_one`` and ``report_citations_many``."""
    (jid, status, delta_of, judge, mode, created, started, finished, error, thesis_id, thesis_name, pages,
     sources) = job
    citations = [ReportCitation(**dict(zip(_CITATION_FIELDS, r))) for r in citation_rows]
    counts = {v: 0 for v in VERDICT_LABELS}
    counts[PENDING] = 0
    for c in citations:
        counts[c.verdict_key] += 1
    if isinstance(sources, str):
        sources = json.loads(sources)
    return Report(
        job=JobFacts(id=jid, status=status, delta_of=delta_of, judge=judge, retrieval_mode=mode,
                     created_at=created, started_at=started, finished_at=finished, error=error),
        thesis=ThesisFacts(document_id=thesis_id, filename=thesis_name, pages=pages),
        sources=_sources(sources, citations),
        counts=counts, total=len(citations), judged=len(citations) - counts[PENDING], citations=citations,
        generated_at=now or datetime.now(timezone.utc))


def _sources(rows: list[dict], citations: list[ReportCitation]) -> list[SourceFacts]:
    """The job's sources, each with the distinct references (and match methods) resolved to it."""
    resolved: dict[int, dict[tuple, ResolvedReference]] = {}
    for c in citations:
        if c.source_document_id is not None:
            resolved.setdefault(c.source_document_id, {}).setdefault(
                (c.reference, c.match_method), ResolvedReference(reference=c.reference, match_method=c.match_method))
    return [SourceFacts(document_id=r["id"], filename=r["filename"], doi=r.get("doi"), pages=r.get("pages"),
                        references=list(resolved.get(r["id"], {}).values())) for r in rows]


# -- rendering: JSON, CSV, plain text ---------------------------------------------------------


CSV_COLUMNS = ["number", "thesis_page", "marker", "claim", "source_file", "reference", "match_method",
               "unresolved_reason", "verdict", "confidence", "evidence", "evidence_page", "rationale",
               "carried_over", "rule"]


def render_json(report: Report) -> str:
    return report.model_dump_json(indent=2)


def json_chunks(head: Report, batches: Iterable[list[ReportCitation]]) -> Iterator[str]:
    """:func:`render_json` of ``head`` with the citations of ``batches`` in place of its own,
    piece by piece: the same text as rendering the whole report at once."""
    before, marker, after = head.model_copy(update={"citations": []}).model_dump_json(indent=2) \
        .partition('\n  "citations": [],\n')
    if not marker:
        raise ValueError("the report's JSON has no citations list")  # the model changed shape
    yield before + '\n  "citations": ['
    first = True
    for batch in batches:
        rendered = ",\n".join(_indent(c.model_dump_json(indent=2), "    ") for c in batch)
        if rendered:
            yield ("\n" if first else ",\n") + rendered
            first = False
    yield ("]," if first else "\n  ],") + "\n" + after


def _indent(text: str, prefix: str) -> str:
    # JSON strings escape line breaks, so every line break here is the layout's own.
    return prefix + text.replace("\n", "\n" + prefix)


def render_csv(report: Report) -> str:
    """One header row and one row per citation, in thesis order, behind a UTF-8 BOM.

    Quoting is the csv module's (a field holding a quote, comma or line break is quoted, its
    quotes doubled), so claims with quotes and line breaks survive. A cell that starts like a
    spreadsheet formula (= + - @, tab, carriage return) gets a leading apostrophe, so opening
    the file never runs a formula a thesis happened to contain.
    """
    return "".join(csv_chunks([report.citations]))


def csv_chunks(batches: Iterable[list[ReportCitation]]) -> Iterator[str]:
    """:func:`render_csv` piece by piece: the BOM and header row, then one piece per batch."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    yield "\ufeff" + out.getvalue()
    for batch in batches:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\r\n")
        for c in batch:
            writer.writerow([_cell(v) for v in (
                c.number, c.page, c.marker, c.claim, c.source_filename, c.reference, c.match_method,
                c.unresolved_reason, c.verdict_key, None if c.confidence is None else f"{c.confidence:.2f}",
                c.evidence, c.evidence_page, c.rationale, "yes" if c.carried_over else "no", c.rule)])
        yield out.getvalue()


def _cell(value) -> str:
    if value is None:
        return ""
    text = str(value)
    if text[:1] in ("=", "+", "-", "@", "\t", "\r") and not isinstance(value, (int, float)):
        return "'" + text
    return text


def verdict_table(report: Report, *, claim_width: int = 70) -> str:
    """The verdicts as a plain-text table for a terminal (claims clipped to ``claim_width``)."""
    if not report.citations:
        return NO_CITATIONS if report.job.status == "succeeded" else "no citations (yet)"
    rows = [[str(c.number), label(c.verdict_key), "" if c.confidence is None else f"{c.confidence:.2f}",
             c.marker, c.source_filename or NONE, "" if c.evidence_page is None else str(c.evidence_page),
             _clip(c.claim, claim_width)] for c in report.citations]
    return terminal.table(rows, ["#", "verdict", "conf", "marker", "source", "src p.", "claim"])


def _clip(text: str | None, n: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"
