"""Exactly-once periodic ticks: two periodiq schedulers never run a sweep twice.

periodiq sends each tick with ``scheduled_at`` (the tick time, in seconds). This
middleware turns (actor, tick floored to the minute — periodiq's resolution) into the
message's idempotency key, so the second scheduler's send of the same tick returns the
first message instead of inserting another.
"""

from __future__ import annotations

from datetime import datetime, timezone

from dramatiq import Middleware


def tick_key(actor_name: str, scheduled_at: str) -> str:
    tick = datetime.fromisoformat(scheduled_at).astimezone(timezone.utc).replace(second=0, microsecond=0)
    return f"periodic:{actor_name}:{tick.strftime('%Y-%m-%dT%H:%MZ')}"


class PeriodicDedupe(Middleware):
    def before_enqueue(self, broker, message, delay) -> None:
        scheduled_at = message.options.get("scheduled_at")
        if scheduled_at and "idempotency_key" not in message.options:
            message.options["idempotency_key"] = tick_key(message.actor_name, scheduled_at)
