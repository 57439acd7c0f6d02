"""Accounts as users and operators see them: names, balances, bearer tokens.

A token is shown once, when it is minted; only its SHA-256 is stored, so reading the
database grants nothing. A user token acts for its user only; an operator token also
reaches the operator routes. Tokens expire (``CITEQ_TOKEN_TTL_DAYS``, default 90) and can
be revoked by id; every request checks both in the database (no cache), so a revoked
token is refused from the next request on.

Users are named by id or by name, never ambiguously: a reference of ASCII digits is an
id, anything else a name, and all-digit names are refused at creation.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import datetime

from pydantic import BaseModel, Field

from broker import locks
from broker.settings import EnvSettings, env_field

from analysis import db, inputs
from analysis.errors import AnalysisError

logger = logging.getLogger(__name__)

TOKEN_PREFIX = "cq_"
#: Scope of the lock that serializes account creation (ids are max + 1).
CREATE_LOCK_SCOPE = "accounts_create"


class NameTaken(AnalysisError):
    """An account with this name exists already."""

    code = "name_taken"


class UnknownToken(AnalysisError):
    """No token with this id."""

    code = "unknown_token"


class TokenSettings(EnvSettings):
    token_ttl_days: float = env_field(90.0, "CITEQ_TOKEN_TTL_DAYS", "days a newly minted token is valid",
                                      gt=0, le=36500)


class TokenInfo(BaseModel):
    """A token as ``citeq users tokens`` lists it (never the token itself)."""

    id: int
    user_id: int | None
    operator: bool
    label: str | None
    created_at: datetime
    expires_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class Account(BaseModel):
    user_id: int
    name: str | None
    email: str | None
    credits: int
    created_at: datetime
    jobs: dict[str, int]
    analysis_cost: int | None = None  #: credits one analysis costs (set where the settings are known)


class Holder(BaseModel):
    """Who a bearer token acts for."""

    user_id: int | None
    operator: bool


def create(broker, name: str | None, *, credits: int = 0, email: str | None = None) -> int:
    """Create an account; its new user id. InvalidInput for an all-digit or unstorable name."""
    inputs.validated(inputs.AccountInput, name=name, email=email)
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
    """An all-ASCII-digit reference is an id (0 or one beyond bigint finds nothing), else a name."""
    ref = str(ref)
    if inputs.is_id(ref):
        return {"ref": ref, "user_id": int(ref) if len(ref) <= 19 and 1 <= int(ref) <= inputs.ID_MAX else 0}
    return {"ref": ref, "user_id": None}


def view(broker, user_id: int) -> Account | None:
    row = db.one_on(broker, "account_view_one", user_id=user_id)
    if row is None:
        return None
    return Account(**dict(zip(Account.model_fields, row)))


def _hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def mint_token(broker, user_id: int | None, *, operator: bool = False, label: str | None = None,
               ttl_days: float | None = None) -> str:
    """A new bearer token for the user (or an operator); the only time it is readable.

    It expires after ``ttl_days`` (default: :class:`TokenSettings`' default; the CLI passes
    ``CITEQ_TOKEN_TTL_DAYS``).
    """
    return mint(broker, user_id, operator=operator, label=label, ttl_days=ttl_days)[0]


def mint(broker, user_id: int | None, *, operator: bool = False, label: str | None = None,
         ttl_days: float | None = None) -> tuple[str, TokenInfo]:
    """:func:`mint_token` with the new token's listing (id, expiry)."""
    inputs.validated(TokenInput, label=label)
    ttl = TokenSettings().token_ttl_days if ttl_days is None else ttl_days
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token_id, expires_at = db.one_on(broker, "token_insert_one", token_hash=_hash(token), user_id=user_id,
                                     operator=operator, label=label, ttl_seconds=ttl * 86400)
    logger.info("token minted", extra={"action": "token_minted", "user_id": user_id, "operator": operator,
                                       "token_id": token_id})
    info = next(t for t in tokens(broker, user_id) if t.id == token_id)
    return token, info


class TokenInput(BaseModel):
    label: inputs.Text | None = Field(None, max_length=200)


def tokens(broker, user_id: int | None) -> list[TokenInfo]:
    """The user's tokens (``None``: the operator tokens without a user), newest first."""
    rows = db.many_on(broker, "tokens_of_holder_many", user_id=user_id)
    return [TokenInfo(**dict(zip(TokenInfo.model_fields, r))) for r in rows]


def revoke(broker, token_id: int, *, user_id: int | None = None) -> TokenInfo:
    """Revoke a token by id, effective from the next request; UnknownToken for an unknown id
    (or, with ``user_id``, for a token that is not that user's)."""
    token_id = inputs.validated(TokenRef, token_id=token_id).token_id
    row = db.one_on(broker, "token_revoke_one", token_id=token_id, user_id=user_id)
    if row is None:
        raise UnknownToken(token_id=token_id)
    logger.info("token revoked", extra={"action": "token_revoked", "token_id": token_id, "user_id": row[1]})
    return next(t for t in tokens(broker, row[1]) if t.id == token_id)


class TokenRef(BaseModel):
    token_id: inputs.Id


def authenticate(broker, token: str) -> Holder | None:
    """The holder of a token, or None for an unknown, revoked or expired one."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200 or not token.isascii():
        return None
    row = db.one_on(broker, "token_holder_one", token_hash=_hash(token))
    return None if row is None else Holder(user_id=row[0], operator=row[1])
