"""Credits: balances on ``accounts``, every movement in ``credit_ledger``.

A job is charged at most once and refunded at most once: the ledger is unique per
(job, kind), and the balance only moves together with an inserted ledger row.
"""

from __future__ import annotations

import logging

from analysis import db

logger = logging.getLogger(__name__)


def open_account(cur, user_id: int, *, credits: int = 0, email: str | None = None) -> int:
    """Create the account (or add ``credits`` to it, as a grant); return the balance."""
    return db.one(cur, "account_upsert_one", user_id=user_id, email=email, credits=credits)[0]


def balance(cur, user_id: int) -> int | None:
    """The user's credits, or None for an unknown user."""
    row = db.one(cur, "account_get_one", user_id=user_id)
    return None if row is None else row[0]


#: The CHECK that refuses an overdraft (schema/0002).
OVERDRAFT_CONSTRAINT = "accounts_credits_not_negative"


def charge_at_commit(broker, cur, user_id: int, job_id: int, amount: int) -> None:
    """Debit a job's cost with the transaction's commit (at once in a caller's transaction).

    An overdraft makes the statement fail, and the transaction with it: see :func:`is_overdraft`.
    """
    broker.execute_at_commit(cur, db.text(cur, "credit_charge_one", user_id=user_id, job_id=job_id,
                                          amount=amount))


def is_overdraft(exc: BaseException) -> bool:
    """Whether a database error is a charge the balance did not cover."""
    diag = getattr(exc, "diag", None)
    return diag is not None and diag.constraint_name == OVERDRAFT_CONSTRAINT


def refund(cur, job_id: int) -> int:
    """Give the job's charge back once; return the credits refunded (0 on a repeat)."""
    row = db.one(cur, "credit_refund_one", job_id=job_id)
    if row is None:
        return 0
    logger.info("credit refunded", extra={"action": "credit_refunded", "job_id": job_id, "amount": row[0]})
    return row[0]
