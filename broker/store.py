"""The message store: every statement on the messages table and its neighbours (workers,
results, dead letters), named in broker/queries.sql. One per broker.

It knows rows, ids, lease tokens and payload bytes — not Dramatiq's hooks or actors, which
are the adapter's (broker/postgres.py). Sends honour the connection a caller bound
(:meth:`~broker.connector.Connector.bind`): inside a transaction a send without an
idempotency key is written with the ``COMMIT``; a keyed send is written at once, so its
answer (the first message with that key) is known.
"""

from __future__ import annotations

import itertools
import logging
import time
from datetime import datetime

import psycopg2.errors
from dramatiq.message import Message

from . import backoff, locks, sql
from .connector import Connector
from .errors import DatabaseUnavailable
from .settings import BrokerSettings

logger = logging.getLogger(__name__)

#: Longest the reaper's and the sweep's promotions wait for a group's lock (see promote_groups).
PROMOTE_LOCK_TIMEOUT_MS = 1000


class MessageStore:
    """The messages table, through one :class:`Connector`."""

    def __init__(self, connector: Connector, settings: BrokerSettings) -> None:
        self.connector = connector
        self.settings = settings
        self.queries = connector.queries

    # -- sending ---------------------------------------------------------------------------

    def insert(self, params: dict) -> Message | None:
        """Insert one message; with an idempotency key that exists, return the first message."""
        bound, tx = self.connector.bound()
        if tx is not None and params["idempotency_key"] is None:
            with bound.cursor() as cur:
                for statement in self._insert_statements(cur, params):
                    self.connector.execute_at_commit(cur, statement)
            return None
        if bound is not None:
            return self._insert_on(bound, params, own_commit=False)
        try:
            with self.connector.connection() as conn:
                return self._insert_on(conn, params)
        except DatabaseUnavailable:
            pass
        if params["idempotency_key"] is None:
            # A pooled connection that died since its last use: one retry on a fresh one.
            with self.connector.connection() as conn:
                return self._insert_on(conn, params)
        return self._insert_patiently(params)

    def _insert_patiently(self, params: dict) -> Message | None:
        """A keyed send whose connection broke: tried again with capped backoff for up to
        ``pool_timeout``. The key makes a repeat harmless, whether or not the broken attempt
        committed. A periodic tick is such a send, and periodiq's scheduler dies of an
        error from a send (issue 11): it waits out a database restart here instead."""
        deadline = time.monotonic() + self.settings.pool_timeout
        for attempt in itertools.count():
            try:
                with self.connector.connection() as conn:
                    return self._insert_on(conn, params)
            except DatabaseUnavailable as exc:
                delay = backoff.delay(attempt, first=0.1, cap=2.0, jitter=False)
                if time.monotonic() + delay > deadline:
                    raise
                logger.warning("send failed, retrying: %s", exc, extra={
                    "action": "send_retried", "idempotency_key": params["idempotency_key"]})
                time.sleep(delay)

    def _insert_statements(self, cur, params: dict) -> list[bytes]:
        """The statements of one send: the insert; for a grouped message, the key's lock
        first, held until the transaction ends (the commit of the caller's, or of this
        round trip's implicit one), so the send sees every earlier send and finish of its key."""
        if params.get("group_key") is None:
            return [self.queries.text(cur, "message_insert_one", **params)]
        return [locks.group_lock_text(cur, params["queue_name"], params["group_key"]),
                self.queries.text(cur, "grouped_message_insert_one", **params)]

    def _commit_mode(self) -> list[bytes]:
        """What a send that commits by itself sends first: nothing, or (``CITEQ_SYNCHRONOUS_SENDS``
        off) the line that lets its commit return before the WAL is flushed."""
        return [] if self.settings.synchronous_sends else [sql.ASYNC_COMMIT.strip().rstrip(";").encode()]

    def _insert_on(self, conn, params: dict, *, own_commit: bool = True) -> Message | None:
        with conn.cursor() as cur:
            # One round trip; in autocommit mode its statements are one implicit transaction.
            first = self._commit_mode() if own_commit else []
            cur.execute(b";\n".join([*first, *self._insert_statements(cur, params)]))
            if cur.fetchone() is not None:
                return None
            row = self.queries.one(cur, "message_by_idempotency_key_one", **params)
        if row is None:  # pragma: no cover - the winner was pruned between the statements
            raise DatabaseUnavailable("idempotency key conflict could not be resolved; retry the send")
        return Message.decode(bytes(row[0]))

    def insert_many(self, params: dict, grouped: dict | None = None) -> bool:
        """Insert many messages in one statement (no idempotency keys); ``grouped``: messages of
        groups, in a second statement after their keys' locks, in the same transaction. True
        when they are committed now, False when they commit with the caller's transaction."""
        bound, tx = self.connector.bound()
        if bound is None:
            if grouped is None and self.settings.synchronous_sends:
                self.connector.execute("messages_insert_many", **params)
                return True
            with self.connector.connection() as conn, conn.cursor() as cur:
                # One round trip; in autocommit mode its statements are one implicit transaction.
                cur.execute(b";\n".join([*self._commit_mode(), *self._insert_many_statements(cur, params, grouped)]))
            return True
        with bound.cursor() as cur:
            for statement in self._insert_many_statements(cur, params, grouped):
                self.connector.execute_at_commit(cur, statement)
        return False

    def _insert_many_statements(self, cur, params: dict, grouped: dict | None) -> list[bytes]:
        statements = []
        if params["message_ids"]:
            statements.append(self.queries.text(cur, "messages_insert_many", **params))
        if grouped is not None:
            groups = sorted(set(zip(grouped["queue_names"], grouped["group_keys"])))
            statements += [locks.group_locks_text(cur, groups),
                           self.queries.text(cur, "grouped_messages_insert_many", **grouped)]
        return statements

    # -- consuming -------------------------------------------------------------------------

    def exchange(self, queue_name: str, acks, nacks, limit: int, worker_id: str,
                 grouped: tuple | None = None, heads: int | None = None) -> list[tuple]:
        """Write acks/nacks (fenced by lease token) and claim up to ``limit`` messages, in one
        statement; rows of (kind, id, token, payload, …): a row 'acked' or 'nacked' for each
        ack or nack written, 'claimed' for each message claimed. With ``grouped`` (acks,
        nacks and keys of grouped messages): the keys' locks and then one statement that
        finishes both kinds, promotes the keys' next messages and claims among the queued
        ones and those promoted (grouped_messages_exchange_many), in one round trip; of those
        promoted it claims at most ``heads`` (None: up to ``limit``)."""
        params = self._exchange_params(queue_name, acks, nacks, limit, worker_id)
        if grouped is None or not grouped[2]:
            return self.connector.execute("messages_exchange_many", **params)
        g_acks, g_nacks, keys = grouped
        params.update(self._ack_params(g_acks, g_nacks, prefix="group_"))
        params["head_limit"] = limit if heads is None else max(min(heads, limit), 0)
        with self.connector.connection() as conn, conn.cursor() as cur:
            return self.queries.many_after(cur, locks.group_locks_text(cur, [(queue_name, k) for k in sorted(keys)]),
                                           "grouped_messages_exchange_many", **params)

    @staticmethod
    def _ack_params(acks, nacks, prefix: str = "") -> dict:
        """Acks ((id, token)) and nacks ((id, token, reason, exception type, its args)) as the
        parameter arrays of the finishing statements, named with ``prefix``."""
        return {
            f"{prefix}ack_ids": [a[0] for a in acks], f"{prefix}ack_tokens": [a[1] for a in acks],
            f"{prefix}nack_ids": [n[0] for n in nacks], f"{prefix}nack_tokens": [n[1] for n in nacks],
            f"{prefix}nack_reasons": [n[2] for n in nacks], f"{prefix}nack_exc_types": [n[3] for n in nacks],
            f"{prefix}nack_exc_args": [n[4] for n in nacks],
        }

    @classmethod
    def _finish_params(cls, acks, nacks, groups) -> dict:
        return {**cls._ack_params(acks, nacks), "queues": [g[0] for g in groups], "keys": [g[1] for g in groups]}

    def _exchange_params(self, queue_name: str, acks, nacks, limit: int, worker_id: str) -> dict:
        return dict(
            **self._ack_params(acks, nacks),
            queue_name=queue_name,
            limit=limit,
            worker_id=worker_id,
            lease_seconds=self.settings.lease_seconds,
        )

    def finish_grouped(self, acks, nacks, groups: list[tuple[str, str]], *,
                       lock_timeout_ms: int | None = None) -> list[tuple[str, int]]:
        """Write acks/nacks of grouped messages (fenced by lease token) and promote the next
        messages of ``groups`` (queue, key) — those of the finished messages and any others —
        in one transaction under the groups' locks; rows of (kind, id), kind one of acked,
        nacked, promoted. ``lock_timeout_ms``: give up (psycopg2's LockNotAvailable) rather
        than wait longer for a key's lock (raised as DatabaseUnavailable caused by it)."""
        params = self._finish_params(acks, nacks, groups)
        with self.connector.connection() as conn, conn.cursor() as cur:
            timeout = b"" if lock_timeout_ms is None else cur.mogrify(
                "SET LOCAL lock_timeout = %s;\n", (int(lock_timeout_ms),))
            rows = self.queries.many_after(cur, timeout + locks.group_locks_text(cur, groups),
                                          "grouped_messages_finish_many", **params)
            _rejected_notices(conn)
            return rows

    def promote_groups(self, groups: list[tuple[str, str]], batch: int = 100) -> int:
        """Let the next messages of these groups run where their keys have room; how many.

        Called from the lease keeper's thread (the reaper, the sweep), which must not wait on
        an application transaction that holds a key's lock while it sends (broker.bind): a
        batch whose locks are not granted within PROMOTE_LOCK_TIMEOUT_MS is left to the next
        sweep."""
        promoted = 0
        for i in range(0, len(groups), batch):
            try:
                promoted += len(self.finish_grouped([], [], groups[i:i + batch],
                                                    lock_timeout_ms=PROMOTE_LOCK_TIMEOUT_MS))
            except DatabaseUnavailable as exc:
                if not isinstance(exc.__cause__, psycopg2.errors.LockNotAvailable):
                    raise
                logger.warning("message groups busy; promotion left to the next sweep",
                               extra={"action": "groups_promotion_deferred", "groups": len(groups[i:i + batch])})
        return promoted

    def stalled_groups(self, limit: int = 1000) -> list[tuple[str, str]]:
        """Groups whose next message is held although the key has room (the sweep's work)."""
        return [tuple(r) for r in self.connector.execute("groups_stalled_many", limit=limit)]

    def group_stats(self) -> list[tuple]:
        return self.connector.execute("group_stats_many")

    def group_messages(self, queue_name: str, group_key: str, limit: int = 100) -> list[tuple]:
        return self.connector.execute("group_messages_many", queue_name=queue_name, group_key=group_key, limit=limit)

    def group_keys(self, queue_name: str | None, limit: int = 100) -> list[tuple]:
        return self.connector.execute("group_keys_many", queue_name=queue_name, limit=limit)

    def release_many(self, cur, message_ids, groups) -> list[tuple[str, str, str]]:
        """Release messages whose ``group_release`` is manual, on the caller's cursor (in its
        transaction), and promote their keys' next messages into the room this makes, under
        the keys' locks (taken here, held until the caller's transaction ends); the promoted
        messages as (message id, queue, key). ``groups``: the (queue, key) of the messages,
        which the caller knows; only messages of these keys are touched. A parked or running
        message is finished, one not yet delivered is withdrawn, a dead letter gives its slot
        up; anything else is left alone, so releasing twice is harmless
        (grouped_messages_release_many in broker/queries.sql)."""
        parts = self._release_parts(cur, message_ids, groups)
        if parts is None:
            return []
        save, release, restore = parts
        cur.execute(save + b";\n" + release)
        rows = [tuple(r) for r in cur.fetchall()]
        cur.execute(restore)  # the release's result is the round trip's last: its own
        return rows

    def release_statements(self, cur, message_ids, groups) -> bytes | None:
        """:meth:`release_many` as statements to send ahead of the caller's own in one round
        trip (as the lock texts of broker/locks.py are sent); the caller's statement sees
        the release and the promotions, with the settings it had before. None when there is
        nothing to release."""
        parts = self._release_parts(cur, message_ids, groups)
        return None if parts is None else b";\n".join(parts)

    def _release_parts(self, cur, message_ids, groups) -> tuple[bytes, bytes, bytes] | None:
        """(save the caller's settings; the keys' locks and the release; restore them): the
        release's SET LOCAL lines (its plan settings) must not outlast it in the caller's
        transaction (sql.settings_kept)."""
        groups = sorted(set(groups))
        if not groups or not message_ids:
            return None
        save, restore = sql.settings_kept(self.queries["grouped_messages_release_many"])
        release = locks.group_locks_text(cur, groups) + b";\n" + self.queries.text(
            cur, "grouped_messages_release_many", message_ids=list(message_ids),
            queues=[g[0] for g in groups], keys=[g[1] for g in groups])
        return save, release, restore

    def redeliver_many(self, cur, message_ids) -> list[str]:
        """Deliver again, on the caller's cursor, messages whose release is manual and that
        hold their slot without running (parked, or dead): they keep slot and place; the ids
        of those re-queued."""
        if not message_ids:
            return []
        return [r[0] for r in self.queries.many(cur, "grouped_messages_redeliver_many",
                                                message_ids=list(message_ids))]

    def dead_letter_undecodable(self, row_id: int, token: str, reason: str) -> None:
        self.connector.execute("undecodable_message_dead_letter", id=row_id, token=token, reason=reason)

    def next_eta(self, queue_name: str) -> float | None:
        """Seconds until the queue's earliest delayed message is due, or None."""
        return self.connector.execute("queue_next_eta_one", queue_name=queue_name)[0][0]

    def group_share(self, queue_name: str, per_thread: int) -> tuple[int, int]:
        """(grouped messages of the queue queued or running, counted up to ``per_thread`` per
        thread; threads of the live workers serving the queue)."""
        return tuple(self.connector.execute("queue_group_share_one", queue_name=queue_name, per_thread=per_thread,
                                            lease_seconds=self.settings.lease_seconds)[0])

    def requeue(self, rows: list[tuple[int, str]]) -> int:
        """Give back claimed messages (id, lease token) that were never started."""
        return len(self.connector.execute("messages_requeue_many", ids=[r[0] for r in rows], tokens=[r[1] for r in rows]))

    # -- leases and workers ----------------------------------------------------------------

    def heartbeat(self, worker_id: str, *, hostname: str, pid: int, queues: list[str], connections: int,
                  held: list[tuple[int, str]], threads: int | None = None) -> None:
        """Record a live worker (or remove it, once it serves no queue) and extend the leases
        of the messages it holds."""
        if queues:
            self.connector.execute("worker_upsert", worker_id=worker_id, hostname=hostname, pid=pid,
                                   queues=queues, connections=connections, threads=threads)
        else:
            self.delete_worker(worker_id)
        if held:
            self.connector.execute("leases_extend", ids=[h[0] for h in held], tokens=[h[1] for h in held],
                                   lease_seconds=self.settings.lease_seconds)

    def delete_worker(self, worker_id: str) -> None:
        self.connector.execute("worker_delete", worker_id=worker_id)

    def reap(self, *, now: datetime | None = None, limit: int = 1000) -> list[tuple[int, str, str]]:
        """Re-queue (or dead-letter) messages whose lease expired; return (id, state, queue)."""
        rows = self.connector.execute("leases_reap_expired_many", now=now, limit=limit,
                                      max_deliveries=self.settings.max_deliveries)
        for row_id, state, queue in rows:
            logger.warning("lease expired", extra={"action": "lease_expired", "message_row": row_id,
                                                   "queue": queue, "new_state": state})
        dead = [row_id for row_id, state, _ in rows if state == "dead"]
        if dead:
            # A dead letter frees its group's place: the next message of the key may run.
            groups = [tuple(g) for g in self.connector.execute("group_keys_of_messages_many", ids=dead)]
            if groups:
                self.promote_groups(groups)
        return rows

    def prune(self, limit: int = 10_000) -> int:
        """Delete finished messages past the retention, expired results and stale workers."""
        with self.connector.connection() as conn, conn.cursor() as cur:
            self.queries.execute(cur, "messages_prune_finished",
                                 retention_seconds=self.settings.retention_seconds, limit=limit)
            pruned = cur.rowcount
            self.queries.execute(cur, "results_prune_expired", limit=limit)
            self.queries.execute(cur, "workers_prune", stale_seconds=self.settings.lease_seconds)
        return pruned

    # -- joins, flushes and operators --------------------------------------------------------

    def flush(self, queue_name: str) -> datetime:
        """Delete every message of the queue; the database's clock after it."""
        self.connector.execute("queue_flush", queue_name=queue_name)
        return self.connector.execute("database_now_one")[0][0]

    def count_unfinished(self, queue_name: str) -> int:
        return self.connector.execute("messages_count_unfinished_one", queue_name=queue_name)[0][0]

    def dead_since(self, queue_name: str, since: datetime) -> list[tuple]:
        return self.connector.execute("dead_letter_since_one", queue_name=queue_name, since=since)

    def dead_letters_since(self, queue_name: str, since: datetime) -> list[tuple]:
        return self.connector.execute("dead_letters_since_many", queue_name=queue_name, since=since)

    def queue_stats(self) -> list[tuple]:
        return self.connector.execute("queue_stats_many")

    def workers(self) -> list[tuple]:
        return self.connector.execute("workers_live_many", lease_seconds=self.settings.lease_seconds)

    def dead_letters(self, queue_name: str | None, limit: int) -> list[tuple]:
        return self.connector.execute("dead_letters_many", queue_name=queue_name, limit=limit)

    def retry_dead_letters(self, ids: list[int] | None, queue_name: str | None, fresh) -> int:
        """Put dead letters back on their queues, each payload passed through ``fresh``."""
        with self.connector.transaction() as cur:
            rows = [(row_id, fresh(bytes(payload)))
                    for row_id, payload in self.queries.many(cur, "dead_letters_lock_many", ids=ids, queue_name=queue_name)]
            if not rows:
                return 0
            retried = self.queries.many(cur, "dead_letters_retry_many",
                                        ids=[r[0] for r in rows], payloads=[r[1] for r in rows])
            groups = sorted({(q, k) for _, q, k in retried if k is not None})
            if groups:
                # Retried grouped letters went back held; those whose key has room run now.
                cur.execute(locks.group_locks_text(cur, groups) + b";\n" + self.queries.text(
                    cur, "grouped_messages_finish_many", prepare=False, **self._finish_params([], [], groups)))
            return len(retried)

    def purge_dead_letters(self, ids: list[int] | None, queue_name: str | None) -> int:
        return len(self.connector.execute("dead_letters_purge_many", ids=ids, queue_name=queue_name))


_REJECTED_NOTICE = "citeq_grouped_acks_rejected "


def _rejected_notices(conn) -> int:
    """Grouped acks the lease fence refused, as grouped_messages_finish_many reported them by
    NOTICE (schema/0022); the connection's notices are cleared."""
    rejected = 0
    for notice in conn.notices:
        _, found, count = notice.partition(_REJECTED_NOTICE)
        if found:
            rejected += int(count.strip())
    conn.notices.clear()
    return rejected
