"""Upload routes: multipart in, ``202 {jobId}`` out, and the parse job to poll.

Refused before the body is read, from the headers alone: a missing or oversized
Content-Length (``CITEQ_MAX_UPLOAD_BYTES``), the request limit, a user whose parse slots
are all taken, or whose staged bytes plus this body's files (at least its length minus the
form's framing) would pass the staged-bytes cap; otherwise a slot and those bytes are
reserved for this upload until it is staged or fails (``uploads.reserve``), so concurrent
uploads of one user are refused before their bodies too. While the body streams in, each file part
goes to a temporary file and is refused the moment it passes the per-file cap or the
upload passes the staged-bytes room (web/multipart.py); then the files are streamed to
PostgreSQL a chunk at a time (analysis/pipeline/intake/uploads.py). The process never holds a whole file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from analysis import inputs
from analysis.pipeline.intake import uploads
from analysis.pipeline.citations import is_valid_doi

from . import multipart
from .deps import ApiError, PathId, limit, single_field, user

_UPLOAD_SCHEMA = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["files"],
    "properties": {
        "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
        "kind": {"type": "string", "enum": ["thesis", "source"],
                 "description": "what every file is; default: a file named thesis* is a thesis, others sources"},
        "dois": {"type": "array", "items": {"type": "string", "maxLength": inputs.DOI_MAX,
                                            "pattern": r"^(10\.\d{4,9}/\S+)?$"},
                 "description": "a DOI per file, in the order of files (empty for none)"},
        "session_id": {"type": "integer", "minimum": 1, "maximum": inputs.ID_MAX,
                       "description": "add to this upload session (default: a new one)"},
    }}}}}}


def install(app: FastAPI) -> None:
    @app.post("/api/uploads", tags=["uploads"], status_code=202, openapi_extra=_UPLOAD_SCHEMA)
    async def upload(request: Request, user_id: int = Depends(user)):
        """Stage files for parsing; answers at once with the parse job to poll."""
        settings = request.app.state.settings
        caps = request.app.state.pipeline_settings
        ctype = request.headers.get("content-type", "")
        if ctype.split(";")[0].strip().lower() != "multipart/form-data":
            raise ApiError(415, "unsupported_media_type", "send the files as multipart/form-data",
                           got=ctype.split(";")[0].strip() or None)
        length = _content_length(request)
        if length > settings.max_upload_bytes:
            raise ApiError(413, "payload_too_large", f"the upload is larger than {settings.max_upload_bytes} bytes",
                           limit=settings.max_upload_bytes)
        await run_in_threadpool(limit, request, user_id, "upload")
        broker = request.app.state.broker
        # The caps the headers can decide, before a byte of the body is read: a parse slot
        # and the bytes the files take at least are reserved for this upload meanwhile.
        least_files = max(0, length - multipart.FORM_OVERHEAD_BYTES)
        reservation = await run_in_threadpool(uploads.reserve, user_id, least_files, broker=broker, settings=caps,
                                              seconds=settings.body_timeout + RESERVATION_GRACE_SECONDS)
        room = caps.max_staged_bytes - reservation.staged

        def over_room(total: int) -> None:
            if total > room:
                raise uploads.StagedBytesLimit(staged=reservation.staged, upload=total, limit=caps.max_staged_bytes)

        limits = multipart.Limits(max_files=caps.max_files_per_upload, on_total=over_room,
                                  on_file_bytes=lambda name, size: uploads.check_file_size(name, size, caps))
        try:
            with multipart.temporary_directory() as spool:
                try:
                    form = await multipart.read_form(ctype, request.stream(), Path(spool), limits)
                except multipart.FormError as exc:
                    raise ApiError(exc.status, exc.code, str(exc)) from None
                files = _files(form)
                async with _writers(request.app):
                    result = await run_in_threadpool(uploads.stage_upload, user_id, files, session_id=_session(form),
                                                     broker=broker, settings=caps, reservation_id=reservation.id)
        except BaseException:
            await run_in_threadpool(uploads.release, reservation.id, broker=broker)
            raise
        return JSONResponse({"jobId": result.parse_job_id, **result.model_dump(mode="json")}, status_code=202,
                            headers={"Location": f"/api/uploads/{result.parse_job_id}"})

    @app.get("/api/uploads/{parse_job_id}", tags=["uploads"])
    def upload_status(request: Request, parse_job_id: PathId, user_id: int = Depends(user)):
        """A parse job of yours and each file's outcome (document id or error)."""
        view = uploads.parse_status(user_id, parse_job_id, broker=request.app.state.broker,
                                    settings=request.app.state.pipeline_settings)
        return view.model_dump(mode="json")


#: A reservation outlives the body timeout by this much (staging the files takes a moment).
RESERVATION_GRACE_SECONDS = 60.0


def _writers(app: FastAPI) -> asyncio.Semaphore:
    """Uploads of this process writing to PostgreSQL at once: at most half the connection pool,
    so that other requests always find a connection while large files are written."""
    sem = getattr(app.state, "upload_writers", None)
    if sem is None:
        pool = getattr(getattr(app.state.broker, "settings", None), "pool_size", 8)
        sem = app.state.upload_writers = asyncio.Semaphore(max(1, pool // 2))
    return sem


def _content_length(request: Request) -> int:
    length = request.headers.get("content-length")
    if length is None:
        raise ApiError(411, "length_required", "send a Content-Length")
    try:
        return int(length) if length.isascii() else int("x")
    except ValueError:
        raise ApiError(400, "bad_content_length", "the Content-Length is not a number") from None


def _files(form: multipart.Form) -> list[uploads.UploadFile]:
    kind = single_field(form.fields, "kind") or None
    if kind not in (None, "thesis", "source"):
        raise ApiError(422, "invalid_request", "kind is thesis or source")
    dois = [d.strip() or None for d in form.fields.get("dois", [])]
    for doi in dois:
        if doi is not None and not is_valid_doi(doi):
            raise ApiError(422, "invalid_doi", "a DOI looks like 10.1234/abc (or is left empty)")
    return [uploads.UploadFile(filename=f.filename or "upload", path=f.path, sha256=f.sha256,
                               kind=kind or uploads.guess_kind(f.filename or ""),
                               doi=dois[i] if i < len(dois) else None)
            for i, f in enumerate(form.files)]


def _session(form: multipart.Form) -> int | None:
    session = single_field(form.fields, "session_id")
    if session is None or session == "":
        return None
    try:
        return inputs.parse_id(session)
    except ValueError as exc:
        raise ApiError(422, "invalid_request", f"session_id: {exc}") from None
