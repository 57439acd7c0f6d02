"""Server limits of the ``web`` process: slow clients cost a bounded time and a bounded share.

- **Headers**: a connection must deliver a request's headers within ``header_timeout``
  seconds of connecting (or of its previous response); else it is closed. uvicorn has no
  such timeout of its own (``timeout_keep_alive`` stops as soon as one byte arrives), so
  :func:`protocol` is uvicorn's h11 protocol with this one timer added.
- **Bodies**: :class:`BodyTimeout` answers 408 when a request's body has not fully arrived
  ``body_timeout`` seconds after its headers, and the connection is closed.
- **Connections**: ``max_connections`` is uvicorn's ``limit_concurrency`` (503 beyond it),
  ``max_header_bytes`` its ``h11_max_incomplete_event_size``, ``keepalive_timeout`` its
  ``timeout_keep_alive``.

Request limits (``analysis.surface.ratelimits``) count a request when it starts, before its body
is read (see web/app.py), so a slow body cannot outrun them either.
"""

from __future__ import annotations

import asyncio
import json

from uvicorn.protocols.http.h11_impl import H11Protocol

from .settings import WebSettings


class _BodyTimedOut(Exception):
    pass


class BodyTimeout:
    """ASGI middleware: the whole request body within ``seconds`` of the headers, else 408."""

    def __init__(self, app, seconds: float) -> None:
        self.app, self.seconds = app, seconds

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.seconds
        body_done = False
        started = False

        async def bounded_receive():
            nonlocal body_done
            if body_done:  # only http.disconnect is left to wait for
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                raise _BodyTimedOut() from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        async def tracking_send(message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, bounded_receive, tracking_send)
        except _BodyTimedOut:
            if started:
                raise
            body = json.dumps({"error": {"code": "body_timeout", "message":
                                         f"the request body did not arrive within {self.seconds:g} s"}}).encode()
            await send({"type": "http.response.start", "status": 408, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (b"connection", b"close")]})
            await send({"type": "http.response.body", "body": body})


def install(app, settings: WebSettings) -> None:
    """Add the body timeout to the app (the header timeout lives in the server: :func:`protocol`)."""
    app.add_middleware(BodyTimeout, seconds=settings.body_timeout)


class HeaderTimeoutH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers are too slow to arrive."""

    header_timeout: float = 10.0

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._header_timer = None
        self._arm_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_timer()

    def connection_lost(self, exc) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_overdue)

    def _headers_overdue(self) -> None:
        self._header_timer = None
        # A request whose headers arrived has a cycle that is not complete yet: leave it to
        # the body timeout and the app. Otherwise the headers are overdue.
        if self.cycle is None or self.cycle.response_complete:
            self.transport.close()


def protocol(settings: WebSettings) -> type[H11Protocol]:
    """The h11 protocol class with ``settings.header_timeout``."""
    return type("CiteqH11Protocol", (HeaderTimeoutH11Protocol,), {"header_timeout": settings.header_timeout})


def uvicorn_options(settings: WebSettings) -> dict:
    """Keyword arguments of ``uvicorn.run`` for these limits."""
    return {"http": protocol(settings), "timeout_keep_alive": settings.keepalive_timeout,
            "limit_concurrency": settings.max_connections,
            "h11_max_incomplete_event_size": settings.max_header_bytes,
            "backlog": max(64, settings.max_connections)}
