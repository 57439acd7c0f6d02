"""Operator views of the broker: queue statistics, live workers, dead letters, message groups."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from dramatiq.common import q_name
from dramatiq.message import Message
from pydantic import BaseModel


class QueueStats(BaseModel):
    queue_name: str
    ready: int  #: due and waiting for a worker
    delayed: int  #: waiting for their eta (delays and retry backoff)
    running: int
    dead: int
    oldest_age_seconds: float  #: how long the oldest due message has waited


class GroupStats(BaseModel):
    """Message groups of one queue (issue 25)."""

    queue_name: str
    waiting_keys: int  #: keys with messages held behind their in-flight ones
    held: int  #: messages held (waiting for their key's turn)
    in_flight: int  #: grouped messages holding a slot: queued, running, parked (or dead, released manually)
    busy_keys: int  #: keys with a message in flight
    oldest_held_age_seconds: float  #: how long the oldest held message has waited since its send


class GroupKeyStats(BaseModel):
    """One key of a queue with unfinished messages."""

    queue_name: str
    group_key: str
    held: int  #: messages waiting for the key's turn
    in_flight: int  #: messages holding a slot: queued, running, parked (or dead, released manually)
    oldest_held_age_seconds: float | None  #: how long the oldest held message has waited; None: none held


class GroupMessage(BaseModel):
    """One unfinished message of a key, in the key's order."""

    id: int
    message_id: str
    actor_name: str
    state: str  #: running or queued (in flight), or held
    group_seq: int  #: the key's order (a retry keeps its first send's place)
    attempts: int
    enqueued_at: datetime
    eta: datetime
    started_at: datetime | None


class WorkerInfo(BaseModel):
    worker_id: str
    hostname: str
    pid: int
    queues: list[str]
    connections: int  #: database connections the process holds (its pool and its listener)
    threads: int | None  #: its worker threads (Dramatiq's --threads); None: the process did not say
    started_at: datetime
    last_seen_at: datetime
    seconds_since_seen: float


class DeadLetter(BaseModel):
    id: int
    message_id: str
    queue_name: str
    actor_name: str
    attempts: int
    enqueued_at: datetime
    finished_at: datetime | None
    reason: str | None
    args: list | None = None
    kwargs: dict | None = None


def queue_stats(broker) -> list[QueueStats]:
    """Depth, delayed, running, dead and oldest age per queue (one query)."""
    cols = QueueStats.model_fields.keys()
    return [QueueStats(**dict(zip(cols, row))) for row in broker.store.queue_stats()]


def group_stats(broker) -> list[GroupStats]:
    """Per queue: keys waiting, messages held, grouped messages and keys in flight, the age of
    the oldest held message (one query)."""
    cols = GroupStats.model_fields.keys()
    return [GroupStats(**dict(zip(cols, row))) for row in broker.store.group_stats()]


def group_keys(broker, queue_name: str | None = None, limit: int = 100) -> list[GroupKeyStats]:
    """Keys with unfinished messages, those whose held messages waited longest first."""
    cols = GroupKeyStats.model_fields.keys()
    rows = broker.store.group_keys(q_name(queue_name) if queue_name else None, limit)
    return [GroupKeyStats(**dict(zip(cols, row))) for row in rows]


def group_messages(broker, queue_name: str, group_key: str, limit: int = 100) -> list[GroupMessage]:
    """One key's unfinished messages: in flight first, then held, in the key's order."""
    cols = GroupMessage.model_fields.keys()
    return [GroupMessage(**dict(zip(cols, row))) for row in broker.group_messages(queue_name, group_key, limit)]


def workers(broker) -> list[WorkerInfo]:
    """Live worker processes: those that heartbeat within the lease (a process that stopped,
    or stopped heartbeating, is not live; its row is pruned)."""
    cols = WorkerInfo.model_fields.keys()
    rows = broker.store.workers()
    return [WorkerInfo(**dict(zip(cols, row))) for row in rows]


def dead_letters(broker, *, queue_name: str | None = None, limit: int = 100) -> list[DeadLetter]:
    letters = []
    for row in broker.store.dead_letters(queue_name, limit):
        *fields, payload = row
        letter = DeadLetter(**dict(zip(list(DeadLetter.model_fields)[:8], fields)))
        try:
            message = Message.decode(bytes(payload))
            letter.args, letter.kwargs = list(message.args), dict(message.kwargs)
        except Exception:  # noqa: BLE001 - an undecodable payload is shown without arguments
            pass
        letters.append(letter)
    return letters


#: Options Dramatiq's Retries middleware keeps in a message: reset, so a retried dead
#: letter gets its full set of retries again instead of dying after one more failure.
_RETRY_STATE = ("retries", "traceback", "requeue_timestamp")


def retry_dead_letters(broker, *, ids: list[int] | None = None, queue_name: str | None = None) -> int:
    """Put dead letters back on their queues with fresh deliveries and retries; how many."""
    return broker.store.retry_dead_letters(ids, queue_name, _fresh_payload)


def _fresh_payload(payload: bytes) -> bytes:
    try:
        message = Message.decode(payload)
    except Exception:  # noqa: BLE001 - an undecodable payload is retried as it is
        return payload
    options = {k: v for k, v in message.options.items() if k not in _RETRY_STATE}
    return dataclasses.replace(message, options=options).encode()  # copy() would merge options


def purge_dead_letters(broker, *, ids: list[int] | None = None, queue_name: str | None = None) -> int:
    """Delete dead letters for good; return how many."""
    return broker.store.purge_dead_letters(ids, queue_name)
