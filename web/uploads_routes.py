"""Upload routes: multipart in, ``202 {jobId}`` out, and the parse job to poll.

Bound before parsing: the declared Content-Length is checked against
``CITEQ_MAX_UPLOAD_BYTES`` (the server reads no more than it declares), so an oversized
upload is refused with 413 before a byte is spooled.
"""

from __future__ import annotations

import importlib.util

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from citeq.uploading import guess_kind

from .app import ApiError, limit, user


def _uploads():
    if importlib.util.find_spec("analysis.uploads") is None:
        raise ApiError(503, "pipeline_missing", "uploads need the parsing pipeline, which is not installed")
    from analysis import uploads

    return uploads


_UPLOAD_SCHEMA = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["files"],
    "properties": {
        "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
        "kind": {"type": "string", "enum": ["thesis", "source"],
                 "description": "what every file is; default: a file named thesis* is a thesis, others sources"},
        "dois": {"type": "array", "items": {"type": "string"},
                 "description": "a DOI per file, in the order of files (empty for none)"},
        "session_id": {"type": "integer", "description": "add to this upload session (default: a new one)"},
    }}}}}}


def install(app: FastAPI) -> None:
    @app.post("/api/uploads", tags=["uploads"], status_code=202, openapi_extra=_UPLOAD_SCHEMA)
    async def upload(request: Request, user_id: int = Depends(user)):
        """Stage files for parsing; answers at once with the parse job to poll."""
        uploads = _uploads()
        settings = request.app.state.settings
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "multipart/form-data":
            raise ApiError(415, "unsupported_media_type", "send the files as multipart/form-data", got=ctype or None)
        length = request.headers.get("content-length")
        if length is None:
            raise ApiError(411, "length_required", "send a Content-Length")
        if int(length) > settings.max_upload_bytes:
            raise ApiError(413, "payload_too_large", f"the upload is larger than {settings.max_upload_bytes} bytes",
                           limit=settings.max_upload_bytes)
        await run_in_threadpool(limit, request, user_id, "upload")
        try:
            form = await request.form(max_files=200, max_fields=400)
        except Exception as exc:  # noqa: BLE001 - the multipart parser's errors are the client's
            raise ApiError(400, "malformed_multipart", f"the multipart body could not be read: {exc}") from None
        files = [f for f in form.getlist("files") if hasattr(f, "read")]
        kind = form.get("kind") or None
        if kind not in (None, "thesis", "source"):
            raise ApiError(422, "invalid_request", "kind is thesis or source", got=str(kind))
        dois = [str(d) or None for d in form.getlist("dois")]
        session = form.get("session_id")
        if session is not None and not str(session).isdigit():
            raise ApiError(422, "invalid_request", "session_id is a number", got=str(session))
        staged = [uploads.UploadFile(filename=f.filename or "upload", data=await f.read(),
                                     kind=kind or guess_kind_name(f.filename or ""),
                                     doi=dois[i] if i < len(dois) else None)
                  for i, f in enumerate(files)]
        result = await run_in_threadpool(uploads.stage_upload, user_id, staged,
                                         session_id=int(session) if session else None,
                                         broker=request.app.state.broker)
        return JSONResponse({"jobId": result.parse_job_id, **result.model_dump(mode="json")}, status_code=202,
                            headers={"Location": f"/api/uploads/{result.parse_job_id}"})

    @app.get("/api/uploads/{parse_job_id}", tags=["uploads"])
    def upload_status(request: Request, parse_job_id: int, user_id: int = Depends(user)):
        """A parse job of yours and each file's outcome (document id or error)."""
        view = _uploads().parse_status(user_id, parse_job_id, broker=request.app.state.broker)
        return view.model_dump(mode="json")


def guess_kind_name(filename: str) -> str:
    from pathlib import Path

    return guess_kind(Path(filename))
