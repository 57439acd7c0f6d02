"""Operator controls and history of the broker's queues: pause and resume a queue (its
consumers claim nothing while a row in ``citeq_queue_pauses`` names it), processed and
failed counts of a recent window (kept in PostgreSQL, see ``queue_history_many`` in
queries.sql), and the messages workers hold right now."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


class QueueHistory(BaseModel):
    queue_name: str
    processed: int  #: acknowledged in the window
    failed: int  #: dead-lettered in the window
    last_failed_at: datetime | None  #: the newest dead letter still kept
    paused_at: datetime | None  #: None: consumers claim from it


class RunningMessage(BaseModel):
    worker_id: str
    id: int
    queue_name: str
    actor_name: str
    started_at: datetime | None
    running_seconds: float | None


def queue_history(broker, *, seconds: float = 3600, now: datetime | None = None) -> list[QueueHistory]:
    """Processed and failed per queue in the last ``seconds``, the last failure, the pause."""
    cols = QueueHistory.model_fields.keys()
    return [QueueHistory(**dict(zip(cols, row))) for row in broker.execute("queue_history_many", seconds=seconds, now=now)]


def running_messages(broker, *, limit: int = 500) -> list[RunningMessage]:
    """Messages claimed by workers right now, oldest claim first."""
    cols = RunningMessage.model_fields.keys()
    return [RunningMessage(**dict(zip(cols, row))) for row in broker.execute("messages_running_many", limit=limit)]


def pause_queue(broker, queue_name: str, *, by: str | None = None) -> None:
    """Stop every consumer claiming from ``queue_name`` (messages already claimed finish)."""
    broker.execute("queue_pause", queue_name=queue_name, paused_by=by)


def resume_queue(broker, queue_name: str) -> bool:
    """Let consumers claim from ``queue_name`` again; False when it was not paused."""
    return bool(broker.execute("queue_resume_one", queue_name=queue_name))
