"""Operator views of the broker: queue statistics, live workers, dead letters."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from dramatiq.message import Message
from pydantic import BaseModel


class QueueStats(BaseModel):
    queue_name: str
    ready: int  #: due and waiting for a worker
    delayed: int  #: waiting for their eta (delays and retry backoff)
    running: int
    dead: int
    oldest_age_seconds: float  #: how long the oldest due message has waited


class WorkerInfo(BaseModel):
    worker_id: str
    hostname: str
    pid: int
    queues: list[str]
    connections: int  #: database connections the process holds (its pool and its listener)
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
    return [QueueStats(**dict(zip(cols, row))) for row in broker.execute("queue_stats")]


def workers(broker) -> list[WorkerInfo]:
    """Live worker processes: those that heartbeat within the lease (a process that stopped,
    or stopped heartbeating, is not live; its row is pruned)."""
    cols = WorkerInfo.model_fields.keys()
    rows = broker.execute("list_workers", lease_seconds=broker.settings.lease_seconds)
    return [WorkerInfo(**dict(zip(cols, row))) for row in rows]


def dead_letters(broker, *, queue_name: str | None = None, limit: int = 100) -> list[DeadLetter]:
    letters = []
    for row in broker.execute("list_dead_letters", queue_name=queue_name, limit=limit):
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
    with broker.transaction() as cur:
        cur.execute(broker.queries["lock_dead_letters"], {"ids": ids, "queue_name": queue_name})
        rows = [(row_id, _fresh_payload(bytes(payload))) for row_id, payload in cur.fetchall()]
        if not rows:
            return 0
        cur.execute(broker.queries["retry_dead_letters"],
                    {"ids": [r[0] for r in rows], "payloads": [r[1] for r in rows]})
        return cur.rowcount


def _fresh_payload(payload: bytes) -> bytes:
    try:
        message = Message.decode(payload)
    except Exception:  # noqa: BLE001 - an undecodable payload is retried as it is
        return payload
    options = {k: v for k, v in message.options.items() if k not in _RETRY_STATE}
    return dataclasses.replace(message, options=options).encode()  # copy() would merge options


def purge_dead_letters(broker, *, ids: list[int] | None = None, queue_name: str | None = None) -> int:
    """Delete dead letters for good; return how many."""
    return len(broker.execute("purge_dead_letters", ids=ids, queue_name=queue_name))
