"""The judge provider's daily call budget, shared by all users and kept in Postgres."""

from __future__ import annotations

from datetime import date

from . import db


def set_limit(cur, provider: str, call_limit: int, *, day: date | None = None,
              calls_used: int | None = None) -> None:
    """Set the provider's limit for ``day`` (today, UTC, by default)."""
    db.one(cur, "provider_budget_set_one", provider=provider, day=day, call_limit=call_limit,
           calls_used=calls_used)


def use(cur, provider: str, calls: int = 1) -> int | None:
    """Count ``calls`` against today's budget; the calls left, or None if they do not fit."""
    row = db.one(cur, "provider_budget_use_one", provider=provider, calls=calls)
    return None if row is None else row[0]


def spend(cur, provider: str, calls: int = 1) -> bool:
    """Count ``calls`` against today's budget: True when they fit or no limit is set for
    today (unlimited), False when the budget is spent (nothing counted then)."""
    return db.one(cur, "provider_budget_spend_one", provider=provider, calls=calls)[0]
