"""Consuming one queue: batched claims and batched, lease-fenced acks.

Dramatiq calls ``ack``/``nack`` from its worker threads and ``__next__`` from the queue's
consumer thread. Acks are not written one by one: they are gathered in the queue's
:class:`QueueState` and written by the consumer thread together with the next claim, in
one statement (``messages_exchange_many``). That is how the broker gets past the
one-commit-per-message wall while every step stays durable in Postgres.

The state lives on the broker, not on the consumer, because Dramatiq replaces a consumer
after a connection error while worker threads still hold messages of the old one.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections import deque
from collections.abc import Iterable

import dramatiq
from dramatiq.broker import Consumer, MessageProxy
from dramatiq.message import Message

from . import failures
from .groups import promoting_key

logger = logging.getLogger(__name__)

#: Longest an ack waits to be written together with others (a finished message's row stays
#: ``running`` until then; a worker that dies meanwhile gets it re-delivered).
ACK_LINGER_SECONDS = 0.005
#: Etas of delayed messages a queue's state remembers (from NOTIFY and its own sends).
MAX_KNOWN_ETAS = 10_000
#: With a backlog of short messages a consumer holds as many as its threads finish in twice
#: this long (up to ``batch_max``) and claims at half of that; see
#: :meth:`PostgresConsumer.window`.
BATCH_SECONDS = 0.010
#: Seconds between two looks at a consumer's share of its queue's grouped messages (see
#: :meth:`PostgresConsumer._group_share`).
SHARE_SECONDS = 0.25


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
        #: (row id, lease token, reason, exception type path, exception args as JSON)
        self.nacks: list[tuple] = []
        #: Acks and nacks of grouped messages, and their keys: written with the others, each
        #: with the promotion of its key's next message under the key's lock (MessageStore.exchange).
        self.group_acks: list[tuple[int, str]] = []
        self.group_nacks: list[tuple] = []
        self.group_keys: set[str] = set()
        #: Messages claimed by this process and not yet acked, nacked or requeued.
        self.outstanding = 0
        #: The leases this process holds: row id -> lease token of each message it claimed
        #: whose ack, nack or requeue is not written yet. The heartbeat extends these and no
        #: others. A claim whose answer was lost (the connection cut after the server had
        #: committed it) leaves rows under this worker's id that no thread here will ever
        #: run: their leases must run out, so the reaper gives them to another delivery.
        self.leases: dict[int, str] = {}
        self.woken = False
        #: Acks and nacks the database refused because the lease had moved on.
        self.rejected = 0
        #: When the oldest ack or nack not yet written was gathered (monotonic), or None.
        self.finished_since: float | None = None
        #: When the delayed messages this process knows of are due (monotonic; a heap).
        self.etas: list[float] = []
        #: Messages are known to wait that no claim of ours has taken (a NOTIFY, an eta
        #: reached, a poll): the consumer claims them even with room below its low-water
        #: mark, so with busy or paused threads it fills its whole prefetch as Dramatiq's own
        #: brokers do. (Under load no NOTIFY comes, the queue is never empty, and acks free
        #: half the prefetch first: claims stay batched.)
        self.waiting = False
        #: The last claim took fewer messages than it had room for: it found the queue empty.
        #: A due message this process sends then wakes the consumer itself (see :meth:`sent`).
        self.drained = False
        #: Wake-ups (NOTIFY, :meth:`sent`) and committed due sends of this process so far:
        #: one that comes while a claim is in flight may be for a message the claim's
        #: snapshot does not hold, so that claim must not clear ``waiting``.
        self.wakes = 0
        self.sends = 0

    def wake(self) -> None:
        """A NOTIFY: messages are waiting; claim them now, whatever room there is."""
        with self.cond:
            self.woken = True
            self.waiting = True
            self.wakes += 1
            self.cond.notify_all()

    def marks(self) -> tuple[int, int]:
        """Taken before a claim, handed to :meth:`claimed` after it."""
        with self.cond:
            return self.wakes, self.sends

    def claimed(self, drained: bool = False, marks: tuple[int, int] | None = None) -> None:
        """A claim ran: what was known to wait when it began, it took (as much as there was
        room for); ``drained``: it took fewer than it had room for. A wake-up during the
        claim, or a send of this process that the drained claim may not have seen, keeps
        ``waiting``: the consumer claims once more."""
        with self.cond:
            self.drained = drained
            if marks is not None:
                wakes, sends = marks
                if self.wakes != wakes or (drained and self.sends != sends):
                    return
            self.waiting = False

    def sent(self) -> None:
        """This process committed a due message to the queue. A send skips its NOTIFY for a queue
        whose earlier messages still look queued, and a claim in flight makes them look so:
        the claim takes those, not this one (its snapshot is older), and no NOTIFY says it
        waits. When the last claim found the queue drained, wake as a NOTIFY would; with a
        backlog the consumer claims at its low-water mark anyway and claims stay batched."""
        with self.cond:
            self.sends += 1
            if self.drained:
                self.woken = True
                self.waiting = True
                self.wakes += 1
                self.cond.notify_all()

    def wake_in(self, seconds: float) -> None:
        """A message of this queue is due in ``seconds``: the consumer wakes then."""
        at = time.monotonic() + max(seconds, 0.0)
        with self.cond:
            if len(self.etas) < MAX_KNOWN_ETAS:  # beyond: the idle consumer asks (next_eta)
                heapq.heappush(self.etas, at)
            if self.etas[0] == at:
                self.cond.notify_all()

    @property
    def due_at(self) -> float | None:
        """When the earliest delayed message this process knows of is due, or None."""
        return self.etas[0] if self.etas else None

    def finish(self, ack: tuple[int, str] | None = None, nack: tuple | None = None,
               group_key: str | None = None) -> None:
        with self.cond:
            if group_key is not None:
                self.group_keys.add(group_key)
                acks, nacks = self.group_acks, self.group_nacks
            else:
                acks, nacks = self.acks, self.nacks
            if ack:
                acks.append(ack)
            if nack:
                nacks.append(nack)
            if self.finished_since is None:
                self.finished_since = time.monotonic()
            self.outstanding -= 1
            self.cond.notify_all()

    def take_finished(self) -> tuple[list[tuple[int, str]], list[tuple]]:
        with self.cond:
            acks, nacks = self.acks, self.nacks
            self.acks, self.nacks = [], []
            self.finished_since = None
            return acks, nacks

    def take_grouped(self) -> tuple[list[tuple[int, str]], list[tuple], set[str]]:
        with self.cond:
            taken = self.group_acks, self.group_nacks, self.group_keys
            self.group_acks, self.group_nacks, self.group_keys = [], [], set()
            return taken

    def give_back_grouped(self, acks: list[tuple[int, str]], nacks: list[tuple], keys: set[str]) -> None:
        with self.cond:
            self.group_acks[:0] = acks
            self.group_nacks[:0] = nacks
            self.group_keys |= keys
            if keys:
                self.finished_since = time.monotonic()

    @property
    def finished_pending(self) -> bool:
        """Acks or nacks gathered and not yet written (call with ``cond`` held)."""
        return bool(self.acks or self.nacks or self.group_keys)

    def settle(self, written: Iterable[tuple], claimed: Iterable[LeasedMessage] = ()) -> None:
        """Acks, nacks or requeues of ``written`` reached the database (accepted, or refused
        because the lease had moved on): their leases are not ours any more. ``claimed``: new
        leases."""
        with self.cond:
            for row_id, token, *_ in written:
                if self.leases.get(row_id) == token:
                    del self.leases[row_id]
            for m in claimed:
                self.leases[m.row_id] = m.lease_token

    def give_back(self, acks: list[tuple[int, str]], nacks: list[tuple]) -> None:
        """Keep acks whose write failed, to retry them with the next step."""
        with self.cond:
            self.acks[:0] = acks
            self.nacks[:0] = nacks
            if acks or nacks:
                self.finished_since = time.monotonic()

    def due(self, prefetch: int, low_water: int) -> bool:
        """Whether the consumer should exchange now (call with ``cond`` held): there is room
        for a worthwhile claim, or gathered acks have waited long enough, or messages are known
        to wait and there is any room."""
        now = time.monotonic()
        self._eta_reached(now)
        room = prefetch - self.outstanding
        return room >= low_water or self._linger_over() or (room > 0 and self.waiting)

    def _eta_reached(self, now: float) -> None:
        while self.etas and self.etas[0] <= now:
            heapq.heappop(self.etas)
            self.waiting = True

    def _linger_over(self) -> bool:
        return self.finished_since is not None and time.monotonic() - self.finished_since >= ACK_LINGER_SECONDS

    def wait(self, timeout: float, prefetch: int, low_water: int) -> None:
        """Sleep until woken (NOTIFY), until gathered acks are due to be written, until a
        delayed message is due, or ``timeout``."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not self.woken:
                now = time.monotonic()
                if self.due_at is not None and self.due_at <= now:
                    break  # an eta was reached: claim it
                if self.finished_pending and self.due(prefetch, low_water):
                    break
                room = prefetch - self.outstanding
                if room > 0 and self.waiting:
                    break
                left = deadline - now
                if self.due_at is not None:
                    left = min(left, self.due_at - now)
                if self.finished_since is not None:
                    left = min(left, self.finished_since + ACK_LINGER_SECONDS - now)
                if left <= 0:
                    if deadline <= now:  # a poll: claim whatever room there is
                        self.waiting = True
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
        #: Messages finished per second by this process's threads (a moving average over
        #: exchanges), and whether the last claim took all it had room for (a backlog).
        self.rate = 0.0
        self.backlog = False
        #: How many messages the last exchange claimed of the keys it finished a message of:
        #: their next messages, which it promoted.
        self._heads_claimed = 0
        self._share: int | None = None
        self._share_due = 0.0
        self._last_exchange = time.monotonic()
        self.batch_max = max(broker.settings.batch_max, self.prefetch)

    def window(self) -> tuple[int, int]:
        """(messages to hold, room that makes a claim due) for the next step.

        Each exchange statement costs the database a fixed part (its round trip, plan, commit)
        besides its rows, so under a backlog of short messages fewer, larger exchanges cost
        less per message (scripts/bench_profile.py: 72-88 us per message claimed and acked
        in batches of 8, 40 us in batches of 64). With a backlog (the last claim was full),
        the consumer holds as many messages as its threads finish in 2 x ``BATCH_SECONDS`` (up
        to ``batch_max``) and claims when half of them are done; otherwise Dramatiq's
        prefetch. Long messages finish slowly, so their consumer never holds more than the
        prefetch: a backlog of long jobs is still shared out among processes as before.
        Acks still linger at most ``ACK_LINGER_SECONDS`` (lingering them as long as a batch,
        10 ms, cost the per-user queue a third of its serialized throughput: a job's next
        message was claimed later)."""
        if not self.backlog or self.batch_max <= self.prefetch:
            return self.prefetch, self.low_water
        hold = min(self.batch_max, max(self.prefetch, int(self.rate * BATCH_SECONDS * 2)))
        if hold <= self.prefetch:
            return self.prefetch, self.low_water
        return hold, hold // 2

    def ack(self, message: LeasedMessage) -> None:
        self.state.finish(ack=(message.row_id, message.lease_token), group_key=promoting_key(message.options))

    def nack(self, message: LeasedMessage) -> None:
        exc_type, exc_args = failures.describe(message._exception)
        self.state.finish(nack=(message.row_id, message.lease_token, failure_reason(message), exc_type, exc_args),
                          group_key=promoting_key(message.options))

    def requeue(self, messages: Iterable[LeasedMessage]) -> None:
        messages = list(messages)
        if not messages:
            return
        rows = [(m.row_id, m.lease_token) for m in messages]
        # Not ours any more, whether the requeue is written or not: if not, their leases
        # run out and the reaper re-queues them (the heartbeat must not keep them alive).
        self.state.settle(rows)
        try:
            self.broker.requeue_rows(rows)
        finally:
            with self.state.cond:
                self.state.outstanding -= len(messages)

    def __next__(self) -> LeasedMessage | None:
        deadline = time.monotonic() + self.timeout
        while True:
            if self.buffer:
                return self.buffer.popleft()
            claimed = self._step()
            if self.buffer:
                continue
            if claimed == 0 and self.state.due_at is None:
                # Idle: learn when the next delayed message is due, to wake for it on time
                # (later ones announce themselves by NOTIFY with their delay).
                self._learn_next_eta()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.state.wait(min(remaining, self.broker.settings.poll_interval), *self.window())

    def _learn_next_eta(self) -> None:
        try:
            seconds = self.broker.next_eta(self.queue_name)
        except dramatiq.errors.BrokerConnectionError:
            return  # the poll interval is the fallback
        if seconds is not None and seconds < self.broker.settings.poll_interval:
            self.state.wake_in(seconds)

    def _step(self) -> int | None:
        """Write gathered acks and claim as many messages as there is room for, once that is
        due (:meth:`QueueState.due`); how many were claimed, or None when no claim was made."""
        hold, low_water = self.window()
        share = self._group_share() if self.state.group_keys else None
        with self.state.cond:
            room = max(hold - self.state.outstanding, 0)  # acks already freed their slots
            pending = self.state.finished_pending
            due = self.state.due(hold, low_water)
            # Room for the keys' next messages this step promotes: a worker that finished a
            # grouped message may claim its key's next in the same step, whatever its window
            # says now (it held the finished one until a moment ago, so it never holds more
            # than it did). Otherwise a step due by its linger, or with the window shrunk to
            # the prefetch after a short claim, promoted heads it could not take: each became
            # 'queued' (a second row version, the row trigger, a NOTIFY) for another claim.
            # Up to this process's share of the queue's keys (what its window has room for
            # included): beyond, the keys' next messages wait queued for the other workers.
            heads = None if share is None else max(share - self.state.outstanding, 0)
            reclaim = len(self.state.group_acks) + len(self.state.group_nacks)
            room = max(room, reclaim if heads is None else min(reclaim, heads))
        if due and (room or pending):
            marks = self.state.marks()
            claimed = self._exchange(room, heads)
            with self.state.cond:
                self.state.outstanding += len(claimed)
            self.buffer.extend(claimed)
            if room:
                # A claim that took all it had room for shows a backlog, unless the keys' next
                # messages that this exchange promoted filled it: they were promoted for this
                # claim and say nothing of messages waiting in the queue. Counted as a backlog,
                # they grew the window, and the next step, due at once, found the queue empty:
                # one empty claim (a round trip) per step in a drain of 100 keys.
                self.backlog = len(claimed) == room and self._heads_claimed < len(claimed)
                self.state.claimed(drained=len(claimed) < room, marks=marks)
                return len(claimed)
        return None

    def _group_share(self) -> int | None:
        """How many grouped messages of the queue this process may hold (its threads' share of
        those in flight, ``PostgresBroker.group_share``), looked up at most every
        ``SHARE_SECONDS``; None: no limit, or not known yet.

        Why: a key's next message goes to the process that finished its last one, in the same
        step, so a key stays where its first message was claimed. In a drain of 100 keys on
        two processes, the process that claimed faster in the first 50 ms kept up to 92 keys
        and the other one idled (10,000 messages split up to 9,116 / 884), and such drains
        ran at 0.5-0.7 of the rate of the evenly split ones. Holding no more than its share,
        a process leaves the other keys' next messages queued for the others."""
        now = time.monotonic()
        if now >= self._share_due:
            self._share_due = now + SHARE_SECONDS
            try:
                self._share = self.broker.group_share(self.queue_name, max(self.batch_max, self.prefetch))
            except dramatiq.errors.BrokerConnectionError:
                pass  # the last share known holds until the next look
        return self._share

    def _exchange(self, limit: int, heads: int | None = None) -> list[LeasedMessage]:
        g_acks, g_nacks, keys = grouped = self.state.take_grouped()
        acks, nacks = self.state.take_finished()
        try:
            claimed, finished = self.broker.exchange(self.queue_name, acks, nacks, limit, grouped if keys else None,
                                                     heads)
        except dramatiq.errors.BrokerConnectionError:
            # Acks and nacks are written again with the next step. Whatever this claim took
            # in the database if it committed unseen is left to its leases running out.
            self.state.give_back(acks, nacks)
            self.state.give_back_grouped(g_acks, g_nacks, keys)
            raise
        self.state.settle([*acks, *nacks, *g_acks, *g_nacks], claimed)
        self._heads_claimed = sum(1 for m in claimed if promoting_key(m.options) in keys) if keys else 0
        now = time.monotonic()
        elapsed, self._last_exchange = now - self._last_exchange, now
        finished_here = len(acks) + len(nacks) + len(g_acks) + len(g_nacks)
        if elapsed > 0:
            self.rate = 0.7 * self.rate + 0.3 * finished_here / elapsed
        rejected = finished_here - finished
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
