"""The HTTP API, the dashboard and /metrics: the ``web`` process.

FastAPI on Starlette: the OpenAPI document (``/openapi.json``, ``/docs``) comes from the
same pydantic models the domain already uses. Request bodies are read and validated
here, once, with explicit limits, so malformed JSON (400), wrong content types (415),
oversized bodies (413) and invalid fields (422) each get a clear, typed answer.

Auth: ``Authorization: Bearer <token>``. A user token reaches only its own uploads,
documents and jobs: another user's id answers 404 exactly like an id that does not exist.
Operator routes (``/api/ops/...``) need an operator token.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from pathlib import Path
from typing import Annotated

from fastapi import Depends, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse
from pydantic import AfterValidator, BaseModel, Field, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from analysis import inputs
from analysis.queue import userqueue
from analysis.surface import accounts, operations, views
from analysis.errors import AnalysisError
from analysis.settings import PipelineSettings, QueueSettings

from . import metrics
from .deps import ERROR_RESPONSES, ApiError, PathId, from_domain, limit, operator, single_query_values, user
from .settings import WebSettings

logger = logging.getLogger(__name__)

STATIC = Path(__file__).with_name("static")
_STATIC_FILES = {"dashboard.js": "text/javascript; charset=utf-8", "dashboard.css": "text/css; charset=utf-8"}

# -- request bodies ------------------------------------------------------------------------------


#: A queue name in a query string.
QueueName = Annotated[str | None, Query(max_length=200), AfterValidator(lambda v: v and inputs.check_text(v))]
#: A queue name in a path, and a message group's key in a query string.
QueuePath = Annotated[str, PathParam(max_length=200), AfterValidator(lambda v: inputs.check_text(v))]
GroupKey = Annotated[str, Query(max_length=1000), AfterValidator(lambda v: inputs.check_text(v))]


class AnalysisRequest(BaseModel):
    """Admit an analysis of one of your theses against your sources."""

    thesis_id: inputs.Id
    source_ids: list[inputs.Id] = Field(min_length=1, max_length=inputs.SOURCES_MAX)
    idempotency_key: inputs.IdempotencyKey | None = None
    options: inputs.Options = Field(default_factory=dict)


class DeltaRequest(BaseModel):
    """Re-check an earlier analysis (bypasses your queue); sources default to the original's."""

    source_ids: list[inputs.Id] | None = Field(None, min_length=1, max_length=inputs.SOURCES_MAX)
    idempotency_key: inputs.IdempotencyKey | None = None
    options: inputs.Options = Field(default_factory=dict)


def _body_schema(model: type[BaseModel]) -> dict:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}


async def json_body(request: Request, model: type[BaseModel], limit: int, *, optional: bool = False) -> BaseModel:
    """The request's JSON body validated as ``model``; typed 4xx for everything else."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    length = request.headers.get("content-length") or "0"
    declared = int(length) if length.isascii() and length.isdigit() else 0
    if declared > limit:
        raise ApiError(413, "payload_too_large", f"the body is larger than {limit} bytes", limit=limit)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise ApiError(413, "payload_too_large", f"the body is larger than {limit} bytes", limit=limit)
    if not body.strip() and optional:
        return model()
    if ctype != "application/json":
        raise ApiError(415, "unsupported_media_type", "send the body as application/json", got=ctype or None)
    data = parse_json(body)
    try:
        return model.model_validate(data)
    except ValidationError as exc:  # the input is not echoed: it may not even be encodable
        raise ApiError(422, "invalid_request", "the body does not match the schema",
                       errors=inputs.errors_of(exc)) from None


#: Deepest nesting of arrays and objects a JSON body may have (ours nest two deep).
MAX_JSON_DEPTH = 32
#: Most digits an integer in a JSON body may have (ids are 64-bit: 19 digits).
MAX_JSON_DIGITS = 40
_JSON_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def parse_json(body: bytes):
    """The JSON of a body, with its nesting depth and integer sizes checked before they can
    cost a RecursionError or Python's digit limit (a 500): typed 400s instead."""
    depth = deepest = 0
    for token in _JSON_TOKENS.finditer(body):  # strings are skipped whole: brackets in them do not count
        bracket = token.group()[:1]
        if bracket in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        elif bracket in (b"]", b"}"):
            depth -= 1
    if deepest > MAX_JSON_DEPTH:
        raise ApiError(400, "json_too_deep", f"the body nests arrays and objects deeper than {MAX_JSON_DEPTH}",
                       limit=MAX_JSON_DEPTH)
    try:
        return json.loads(body, parse_int=_bounded_int)
    except _IntegerTooLong:
        raise ApiError(400, "json_number_too_long", f"an integer in the body has more than {MAX_JSON_DIGITS} "
                       "digits", limit=MAX_JSON_DIGITS) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, "malformed_json", f"the body is not valid JSON: {exc}") from None


class _IntegerTooLong(Exception):
    pass


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_JSON_DIGITS:
        raise _IntegerTooLong()
    return int(digits)


# -- the app ------------------------------------------------------------------------------------


def create_app(broker=None, settings: WebSettings | None = None, *, queue: QueueSettings | None = None,
               pipeline: PipelineSettings | None = None) -> FastAPI:
    """The ASGI app: the web process's edge. Settings not given are read from the environment
    here, once, and the routes hand them down (``app.state``). Without a broker it boots like
    every process: DATABASE_URL, migrate, actors."""
    settings = settings or WebSettings.from_env()
    queue = queue or QueueSettings.from_env()
    pipeline = pipeline or PipelineSettings.from_env()
    if broker is None:
        from broker.migrate import migrate
        from broker.settings import BrokerSettings

        url = BrokerSettings.from_env().database_url
        migrate(url) if url else None
        import actors

        broker = actors.broker
    app = FastAPI(title="citeq", version="0.1.0", summary="Citation verification of academic theses, "
                  "one analysis at a time per user, on a PostgreSQL job queue.",
                  docs_url=None, redoc_url=None,  # web/apidocs.py serves /docs without a CDN
                  responses=ERROR_RESPONSES, dependencies=[Depends(single_query_values)])
    app.state.broker, app.state.settings = broker, settings
    app.state.queue_settings, app.state.pipeline_settings = queue, pipeline
    app.state.metrics = metrics.private_registry(broker)

    @app.exception_handler(ApiError)
    async def _api_error(request, exc: ApiError):
        return exc.response()

    @app.exception_handler(AnalysisError)
    async def _domain_error(request, exc: AnalysisError):
        return from_domain(exc).response()

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request, exc: StarletteHTTPException):
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:  # every method of the path, not only those of the first route matched
            headers["Allow"] = ", ".join(_allowed_methods(request))
        return ApiError(exc.status_code, code, str(exc.detail), headers=headers).response()

    from fastapi.exceptions import RequestValidationError

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request, exc: RequestValidationError):
        errors = [{"loc": [inputs.json_safe(p) for p in e.get("loc", ())], "msg": inputs.json_safe(e.get("msg")),
                   "type": e.get("type")} for e in exc.errors()]
        return ApiError(422, "invalid_request", "the request does not match the schema", errors=errors).response()

    _routes(app)
    from . import apidocs, head, limits, report_routes, security, tokens_routes, uploads_routes

    uploads_routes.install(app)
    report_routes.install(app)
    tokens_routes.install(app)
    apidocs.install(app)
    limits.install(app, settings)
    app.add_middleware(security.SecurityHeaders)
    # Static files (the API docs' 1.5 MB Swagger UI among them) and large JSON go gzipped to
    # clients that accept it; small answers are not worth the CPU.
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=6)
    # Outermost: a HEAD runs as the GET it stands for, compression included, so its
    # Content-Length is the one GET would send.
    app.add_middleware(head.HeadAsGet)
    return app


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _allowed_methods(request: Request) -> list[str]:
    from starlette.routing import Match

    matching = [route for route in request.app.router.routes
                if getattr(route, "methods", None) and route.matches({**request.scope, "method": "GET"})[0] != Match.NONE]
    # A path that a route without parameters names exactly is that route's path, as the OpenAPI
    # document has it (POST /api/ops/dead-letters/retry is not DELETE /api/ops/dead-letters/{letter_id}).
    literal = [route for route in matching if not getattr(route, "param_convertors", None)]
    methods = {method for route in (literal or matching) for method in route.methods}
    return sorted(methods | ({"HEAD"} if "GET" in methods else set()))  # web/head.py answers HEAD as GET


def _job_or_404(broker, job_id: int, user_id: int) -> views.JobView:
    job = views.job(broker, job_id, user_id=user_id)
    if job is None:
        raise ApiError(404, "unknown_job", f"no job {job_id}", job_id=job_id)
    return job


def _routes(app: FastAPI) -> None:
    versions = {name: _digest(STATIC / name) for name in _STATIC_FILES}
    page = (STATIC / "dashboard.html").read_text(encoding="utf-8")
    for name, version in versions.items():
        page = page.replace(f'"/static/{name}"', f'"/static/{name}?v={version}"')

    @app.get("/", include_in_schema=False)
    def dashboard():
        # The page names its script and style by content digest, so those can be cached for
        # good; the page itself is revalidated each time.
        return HTMLResponse(page, headers={"Cache-Control": "no-cache"})

    # The dashboard's script and style are files of their own, so that a Content-Security-Policy
    # can allow scripts from this origin only (no inline code).
    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str, v: str | None = None):
        media = _STATIC_FILES.get(name)
        if media is None:
            raise ApiError(404, "not_found", f"no static file {name}")
        cache = "public, max-age=31536000, immutable" if v == versions[name] else "no-cache"
        return FileResponse(STATIC / name, media_type=media, headers={"Cache-Control": cache})

    @app.get("/healthz", tags=["ops"])
    def healthz(request: Request):
        """Liveness and database reachability."""
        with request.app.state.broker.connection() as conn, conn.cursor() as cur:
            cur.execute("SELECT 1")
        return {"ok": True}

    @app.get("/metrics", tags=["ops"], response_class=PlainTextResponse)
    def prometheus(request: Request):
        """Prometheus text format: queues, jobs by state, latencies, promotions, refunds, provider calls."""
        return PlainTextResponse(metrics.render(request.app.state.broker, request.app.state.metrics),
                                 media_type=metrics.CONTENT_TYPE)

    @app.get("/api/me", tags=["users"], response_model=accounts.Account)
    def me(request: Request, user_id: int = Depends(user)):
        """Your account: credits, jobs by status, and what an analysis costs."""
        found = accounts.view(request.app.state.broker, user_id)
        if found is not None:
            found.analysis_cost = request.app.state.queue_settings.job_cost
        return found

    @app.get("/api/documents", tags=["uploads"], response_model=list[views.DocumentView])
    def documents(request: Request, user_id: int = Depends(user)):
        """Your documents (theses and sources), newest first."""
        return views.documents(request.app.state.broker, user_id)

    @app.post("/api/analyses", tags=["analyses"], status_code=201, response_model=views.JobView,
              openapi_extra=_body_schema(AnalysisRequest),
              responses={200: {"description": "the idempotency key named an earlier admission: that job"}})
    async def admit(request: Request, user_id: int = Depends(user)):
        """Admit an analysis: charged now, pending or queued behind your running one."""
        # Counted when the request starts, so slow bodies cannot outrun the limit.
        await run_in_threadpool(limit, request, user_id, "admit")
        body = await json_body(request, AnalysisRequest, request.app.state.settings.max_json_bytes)
        return await run_in_threadpool(_admit, request, user_id, body.thesis_id, body.source_ids, None,
                                       body.idempotency_key, body.options)

    @app.post("/api/analyses/{job_id}/delta", tags=["analyses"], status_code=201, response_model=views.JobView,
              openapi_extra={"requestBody": {"required": False, "content": {
                  "application/json": {"schema": DeltaRequest.model_json_schema()}}}})
    async def delta(request: Request, job_id: PathId, user_id: int = Depends(user)):
        """Re-check an earlier analysis of yours; it bypasses your queue."""
        await run_in_threadpool(limit, request, user_id, "admit")
        body = await json_body(request, DeltaRequest, request.app.state.settings.max_json_bytes, optional=True)
        base = await run_in_threadpool(_job_or_404, request.app.state.broker, job_id, user_id)
        return await run_in_threadpool(_admit, request, user_id, base.thesis_id, body.source_ids or base.source_ids,
                                       job_id, body.idempotency_key, body.options)

    @app.get("/api/analyses", tags=["analyses"], response_model=list[views.JobView])
    def list_jobs(request: Request, user_id: int = Depends(user), limit: int = 100):
        """Your analyses, newest first; queued ones with their position (1 = next)."""
        return views.jobs(request.app.state.broker, user_id=user_id, limit=max(1, min(limit, 500)))

    @app.get("/api/analyses/{job_id}", tags=["analyses"], response_model=views.JobView)
    def get_job(request: Request, job_id: PathId, user_id: int = Depends(user)):
        """One of your analyses with its verdicts."""
        return _job_or_404(request.app.state.broker, job_id, user_id)

    @app.post("/api/analyses/{job_id}/cancel", tags=["analyses"], response_model=views.JobView)
    def cancel(request: Request, job_id: PathId, user_id: int = Depends(user)):
        """Cancel a queued or pending analysis; its credit is refunded."""
        broker = request.app.state.broker
        userqueue.cancel(job_id, user_id=user_id, broker=broker)
        return _job_or_404(broker, job_id, user_id)

    _ops_routes(app)


def _admit(request: Request, user_id: int, thesis_id: int, source_ids: list[int], delta_of: int | None,
           idempotency_key: str | None, options: dict):
    broker = request.app.state.broker
    admission = userqueue.admit(user_id, thesis_id, source_ids, delta_of_job_id=delta_of,
                                idempotency_key=idempotency_key, options=options, broker=broker,
                                settings=request.app.state.queue_settings)
    job = views.job(broker, admission.job_id, user_id=user_id)
    return JSONResponse(job.model_dump(mode="json"), status_code=201 if admission.created else 200,
                        headers={"Location": f"/api/analyses/{job.id}"})


def _known_queues(request: Request) -> set[str]:
    return set(request.app.state.broker.get_declared_queues())


def _queue_or_404(request: Request, queue_name: str) -> operations.QueueView:
    found = operations.queues(request.app.state.broker, known_queues=_known_queues(request))
    for q in found:
        if q.queue_name == queue_name:
            return q
    raise ApiError(404, "unknown_queue", f"no queue {queue_name}", queue=queue_name)


def _ops_routes(app: FastAPI) -> None:
    from broker import admin, controls

    @app.get("/api/ops/queues", tags=["ops"], response_model=list[admin.QueueStats])
    def queues(request: Request, _=Depends(operator)):
        """Depth, delayed, running, dead and oldest age per broker queue."""
        return admin.queue_stats(request.app.state.broker)

    @app.get("/api/ops/groups", tags=["ops"], response_model=list[admin.GroupStats])
    def groups(request: Request, _=Depends(operator)):
        """Message groups per queue: keys waiting, held, in flight, oldest held age."""
        return admin.group_stats(request.app.state.broker)

    @app.get("/api/ops/groups/keys", tags=["ops"], response_model=list[admin.GroupKeyStats])
    def group_keys(request: Request, queue: QueueName = None, limit: int = 50, _=Depends(operator)):
        """Keys with unfinished messages (of one queue, with ``?queue=``): held, in flight and the
        oldest held one's age, those waiting longest first."""
        return admin.group_keys(request.app.state.broker, queue, limit=max(1, min(limit, 1000)))

    @app.get("/api/ops/groups/{queue}/messages", tags=["ops"], response_model=list[admin.GroupMessage])
    def group_messages(request: Request, queue: QueuePath, key: GroupKey, limit: int = 100, _=Depends(operator)):
        """One key's unfinished messages: in flight first, then held, in the key's order."""
        return admin.group_messages(request.app.state.broker, queue, key, limit=max(1, min(limit, 1000)))

    @app.get("/api/ops/workers", tags=["ops"], response_model=list[admin.WorkerInfo])
    def workers(request: Request, _=Depends(operator)):
        """Live worker processes, their queues and last heartbeat."""
        return admin.workers(request.app.state.broker)

    @app.get("/api/ops/dead-letters", tags=["ops"], response_model=list[admin.DeadLetter])
    def dead_letters(request: Request, queue: QueueName = None, limit: int = 100, _=Depends(operator)):
        """Dead letters, newest first."""
        return admin.dead_letters(request.app.state.broker, queue_name=queue, limit=max(1, min(limit, 1000)))

    @app.post("/api/ops/dead-letters/{letter_id:int}/retry", tags=["ops"])
    def retry(request: Request, letter_id: PathId, _=Depends(operator)):
        """Put one dead letter back on its queue."""
        if admin.retry_dead_letters(request.app.state.broker, ids=[letter_id]) == 0:
            raise ApiError(404, "unknown_dead_letter", f"no dead letter {letter_id}", id=letter_id)
        return {"retried": 1}

    @app.delete("/api/ops/dead-letters/{letter_id:int}", tags=["ops"])
    def purge(request: Request, letter_id: PathId, _=Depends(operator)):
        """Delete one dead letter for good."""
        if admin.purge_dead_letters(request.app.state.broker, ids=[letter_id]) == 0:
            raise ApiError(404, "unknown_dead_letter", f"no dead letter {letter_id}", id=letter_id)
        return {"purged": 1}

    @app.get("/api/ops/overview", tags=["ops"], response_model=operations.Overview)
    def overview(request: Request, _=Depends(operator)):
        """Everything the operator view shows in one read: every queue (also empty ones) with
        processed / failed in the last hour and whether it is paused or stalled (work ready, no
        live worker consumes it), live workers with their current messages, the analyses in
        flight, and dead letters with their exception's last line."""
        return operations.overview(request.app.state.broker, known_queues=_known_queues(request))

    @app.post("/api/ops/queues/{queue_name}/pause", tags=["ops"], response_model=operations.QueueView)
    def pause(request: Request, queue_name: str, _=Depends(operator)):
        """Pause a queue: no worker claims from it until it is resumed (running messages finish)."""
        _queue_or_404(request, queue_name)
        controls.pause_queue(request.app.state.broker, queue_name, by="api")
        return _queue_or_404(request, queue_name)

    @app.post("/api/ops/queues/{queue_name}/resume", tags=["ops"], response_model=operations.QueueView)
    def resume(request: Request, queue_name: str, _=Depends(operator)):
        """Resume a paused queue: workers claim from it again at once."""
        _queue_or_404(request, queue_name)
        controls.resume_queue(request.app.state.broker, queue_name)
        return _queue_or_404(request, queue_name)

    @app.post("/api/ops/dead-letters/retry", tags=["ops"])
    def retry_many(request: Request, queue: QueueName = None, _=Depends(operator)):
        """Put every dead letter (of one queue, with ``?queue=``) back on its queue; how many."""
        return {"retried": admin.retry_dead_letters(request.app.state.broker, queue_name=queue)}

    @app.delete("/api/ops/dead-letters", tags=["ops"])
    def purge_many(request: Request, queue: QueueName = None, _=Depends(operator)):
        """Delete every dead letter (of one queue, with ``?queue=``) for good; how many."""
        return {"purged": admin.purge_dead_letters(request.app.state.broker, queue_name=queue)}

    @app.get("/api/ops/analyses", tags=["ops"], response_model=list[views.JobView])
    def all_jobs(request: Request, limit: int = 100, _=Depends(operator)):
        """Every user's analyses, newest first."""
        return views.jobs(request.app.state.broker, limit=max(1, min(limit, 500)))
