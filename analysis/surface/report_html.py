"""The report as a self-contained, printable HTML document (A4; inline CSS, no scripts,
nothing fetched), whole or piece by piece as a streamed report's citations are read.

Every value from the database is escaped. It renders :class:`~analysis.surface.report_model.Report`,
the model the JSON, CSV and text renderings of :mod:`analysis.surface.report` read too.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone

from analysis.pipeline.judging.verdicts import Verdict
from analysis.surface.report_model import MATCHED_BY, NO_CITATIONS, NONE, PENDING, Report, ReportCitation, label


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
