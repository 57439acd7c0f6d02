"""Server limits of the ``web`` process: slow clients cost a bounded time and a bounded share.

- **Headers**: a connection must deliver a request's headers within ``header_timeout``
  seconds of connecting (or of its previous response); else it is closed. uvicorn has no
  such timeout of its own (``timeout_keep_alive`` stops as soon as one byte arrives), so
  :func:`protocol` is uvicorn's h11 protocol with this timer and the limits below added.
- **Bodies**: :class:`BodyTimeout` answers 408 when a request's body has not fully arrived
  ``body_timeout`` seconds after its headers, and the connection is closed.
- **Idle connections**: a new connection that sends nothing for ``idle_timeout`` seconds
  is closed; a keep-alive one after ``keepalive_timeout`` (uvicorn's ``timeout_keep_alive``).
- **Connections**: at most ``max_connections`` are open; a new one beyond it closes the
  connection idle longest, and only when none is idle is its request answered 503. At most
  ``max_requests`` requests are in progress; beyond it 503. Every 503 carries the error
  shape, ``Retry-After`` and the security headers.
- **Slow readers**: a client that leaves the server's write buffer full (it reads nothing of
  a long answer, a streamed report) for ``write_timeout`` seconds is cut off, its buffer
  dropped; until then flow control holds it at one buffer (about 64 KiB) and one batch.
- **Heads**: a request line and headers over ``max_header_bytes`` get 431 (:class:`HeadLimit`;
  h11's ``max_incomplete_event_size`` catches only heads that arrive in pieces), and a
  request h11 cannot parse (a bad Content-Length, a NUL in a header or the path) gets 400 —
  both in the error shape with the security headers, then the connection closes.

Request limits (``analysis.surface.ratelimits``) count a request when it starts, before its body
is read (see web/app.py), so a slow body cannot outrun them either.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct

import h11
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
    """Add the body timeout and the head limit to the app (the timeouts and caps of
    connections live in the server: :func:`protocol`)."""
    app.add_middleware(BodyTimeout, seconds=settings.body_timeout)
    app.add_middleware(HeadLimit, max_bytes=settings.max_header_bytes)


class HeaderTimeoutH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the limits of this module: header, idle and write timeouts,
    a connection cap that evicts idle connections first, a cap on requests in progress, and
    the server's own refusals in the API's error shape with the security headers.

    uvicorn's ``limit_concurrency`` counts idle connections with requests, so 200 silent
    sockets made it refuse every real request; it is off (None) and these caps replace it.
    """

    header_timeout: float = 10.0
    idle_timeout: float = 3.0
    write_timeout: float = 30.0
    max_connections: int = 200
    max_requests: int = 100

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.limit_concurrency = None
        self._inner_app, self.app = self.app, self._admit

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._header_timer = self._write_timer = None
        self._idle_since = self.loop.time()
        self._arm_header_timer()
        self._idle_timer = self.loop.call_later(min(self.idle_timeout, self.header_timeout), self._idle_overdue)
        if len(self.connections) > self.max_connections:
            # Only connections silent for a while yet: bytes of this loop turn are not read yet.
            self._make_room(silent_for=IDLE_GRACE)
        if len(self.connections) > 2 * self.max_connections:  # the hard bound on open sockets
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        self._idle_since = None
        self._cancel("_idle_timer")
        super().data_received(data)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._idle_since = self.loop.time()
            self._arm_header_timer()

    def connection_lost(self, exc) -> None:
        for timer in ("_header_timer", "_idle_timer", "_write_timer"):
            self._cancel(timer)
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        self._cancel("_write_timer")
        self._write_timer = self.loop.call_later(self.write_timeout, self._write_overdue)

    def resume_writing(self) -> None:
        self._cancel("_write_timer")
        super().resume_writing()

    def send_400_response(self, msg: str) -> None:
        """The answer to a request h11 cannot parse (a bad Content-Length, a NUL in a header
        or the path, an oversized head): the error shape and headers, then close."""
        self._refuse(400, "bad_request", "the request is not valid HTTP/1.1 and was not read")

    # -- the caps -----------------------------------------------------------------------------

    async def _admit(self, scope, receive, send) -> None:
        names = {name.lower() for name, _ in scope.get("headers", ())}
        if b"transfer-encoding" in names and b"content-length" in names:
            # Two lengths for one body: h11 reads the chunked one, a proxy in front may have
            # read the other, and the bytes between are a smuggled request. Refused unread;
            # the connection closes, so nothing after this request on it is read either.
            await send({"type": "http.response.start", "status": 400, "headers": _error_headers(
                len(AMBIGUOUS_LENGTH_BODY), (b"connection", b"close"))})
            await send({"type": "http.response.body", "body": AMBIGUOUS_LENGTH_BODY})
            return
        over_cap = len(self.connections) > self.max_connections and not self._make_room(silent_for=0.0)
        if over_cap or len(self.tasks) > self.max_requests:
            reason = "connections" if over_cap else "requests in progress"
            await send({"type": "http.response.start", "status": 503, "headers": _error_headers(
                len(BUSY_BODY[reason]), (b"retry-after", b"1"), (b"connection", b"close"))})
            await send({"type": "http.response.body", "body": BUSY_BODY[reason]})
            return
        await self._inner_app(scope, receive, send)

    def _make_room(self, silent_for: float) -> bool:
        """Close the connection idle longest (silent for ``silent_for`` seconds at least);
        whether there was one. Called when a connection comes over the cap, and again when
        its request is read: without an idle one to close, that request is answered 503."""
        since = self.loop.time() - silent_for
        idle = [c for c in self.connections
                if c is not self and getattr(c, "_idle_since", None) is not None and c._idle_since <= since]
        if not idle:
            return False
        victim = min(idle, key=lambda c: c._idle_since)
        victim._idle_since = None
        victim.transport.close()
        return True

    # -- timers ---------------------------------------------------------------------------------

    def _cancel(self, name: str) -> None:
        timer = getattr(self, name, None)
        if timer is not None:
            timer.cancel()
            setattr(self, name, None)

    def _arm_header_timer(self) -> None:
        self._cancel("_header_timer")
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_overdue)

    def _headers_overdue(self) -> None:
        self._header_timer = None
        # A request whose headers arrived has a cycle that is not complete yet: leave it to
        # the body timeout and the app. Otherwise the headers are overdue.
        if self.cycle is None or self.cycle.response_complete:
            self.transport.close()

    def _idle_overdue(self) -> None:
        self._idle_timer = None
        if self._idle_since is not None:  # not a byte since the connection was made
            self.transport.close()

    def _write_overdue(self) -> None:
        # The client has read nothing for write_timeout seconds: drop the connection and what
        # is buffered for it (close() would wait for the buffer to drain, that is forever).
        # A zero linger makes the kernel reset it at once instead of keeping its send buffer
        # for a FIN the client would never read.
        self._write_timer = None
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        self.transport.abort()

    def _refuse(self, status: int, code: str, message: str) -> None:
        body = json.dumps({"error": {"code": code, "message": message}}).encode()
        reason = {400: b"Bad Request", 431: b"Request Header Fields Too Large"}.get(status, b"")
        try:
            for event in (h11.Response(status_code=status, reason=reason,
                                       headers=_error_headers(len(body), (b"connection", b"close"))),
                          h11.Data(data=body), h11.EndOfMessage()):
                self.transport.write(self.conn.send(event))
        except h11.LocalProtocolError:  # a response had started: nothing more can be said
            pass
        self.transport.close()


#: Seconds a connection must have been silent before a new connection over the cap closes it:
#: the bytes of connections accepted in the same turn of the event loop are not read yet.
IDLE_GRACE = 0.5

#: The body of the answer to a request with both a Content-Length and a Transfer-Encoding.
AMBIGUOUS_LENGTH_BODY = json.dumps({"error": {"code": "bad_request", "message": "the request has both a "
                                              "Content-Length and a Transfer-Encoding and was not read"}}).encode()

#: Bodies of the 503 answers, by the cap that was reached.
BUSY_BODY = {reason: json.dumps({"error": {"code": "server_busy", "message":
                                           f"the server is at its limit of {reason}; retry shortly"}}).encode()
             for reason in ("connections", "requests in progress")}


def _error_headers(length: int, *more: tuple[bytes, bytes]) -> list[tuple[bytes, bytes]]:
    """Headers of an answer the server writes itself: JSON, its length, the security headers."""
    from .security import HEADERS

    return [(b"content-type", b"application/json"), (b"content-length", str(length).encode()), *more,
            *HEADERS.items()]


class HeadLimit:
    """ASGI middleware: a request head (request line and headers) larger than ``max_bytes``
    is answered 431 in the error shape. h11 enforces its size limit only on a head that
    arrives in pieces; one that arrives in a single read passed whole."""

    def __init__(self, app, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            size = (len(scope["method"]) + len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
                    + 12 + sum(len(k) + len(v) + 4 for k, v in scope["headers"]))
            if size > self.max_bytes:
                body = json.dumps({"error": {"code": "request_head_too_large", "message":
                                             f"the request line and headers exceed {self.max_bytes} bytes",
                                             "limit": self.max_bytes}}).encode()
                await send({"type": "http.response.start", "status": 431, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def protocol(settings: WebSettings) -> type[H11Protocol]:
    """The h11 protocol class with these settings' timeouts and caps."""
    return type("CiteqH11Protocol", (HeaderTimeoutH11Protocol,), {
        "header_timeout": settings.header_timeout, "idle_timeout": settings.idle_timeout,
        "write_timeout": settings.write_timeout, "max_connections": settings.max_connections,
        "max_requests": settings.max_requests})


def uvicorn_options(settings: WebSettings) -> dict:
    """Keyword arguments of ``uvicorn.run`` for these limits. ``limit_concurrency`` stays off:
    the protocol's own caps replace it (see :class:`HeaderTimeoutH11Protocol`)."""
    return {"http": protocol(settings), "timeout_keep_alive": settings.keepalive_timeout,
            "h11_max_incomplete_event_size": settings.max_header_bytes,
            "backlog": max(64, settings.max_connections)}
