"""Accounts as users and operators see them: names, balances, bearer tokens.

A token is shown once, when it is minted; only its SHA-256 is stored, so reading the
database grants nothing. A user token acts for its user only; an operator token also
reaches the operator routes.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import datetime

from pydantic import BaseModel

from broker import locks

from . import db
from .errors import AnalysisError

logger = logging.getLogger(__name__)

TOKEN_PREFIX = "cq_"
#: Scope of the lock that serializes account creation (ids are max + 1).
CREATE_LOCK_SCOPE = "accounts_create"


class NameTaken(AnalysisError):
    """An account with this name exists already."""

    code = "name_taken"


class Account(BaseModel):
    user_id: int
    name: str | None
    email: str | None
    credits: int
    created_at: datetime
    jobs: dict[str, int]


class Holder(BaseModel):
    """Who a bearer token acts for."""

    user_id: int | None
    operator: bool


def create(broker, name: str | None, *, credits: int = 0, email: str | None = None) -> int:
    """Create an account; its new user id."""
    with broker.transaction() as cur:
        locks.xact_lock(cur, CREATE_LOCK_SCOPE, "all")
        if name is not None and db.one(cur, "account_by_ref_one", **_ref(name)) is not None:
            raise NameTaken(name=name)
        user_id, _ = db.one(cur, "account_create_one", account_name=name, email=email, credits=credits)
    logger.info("account created", extra={"action": "account_created", "user_id": user_id})
    return user_id


def resolve(broker, ref: str | int) -> int | None:
    """The user id of an account given by id or name, or None."""
    row = db.one_on(broker, "account_by_ref_one", **_ref(ref))
    return None if row is None else row[0]


def _ref(ref: str | int) -> dict:
    ref = str(ref)
    return {"ref": ref, "user_id": int(ref) if ref.isdigit() and len(ref) <= 18 else None}


def view(broker, user_id: int) -> Account | None:
    row = db.one_on(broker, "account_view_one", user_id=user_id)
    if row is None:
        return None
    return Account(**dict(zip(Account.model_fields, row)))


def _hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def mint_token(broker, user_id: int | None, *, operator: bool = False, label: str | None = None) -> str:
    """A new bearer token for the user (or an operator); the only time it is readable."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    db.one_on(broker, "token_insert_one", token_hash=_hash(token), user_id=user_id,
                     operator=operator, label=label)
    logger.info("token minted", extra={"action": "token_minted", "user_id": user_id, "operator": operator})
    return token


def authenticate(broker, token: str) -> Holder | None:
    """The holder of a token, or None for an unknown or revoked one."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    row = db.one_on(broker, "token_holder_one", token_hash=_hash(token))
    return None if row is None else Holder(user_id=row[0], operator=row[1])
