"""Message groups: strict order per key, a bounded number in flight per key (issue 25).

An actor says how its messages are grouped::

    @dramatiq.actor(group_by=lambda invoice: invoice["tenant"], group_concurrency=1)
    def book(invoice): ...

    book.send({"tenant": "acme", ...})                     # key "acme"
    book.send_with_options(args=(inv,), group_key="b2")     # this send's own key
    book.send_with_options(args=(inv,), group_key=None)     # no group: runs as any message

Among messages of one queue with the same key, at most ``group_concurrency`` are in flight
(queued or running; see manual release below) across every process, in the order they were sent; other keys and
ungrouped messages run in parallel. This middleware only validates the options and writes
the message's key (and its actor's concurrency and release) into its options at send, where
the retry of a message finds them again; the decisions are the broker's, in SQL under the
key's advisory lock (broker/store.py, broker/queries.sql: grouped_message_insert_one,
grouped_messages_exchange_many, grouped_messages_finish_many, grouped_messages_release_many).

**Manual release: a message that holds its key until the application says its work is
done.** A message's handler may start work that outlives it (it sends more messages, it
waits for an outside party); the key must stay taken until that work ends, not until the
handler returns. An actor (or one send) with ``group_release="manual"`` says so::

    @dramatiq.actor(group_release="manual")
    def start_export(tenant, export_id): ...          # sends the export's parts

    start_export.send_with_options(args=("acme", 7), group_key="acme")
    ...
    with broker.transaction() as cur:                  # when the last part is written
        finish_export_rows(cur, 7)
        broker.release_group_messages(cur, [message_id], [("default", "acme")])

Such a message holds a slot of its key from the moment it may run until it is released:
its success acks it into ``parked`` (no lease, never delivered again, never pruned); its
dead letter keeps the slot too; a retry keeps it as any retry does. ``release_group_messages``
runs in the caller's transaction under the keys' locks: a parked (or still running) message
is finished, one not yet delivered is withdrawn, a dead letter gives its slot up, and the
keys' next messages are promoted in that transaction; it returns the promoted messages (so
the application can record, in the same transaction, which of its work may now run).
Releasing twice, or releasing a message that was never manual, changes nothing.

Guaranteed: the key's limit counts parked messages and manual dead letters like running
ones, everywhere (the sends' decisions, promotions, the sweep, the partial unique index of
``group_concurrency=1``, ``citeq groups``); a zombie's late ack cannot park or free anything.
Not guaranteed: that anybody releases. A message nobody releases holds its key forever
(operators see it as in flight in ``citeq groups``); the application needs its own backstop
(the analysis queue's resume sweep releases the turns of ended jobs).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from dramatiq import Middleware
from dramatiq.errors import ActorNotFound

from .errors import InvalidGroupOption

logger = logging.getLogger(__name__)

#: The message options this feature writes (a retry copies them with the message).
KEY_OPTION = "group_key"
CONCURRENCY_OPTION = "group_concurrency"
RELEASE_OPTION = "group_release"
#: The values of ``group_release``: the ack releases the slot (the default), or the application does.
RELEASES = ("ack", "manual")


class MessageGroups(Middleware):
    """Declares and validates the actor options ``group_by``, ``group_concurrency`` and
    ``group_release`` and the message option ``group_key``; part of
    :class:`~broker.PostgresBroker`'s default middleware."""

    @property
    def actor_options(self) -> set[str]:
        return {"group_by", CONCURRENCY_OPTION, RELEASE_OPTION}

    def before_declare_actor(self, broker, actor) -> None:
        group_by = actor.options.get("group_by")
        if group_by is not None and not callable(group_by):
            raise InvalidGroupOption(f"actor {actor.actor_name}: group_by must be callable, got {group_by!r}")
        concurrency_of(actor.options)
        release_of(actor.options)

    def before_enqueue(self, broker, message, delay) -> None:
        options = message.options
        if KEY_OPTION not in options:
            options[KEY_OPTION] = key_of(_actor_options(broker, message.actor_name), message.args, message.kwargs)
        key = options[KEY_OPTION]
        if key is None:
            del options[KEY_OPTION]
            options.pop(CONCURRENCY_OPTION, None)
            options.pop(RELEASE_OPTION, None)
            return
        if not isinstance(key, str) or not key:
            raise InvalidGroupOption(f"group_key of a {message.actor_name} message must be a non-empty str or None, "
                             f"got {key!r}")
        actor_options = _actor_options(broker, message.actor_name)
        options.setdefault(CONCURRENCY_OPTION, concurrency_of(actor_options))
        if RELEASE_OPTION not in options and actor_options.get(RELEASE_OPTION, "ack") != "ack":
            options[RELEASE_OPTION] = actor_options[RELEASE_OPTION]
        release_of(options)


def key_of(actor_options: dict, args: tuple, kwargs: dict) -> str | None:
    """The key ``group_by`` gives for these arguments (None without ``group_by``)."""
    group_by: Callable | None = actor_options.get("group_by")
    return None if group_by is None else group_by(*args, **kwargs)


def concurrency_of(options: dict) -> int:
    """The validated ``group_concurrency`` of an actor's (or a message's) options; default 1."""
    value = options.get(CONCURRENCY_OPTION, 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidGroupOption(f"group_concurrency must be an int >= 1, got {value!r}")
    return value


def release_of(options: dict) -> str | None:
    """The validated ``group_release`` of an actor's (or a message's) options, as the broker
    stores it: ``"manual"``, or None for the default ``"ack"``."""
    value = options.get(RELEASE_OPTION, "ack")
    if value not in RELEASES:
        raise InvalidGroupOption(f"group_release must be one of {', '.join(RELEASES)}, got {value!r}")
    return None if value == "ack" else value


def promoting_key(options: dict) -> str | None:
    """The key whose next message a finish (ack or nack) of a message with these options
    may promote: its group's, unless its release is manual (its ack parks it and its dead
    letter keeps the slot: nothing is freed, so its finish takes no lock and goes with the
    ungrouped ones, messages_exchange_many)."""
    return None if options.get(RELEASE_OPTION) == "manual" else options.get(KEY_OPTION)


def _actor_options(broker, actor_name: str) -> dict:
    try:
        return broker.get_actor(actor_name).options
    except ActorNotFound:
        return {}  # sent by name from a process that does not declare the actor


class GroupSweeper:
    """The backstop of promotions: a key whose next message is held although the key has
    room (a dead letter by the reaper, of an undecodable payload, a purge) gets it promoted.
    Idempotent and safe in many processes at once (each promotion re-checks under the lock)."""

    def __init__(self, store) -> None:
        self.store = store

    def run_once(self, limit: int = 1000) -> int:
        """One sweep; how many messages it let run."""
        stalled = self.store.stalled_groups(limit)
        promoted = self.store.promote_groups(stalled) if stalled else 0
        if promoted:
            logger.warning("stalled message groups promoted", extra={
                "action": "groups_swept", "groups": len(stalled), "promoted": promoted})
        return promoted
