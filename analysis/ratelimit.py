"""Per-user request limits: a sliding window counted in Postgres.

Not in process memory, so two web processes share one count and a redeploy keeps it.
Each (user, bucket) is counted under its own advisory lock: two concurrent requests
cannot both take the last slot.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from broker import locks

from . import surfacedb

LOCK_SCOPE = "request_limit"


@dataclass(frozen=True)
class Decision:
    allowed: bool
    #: Seconds until a slot frees up (0 when allowed with room left is not computed).
    retry_after: float


def hit(broker, user_id: int, bucket: str, *, limit: int, window_seconds: float,
        now: datetime | None = None) -> Decision:
    """Count one request of ``user_id`` in ``bucket``, or refuse it when the window is full."""
    with broker.transaction() as cur:
        locks.xact_lock(cur, LOCK_SCOPE, f"{user_id}/{bucket}")
        allowed, retry_after = surfacedb.one(cur, "request_hit_one", user_id=user_id, bucket=bucket,
                                             limit=limit, window_seconds=window_seconds, now=now)
    return Decision(allowed=allowed, retry_after=retry_after)
