"""Staged uploads: a user's files go into Postgres with their parse message, at once.

:func:`stage_upload` validates against the user's caps under the user's upload lock,
stores the bytes as BYTEA in ``parse_items`` and sends the ``parse`` message in the same
transaction, and returns the parse job id (HTTP answers ``202 {jobId}``). The client
polls :func:`parse_status` until the job is terminal. Every refusal is an
:class:`UploadError` whose ``code`` names the limit.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError, model_validator

from broker import locks

from analysis import db, inputs, messages
from analysis.errors import AnalysisError
from analysis.pipeline.intake.lifecycle import PARSE_TERMINAL, ParseItemStatus, ParseJobStatus
from analysis.settings import PipelineSettings

logger = logging.getLogger(__name__)

PARSE_ACTOR = "parse"
PARSE_QUEUE = "parse"
#: Advisory-lock scope of a user's uploads (caps are checked and staged under it).
LOCK_SCOPE = "parse_uploads"



# -- errors ---------------------------------------------------------------------------------


class UploadError(AnalysisError):
    """The upload was refused."""

    code = "upload_error"


class TooManyParseJobs(UploadError):
    """You have as many uploads being parsed as allowed; wait until one finishes."""

    code = "parse_jobs_limit"


class StagedBytesLimit(UploadError):
    """Your uploads waiting to be parsed would exceed the staged-bytes limit."""

    code = "staged_bytes_limit"


class FileTooLarge(UploadError):
    """A file is larger than the per-file limit."""

    code = "file_size_limit"


class TooManyFiles(UploadError):
    """An upload carries more files than allowed."""

    code = "files_per_upload_limit"


class EmptyUpload(UploadError):
    """An upload needs at least one file."""

    code = "empty_upload"


class UnknownSession(UploadError):
    """No such upload session for this user."""

    code = "unknown_session"


class UnknownParseJob(UploadError):
    """No such parse job for this user."""

    code = "unknown_parse_job"


# -- models ---------------------------------------------------------------------------------


#: Bytes moved to PostgreSQL per write when a file is staged from disk.
CHUNK_BYTES = 1 << 20


class UploadFile(BaseModel):
    """One file handed over for parsing: its bytes, or a file to stream them from.

    Built with bad fields (a NUL in the name, a name over 255 characters, a DOI over 300),
    it raises :class:`~analysis.errors.InvalidInput`, like every entry point.
    """

    filename: inputs.FileName
    #: The file's bytes (small files, tests) ...
    data: bytes | None = None
    #: ... or a file they are read from in chunks, never whole (the web's spooled parts, the CLI's files).
    path: Path | None = None
    kind: Literal["thesis", "source"] = "source"
    #: The source's DOI if the user knows it (checked at analysis admission).
    doi: inputs.Doi | None = None
    #: The bytes' SHA-256 when whoever spooled them computed it on the way (saves a read).
    sha256: str | None = None

    def __init__(self, **fields) -> None:
        try:
            super().__init__(**fields)
        except ValidationError as exc:
            raise inputs.invalid(exc) from None

    @model_validator(mode="after")
    def _one_source(self) -> "UploadFile":
        if (self.data is None) == (self.path is None):
            raise ValueError("give the file's data or its path, not both")
        return self

    @property
    def size(self) -> int:
        return len(self.data) if self.data is not None else self.path.stat().st_size

    def chunks(self) -> Iterator[bytes]:
        """The bytes, at most :data:`CHUNK_BYTES` at a time."""
        if self.data is not None:
            for at in range(0, len(self.data), CHUNK_BYTES):
                yield self.data[at:at + CHUNK_BYTES]
            return
        with self.path.open("rb") as fh:
            while chunk := fh.read(CHUNK_BYTES):
                yield chunk


class StagedUpload(BaseModel):
    """The answer of :func:`stage_upload` (HTTP: ``202 {jobId}``)."""

    parse_job_id: int
    session_id: int
    files: int
    bytes: int
    #: False when no worker serving the ``parse`` queue was heard from recently: the job
    #: is safe in Postgres, but nothing will parse it until a worker comes online.
    parse_worker_online: bool


class ParseItemView(BaseModel):
    ordinal: int
    filename: str
    kind: str
    size_bytes: int
    status: ParseItemStatus
    error_code: str | None = None
    error_reason: str | None = None
    document_id: int | None = None
    #: Whether the uploaded bytes are still held (only while queued or running).
    staged: bool


class ParseJobView(BaseModel):
    """What polling a parse job answers."""

    parse_job_id: int
    session_id: int
    status: ParseJobStatus
    terminal: bool
    created_at: datetime
    finished_at: datetime | None
    items: list[ParseItemView]
    parse_worker_online: bool


# -- sessions -------------------------------------------------------------------------------


def reset_session(user_id: int, session_id: int, *, broker=None) -> int:
    """Unlink every source of the user's session (an explicit reset); how many were linked."""
    row = db.one_on(messages.broker_or_global(broker), "session_reset_one", user_id=user_id, session_id=session_id)
    if row is None:
        raise UnknownSession(session_id=session_id)
    return row[0]


def session_documents(user_id: int, session_id: int, *, broker=None) -> list[tuple[int, str, str]]:
    """(document id, kind, filename) of the session's parsed documents, oldest first."""
    rows = db.many_on(messages.broker_or_global(broker), "session_documents_many", user_id=user_id, session_id=session_id)
    return [(r[0], r[1], r[2]) for r in rows if r[3] == "parsed"]


# -- staging --------------------------------------------------------------------------------


def stage_upload(user_id: int, files: list[UploadFile], *, session_id: int | None = None,
                 settings: PipelineSettings, broker=None,
                 reservation_id: int | None = None) -> StagedUpload:
    """Stage ``files`` for parsing and send the parse message, in one transaction.

    A new session is created unless ``session_id`` (one of the user's) is given. Raises an
    :class:`UploadError` subclass naming the limit that refused the upload; nothing is
    staged then.
    """
    broker = messages.broker_or_global(broker)
    request = inputs.validated(StageInput, user_id=user_id, session_id=session_id)
    user_id, session_id = request.user_id, request.session_id
    files = [f if isinstance(f, UploadFile) else UploadFile(**f) for f in files]
    _check_files(files, settings)
    sizes = [f.size for f in files]
    total = sum(sizes)
    message_id = messages.new_message_id()
    with broker.transaction() as cur:
        locks.xact_lock(cur, LOCK_SCOPE, int(user_id))
        if session_id is None:
            session_id = db.one(cur, "upload_session_create_one", user_id=user_id)[0]
        elif db.one(cur, "upload_session_get_one", session_id=session_id, user_id=user_id) is None:
            raise UnknownSession(session_id=session_id)
        if reservation_id is not None:
            db.one(cur, "upload_reservation_delete_one", reservation_id=reservation_id)
        check_caps(cur, user_id, total, settings)
        # The bytes travel as large objects written a chunk at a time (this process never
        # holds a whole file, nor its escaped copy), moved into the BYTEA column server-side.
        staged = [_write_large_object(cur, f) for f in files]
        oids = [oid for oid, _ in staged]
        job_id = db.one(
            cur, "parse_job_insert_one", user_id=user_id, session_id=session_id, message_id=message_id,
            filenames=[f.filename for f in files], kinds=[f.kind for f in files], dois=[f.doi for f in files],
            sha256s=[sha for _, sha in staged], oids=oids, sizes=sizes,
        )[0]
        db.many(cur, "large_objects_unlink_many", oids=oids)
        messages.send(broker, PARSE_ACTOR, args=(job_id,), message_id=message_id)
    logger.info("upload staged", extra={"action": "upload_staged", "user_id": user_id, "parse_job_id": job_id,
                                        "files": len(files), "bytes": total})
    return StagedUpload(parse_job_id=job_id, session_id=session_id, files=len(files), bytes=total,
                        parse_worker_online=parse_worker_online(broker=broker, settings=settings))


class StageInput(BaseModel):
    user_id: inputs.Id
    session_id: inputs.Id | None = None


def check_caps(cur, user_id: int, upload_bytes: int, settings: PipelineSettings) -> int:
    """Refuse an upload of ``upload_bytes`` that the user's parse-job or staged-bytes cap
    forbids (reservations of uploads being received count too); the staged bytes.
    Runs under the user's upload lock."""
    active, staged = db.one(cur, "upload_facts_one", user_id=user_id, reservation_id=None)
    if active >= settings.max_active_parse_jobs:
        raise TooManyParseJobs(active=active, limit=settings.max_active_parse_jobs)
    if staged + upload_bytes > settings.max_staged_bytes:
        raise StagedBytesLimit(staged=staged, upload=upload_bytes, limit=settings.max_staged_bytes)
    return staged


class Reservation(BaseModel):
    """A parse slot and bytes held for an upload whose body is being received."""

    id: int
    #: Bytes staged or reserved by the user's other uploads when this one was reserved.
    staged: int


def reserve(user_id: int, upload_bytes: int, *, seconds: float, settings: PipelineSettings, broker=None) -> Reservation:
    """Check the caps for an upload of at least ``upload_bytes`` and hold its slot and bytes
    for ``seconds`` (the time its body may take), before its body is read.

    Raises TooManyParseJobs or StagedBytesLimit as :func:`stage_upload` would. Give the
    reservation to :func:`stage_upload`, or :func:`release` it when the upload fails.
    """
    broker = messages.broker_or_global(broker)
    with broker.transaction() as cur:
        locks.xact_lock(cur, LOCK_SCOPE, int(user_id))
        staged = check_caps(cur, user_id, upload_bytes, settings)
        row = db.one(cur, "upload_reservation_insert_one", user_id=user_id, bytes=upload_bytes, seconds=seconds)
    return Reservation(id=row[0], staged=staged)


def release(reservation_id: int, *, broker=None) -> None:
    """Drop a reservation whose upload will not be staged (a no-op once it was)."""
    db.one_on(messages.broker_or_global(broker), "upload_reservation_delete_one", reservation_id=reservation_id)


def guess_kind(filename: str) -> str:
    """A file named ``thesis*`` is a thesis; anything else a source."""
    return "thesis" if Path(filename).name.lower().startswith("thesis") else "source"


def check_file_size(filename: str, size: int, settings: PipelineSettings) -> None:
    """FileTooLarge when ``size`` is over the per-file cap (called as an upload streams in, too)."""
    if size > settings.max_file_bytes:
        raise FileTooLarge(f"{filename} is {size} bytes or more; the limit is {settings.max_file_bytes}",
                           filename=filename, size=size, limit=settings.max_file_bytes)


def _check_files(files: list[UploadFile], settings: PipelineSettings) -> None:
    if not files:
        raise EmptyUpload()
    if len(files) > settings.max_files_per_upload:
        raise TooManyFiles(files=len(files), limit=settings.max_files_per_upload)
    for f in files:
        check_file_size(f.filename, f.size, settings)


def _write_large_object(cur, f: UploadFile) -> tuple[int, str]:
    """(oid, sha256) of a new large object holding the file, written a chunk at a time."""
    digest = hashlib.sha256() if f.sha256 is None else None
    oid, at = None, 0
    for chunk in f.chunks():
        if oid is None:
            oid = db.one(cur, "large_object_create_one", data=chunk)[0]
        else:
            db.one(cur, "large_object_put_one", oid=oid, offset=at, data=chunk)
        at += len(chunk)
        if digest is not None:
            digest.update(chunk)
    if oid is None:
        oid = db.one(cur, "large_object_create_one", data=b"")[0]
    return oid, f.sha256 or digest.hexdigest()


# -- polling --------------------------------------------------------------------------------


def parse_status(user_id: int, parse_job_id: int, *, settings: PipelineSettings, broker=None) -> ParseJobView:
    """The parse job and its items, as the user may see them; UnknownParseJob otherwise."""
    broker = messages.broker_or_global(broker)
    row = db.one_on(broker, "parse_job_get_one", job_id=parse_job_id, user_id=user_id)
    if row is None:
        raise UnknownParseJob(parse_job_id=parse_job_id)
    cols = ParseItemView.model_fields.keys()
    items = [ParseItemView(**dict(zip(cols, r[1:]))) for r in
             db.many_on(broker, "parse_items_of_job_many", job_id=parse_job_id)]
    status = ParseJobStatus(row[2])
    return ParseJobView(parse_job_id=row[0], session_id=row[1], status=status, terminal=status in PARSE_TERMINAL,
                        created_at=row[3], finished_at=row[4], items=items,
                        parse_worker_online=parse_worker_online(broker=broker, settings=settings))


def parse_worker_online(*, settings: PipelineSettings, broker=None) -> bool:
    """Whether a worker process serving the ``parse`` queue sent a heartbeat recently."""
    return bool(workers_serving(PARSE_QUEUE, broker=broker, settings=settings))


def workers_serving(queue_name: str, *, settings: PipelineSettings, broker=None) -> list[str]:
    """Ids of the worker processes serving ``queue_name`` that were heard from recently."""
    rows = db.many_on(messages.broker_or_global(broker), "workers_serving_queue_many", queue_name=queue_name,
                      stale_seconds=settings.worker_stale_seconds)
    return [r[0] for r in rows]
