"""Consuming one queue: batched claims and batched, lease-fenced acks.

Dramatiq calls ``ack``/``nack`` from its worker threads and ``__next__`` from the queue's
consumer thread. Acks are not written one by one: they are gathered in the queue's
:class:`QueueState` and written by the consumer thread together with the next claim, in
one statement (``exchange_messages``). That is how the broker gets past the
one-commit-per-message wall while every step stays durable in Postgres.

The state lives on the broker, not on the consumer, because Dramatiq replaces a consumer
after a connection error while worker threads still hold messages of the old one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Iterable

import dramatiq
from dramatiq.broker import Consumer, MessageProxy
from dramatiq.message import Message

logger = logging.getLogger(__name__)

#: Longest an ack waits to be written together with others (a finished message's row stays
#: ``running`` until then; a worker that dies meanwhile gets it re-delivered).
ACK_LINGER_SECONDS = 0.005


class LeasedMessage(MessageProxy):
    """A message together with the row and lease it was claimed under."""

    def __init__(self, message: Message, row_id: int, lease_token: str) -> None:
        super().__init__(message)
        self.row_id = row_id
        self.lease_token = lease_token


def failure_reason(message: MessageProxy) -> str:
    """Why a message is being dead-lettered, for the operator reading the dead letters."""
    traceback = message.options.get("traceback")
    if traceback:
        return str(traceback)
    if message._exception is not None:
        return f"{type(message._exception).__name__}: {message._exception}"
    return "rejected by the worker"


class QueueState:
    """What one process knows about one queue: gathered acks and messages it holds."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.acks: list[tuple[int, str]] = []
        self.nacks: list[tuple[int, str, str]] = []
        #: Messages claimed by this process and not yet acked, nacked or requeued.
        self.outstanding = 0
        self.woken = False
        #: Acks and nacks the database refused because the lease had moved on.
        self.rejected = 0
        #: When the oldest ack or nack not yet written was gathered (monotonic), or None.
        self.finished_since: float | None = None

    def wake(self) -> None:
        with self.cond:
            self.woken = True
            self.cond.notify_all()

    def finish(self, ack: tuple[int, str] | None = None, nack: tuple[int, str, str] | None = None) -> None:
        with self.cond:
            if ack:
                self.acks.append(ack)
            if nack:
                self.nacks.append(nack)
            if self.finished_since is None:
                self.finished_since = time.monotonic()
            self.outstanding -= 1
            self.cond.notify_all()

    def take_finished(self) -> tuple[list[tuple[int, str]], list[tuple[int, str, str]]]:
        with self.cond:
            acks, nacks = self.acks, self.nacks
            self.acks, self.nacks = [], []
            self.finished_since = None
            return acks, nacks

    def give_back(self, acks: list[tuple[int, str]], nacks: list[tuple[int, str, str]]) -> None:
        """Keep acks whose write failed, to retry them with the next step."""
        with self.cond:
            self.acks[:0] = acks
            self.nacks[:0] = nacks
            if acks or nacks:
                self.finished_since = time.monotonic()

    def due(self, prefetch: int, low_water: int) -> bool:
        """Whether the consumer should exchange now (call with ``cond`` held): there is room
        for a worthwhile claim, or gathered acks have waited long enough."""
        return prefetch - self.outstanding >= low_water or self._linger_over()

    def _linger_over(self) -> bool:
        return self.finished_since is not None and time.monotonic() - self.finished_since >= ACK_LINGER_SECONDS

    def wait(self, timeout: float, prefetch: int, low_water: int) -> None:
        """Sleep until woken (NOTIFY), until gathered acks are due to be written, or ``timeout``."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not self.woken:
                if (self.acks or self.nacks) and self.due(prefetch, low_water):
                    break
                left = deadline - time.monotonic()
                if self.finished_since is not None:
                    left = min(left, self.finished_since + ACK_LINGER_SECONDS - time.monotonic())
                if left <= 0:
                    break
                self.cond.wait(left)
            self.woken = False


class PostgresConsumer(Consumer):
    """Iterates over the messages of one queue; yields ``None`` when idle for ``timeout``."""

    def __init__(self, broker, queue_name: str, prefetch: int, timeout_ms: int) -> None:
        self.broker = broker
        self.queue_name = queue_name
        self.prefetch = max(prefetch, 1)
        self.timeout = timeout_ms / 1000
        self.state: QueueState = broker.queue_state(queue_name)
        self.buffer: deque[LeasedMessage] = deque()
        self.closed = False
        # Claim when half the prefetch is free, not after every ack: under load each step
        # then writes and claims many messages (a full worker would otherwise exchange one
        # ack for one claim per statement); the other half keeps the threads busy meanwhile.
        self.low_water = max(1, self.prefetch // 2)

    def ack(self, message: LeasedMessage) -> None:
        self.state.finish(ack=(message.row_id, message.lease_token))

    def nack(self, message: LeasedMessage) -> None:
        self.state.finish(nack=(message.row_id, message.lease_token, failure_reason(message)))

    def requeue(self, messages: Iterable[LeasedMessage]) -> None:
        messages = list(messages)
        if not messages:
            return
        self.broker.requeue_rows([(m.row_id, m.lease_token) for m in messages])
        with self.state.cond:
            self.state.outstanding -= len(messages)

    def __next__(self) -> LeasedMessage | None:
        deadline = time.monotonic() + self.timeout
        while True:
            if self.buffer:
                return self.buffer.popleft()
            self._step()
            if self.buffer:
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.state.wait(min(remaining, self.broker.settings.poll_interval), self.prefetch, self.low_water)

    def _step(self) -> None:
        """Write gathered acks and claim as many messages as there is room for, once that is
        due (:meth:`QueueState.due`)."""
        with self.state.cond:
            room = max(self.prefetch - self.state.outstanding, 0)  # acks already freed their slots
            pending = bool(self.state.acks or self.state.nacks)
            due = self.state.due(self.prefetch, self.low_water)
        if due and (room or pending):
            claimed = self._exchange(room)
            with self.state.cond:
                self.state.outstanding += len(claimed)
            self.buffer.extend(claimed)

    def _exchange(self, limit: int) -> list[LeasedMessage]:
        acks, nacks = self.state.take_finished()
        try:
            claimed, finished = self.broker.exchange(self.queue_name, acks, nacks, limit)
        except dramatiq.errors.BrokerConnectionError:
            self.state.give_back(acks, nacks)
            raise
        rejected = len(acks) + len(nacks) - finished
        if rejected:
            self.state.rejected += rejected
            logger.warning(
                "late acks rejected: their leases had expired and the messages were re-delivered",
                extra={"action": "late_ack_rejected", "queue": self.queue_name, "count": rejected},
            )
        return claimed

    def close(self) -> None:
        """Give back claimed messages Dramatiq never saw and write the acks gathered so far."""
        if not self.closed:  # Dramatiq may close a failed consumer twice before replacing it
            self.closed = True
            self.broker.consumer_closed(self.queue_name)
        try:
            if self.buffer:
                self.requeue(list(self.buffer))
                self.buffer.clear()
            self._exchange(0)
        except dramatiq.errors.BrokerConnectionError:
            pass  # acks stay in the queue state for the next consumer; leases expire otherwise
