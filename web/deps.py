"""What every route of the web process shares: the typed error answer, the token's holder,
the request limit and the path id. The app and its route modules import it; it imports
neither (no cycle between web/app.py and its routes).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Annotated

from fastapi import Depends, Path as PathParam, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from analysis import inputs
from analysis.errors import AnalysisError
from analysis.surface import accounts, ratelimits

from .settings import WebSettings

#: HTTP status of each typed error code (anything else: 400).
STATUS = {
    "unknown_user": 404,
    "unknown_document": 404,
    "unknown_job": 404,
    "unknown_session": 404,
    "unknown_parse_job": 404,
    "unknown_token": 404,
    "insufficient_credits": 402,
    "invalid_request": 422,
    "invalid_doi": 422,
    "no_sources": 422,
    "empty_upload": 422,
    "document_not_ready": 409,
    "not_cancelable": 409,
    "queue_full": 409,
    "parse_jobs_limit": 409,
    "staged_bytes_limit": 413,
    "file_size_limit": 413,
    "files_per_upload_limit": 413,
    "payload_too_large": 413,
    "budget_exhausted": 503,
}


class ApiError(Exception):
    """An error answer: ``{"error": {"code": ..., "message": ..., ...}}``."""

    def __init__(self, status: int, code: str, message: str, headers: dict | None = None,
                 context: dict | None = None, **more) -> None:
        super().__init__(message)
        self.status, self.code, self.headers = status, code, headers or {}
        self.context = {k: v for k, v in {**(context or {}), **more}.items() if k not in ("code", "message")}

    def response(self) -> JSONResponse:
        return JSONResponse({"error": {"code": self.code, "message": str(self), **self.context}},
                            status_code=self.status, headers=self.headers)


def from_domain(exc: AnalysisError) -> ApiError:
    headers = {}
    if exc.code == "budget_exhausted":
        now = datetime.now(timezone.utc)
        midnight = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
        headers["Retry-After"] = str(int((midnight - now).total_seconds()) + 1)
    context = {k: inputs.json_safe(v) for k, v in exc.context.items()
               if isinstance(v, (str, int, float, bool, type(None))) or k == "errors"}
    return ApiError(STATUS.get(exc.code, 400), exc.code, str(exc), headers=headers, context=context)


class ErrorDetail(BaseModel):
    """A typed error: a stable machine-readable ``code``, a message, and the values involved."""

    model_config = {"extra": "allow"}
    code: str
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


#: Error answers every route may give, in the OpenAPI document (the fuzzing test holds the
#: app to it): same body shape for all.
ERROR_RESPONSES = {status: {"model": ErrorBody, "description": text} for status, text in {
    400: "malformed request (JSON, multipart, Content-Length)", 401: "no valid bearer token",
    402: "not enough credits", 403: "the token may not use this route", 404: "no such resource of yours",
    405: "method not allowed", 408: "the body did not arrive in time", 409: "a state or cap refuses it",
    411: "Content-Length required", 413: "too large", 415: "unsupported media type",
    422: "the input does not match the schema", 429: "request limit; see Retry-After",
    503: "budget exhausted or over capacity"}.items()}


#: An id in a path: a positive bigint (analysis/inputs.py), else 422 before any query runs.
PathId = Annotated[int, PathParam(ge=1, le=inputs.ID_MAX)]


def single_query_values(request: Request) -> None:
    """Every query parameter of the API takes one value: a repeated one (``?limit=5&limit=9``)
    is refused with a 422 rather than quietly read as its last value. A dependency of the app."""
    seen: set[str] = set()
    for key, _ in request.query_params.multi_items():
        if key in seen:
            raise ApiError(422, "invalid_request", "a query parameter is given more than once",
                           parameter=inputs.json_safe(key[:200]))
        seen.add(key)


def single_field(fields: dict[str, list[str]], name: str) -> str | None:
    """The one value of a form field that is not a list (None when absent); a repeated one is a 422."""
    values = fields.get(name) or []
    if len(values) > 1:
        raise ApiError(422, "invalid_request", f"{name} is given more than once", field=name)
    return values[0] if values else None


def holder(request: Request) -> accounts.Holder:
    """The token's holder; 401 without a valid bearer token."""
    auth = request.headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    found = accounts.authenticate(request.app.state.broker, token.strip()) if scheme.lower() == "bearer" else None
    if found is None:
        raise ApiError(401, "unauthorized", "send a valid token: Authorization: Bearer <token>",
                       headers={"WWW-Authenticate": "Bearer"})
    return found


def user(h: accounts.Holder = Depends(holder)) -> int:
    """The user the token acts for; 403 for an operator token without a user."""
    if h.user_id is None:
        raise ApiError(403, "no_user", "this operator token does not act for a user")
    return h.user_id


def operator(h: accounts.Holder = Depends(holder)) -> accounts.Holder:
    if not h.operator:
        raise ApiError(403, "forbidden", "this route needs an operator token")
    return h


def limit(request: Request, user_id: int, bucket: str) -> None:
    """Count a request against the user's sliding window; 429 with Retry-After when full."""
    s: WebSettings = request.app.state.settings
    cap = s.admit_limit if bucket == "admit" else s.upload_limit
    decision = ratelimits.hit(request.app.state.broker, user_id, bucket, limit=cap, window_seconds=s.window_seconds)
    if not decision.allowed:
        retry = max(1, int(decision.retry_after + 0.999))
        raise ApiError(429, "rate_limited", f"at most {cap} {bucket} requests per {s.window_seconds:g} s; "
                       f"retry in {retry} s", headers={"Retry-After": str(retry)}, retry_after=retry)
