"""What judge providers may be asked, kept in Postgres and shared by every process: a daily
call budget per provider, and a ceiling on the calls in flight (concurrency slots).

A slot belongs to a live holder, as a message's lease does (issue 11): it names the broker
process that took it, and it comes free when that process releases it or stops
heartbeating for a lease (``CITEQ_LEASE_SECONDS``), not only when its TTL runs out. A
worker SIGKILLed mid-call therefore holds its slots for one lease at most::

    slots = ProviderSlots(broker, "openai", limit=4)
    with slots.hold(wait_seconds=10):     # SlotsTaken if none came free meanwhile
        answer = call_the_provider()
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date

from broker import backoff, locks

from analysis import db

logger = logging.getLogger(__name__)

#: Lock scope under which a provider's slots are taken, one taker at a time.
SLOT_LOCK_SCOPE = "provider_slots"
#: Longest a slot outlives a holder that is not a heartbeating worker (a script judging
#: in-process), or one that hangs while its heartbeat goes on: the judge actor's time limit.
SLOT_TTL_SECONDS = 300.0


class SlotsTaken(Exception):
    """Every concurrency slot of the provider stayed taken by live holders; try again later."""


def set_limit(cur, provider: str, call_limit: int, *, day: date | None = None,
              calls_used: int | None = None) -> None:
    """Set the provider's limit for ``day`` (today, UTC, by default)."""
    db.execute(cur, "provider_budget_set", provider=provider, day=day, call_limit=call_limit,
               calls_used=calls_used)


def spend(cur, provider: str, calls: int = 1) -> bool:
    """Count ``calls`` against today's budget: True when they fit or no limit is set for
    today (unlimited), False when the budget is spent (nothing counted then)."""
    return db.one(cur, "provider_budget_spend_one", provider=provider, calls=calls)[0]


class ProviderSlots:
    """The ``limit`` concurrency slots of one provider, held by live processes only."""

    #: Tokens of the slots this process holds now, so that a slot whose release was lost
    #: (the database away at that moment) is taken back by this process's next take.
    _mine: set[str] = set()
    _mine_lock = threading.Lock()

    def __init__(self, broker, provider: str, limit: int, *, ttl_seconds: float = SLOT_TTL_SECONDS) -> None:
        self.broker = broker
        self.provider = provider
        self.limit = limit
        self.ttl_seconds = ttl_seconds

    @property
    def lease_seconds(self) -> float:
        return self.broker.settings.lease_seconds

    def take(self) -> tuple[int, str] | None:
        """Take a free slot now: (slot, token), or None when every slot is held."""
        with self.broker.transaction() as cur:
            locks.xact_lock(cur, SLOT_LOCK_SCOPE, self.provider)
            with self._mine_lock:
                mine = sorted(self._mine)
            row = db.one(cur, "provider_slot_take_one", provider=self.provider, slots=self.limit,
                         holder=self.broker.worker_id, mine=mine, lease_seconds=self.lease_seconds,
                         ttl_seconds=self.ttl_seconds)
        if row is None:
            return None
        with self._mine_lock:
            self._mine.add(row[1])
        return row[0], row[1]

    def release(self, slot: int, token: str) -> bool:
        """Give the slot back; False if it had been taken over (its holder had lapsed)."""
        with self._mine_lock:
            self._mine.discard(token)
        return db.one_on(self.broker, "provider_slot_release_one", provider=self.provider, slot=slot,
                         token=token) is not None

    def held(self) -> list[tuple[int, str, bool]]:
        """(slot, holder, holder counts as alive) of every slot row of the provider."""
        return db.many_on(self.broker, "provider_slots_held_many", provider=self.provider,
                          lease_seconds=self.lease_seconds)

    @contextmanager
    def hold(self, *, wait_seconds: float) -> Iterator[int]:
        """Hold a slot for the block, waiting up to ``wait_seconds`` (capped, jittered
        backoff) for one to come free; :class:`SlotsTaken` if none did."""
        deadline = time.monotonic() + wait_seconds
        attempt = 0
        while (taken := self.take()) is None:
            if time.monotonic() >= deadline:
                raise SlotsTaken(f"all {self.limit} slots of {self.provider} stayed taken for {wait_seconds:g} s")
            time.sleep(min(backoff.delay(attempt, first=0.05, cap=1.0), max(deadline - time.monotonic(), 0)))
            attempt += 1
        slot, token = taken
        try:
            yield slot
        finally:
            try:
                self.release(slot, token)
            except Exception as exc:  # noqa: BLE001 - the next take of this process reclaims it
                logger.warning("provider slot not released", extra={"action": "slot_release_failed",
                                                                    "provider": self.provider, "reason": str(exc)})
