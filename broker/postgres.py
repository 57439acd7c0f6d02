"""PostgresBroker: a Dramatiq 2 broker whose only moving part is one PostgreSQL table.

Three roles, one module each: the connector (broker/connector.py: the pool, transactions,
bound connections), the message store (broker/store.py: every statement on the messages
table) and this adapter, which speaks Dramatiq: it declares queues, runs the middleware
hooks around sends, encodes and decodes messages, and starts the consumer's threads.

Connections per process: at most ``pool_size`` (default 8) pooled connections shared by
sends, claims, acks, heartbeats and results, plus one long-lived LISTEN connection in
processes that consume; pooled connections unused for ``pool_idle_seconds`` are closed, so
an idle worker keeps its listener and the one or two its consumer and heartbeat use.

Behind PgBouncer in session mode nothing changes. In transaction mode set
``CITEQ_TRANSACTION_POOLING=1``: the hot paths' statements are sent unprepared
(broker/sql.py), and the listener connects to ``CITEQ_LISTEN_URL`` (a direct or
session-pooled endpoint) or, without one, does not run and consumers poll every
``poll_interval``. Migrations need no session either way (their lock is transaction-scoped,
broker/migrate.py). docs/howto/pgbouncer.md has the operator's side.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

import dramatiq
from dramatiq.broker import MessageProxy
from dramatiq.common import q_name
from dramatiq.errors import QueueJoinTimeout, QueueNotFound
from dramatiq.message import Message
from dramatiq.middleware import default_middleware
from dramatiq.results import Results

from . import sql
from .boot import MigrateAtBoot
from .connector import Connector
from .consumer import LeasedMessage, PostgresConsumer, QueueState
from .errors import MessageTooLarge
from .failures import dead_letter_exception
from .groups import CONCURRENCY_OPTION, KEY_OPTION, GroupSweeper, MessageGroups, release_of
from .maintenance import LeaseKeeper, Listener
from .periodic import PeriodicDedupe
from .pool import Pool
from .results import PostgresBackend
from .settings import BrokerSettings
from .store import MessageStore
from .threads import WorkerThreads

logger = logging.getLogger(__name__)


class PostgresBroker(dramatiq.Broker):
    """A Dramatiq broker on PostgreSQL.

    Parameters:
      url: libpq URL; wins over ``settings.database_url``.
      settings: the :class:`BrokerSettings`, read by the caller, the process's entry point
        (``PostgresBroker(settings=BrokerSettings.from_env())`` in the module Dramatiq imports).
        Without them the constructor reads them from the environment (``DATABASE_URL``,
        ``CITEQ_*``) once, here: an application that builds its broker in the module Dramatiq
        imports is at its own edge there, and ``PostgresBroker()`` stays the one-line change
        from another Dramatiq broker. Nothing else in the broker reads the environment.
      middleware: as for any Dramatiq broker; defaults to Dramatiq's default middleware
        plus periodiq support with tick dedupe, the schema migration at worker boot and the
        count of worker threads the heartbeat reports (broker/threads.py).
      results: also add Dramatiq's ``Results`` middleware with the Postgres result backend
        (the same as ``broker.add_middleware(Results(backend=PostgresBackend(broker)))``).
        Off by default, as with every Dramatiq broker: without it ``get_result()`` raises
        ``RuntimeError`` and an actor that returns a value logs Dramatiq's hint.
      **overrides: any field of :class:`BrokerSettings` (``lease_seconds=...``); they win over
        ``settings``.
    """

    def __init__(self, url: str | None = None, *, settings: BrokerSettings | None = None, middleware=None,
                 results: bool = False, **overrides) -> None:
        given = {k: v for k, v in {"database_url": url, **overrides}.items() if v is not None}
        base = settings if settings is not None else BrokerSettings.from_env()
        self.settings = BrokerSettings(**{**base.model_dump(), **given})
        self.queries = sql.broker_queries()
        #: Connections, transactions and named queries (broker/connector.py).
        self.connector = Connector(self.settings, self.queries)
        #: Every statement on the messages table (broker/store.py).
        self.store = MessageStore(self.connector, self.settings)
        #: The backstop of message groups' promotions (broker/groups.py); the lease keeper runs it.
        self.group_sweeper = GroupSweeper(self.store)
        if middleware is None:
            middleware = [m() for m in default_middleware] + [
                *_periodiq_middleware(),
                PeriodicDedupe(),
                MessageGroups(),
                MigrateAtBoot(),
                WorkerThreads(),
            ]
        super().__init__(middleware=middleware)
        if results:
            self.add_middleware(Results(backend=PostgresBackend(self)))
        self.queues: set[str] = set()
        self._states: dict[str, QueueState] = {}
        self._states_lock = threading.Lock()
        self._threads_lock = threading.RLock()
        self._listener: Listener | None = None
        self._lease_keeper: LeaseKeeper | None = None
        self._worker_id: str | None = None
        #: Open consumers per queue: what the heartbeat advertises in citeq_workers.
        self._consumers: Counter[str] = Counter()
        #: join(fail_fast) raises for dead letters that died since this broker first used the
        #: database or since the queue was last flushed (the database's time of the flush).
        self._join_epoch: dict[str, datetime] = {}
        #: What ``join`` does when its ``fail_fast`` is None, as StubBroker's attribute.
        self.fail_fast_default = True

    # -- connections -------------------------------------------------------------------

    @property
    def url(self) -> str:
        return self.connector.url

    @property
    def pool(self) -> Pool:
        return self.connector.pool

    @property
    def application_name(self) -> str:
        """What pg_stat_activity shows for this broker's connections."""
        return self.connector.application_name

    @property
    def pid(self) -> int:
        return os.getpid()

    @property
    def worker_id(self) -> str:
        """Identity of this process as a lease holder (a forked child gets its own)."""
        with self._threads_lock:
            if self._worker_id is None or not self._worker_id.endswith(f":{os.getpid()}"):
                self._worker_id = f"{socket.gethostname()}:{uuid.uuid4().hex[:8]}:{os.getpid()}"
            return self._worker_id

    @property
    def first_use(self) -> datetime:
        """The database's clock when this broker first used it (join's fail_fast starts there)."""
        return self.connector.first_use

    def connection(self):
        """A pooled connection in autocommit mode; driver failures become DatabaseUnavailable."""
        return self.connector.connection()

    def execute(self, query: str, **params) -> list[tuple]:
        """Run one named query on a pooled connection; return its rows (if any)."""
        return self.connector.execute(query, **params)

    def transaction(self):
        """One transaction on a pooled connection: sends inside it commit with it.

        ::

            with broker.transaction() as cur:
                cur.execute("INSERT INTO orders ...")
                ship.send(order_id)   # visible to workers only after the commit

        ``BEGIN`` goes out with the first statement, and sends without an idempotency key
        are written together with the ``COMMIT`` (see :meth:`Connector.transaction`).
        """
        return self.connector.transaction()

    def execute_at_commit(self, cursor, statement: bytes) -> None:
        """Send ``statement`` with the commit of the current transaction (or now, outside one)."""
        self.connector.execute_at_commit(cursor, statement)

    @contextmanager
    def bind(self, conn) -> Iterator[None]:
        """Make sends in this context use the caller's connection (and its transaction)."""
        with self.connector.bind(conn):
            yield

    # -- queues ------------------------------------------------------------------------

    def declare_queue(self, queue_name: str) -> None:
        if queue_name in self.queues:
            return
        self.emit_before("declare_queue", queue_name)
        self.queues.add(queue_name)
        self.emit_after("declare_queue", queue_name)

    def get_declared_queues(self) -> set[str]:
        return set(self.queues)

    def get_declared_delay_queues(self) -> set[str]:
        # Delays are an eta column, not separate queues: nothing for Dramatiq to consume.
        return set()

    def queue_state(self, queue_name: str) -> QueueState:
        with self._states_lock:
            return self._states.setdefault(queue_name, QueueState())

    def wake(self, queue_name: str) -> None:
        state = self._states.get(queue_name)
        if state is not None:
            state.wake()

    def wake_in(self, queue_name: str, seconds: float) -> None:
        """A delayed message of the queue is due in ``seconds``: its consumer wakes then."""
        state = self._states.get(queue_name)
        if state is not None:
            state.wake_in(seconds)

    def wake_all(self) -> None:
        for state in list(self._states.values()):
            state.wake()

    # -- sending -----------------------------------------------------------------------

    def _encode(self, message: Message) -> bytes:
        payload = message.encode()
        if len(payload) > self.settings.max_message_bytes:
            raise MessageTooLarge(
                f"message for {message.actor_name} is {len(payload)} bytes; "
                f"the limit is {self.settings.max_message_bytes} (CITEQ_MAX_MESSAGE_BYTES)",
                size=len(payload),
                limit=self.settings.max_message_bytes,
            )
        return payload

    def enqueue(self, message: Message, *, delay: int | None = None) -> Message:
        """Insert the message; with an idempotency key that exists, return the first one."""
        queue_name = q_name(message.queue_name)
        if queue_name not in self.queues:
            raise QueueNotFound(queue_name)
        if queue_name != message.queue_name:
            message = message.copy(queue_name=queue_name)
        self.emit_before("enqueue", message, delay)
        params = {
            "message_id": message.message_id,
            "queue_name": queue_name,
            "actor_name": message.actor_name,
            "payload": self._encode(message),
            "delay_ms": max(int(delay or 0), 0),
            # A retry re-sends the same message (key included): it must not collide with itself.
            "idempotency_key": None if message.options.get("retries") else message.options.get("idempotency_key"),
            "priority": self._priority(message),
            "group_key": message.options.get(KEY_OPTION),
            "group_limit": message.options.get(CONCURRENCY_OPTION, 1),
            "group_release": release_of(message.options),
        }
        committed = self.connector.bound()[0] is None  # else it commits with the caller's transaction
        existing = self.store.insert(params)
        if existing is not None:
            logger.debug("idempotent send: key %s already used", params["idempotency_key"])
            return existing
        self._wake_local(queue_name, params["delay_ms"], committed)
        self.emit_after("enqueue", message, delay)
        return message

    def _wake_local(self, queue_name: str, delay_ms: int, committed: bool) -> None:
        """This process's own consumer of the queue learns of a delayed send at once, NOTIFY
        or not: a retry's backoff (sent by the worker that ran the message) wakes it at its
        eta. A committed due send wakes it when its last claim had drained the queue
        (:meth:`QueueState.sent`); otherwise due sends are left to NOTIFY."""
        if delay_ms:
            self.wake_in(queue_name, delay_ms / 1000)
        elif committed:
            state = self._states.get(queue_name)
            if state is not None:
                state.sent()

    def _priority(self, message: Message) -> int:
        """The message's actor priority (Dramatiq: lower runs first); 0 for an actor this
        process does not know (a message sent by name)."""
        actor = self.actors.get(message.actor_name)
        return int(actor.priority) if actor is not None else 0

    def enqueue_many(self, messages: Sequence[Message], *, delay: int | None = None) -> list[Message]:
        """Send many messages in one round trip (no idempotency keys): the batch API. Messages
        of groups go in a statement of their own, after their keys' locks, in their order."""
        for m in messages:
            if q_name(m.queue_name) not in self.queues:
                raise QueueNotFound(m.queue_name)
            self.emit_before("enqueue", m, delay)
        delay_ms = max(int(delay or 0), 0)
        plain = [m for m in messages if m.options.get(KEY_OPTION) is None]
        keyed = [m for m in messages if m.options.get(KEY_OPTION) is not None]
        grouped = None
        if keyed:
            grouped = self._batch_params(keyed, delay_ms)
            grouped["group_keys"] = [m.options[KEY_OPTION] for m in keyed]
            grouped["group_limits"] = [m.options.get(CONCURRENCY_OPTION, 1) for m in keyed]
            grouped["group_releases"] = [release_of(m.options) for m in keyed]
        committed = self.store.insert_many(self._batch_params(plain, delay_ms), grouped)
        for queue_name in {q_name(m.queue_name) for m in messages}:
            self._wake_local(queue_name, delay_ms, committed)
        for m in messages:
            self.emit_after("enqueue", m, delay)
        return list(messages)

    def _batch_params(self, messages: Sequence[Message], delay_ms: int) -> dict:
        return {
            "message_ids": [m.message_id for m in messages],
            "queue_names": [q_name(m.queue_name) for m in messages],
            "actor_names": [m.actor_name for m in messages],
            "payloads": [self._encode(m) for m in messages],
            "delays_ms": [delay_ms] * len(messages),
            "priorities": [self._priority(m) for m in messages],
        }

    # -- consuming ---------------------------------------------------------------------

    def consume(self, queue_name: str, prefetch: int = 1, timeout: int = 1000) -> PostgresConsumer:
        if queue_name not in self.queues:
            raise QueueNotFound(queue_name)
        with self._threads_lock:
            self._consumers[queue_name] += 1
        self._start_threads()
        return PostgresConsumer(self, queue_name, prefetch, timeout)

    def consumer_closed(self, queue_name: str) -> None:
        with self._threads_lock:
            self._consumers[queue_name] -= 1

    @property
    def consumed_queues(self) -> list[str]:
        """Queues this process consumes right now (a stopped worker serves none)."""
        with self._threads_lock:
            return sorted(q for q, n in self._consumers.items() if n > 0)

    def _start_threads(self) -> None:
        with self._threads_lock:
            listening = self.connector.listen_url is not None
            if listening and (self._listener is None or not self._listener.is_alive()):
                self._listener = Listener(self)
                self._listener.start()
            if self._lease_keeper is None or not self._lease_keeper.is_alive():
                self._lease_keeper = LeaseKeeper(self)
                self._lease_keeper.start()

    def exchange(self, queue_name: str, acks, nacks, limit: int, grouped: tuple | None = None,
                 heads: int | None = None) -> tuple[list[LeasedMessage], int]:
        """Write acks/nacks and claim up to ``limit`` messages; return (claimed, finished count).
        ``grouped``: (acks, nacks, keys) of grouped messages, finished with their keys'
        promotions under the keys' locks in the same round trip (MessageStore.exchange), of
        which promotions the claim takes at most ``heads`` (None: no limit but ``limit``)."""
        rows = self.store.exchange(queue_name, acks, nacks, limit, self.worker_id, grouped, heads)
        claimed = []
        finished = 0
        for kind, row_id, token, payload, _, _ in rows:
            if kind != "claimed":
                finished += 1
                continue
            try:
                claimed.append(LeasedMessage(Message.decode(bytes(payload)), row_id, token))
            except Exception as exc:  # noqa: BLE001 - any decode failure makes a dead letter
                self.store.dead_letter_undecodable(row_id, token, f"undecodable payload: {type(exc).__name__}: {exc}")
                with self.queue_state(queue_name).cond:
                    self.queue_state(queue_name).outstanding -= 1
        return claimed, finished

    def finish_grouped(self, queue_name: str, acks, nacks, keys: set[str]) -> int:
        """Write acks/nacks of grouped messages and promote their keys' next messages, under
        the keys' locks, in one transaction; how many acks/nacks the database accepted."""
        rows = self.store.finish_grouped(acks, nacks, [(queue_name, k) for k in sorted(keys)])
        return sum(1 for kind, _ in rows if kind != "promoted")

    def release_group_messages(self, cursor, message_ids, groups) -> list[tuple[str, str, str]]:
        """Release messages sent with ``group_release="manual"`` inside the caller's
        transaction (``cursor`` of :meth:`transaction`) and let their keys' next messages
        run; the promoted messages as (message id, queue, key). ``groups``: the (queue, key)
        pairs of the messages. See broker/groups.py and MessageStore.release_many."""
        return self.store.release_many(cursor, message_ids, [(q_name(q), k) for q, k in groups])

    def release_group_messages_text(self, cursor, message_ids, groups) -> bytes | None:
        """:meth:`release_group_messages` as statements to send ahead of your own statement in
        one round trip (``cursor.execute(text + b";\\n" + yours)``): yours sees the release and
        the messages it promoted (state ``queued`` now). None when there is nothing to release."""
        return self.store.release_statements(cursor, message_ids, [(q_name(q), k) for q, k in groups])

    def redeliver_group_messages(self, cursor, message_ids) -> list[str]:
        """Deliver again parked or dead messages of manual release, keeping their slots
        (MessageStore.redeliver_many), inside the caller's transaction."""
        return self.store.redeliver_many(cursor, message_ids)

    def group_stats(self) -> list[tuple]:
        """Per queue: keys waiting, messages held, grouped messages in flight, keys in flight,
        age of the oldest held message (seconds)."""
        return self.store.group_stats()

    def group_messages(self, queue_name: str, group_key: str, limit: int = 100) -> list[tuple]:
        """One key's unfinished messages, in flight first, then held in their order."""
        return self.store.group_messages(q_name(queue_name), group_key, limit)

    def group_share(self, queue_name: str, most: int) -> int | None:
        """How many of the queue's grouped messages in flight this process should hold at most:
        its threads' part of the live workers' threads, of those queued or running, and one
        more; None when that is no limit (no other worker serves the queue, or the share is
        ``most`` or more)."""
        mine = self.worker_threads or 1
        in_flight, threads = self.store.group_share(queue_name, per_thread=-(-most // mine))
        if threads <= mine:
            return None
        share = -(-in_flight * mine // threads) + 1
        return None if share >= most else share

    def next_eta(self, queue_name: str) -> float | None:
        """Seconds until the queue's earliest delayed message is due, or None."""
        return self.store.next_eta(queue_name)

    def held_leases(self) -> list[tuple[int, str]]:
        """(row id, lease token) of every message this process claimed and has not finished
        in the database: the leases its heartbeat extends."""
        held = []
        for state in list(self._states.values()):
            with state.cond:
                held.extend(state.leases.items())
        return held

    def requeue_rows(self, rows: list[tuple[int, str]]) -> int:
        return self.store.requeue(rows)

    def reap(self, *, now: datetime | None = None, limit: int = 1000) -> list[tuple[int, str, str]]:
        """Re-queue (or dead-letter) messages whose lease expired; return (id, state, queue)."""
        return self.store.reap(now=now, limit=limit)

    def prune(self, limit: int = 10_000) -> int:
        """Delete finished messages past the retention and expired results."""
        return self.store.prune(limit)

    # -- testing helpers and shutdown ----------------------------------------------------

    def flush(self, queue_name: str) -> None:
        self._join_epoch[q_name(queue_name)] = self.store.flush(q_name(queue_name))

    def flush_all(self) -> None:
        for queue_name in self.queues:
            self.flush(queue_name)

    def join(self, queue_name: str, *, timeout: int | None = None, fail_fast: bool | None = None) -> None:
        """Wait until the queue has no queued, delayed or running messages (for tests).

        As StubBroker's: then, with ``fail_fast`` (None: :attr:`fail_fast_default`, True), if
        a message of the queue died since this broker first used the database or since the
        queue was last flushed, raise the exception the first of them died of. It is raised
        by every such join until the queue is flushed, and only once the queue has drained,
        so the other messages of the queue have run when it is raised. The exception is
        rebuilt (broker/failures.py): its type imported by module path (e.g.
        ``TimeLimitExceeded``, ``SkipMessage`` from the age limit, ``ActorNotFound``,
        ``RateLimitExceeded`` or the actor's own), its ``args`` and attributes restored, and
        caused by a :class:`DeadLettered` that carries the worker's traceback text;
        :class:`DeadLettered` itself when that type cannot be imported or rebuilt.
        """
        if queue_name not in self.queues:
            raise QueueNotFound(queue_name)
        if fail_fast is None:
            fail_fast = self.fail_fast_default
        deadline = timeout and time.monotonic() + timeout / 1000
        while self.store.count_unfinished(queue_name):
            if deadline and time.monotonic() > deadline:
                raise QueueJoinTimeout(queue_name)
            time.sleep(0.01)
        if fail_fast:
            since = self._join_epoch.get(queue_name) or self.first_use
            dead = self.store.dead_since(queue_name, since)
            if dead:
                raise dead_letter_exception(*dead[0])

    @property
    def dead_letters(self) -> list[MessageProxy]:
        """As StubBroker's: the messages of the declared queues that died since this broker
        first used the database or since their queue was last flushed, in the order they
        died, each with the exception join would raise for it (``message._exception``).
        Read from the database on every access; the list is a copy."""
        return [m for _, m in sorted(self._dead_letters(), key=lambda pair: pair[0])]

    @property
    def dead_letters_by_queue(self) -> defaultdict[str, list[MessageProxy]]:
        """:attr:`dead_letters` by queue name, as StubBroker's (a copy: appending to it
        dead-letters nothing)."""
        by_queue: defaultdict[str, list[MessageProxy]] = defaultdict(list)
        for _, m in sorted(self._dead_letters(), key=lambda pair: pair[0]):
            by_queue[m.queue_name].append(m)
        return by_queue

    def _dead_letters(self) -> Iterator[tuple[tuple, MessageProxy]]:
        """((time of death, row id), message) of the dead letters :attr:`dead_letters` lists;
        a payload that cannot be decoded is left out."""
        for queue_name in sorted(self.queues):
            since = self._join_epoch.get(queue_name) or self.first_use
            for row_id, actor_name, reason, exc_type, exc_args, payload, died in \
                    self.store.dead_letters_since(queue_name, since):
                try:
                    proxy = MessageProxy(Message.decode(bytes(payload)))
                except Exception:  # noqa: BLE001 - an undecodable dead letter has no message to show
                    continue
                proxy.stuff_exception(dead_letter_exception(row_id, actor_name, reason, exc_type, exc_args))
                yield (died, row_id), proxy

    @property
    def worker_threads(self) -> int | None:
        """Worker threads this process runs (the WorkerThreads middleware counts them); None
        when no Dramatiq worker booted here or the middleware is not installed."""
        counters = [m for m in self.middleware if isinstance(m, WorkerThreads)]
        return counters[0].threads if counters else None

    @property
    def connections(self) -> int:
        """Connections this process holds open: the pool's and the listener's."""
        pool = self.connector.open_connections
        listening = self._listener is not None and self._listener.connected
        return pool + int(listening)

    def close(self) -> None:
        for thread in (self._listener, self._lease_keeper):
            if thread is not None:
                thread.stop()
        if self._lease_keeper is not None:
            # A stopping process leaves citeq_workers at once (not after its lease runs out).
            self._lease_keeper.join(timeout=5)
            try:
                self.store.delete_worker(self.worker_id)
            except Exception:  # noqa: BLE001 - best effort; the row is pruned after the lease
                pass
        self.connector.close()


def _periodiq_middleware() -> list:
    try:
        from periodiq import PeriodiqMiddleware
    except ImportError:  # pragma: no cover - periodiq is a dependency, but optional here
        return []
    return [PeriodiqMiddleware(skip_delay=30)]
