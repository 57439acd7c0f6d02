"""Report routes: one analysis's report as HTML (printable, self-contained), CSV and JSON.

``GET /api/analyses/{id}/report`` answers HTML unless ``?format=csv|json`` asks otherwise;
``/report.csv`` and ``/report.json`` name the format in the path. All read the report from
the database for the token's user: another user's job answers 404 with the same body as an
id that does not exist.
"""

from __future__ import annotations

from enum import Enum

from fastapi import Depends, FastAPI, Request
from fastapi.responses import Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from analysis.surface import evidence as evidences
from analysis.surface import report as reports

from .deps import ApiError, PathId, user

#: The HTML report is a document of its own: its inline style and nothing else may load.
#: (The global security-headers middleware keeps a CSP a route set.)
HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


class ReportFormat(str, Enum):
    html = "html"
    csv = "csv"
    json = "json"


_MEDIA = {ReportFormat.html: "text/html; charset=utf-8", ReportFormat.csv: "text/csv; charset=utf-8",
          ReportFormat.json: "application/json"}


def _answer(broker, job_id: int, user_id: int, fmt: ReportFormat) -> Response:
    """The report, streamed: its head (counts, sources) is read here, off the event loop; its
    citations are read a batch at a time while the body is sent. A client that does not read
    holds one rendered batch and the server's write buffer, no database connection, and is
    cut after the write timeout (web/limits.py)."""
    found = reports.stream(broker, job_id, fmt.value, user_id=user_id)
    if found is None:
        raise ApiError(404, "unknown_job", f"no job {job_id}", job_id=job_id)
    head, pieces = found
    name = f"citeq-report-{head.job.id}.{fmt.value}"
    headers = {"Cache-Control": "no-store"}
    if fmt is ReportFormat.html:
        headers.update({"Content-Security-Policy": HTML_CSP, "Content-Disposition": f'inline; filename="{name}"'})
    elif fmt is ReportFormat.csv:
        headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return StreamingResponse((piece.encode("utf-8") for piece in pieces), media_type=_MEDIA[fmt], headers=headers)


_FORMATS = {
    "text/html": {"schema": {"type": "string"}, "example": "<!doctype html>..."},
    "text/csv": {"schema": {"type": "string"}},
    "application/json": {"schema": {"$ref": "#/components/schemas/Report"}},
}
_NOT_FOUND = {404: {"description": "no such job of yours"}}


def install(app: FastAPI) -> None:
    @app.get("/api/analyses/{job_id}/report.json", tags=["reports"], response_model=reports.Report,
             responses=_NOT_FOUND)
    async def report_json(request: Request, job_id: int, user_id: int = Depends(user)):
        """The report of one of your analyses as JSON: job facts, counts, sources, every citation."""
        return await run_in_threadpool(_answer, request.app.state.broker, job_id, user_id, ReportFormat.json)

    @app.get("/api/analyses/{job_id}/report.csv", tags=["reports"], response_class=Response,
             responses={200: {"content": {"text/csv": _FORMATS["text/csv"]},
                              "description": "UTF-8 with a BOM; one header row, one row per citation"},
                        **_NOT_FOUND})
    async def report_csv(request: Request, job_id: int, user_id: int = Depends(user)):
        """The report of one of your analyses as CSV, one row per citation in thesis order."""
        return await run_in_threadpool(_answer, request.app.state.broker, job_id, user_id, ReportFormat.csv)

    @app.get("/api/analyses/{job_id}/report", tags=["reports"], response_class=Response,
             responses={200: {"content": _FORMATS, "description": "the report in the asked format"}, **_NOT_FOUND})
    async def report(request: Request, job_id: int, format: ReportFormat = ReportFormat.html,
                     user_id: int = Depends(user)):
        """The report of one of your analyses: a self-contained HTML document that prints on A4
        (default), or ``?format=csv|json``."""
        return await run_in_threadpool(_answer, request.app.state.broker, job_id, user_id, format)

    @app.get("/api/analyses/{job_id}/citations/{number}/evidence", tags=["reports"],
             response_model=evidences.EvidenceView, responses=_NOT_FOUND)
    async def evidence(request: Request, job_id: PathId, number: PathId, user_id: int = Depends(user)):
        """Citation ``number`` (1-based) in place: the thesis page with the claim marked and the
        cited source's page with the quoted evidence marked, from the stored document structure."""
        found = await run_in_threadpool(evidences.view, request.app.state.broker, job_id, number, user_id=user_id)
        if found is None:
            raise ApiError(404, "unknown_citation", f"no citation {number} in job {job_id}", job_id=job_id,
                           number=number)
        return found
