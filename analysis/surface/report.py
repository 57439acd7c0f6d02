"""The report of one analysis: what a lecturer reads, as one model rendered four ways.

:func:`build` reads it from the database only (two named queries of ``surface/queries.sql``, both
filtered by the user, so another user's job is never read), never from a worker's memory:
a report of a running job shows the verdicts written so far and the citations still
waiting for a judge. :func:`render_html` (a self-contained, printable A4 document),
:func:`render_csv` (UTF-8 with a BOM for spreadsheets), :func:`render_json` and
:func:`verdict_table` (plain text for a terminal) all render that one model, so the
dashboard, the HTTP routes, ``citeq report`` and the demo show the same facts.
"""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone

from pydantic import BaseModel, Field, computed_field, field_serializer

from analysis import db
from analysis.pipeline.judging.lexical.words import language
from analysis.pipeline.judging.verdicts import Verdict
from analysis.surface import terminal

#: How each verdict reads to a person, in the order counts and filters show them.
VERDICT_LABELS = {
    Verdict.not_supported.value: "not supported",
    Verdict.partially_supported.value: "partially supported",
    Verdict.uncertain.value: "uncertain",
    Verdict.source_missing.value: "source missing",
    Verdict.supported.value: "supported",
}
#: A citation extracted but not judged yet (its job is still running).
PENDING = "pending"
#: The languages a claim and its evidence are told apart in (``lexical.language``).
LANGUAGE_NAMES = {"de": "German", "en": "English"}
#: Shown where the database holds no value yet (judge, match method of an older job).
NONE = "—"
#: What a finished report of a thesis without citations says in place of its table.
NO_CITATIONS = "the thesis has no citations citeq recognises: nothing to judge"

#: How a citation's source was found, in words.
MATCHED_BY = {"doi": "its DOI", "author_year": "author and year", "title": "its title",
              "metadata": "the source's metadata"}


def judge_words(judge: str | None) -> str:
    """Who checked the citations, in words ("offline" is the built-in rules)."""
    if not judge:
        return NONE
    if judge == "offline":
        return "built-in rules (no network)"
    if judge.startswith("openai:"):
        return "language model " + judge.split(":", 1)[1]
    return judge


def retrieval_words(mode: str | None) -> str:
    """How passages of the sources were found, in words."""
    if not mode:
        return NONE
    for name, words in (("bm25", "keyword search"), ("hybrid", "keyword and meaning search")):
        if mode.startswith(name):
            return words + mode[len(name):]
    return mode


def finding(c: "ReportCitation") -> str:
    """What was found, in one plain sentence; for ``uncertain``, what to check."""
    source = c.source_filename or "the cited source"
    where = f" on p. {c.evidence_page} of {source}" if c.evidence_page is not None else f" in {source}"
    v = c.verdict.value if c.verdict is not None else PENDING
    if v == "supported":
        return "The source says what the claim says" + (f": see the passage{where}." if c.evidence else ".")
    if v == "partially_supported":
        return f"The source backs part of the claim, not all of it: check which part the passage{where} leaves out."
    if v == "not_supported":
        return "The source says something different from the claim" + (
            f": compare the passage{where}." if c.evidence else ".")
    if v == "uncertain":
        if c.evidence:
            return (f"The wording alone does not settle it: read the passage{where} and decide whether it "
                    "says what the claim says.")
        return f"No passage close enough to the claim was found: look in {source} for where it makes this point."
    if v == "source_missing":
        if c.source_document_id is not None:
            return "The cited source could not be read, so nothing was checked."
        return "The cited work is not among the uploaded sources, so nothing was checked" + (
            f" ({c.unresolved_reason})." if c.unresolved_reason else ".")
    return "Not checked yet: the analysis is still running."


CSV_COLUMNS = ["number", "thesis_page", "marker", "claim", "source_file", "reference", "match_method",
               "unresolved_reason", "verdict", "confidence", "evidence", "evidence_page", "rationale",
               "carried_over", "rule"]


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


class ThesisFacts(BaseModel):
    """The analysed thesis."""

    document_id: int
    filename: str
    pages: int | None


class ResolvedReference(BaseModel):
    """A reference-list entry of the thesis that was resolved to a source, and how."""

    reference: str | None  #: the entry as written in the thesis
    match_method: str | None  #: doi, author_year, title or metadata; None on jobs older than the column


class SourceFacts(BaseModel):
    """One source the job was admitted with, and the references resolved to it."""

    document_id: int
    filename: str
    doi: str | None = None
    pages: int | None = None
    references: list[ResolvedReference] = Field(default_factory=list)


class ReportCitation(BaseModel):
    """One claim–citation pair of the thesis with its verdict (None while not judged yet)."""

    ordinal: int  #: position among the thesis's citations, from 0, in reading order
    marker: str  #: the citation as written: "Smith et al., 2020", "[4]"
    claim: str
    page: int | None  #: page of the thesis
    source_document_id: int | None  #: the cited source; None when the citation is unresolved
    source_filename: str | None
    reference: str | None  #: the thesis's reference-list entry the marker points to, if found
    match_method: str | None  #: how the source was found (doi, author_year, title, metadata)
    unresolved_reason: str | None  #: why no source was found
    verdict: Verdict | None
    confidence: float | None
    evidence: str | None  #: the quoted passage of the source
    evidence_page: int | None  #: its page in the source
    rationale: str | None  #: the judge's reasoning
    carried_from_id: int | None  #: the base job's citation a delta re-check copied this verdict from
    judged_at: datetime | None
    rule: str | None = None  #: the offline judge's rule that decided (and the guards that changed it)

    @computed_field
    @property
    def number(self) -> int:
        """The citation's number as people count (1, 2, ...)."""
        return self.ordinal + 1

    @computed_field
    @property
    def cross_language(self) -> str | None:
        """"German claim, English source" when the evidence shown is in another language than the
        claim (found across languages by the embedder: read both); None when they agree."""
        if not self.evidence or not self.claim:
            return None
        claim, source = language(self.claim), language(self.evidence)
        return None if claim == source else f"{LANGUAGE_NAMES[claim]} claim, {LANGUAGE_NAMES[source]} source"

    @computed_field
    @property
    def carried_over(self) -> bool:
        """Whether a delta re-check copied this verdict from its base job instead of judging it."""
        return self.carried_from_id is not None

    @computed_field
    @property
    def found_by(self) -> str | None:
        """How the source was found, in words (None when it was not)."""
        if self.source_document_id is None:
            return None
        return MATCHED_BY.get(self.match_method or "", "its reference")

    @computed_field
    @property
    def finding(self) -> str:
        """What was found, in one plain sentence."""
        return finding(self)

    @property
    def verdict_key(self) -> str:
        return self.verdict.value if self.verdict is not None else PENDING

    @field_serializer("judged_at")
    def _utc(self, value: datetime | None) -> str | None:
        return _iso(value)


class JobFacts(BaseModel):
    """The job behind the report."""

    id: int
    status: str
    delta_of: int | None  #: the base job of a delta re-check
    judge: str | None  #: "offline", "openai:<model>"; None until the citations are extracted
    retrieval_mode: str | None  #: bm25, hybrid, "hybrid (k of n sources embedded)"
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    error: str | None

    @computed_field
    @property
    def checked_by(self) -> str:
        """Who checked the citations, in words."""
        return judge_words(self.judge)

    @computed_field
    @property
    def passages_by(self) -> str:
        """How passages were found, in words."""
        return retrieval_words(self.retrieval_mode)

    @computed_field
    @property
    def duration_seconds(self) -> float | None:
        """From start to finish; None until the job finished."""
        if self.started_at is None or self.finished_at is None:
            return None
        return round((self.finished_at - self.started_at).total_seconds(), 3)

    @field_serializer("created_at", "started_at", "finished_at")
    def _utc(self, value: datetime | None) -> str | None:
        return _iso(value)


class Report(BaseModel):
    """Everything a lecturer reads about one analysis."""

    job: JobFacts
    thesis: ThesisFacts
    sources: list[SourceFacts]
    #: Citations per verdict, and ``pending`` for those not judged yet; every verdict is present.
    counts: dict[str, int]
    total: int  #: citations found in the thesis (0 until they are extracted)
    judged: int
    citations: list[ReportCitation]
    generated_at: datetime
    #: Citation numbers per verdict that needs a look, when ``citations`` does not hold them all
    #: (a streamed report's head); None: read them from ``citations``.
    attention: dict[str, list[int]] | None = Field(default=None, exclude=True)

    @field_serializer("generated_at")
    def _utc(self, value: datetime) -> str:
        return _iso(value)


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


# -- rendering --------------------------------------------------------------------------------


def label(verdict_key: str) -> str:
    """A verdict (or ``pending``) as people read it."""
    return VERDICT_LABELS.get(verdict_key, verdict_key.replace("_", " "))


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


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return NONE
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min {secs} s" if hours else f"{minutes} min {secs} s"


def _when(value: datetime | None) -> str:
    return NONE if value is None else value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


_CSS = """
@page { size: A4; margin: 14mm 12mm 16mm 12mm; }
* { box-sizing: border-box; }
body { font: 10pt/1.4 "Helvetica Neue", Arial, sans-serif; color: #1a1a1a; margin: 0 auto; max-width: 60rem;
       padding: 1rem; }
h1 { font-size: 16pt; margin: 0 0 .2rem; }
h2 { font-size: 12pt; margin: 1.2rem 0 .4rem; break-after: avoid; page-break-after: avoid; }
.thesis { font-size: 11pt; margin: 0 0 .6rem; }
.facts { display: grid; grid-template-columns: max-content 1fr max-content 1fr; gap: .1rem .8rem; margin: 0; }
.facts dt { color: #555; }
.facts dd { margin: 0; }
table { width: 100%; border-collapse: collapse; table-layout: fixed; }
thead { display: table-header-group; }
tr { break-inside: avoid; page-break-inside: avoid; }
th, td { text-align: left; vertical-align: top; padding: .3rem .35rem; border-bottom: .5pt solid #bbb;
         overflow-wrap: break-word; }
th { background: #eee; font-weight: 600; }
.counts td, .counts th { text-align: center; }
.counts th { background: none; }
.citations col.n { width: 2rem; } .citations col.claim { width: 24%; } .citations col.source { width: 15%; }
.citations col.verdict { width: 13%; } .citations col.evidence { width: 27%; }
.marker { font-weight: 600; }
.page, .how, .ref, .confidence, .carried, .evidence-page { color: #555; font-size: 8.5pt; }
.claim p, blockquote { margin: .1rem 0; }
blockquote { border-left: 2pt solid #bbb; padding-left: .35rem; font-style: italic; }
.badge { display: inline-block; padding: 0 .3rem; border-radius: 2pt; font-weight: 600; }
.v-supported .badge { background: #d8f0dc; color: #0f5323; }
.v-partially_supported .badge { background: #fff1c2; color: #6b4d00; }
.v-not_supported .badge { background: #fadcdc; color: #8a1111; }
.v-uncertain .badge { background: #e4e4f7; color: #33336b; }
.v-source_missing .badge { background: #eee; color: #444; }
.v-pending .badge { background: #fff; color: #777; border: .5pt dashed #999; }
.attention { border: .5pt solid #e3b3b3; border-left: 3pt solid #a11; padding: .1rem .6rem .4rem; margin: .8rem 0; }
.attention.clear { border-color: #b7dcbf; border-left-color: #146c2e; }
.attention ul { list-style: none; padding: 0; margin: .2rem 0; }
.attention li { margin: .15rem 0; }
.finding { font-size: 8.5pt; margin-top: .15rem; }
.unresolved { color: #8a1111; }
.muted { color: #777; }
footer { margin-top: 1rem; color: #777; font-size: 8pt; }
@media print {
  body { padding: 0; max-width: none; font-size: 8.5pt; }
  .badge, th { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""


def render_html(report: Report) -> str:
    """A self-contained HTML document (inline CSS, no scripts, nothing fetched) that prints on A4.

    Every value from the database is escaped.
    """
    return "".join(html_chunks(report, [report.citations]))


def _escape(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def html_chunks(report: Report, batches: Iterable[list[ReportCitation]]) -> Iterator[str]:
    """:func:`render_html` of ``report`` with the citations of ``batches``, piece by piece."""
    e = _escape
    j, t = report.job, report.thesis
    title = f"Citation report — {t.filename} (job {j.id})"
    counts = {k: n for k, n in report.counts.items() if k != PENDING or n}  # pending only while some are
    facts = [("Job", f"{j.id}" + (f" (re-check of job {j.delta_of})" if j.delta_of else "")),
             ("Status", j.status + (f": {j.error}" if j.error else "")),
             ("Checked by", j.checked_by), ("Passages found by", j.passages_by),
             ("Started", _when(j.started_at)), ("Finished", _when(j.finished_at)),
             ("Duration", _duration(j.duration_seconds)), ("Citations", f"{report.judged} of {report.total} judged")]
    parts = [
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
        f"<title>{e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n",
        "<header>\n<h1>Citation report</h1>\n",
        f'<p class="thesis"><span id="thesis-filename">{e(t.filename)}</span>'
        + (f" · {e(t.pages)} pages" if t.pages else "") + "</p>\n",
        '<dl class="facts">' + "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in facts) + "</dl>\n</header>\n",
        '<h2>Verdicts</h2>\n<table class="counts"><thead><tr>',
        "".join(f'<th class="v-{e(k)}"><span class="badge">{e(label(k))}</span></th>' for k in counts),
        "</tr></thead><tbody><tr>",
        "".join(f'<td id="count-{e(k)}">{n}</td>' for k, n in counts.items()),
        "</tr></tbody></table>\n",
        _attention_html(report, e),
        _sources_html(report, e),
    ]
    yield "".join(parts)
    yield from _citations_html(report, batches, e)
    yield f"<footer>Generated by citeq at {e(_when(report.generated_at))}.</footer>\n</body>\n</html>\n"


#: What a lecturer looks at first, in this order.
ATTENTION = [Verdict.not_supported.value, Verdict.partially_supported.value, Verdict.uncertain.value,
             Verdict.source_missing.value]


def _attention_html(report: Report, e) -> str:
    """The "needs attention" block: per verdict that needs a look, its count and citation numbers."""
    if report.attention is not None:
        needs = {v: report.attention.get(v, []) for v in ATTENTION}
    else:
        needs = {v: [c.number for c in report.citations if c.verdict_key == v] for v in ATTENTION}
    needs = {v: numbers for v, numbers in needs.items() if numbers}
    total = sum(len(n) for n in needs.values())
    if not total:
        summary = ("Nothing needs attention: every citation is supported by its source." if report.total and
                   not report.counts[PENDING] else "Nothing needs attention so far.")
        return f'<section class="attention clear"><h2>Needs attention</h2><p>{e(summary)}</p></section>\n'
    items = "".join(
        f'<li class="v-{e(v)}"><span class="badge">{len(numbers)} {e(label(v))}</span> '
        f'citation{"s" if len(numbers) > 1 else ""} {e(", ".join(map(str, numbers)))}</li>'
        for v, numbers in needs.items())
    return (f'<section class="attention"><h2>Needs attention</h2><p>{total} of {report.total} citations need '
            f"you.</p><ul>{items}</ul></section>\n")


def _sources_html(report: Report, e) -> str:
    rows = []
    for s in report.sources:
        name = e(s.filename) + (f'<div class="ref">doi {e(s.doi)}</div>' if s.doi else "")
        if not s.references:
            rows.append(f'<tr><td>{name}</td><td class="muted">no citation resolved to it</td><td>{NONE}</td></tr>')
        for i, ref in enumerate(s.references):
            rows.append(f"<tr><td>{name if i == 0 else ''}</td><td>{e(ref.reference or NONE)}</td>"
                        f"<td>{e(MATCHED_BY.get(ref.match_method or '', ref.match_method or NONE))}</td></tr>")
    body = "".join(rows) or '<tr><td colspan="3" class="muted">no sources</td></tr>'
    return ('<h2>Sources</h2>\n<table class="sources"><thead><tr><th>File</th><th>Resolved reference</th>'
            f"<th>Found by</th></tr></thead><tbody>{body}</tbody></table>\n")


def _citations_html(report: Report, batches: Iterable[list[ReportCitation]], e) -> Iterator[str]:
    yield ('<h2>Citations</h2>\n<table class="citations"><colgroup><col class="n"><col class="verdict">'
           '<col class="claim"><col class="source"><col class="evidence"><col class="rationale"></colgroup>'
           "<thead><tr><th>#</th><th>Verdict</th><th>Claim</th><th>Cited source</th><th>Evidence</th>"
           "<th>Rationale</th></tr></thead><tbody>")
    empty = True
    for batch in batches:
        if batch:
            empty = False
            yield "".join(_citation_row(report, c, e) for c in batch)
    if empty:
        text = NO_CITATIONS if report.job.status == "succeeded" else "no citations found (yet)"
        yield f'<tr><td colspan="6" class="muted" id="no-citations">{text}</td></tr>'
    yield "</tbody></table>\n"


def _citation_row(report: Report, c: ReportCitation, e) -> str:
    key = c.verdict_key
    if c.source_document_id is not None:
        # The reference it resolved through is in the sources table; unresolved ones show theirs here.
        source = f'{e(c.source_filename)}<div class="how">found by {e(c.found_by)}</div>'
    else:
        source = ('<span class="unresolved">not resolved</span>'
                  + (f'<div class="ref">{e(c.reference)}</div>' if c.reference else "")
                  + (f'<div class="how">{e(c.unresolved_reason)}</div>' if c.unresolved_reason else ""))
    verdict = (f'<span class="badge">{e(label(key))}</span><div class="finding">{e(c.finding)}</div>'
               + (f'<div class="confidence">confidence {c.confidence:.2f}</div>' if c.confidence is not None else "")
               + (f'<div class="rule">rule {e(c.rule)}</div>' if c.rule else "")
               + (f'<div class="carried">carried over from job {e(report.job.delta_of)}</div>'
                  if c.carried_over else ""))
    evidence = (f"<blockquote>{e(c.evidence)}</blockquote>" if c.evidence else "")
    evidence += (f'<div class="evidence-page">source p. {e(c.evidence_page)}'
                 + (f' · <span class="cross-language">{e(c.cross_language)}</span>' if c.cross_language else "")
                 + "</div>" if c.evidence_page is not None else "")
    return (f'<tr class="citation v-{e(key)}" id="citation-{c.number}" data-verdict="{e(key)}">'
            f'<td class="n">{c.number}</td><td class="verdict">{verdict}</td>'
            f'<td class="claim"><div class="marker">{e(c.marker)}</div><p>{e(c.claim)}</p>'
            + (f'<div class="page">thesis p. {e(c.page)}</div>' if c.page is not None else "") + "</td>"
            f'<td class="source">{source}</td>'
            f'<td class="evidence">{evidence}</td><td class="rationale">{e(c.rationale)}</td></tr>')
