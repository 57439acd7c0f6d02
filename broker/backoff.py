"""Exponential backoff for every retry loop of citeq: Dramatiq's own formula.

One place for the shape of a wait between attempts, in seconds, whoever retries (the LISTEN
connection, a job's completion, a judge waiting for a provider slot); Dramatiq's retries of
messages use the same :func:`dramatiq.common.compute_backoff`. The release retries of held
runs are scheduled in SQL (``analysis/queue/queries.sql``) with the same shape: ``first``
doubled per attempt, capped, jittered.
"""

from __future__ import annotations

from dramatiq.common import compute_backoff


def delay(attempt: int, *, first: float, cap: float, jitter: bool = True) -> float:
    """Seconds to wait after failed attempt ``attempt`` (0 for the first failure):
    ``first`` doubled per attempt, at most ``cap``. With ``jitter`` (for waits that many
    processes may start at once), a random share of it is added up to doubling it, kept
    within 50-100 % of ``cap`` once it reaches the cap."""
    _, milliseconds = compute_backoff(attempt, factor=first * 1000, jitter=jitter, max_backoff=cap * 1000)
    return milliseconds / 1000
