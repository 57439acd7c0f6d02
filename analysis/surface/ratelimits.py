"""The web's per-user request limits, kept in Postgres (a sliding window per user and bucket).

Dramatiq's rate limiters for provider calls use the broker's backend (broker/ratelimits.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from broker import locks

from analysis import db

#: Lock scope of the per-user request windows (one lock per user and bucket).
REQUEST_LOCK_SCOPE = "request_limit"


@dataclass(frozen=True)
class Decision:
    allowed: bool
    #: Seconds until a slot frees up (what a 429's Retry-After says).
    retry_after: float


def hit(broker, user_id: int, bucket: str, *, limit: int, window_seconds: float,
        now: datetime | None = None) -> Decision:
    """Count one request of ``user_id`` in ``bucket``, or refuse it when the window is full.

    A sliding window over request timestamps in Postgres, not in process memory: two web
    processes share one count and a redeploy keeps it. Each (user, bucket) is counted under
    its own advisory lock, so two concurrent requests cannot both take the last slot.
    """
    with broker.transaction() as cur:
        locks.xact_lock(cur, REQUEST_LOCK_SCOPE, f"{user_id}/{bucket}")
        allowed, retry_after = db.one(cur, "request_hit_one", user_id=user_id, bucket=bucket,
                                      limit=limit, window_seconds=window_seconds, now=now)
    return Decision(allowed=allowed, retry_after=retry_after)
