"""Uploads from the command line and the demo, on top of the pipeline's ``analysis.pipeline.intake.uploads``."""

from __future__ import annotations

import time
from pathlib import Path

from analysis.settings import PipelineSettings

#: How often ``--wait`` polls the parse job.
POLL_SECONDS = 0.2


class UploadFailed(RuntimeError):
    """Parsing did not finish, or some files failed to parse."""


def guess_kind(path: Path) -> str:
    """A file named ``thesis*`` is a thesis; anything else a source."""
    from analysis.pipeline.intake import uploads

    return uploads.guess_kind(path.name)


def upload_files(broker, user_id: int, files, *, kind: str | None = None, session: int | None = None,
                 wait: bool = False, timeout: float = 300.0, kinds: dict[str, str] | None = None,
                 settings: PipelineSettings) -> dict:
    """Stage the files for parsing; with ``wait``, return when the parse job is terminal.

    Raises :class:`analysis.errors.AnalysisError` (an upload limit) or OSError (a file).
    """
    from analysis.pipeline.intake import uploads

    paths = [Path(f) for f in files]
    staged = uploads.stage_upload(user_id, [
        uploads.UploadFile(filename=p.name, path=p,
                           kind=(kinds or {}).get(p.name) or kind or guess_kind(p)) for p in paths
    ], session_id=session, broker=broker, settings=settings)
    result = {"parse_job_id": staged.parse_job_id, "session_id": staged.session_id, "status": "queued",
              "files": staged.files, "bytes": staged.bytes, "parse_worker_online": staged.parse_worker_online,
              "items": None}
    if not wait:
        return result
    deadline = time.monotonic() + timeout
    while True:
        view = uploads.parse_status(user_id, staged.parse_job_id, broker=broker, settings=settings)
        if view.terminal:
            break
        if time.monotonic() > deadline:
            raise UploadFailed(f"parse job {staged.parse_job_id} is still {view.status.value} after {timeout:.0f} s")
        time.sleep(POLL_SECONDS)
    result.update(status=view.status.value, items=[
        {"filename": i.filename, "kind": i.kind, "status": i.status.value, "document_id": i.document_id,
         "error": None if i.error_code is None else {"code": i.error_code, "message": i.error_reason}}
        for i in view.items])
    return result


def describe(result: dict) -> str:
    """Human text for an upload result."""
    head = f"parse job {result['parse_job_id']} (session {result['session_id']}): {result['status']}"
    if not result["items"]:
        return head + ("" if result["parse_worker_online"] else " - no parse worker is online yet")
    lines = [head]
    for item in result["items"]:
        tail = f"document {item['document_id']}" if item["document_id"] else \
            f"{item['error']['code']}: {item['error']['message']}" if item["error"] else ""
        lines.append(f"  {item['filename']:<40} {item['kind']:<7} {item['status']:<8} {tail}")
    return "\n".join(lines)


def upload_samples(broker, user_id: int, paths: list[Path], *, theses: set[str], settings: PipelineSettings,
                   timeout: float = 90.0) -> dict[str, int]:
    """Upload and parse the demo's files in one go: {filename: document id}."""
    result = upload_files(broker, user_id, paths, wait=True, timeout=timeout, settings=settings,
                          kinds={p.name: "thesis" if p.name in theses else "source" for p in paths})
    failed = [i for i in result["items"] if i["status"] != "parsed"]
    if failed:
        raise UploadFailed("; ".join(f"{i['filename']}: {i['error']}" for i in failed))
    return {i["filename"]: i["document_id"] for i in result["items"]}
