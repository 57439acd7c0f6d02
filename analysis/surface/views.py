"""Read models of jobs and documents, as the CLI, the HTTP API and the dashboard show them.

Times are ISO 8601 in UTC; a queued job carries its position in its user's queue
(1 = next to start), every other job ``position = None``.
"""

from __future__ import annotations

from datetime import datetime, timezone

from pydantic import BaseModel, field_serializer

from analysis import db


class Progress(BaseModel):
    """Citations of a job's thesis judged so far."""

    judged: int
    total: int


class VerdictView(BaseModel):
    claim: str
    marker: str
    source_document_id: int | None
    source_filename: str | None
    verdict: str | None  #: None while not judged yet
    confidence: float | None
    evidence: str | None


class JobView(BaseModel):
    id: int
    user_id: int
    status: str
    position: int | None
    delta_of: int | None
    thesis_id: int
    source_ids: list[int]
    created_at: datetime
    promoted_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    error: str | None
    thesis_filename: str | None = None
    progress: Progress | None = None
    verdict_counts: dict[str, int] | None = None
    verdicts: list[VerdictView] | None = None

    @field_serializer("created_at", "promoted_at", "started_at", "finished_at")
    def _utc(self, value: datetime | None) -> str | None:
        return None if value is None else value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


class DocumentView(BaseModel):
    id: int
    kind: str
    filename: str
    status: str
    doi: str | None
    created_at: datetime

    @field_serializer("created_at")
    def _utc(self, value: datetime) -> str:
        return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


_JOB_COLUMNS = ["id", "user_id", "status", "position", "delta_of", "thesis_id", "source_ids", "created_at",
                "promoted_at", "started_at", "finished_at", "error", "thesis_filename"]


def jobs(broker, *, user_id: int | None = None, ids: list[int] | None = None, limit: int = 100,
         with_verdicts: bool = False) -> list[JobView]:
    """Jobs of a user (or the given ids), newest first, with progress and verdict counts."""
    with broker.connection() as conn, conn.cursor() as cur:
        rows = db.many(cur, "job_views_many", user_id=user_id, ids=ids, limit=limit)
        views = [JobView(**dict(zip(_JOB_COLUMNS, row))) for row in rows]
        if views:
            _add_results(cur, views, with_verdicts)
    return views


def job(broker, job_id: int, *, user_id: int | None = None) -> JobView | None:
    """One job with its verdicts; None when it does not exist or belongs to someone else."""
    found = jobs(broker, user_id=user_id, ids=[job_id], limit=1, with_verdicts=True)
    return found[0] if found else None


def documents(broker, user_id: int, *, limit: int = 500) -> list[DocumentView]:
    rows = db.many_on(broker, "documents_recent_many", user_id=user_id, limit=limit)
    return [DocumentView(**dict(zip(DocumentView.model_fields, row))) for row in rows]


def _add_results(cur, views: list[JobView], with_verdicts: bool) -> None:
    """Progress, verdict counts and verdicts, where the pipeline recorded them."""
    ids = [v.id for v in views]
    progress = {r[0]: (r[1], r[2]) for r in db.many(cur, "job_progress_many", ids=ids)}
    counts: dict[int, dict[str, int]] = {}
    for job_id, verdict, n in db.many(cur, "job_verdict_counts_many", ids=ids):
        counts.setdefault(job_id, {})[verdict] = n
    for v in views:
        if v.id in progress:
            v.progress = Progress(judged=progress[v.id][0], total=progress[v.id][1])
        v.verdict_counts = counts.get(v.id, {})
        if with_verdicts:
            rows = db.many(cur, "job_verdicts_many", job_id=v.id)
            v.verdicts = [VerdictView(**dict(zip(VerdictView.model_fields, r))) for r in rows]
